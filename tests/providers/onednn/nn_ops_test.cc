// The oneDNN provider's non-RNN operators (MatMul, Gemm, Conv, ConvTranspose, the
// normalizations, pooling, eltwise, Softmax) against the ONNX backend node tests, with --providers
// onednn alone: each test must be claimed by oneDNN and match the expected outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNodeData = "/usr/share/libonnx-testdata/data/node";

std::vector<std::string> node_tests() {
  // The operators' own tests; not the "_expanded" function bodies (other operators), the
  // integer ones, MaxPool's Indices output or BatchNormalization's training mode, which oneDNN
  // declines.
  const std::regex ops(
      "test_(matmul|gemm|conv|convtranspose|layer_normalization|batchnorm|maxpool|averagepool|"
      "globalmaxpool|globalaveragepool|softmax|"
      "logsoftmax|relu|leakyrelu|tanh|sigmoid|exp|log|abs|sqrt|neg|elu|softplus|clip|round)"
      "(_.*)?");
  const std::regex skip(".*(_expanded|int8|uint8|with_argmax|training_mode).*");
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
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
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

// oneDNN refuses a pooling pad as wide as the window (a window of padding only). Such a node
// must go to the reference provider at load, with the reason, not fail at run time (found by
// the fuzzer's comparison: "could not create a descriptor for a pooling forward propagation
// primitive"). The [1, 1, 3, 3] input's windows of kernel [3, 1] and pads 1 hold 1, 2 or 3 of
// its values; the outputs, by hand: max over the window, and the mean of its values.
TEST(OnednnNnOps, PoolingPadAsWideAsTheWindowGoesToTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  for (const std::string op : {"MaxPool", "AveragePool"}) {
    auto pool = [&](std::vector<int64_t> pads) {
      testing::ModelBuilder mb(11);
      mb.input("x", DType::kFloat32, {1, 1, 3, 3});
      mb.output("y", DType::kFloat32);
      onnx::NodeProto& n = mb.node(op, {"x"}, {"y"}, "pool");
      testing::set_attr(n, "kernel_shape", std::vector<int64_t>{3, 1});
      testing::set_attr(n, "pads", pads);
      return mb.bytes();
    };
    const std::string ok_model = pool({1, 0, 1, 0});  // 1 < 3 and 0 < 1: fine
    const std::string model = pool({1, 1, 1, 1});     // 1 wide on a width-1 window
    SessionOptions o;
    o.providers({"onednn", "reference"});
    const Session fine = Session::from_bytes(ok_model.data(), ok_model.size(), o);
    EXPECT_EQ(fine.assignment().front().provider, "onednn") << op;
    const Session s = Session::from_bytes(model.data(), model.size(), o);
    const NodeAssignment& a = s.assignment().front();
    EXPECT_EQ(a.provider, "reference") << op;
    ASSERT_FALSE(a.declined.empty()) << op;
    EXPECT_NE(a.declined.front().reason.find("pad as wide as the window"), std::string::npos)
        << a.declined.front().reason;
    // x = 1..9 row by row; y is [1, 1, 3, 5]: columns 0 and 4 are padding only.
    std::vector<float> x(9);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
    const Outputs out = s.run({{"x", Tensor::from_vector({1, 1, 3, 3}, x)}});
    const Tensor& y = out[0];
    ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 5})) << op;
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 1; c <= 3; ++c) {
        // Rows r-1..r+1 of column c-1, those inside.
        float mx = -1e30f, sum = 0.0f;
        int count = 0;
        for (int64_t i = r - 1; i <= r + 1; ++i) {
          if (i < 0 || i > 2) continue;
          const float v = x[static_cast<size_t>(i * 3 + c - 1)];
          mx = std::max(mx, v);
          sum += v;
          ++count;
        }
        EXPECT_FLOAT_EQ(y.data<float>()[r * 5 + c], op == "MaxPool" ? mx : sum / count)
            << op << " at " << r << ", " << c;
      }
  }
}

// oneDNN pools 1-D to 3-D inputs. A GlobalAveragePool or GlobalMaxPool of a [N, C] input
// (which pools nothing: y = x) goes to the reference provider at load, not to a run-time error.
TEST(OnednnNnOps, PoolingOfRankTwoGoesToTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  for (const std::string op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    testing::ModelBuilder mb(11);
    mb.input("x", DType::kFloat32, {2, 3});
    mb.output("y", DType::kFloat32);
    mb.node(op, {"x"}, {"y"}, "pool");
    const std::string model = mb.bytes();
    SessionOptions o;
    o.providers({"onednn", "reference"});
    const Session s = Session::from_bytes(model.data(), model.size(), o);
    const NodeAssignment& a = s.assignment().front();
    EXPECT_EQ(a.provider, "reference") << op;
    ASSERT_FALSE(a.declined.empty()) << op;
    EXPECT_NE(a.declined.front().reason.find("rank 2"), std::string::npos)
        << a.declined.front().reason;
    const std::vector<float> x{1, -2, 3, 4.5f, 5, -6};
    const Outputs out = s.run({{"x", Tensor::from_vector({2, 3}, x)}});
    ASSERT_EQ(out[0].numel(), 6) << op;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[0].data<float>()[i], x[i]) << op;
  }
}

// A global pool over empty spatial dimensions ([1, 3, 0, 8], found by an edge-shape sweep):
// the average is zeros and the maximum an error naming the node, on oneDNN as on the reference
// provider; oneDNN refused the window of size 0 with an error for both.
TEST(OnednnNnOps, GlobalPoolsOfEmptySpatialDimensions) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  for (const std::string op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    testing::ModelBuilder mb(11);
    mb.input("x", DType::kFloat32, {-1, 3, -1, -1}, {"N", "", "H", "W"});
    mb.output("y", DType::kFloat32);
    mb.node(op, {"x"}, {"y"}, "pool");
    const std::string model = mb.bytes();
    for (const Shape& shape : {Shape{1, 3, 0, 8}, Shape{2, 3, 5, 0}}) {
      const Feeds feeds = {{"x", Tensor::zeros(DType::kFloat32, shape)}};
      std::vector<std::string> got;
      for (const std::string p : {"onednn", "reference"}) {
        SessionOptions o;
        o.providers({p});
        const Session s = Session::from_bytes(model.data(), model.size(), o);
        try {
          const Outputs out = s.run(feeds);
          ASSERT_EQ(out[0].shape(), (Shape{shape[0], 3, 1, 1})) << op << " " << p;
          for (int64_t i = 0; i < out[0].numel(); ++i)
            EXPECT_EQ(out[0].data<float>()[i], 0.0f) << op << " " << p;
          got.push_back("zeros");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("pool"), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
          got.push_back("error");
        }
      }
      EXPECT_EQ(got[0], got[1]) << op << " " << shape_to_string(shape);
      EXPECT_EQ(got[0], op == "GlobalMaxPool" ? "error" : "zeros") << op;
    }
  }
}

}  // namespace
}  // namespace recur
