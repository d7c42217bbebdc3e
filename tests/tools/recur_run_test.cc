// recur-run's contract: exit codes, the per-output error report, the suite summary line and
// the expected-failures list, and --json from --perf.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "recur/recur.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "tests/support/model_builder.h"
#include "tests/support/recur_run_cli.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::floats;
using testing::make_test_dir;
using testing::ModelBuilder;
using testing::run_cli;
using testing::RunResult;
using testing::TempDir;
namespace fs = std::filesystem;

TEST(RecurRun, PassMismatchAndErrorExitCodes) {
  TempDir dir;
  make_test_dir(dir.path() / "good", {2, 4, 6});
  make_test_dir(dir.path() / "close", {2, 4, 6.01f});
  make_test_dir(dir.path() / "bad", {2, 4, 7});
  fs::create_directories(dir.path() / "broken");
  std::ofstream(dir.path() / "broken" / "model.onnx") << "garbage";

  RunResult good = run_cli((dir.path() / "good").string());
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_NE(good.output.find("max abs err"), std::string::npos) << good.output;

  // 6 vs 6.01: |diff| = 0.01 > 1e-5 + 1e-3 * 6.01 by default, within rtol 1e-2.
  EXPECT_EQ(run_cli((dir.path() / "close").string()).status, 1);
  EXPECT_EQ(run_cli((dir.path() / "close").string() + " --rtol 1e-2").status, 0);

  RunResult bad = run_cli((dir.path() / "bad").string());
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("MISMATCH"), std::string::npos) << bad.output;

  RunResult broken = run_cli((dir.path() / "broken").string());
  EXPECT_EQ(broken.status, 2) << broken.output;
  EXPECT_NE(broken.output.find("model.onnx"), std::string::npos) << broken.output;
}

TEST(RecurRun, ThreadsOutOfRangeExitWith2) {
  TempDir dir;
  make_test_dir(dir.path() / "good", {2, 4, 6});
  const std::string target = (dir.path() / "good").string();
  for (const char* n : {"100000", "-5"}) {
    RunResult r = run_cli(target + " --threads " + n);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("threads"), std::string::npos) << r.output;
  }
  RunResult huge = run_cli(target + " --threads 100000");
  EXPECT_NE(huge.output.find("threads must be 0 (automatic) or 1.."), std::string::npos)
      << huge.output;
  EXPECT_EQ(run_cli(target + " --threads 1").status, 0);
}

TEST(RecurRun, SuiteSummaryAndExpectedFailures) {
  TempDir dir;
  make_test_dir(dir.path() / "suite" / "test_a", {2, 4, 6});
  make_test_dir(dir.path() / "suite" / "test_b", {0, 0, 0});
  const std::string root = (dir.path() / "suite").string();

  RunResult plain = run_cli("--suite " + root);
  EXPECT_EQ(plain.status, 1);
  EXPECT_NE(plain.output.find("PASS test_a"), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("FAIL test_b"), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("1 passed, 1 failed\n"), std::string::npos) << plain.output;

  const auto list = (dir.path() / "expected.txt").string();
  std::ofstream(list) << "# known\ntest_b  wrong on purpose\n";
  EXPECT_EQ(run_cli("--suite " + root + " --expect-fail " + list).status, 0);

  std::ofstream(list) << "test_a  stale: it passes\ntest_b  wrong on purpose\n";
  RunResult stale = run_cli("--suite " + root + " --expect-fail " + list);
  EXPECT_NE(stale.status, 0);
  EXPECT_NE(stale.output.find("stale entry (now passes): test_a"), std::string::npos)
      << stale.output;

  std::ofstream(list) << "";
  RunResult unexpected = run_cli("--suite " + root + " --expect-fail " + list);
  EXPECT_NE(unexpected.status, 0);
  EXPECT_NE(unexpected.output.find("unexpected failure: test_b"), std::string::npos)
      << unexpected.output;
}

TEST(RecurRun, ModelModeWritesNpyAndPerfJson) {
  TempDir dir;
  make_test_dir(dir.path() / "t", {2, 4, 6});
  const std::string model = (dir.path() / "t" / "model.onnx").string();
  const std::string out = (dir.path() / "out").string();
  RunResult r = run_cli(model + " --random-inputs --output-dir " + out);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "y.npy")) << r.output;

  RunResult input = run_cli(
      model + " --input x=" + (dir.path() / "t" / "test_data_set_0" / "input_0.pb").string());
  EXPECT_EQ(input.status, 0) << input.output;
  EXPECT_NE(input.output.find("y: float32[3]"), std::string::npos) << input.output;

  RunResult perf = run_cli(model + " --random-inputs --perf --warmup 1 --repeat 5 --json");
  EXPECT_EQ(perf.status, 0) << perf.output;
  for (const char* key :
       {"\"load_ms\"", "\"runs\": 5", "\"latency_ms\"", "\"p50\"", "\"p99\"", "\"providers\""}) {
    EXPECT_NE(perf.output.find(key), std::string::npos) << key << " in " << perf.output;
  }

  RunResult missing = run_cli(model);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("missing input 'x'"), std::string::npos) << missing.output;
}

