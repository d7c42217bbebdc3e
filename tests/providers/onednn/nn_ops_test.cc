// The oneDNN provider's non-RNN operators (MatMul, Gemm, Conv, pooling, eltwise, Softmax)
// against the ONNX backend node tests, with --providers onednn alone: each test must be
// claimed by oneDNN and match the expected outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

namespace fs = std::filesystem;

bool have_onednn() {
  for (const auto& p : list_providers())
    if (p.name == "onednn") return p.available;
  return false;
}

constexpr const char* kNodeData = "/usr/share/libonnx-testdata/data/node";

std::vector<std::string> node_tests() {
  // The operators' own tests; not the "_expanded" function bodies (other operators), the
  // integer ones, or MaxPool's Indices output, which oneDNN declines.
  const std::regex ops(
      "test_(matmul|gemm|conv|maxpool|averagepool|globalmaxpool|globalaveragepool|softmax|"
      "logsoftmax|relu|leakyrelu|tanh|sigmoid|exp|log|abs|sqrt|neg|elu|softplus|clip|round)"
      "(_.*)?");
  const std::regex skip(".*(_expanded|int8|uint8|with_argmax).*");
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kNodeData, ec)) {
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, ops) && !std::regex_match(name, skip)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(OnednnNnOps, NodeTestsRunOnOnednnAlone) {
  if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN provider";
  const auto tests = node_tests();
  if (tests.empty()) GTEST_SKIP() << "no ONNX backend test data at " << kNodeData;
  EXPECT_GE(tests.size(), 80u);
  SessionOptions o;
  o.providers({"onednn"}).threads(2);
  for (const auto& t : tests) {
    const tools::TestResult r =
        tools::run_test_dir((fs::path(kNodeData) / t).string(), o, tools::Tolerance{}, nullptr);
    EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass) << t << ": " << r.reason;
  }
}

}  // namespace
}  // namespace recur
