// Shape computations (runtime/engine/optimize/shape_subgraph.h): folded into constants at load when
// the shapes are static, otherwise run on the host reading only the shapes of their inputs
// (KernelDef::shape_only_inputs) — by a listed CPU provider, or by the session's host provider
// when only GPU providers are listed. And BatchNormalization folded into the preceding Conv.
#include <gtest/gtest.h>

#include <filesystem>

#include "recur/recur.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/shape_subgraph.h"
#include "tests/support/data_dirs.h"
#include "tests/support/model_builder.h"
#include "tools/common/testdir.h"

namespace recur::testing {
namespace {

namespace fs = std::filesystem;

const std::string kModels = models_dir();

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

TEST(ShapeSubgraph, FindsTheExportersShapeChains) {
  auto m = load_model(kModels + "/char_lstm_lm/model.onnx");
  ASSERT_TRUE(m.ok()) << m.status().message();
  Graph& g = *m->graph;
  ASSERT_TRUE(fold_constant_nodes(g).ok());
  const std::vector<char> host = find_host_shape_nodes(g);
  std::set<std::string> ops;
  for (const Node& n : g.nodes()) {
    if (host[static_cast<size_t>(n.index)]) ops.insert(n.op_type);
  }
  // Shape -> Gather -> Unsqueeze -> Concat; ConstantOfShape makes data and is not one of them.
  EXPECT_EQ(ops, (std::set<std::string>{"Shape", "Gather", "Unsqueeze", "Concat"}));
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Gather" && n.inputs[0] == g.find("embed.weight")) {
      EXPECT_FALSE(host[static_cast<size_t>(n.index)]) << "the embedding lookup is data";
    }
  }
}

TEST(ShapeSubgraph, StaticShapesFoldAtLoad) {
  // bigru_classifier has fixed input shapes: its Shape chain becomes constants.
  Session s(kModels + "/bigru_classifier/model.onnx", SessionOptions().providers({"reference"}));
  EXPECT_EQ(count_op(s, "Shape"), 0) << s.explain();
  EXPECT_NE(s.explain().find("folded into constants at load"), std::string::npos);
  const tools::TestResult r =
      tools::run_test_dir(kModels + "/bigru_classifier", SessionOptions().providers({"reference"}),
                          tools::Tolerance{}, nullptr);
  EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass) << r.reason;
  // Without optimisation the Shape node runs.
  Session raw(kModels + "/bigru_classifier/model.onnx",
              SessionOptions().providers({"reference"}).optimize(false));
  EXPECT_EQ(count_op(raw, "Shape"), 1);
}

TEST(ShapeSubgraph, SymbolicShapesRunOnAListedCpuProvider) {
  Session s(kModels + "/dynamic_lstm/model.onnx", SessionOptions().providers({"reference"}));
  for (const auto& a : s.assignment()) {
    if (a.op == "Shape") {
      EXPECT_EQ(a.provider, "reference");
    }
  }
  const tools::TestResult r =
      tools::run_test_dir(kModels + "/dynamic_lstm", SessionOptions().providers({"reference"}),
                          tools::Tolerance{}, nullptr);
  EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass) << r.reason;
}

TEST(ShapeSubgraph, BatchNormFoldsIntoConv) {
  const std::string dir = kModels + "/crnn";
  Session s(dir + "/model.onnx", SessionOptions().providers({"reference"}));
  EXPECT_EQ(count_op(s, "BatchNormalization"), 0);
  bool noted = false;
  for (const auto& a : s.assignment()) {
    // The Conv is fused with the Relu after it.
    if (a.op != "Conv" && a.op != "recur::FusedConv") continue;
    for (const auto& n : a.notes) noted |= n.find("folded into the weights") != std::string::npos;
  }
  EXPECT_TRUE(noted) << s.explain();
  Session raw(dir + "/model.onnx", SessionOptions().providers({"reference"}).optimize(false));
  EXPECT_EQ(count_op(raw, "BatchNormalization"), 1);
  auto sets = tools::read_data_sets(dir);
  ASSERT_TRUE(sets.ok());
  for (const auto& ds : *sets) {
    auto feeds = tools::feeds_for(s, ds);
    ASSERT_TRUE(feeds.ok());
    const Outputs a = s.run(*feeds), b = raw.run(*feeds);
    for (size_t i = 0; i < a.size(); ++i) {
      const tools::Comparison c = tools::compare(a[i], b[i], tools::Tolerance{1e-5, 1e-6});
      EXPECT_TRUE(c.match) << a.name(i) << ": " << c.reason;
      const tools::Comparison w = tools::compare(a[i], ds.outputs[i].second, tools::Tolerance{});
      EXPECT_TRUE(w.match) << a.name(i) << " vs PyTorch: " << w.reason;
    }
  }
}

TEST(ShapeSubgraph, ShapeOnlyInputsAreNotCopied) {
  // Shape of a value: the partitioner reads it where it lives (no copy step).
  ModelBuilder mb(17);
  mb.input("x", DType::kFloat32, {-1, 3}, {"n", ""});
  mb.output("s", DType::kInt64);
  mb.node("Shape", {"x"}, {"s"}, "shape");
  const std::string bytes = mb.bytes();
  Session s =
      Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
  const Outputs o = s.run({{"x", Tensor::zeros(DType::kFloat32, {4, 3})}});
  ASSERT_EQ(o[0].numel(), 2);
  EXPECT_EQ(o[0].data<int64_t>()[0], 4);
  EXPECT_EQ(o[0].data<int64_t>()[1], 3);
}

}  // namespace
}  // namespace recur::testing