// --plan-only --json: inputs with their symbolic dimensions, and the assignment with each
// decline, for tools (recur-bench) to read.
TEST(RecurRun, PlanOnlyJson) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {-1, 4}, {"batch", ""});
  m.output("y", DType::kFloat32);
  m.node("Relu", {"x"}, {"y"}, "relu");
  const std::string model = m.save(dir.path());
  RunResult r = run_cli(model + " --plan-only --json --providers reference");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* key :
       {"\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"optional\": false, \"shape\": "
        "[\"batch\", 4]}]",
        "\"assignment\": [{\"node\": \"relu\", \"op\": \"Relu\", \"provider\": \"reference\", "
        "\"declined\": []}]",
        "\"providers\": [\"reference\"]"}) {
    EXPECT_NE(r.output.find(key), std::string::npos) << key << " in " << r.output;
  }
}

// A model with several nodes no provider can run: the error names each of them, with every
// provider's reason, not only the first.
TEST(RecurRun, EveryUnclaimedNodeIsNamed) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Frobnicate", {"x"}, {"f"}, "first");
  m.node("Relu", {"f"}, {"r"}, "fine");
  m.node("Frobnicate", {"r"}, {"y"}, "second");
  const std::string model = m.save(dir.path());
  RunResult r = run_cli(model + " --plan-only --providers reference");
  EXPECT_EQ(r.status, 2) << r.output;
  for (const char* node : {"node 'first' (Frobnicate) cannot run on any provider: reference: ",
                           "node 'second' (Frobnicate) cannot run on any provider: reference: "}) {
    EXPECT_NE(r.output.find(node), std::string::npos) << node << " in " << r.output;
  }
  EXPECT_EQ(r.output.find("'fine'"), std::string::npos) << r.output;
}

// int64 outputs compare exactly in their own type: through double, 2^60 and 2^60 + 1 are equal.
TEST(RecurRun, Int64OutputsCompareExactly) {
  TempDir dir;
  const fs::path t = dir.path() / "int64";
  ModelBuilder m;
  m.input("x", DType::kInt64, {1});
  m.output("y", DType::kInt64);
  m.node("Identity", {"x"}, {"y"});
  m.save(t);
  fs::create_directories(t / "test_data_set_0");
  const int64_t big = int64_t{1} << 60;
  const auto set = t / "test_data_set_0";
  ASSERT_TRUE(
      write_tensor_pb(Tensor::from_vector<int64_t>({1}, {big}), "x", (set / "input_0.pb").string())
          .ok());
  ASSERT_TRUE(write_tensor_pb(Tensor::from_vector<int64_t>({1}, {big + 1}), "y",
                              (set / "output_0.pb").string())
                  .ok());
  RunResult r = run_cli(t.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("is 1152921504606846976, expected 1152921504606846977"),
            std::string::npos)
      << r.output;

  ASSERT_TRUE(
      write_tensor_pb(Tensor::from_vector<int64_t>({1}, {big}), "y", (set / "output_0.pb").string())
          .ok());
  EXPECT_EQ(run_cli(t.string()).status, 0);
}

// The same exactness through the comparison itself, for the 64-bit types at their extremes.
TEST(RecurRun, CompareIsExactFor64BitIntegers) {
  const tools::Tolerance tol;
  const uint64_t top = ~uint64_t{0};
  EXPECT_FALSE(tools::compare(Tensor::from_vector<uint64_t>({1}, {top}),
                              Tensor::from_vector<uint64_t>({1}, {top - 1}), tol)
                   .match);
  EXPECT_FALSE(tools::compare(Tensor::from_vector<int64_t>({1}, {INT64_MIN}),
                              Tensor::from_vector<int64_t>({1}, {INT64_MIN + 1}), tol)
                   .match);
  EXPECT_TRUE(tools::compare(Tensor::from_vector<int64_t>({1}, {INT64_MAX}),
                             Tensor::from_vector<int64_t>({1}, {INT64_MAX}), tol)
                  .match);
}

// A data set with inputs but no output_*.pb would otherwise pass having compared nothing.
TEST(RecurRun, DataSetWithoutExpectedOutputsFails) {
  TempDir dir;
  const fs::path t = dir.path() / "no_outputs";
  make_test_dir(t, {2, 4, 6});
  fs::remove(t / "test_data_set_0" / "output_0.pb");
  RunResult r = run_cli(t.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("no expected outputs in '" + (t / "test_data_set_0").string() + "'"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace recur
