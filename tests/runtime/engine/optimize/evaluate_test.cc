// evaluate_at_load: what the kernel allocates counts against the budget it is given, so that a
// constant Expand to gigabytes fails at load instead of allocating them (the model fuzzer's
// find: a 12 GiB Expand folded, then dropped as too large).
#include "runtime/engine/optimize/evaluate.h"

#include <gtest/gtest.h>

#include <vector>

#include "providers/reference/reference_provider.h"
#include "runtime/engine/onnx/model_loader.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

TEST(EvaluateAtLoad, AllocationsCountAgainstItsBudget) {
  testing::ModelBuilder m;
  m.input("x", DType::kFloat32, {1});
  m.initializer("c", testing::floats({1}, {2}));
  m.initializer("s", Tensor::from_vector<int64_t>({1}, {4}));
  m.output("y", DType::kFloat32);
  m.node("Expand", {"c", "s"}, {"e"}, "expand");
  m.node("Add", {"e", "x"}, {"y"});
  const std::string bytes = m.bytes();
  auto model = load_model_from_bytes(bytes.data(), bytes.size(), ".", "m.onnx");
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Graph& g = *model->graph;
  const Node* expand = nullptr;
  for (const Node& n : g.nodes())
    if (n.name == "expand") expand = &n;
  ASSERT_NE(expand, nullptr);
  const auto host = make_reference_provider("host");
  const Tensor c = testing::floats({1}, {2});

  auto small = evaluate_at_load(g, *expand, {c, Tensor::from_vector<int64_t>({1}, {4})}, *host,
                                SessionOptions(), size_t{1} << 20);
  ASSERT_TRUE(small.ok()) << small.status().message();
  const Tensor& e = small.value()[0];
  ASSERT_EQ(e.shape(), Shape({4}));
  EXPECT_EQ(e.data<float>()[3], 2.0f);

  // 4 GiB of float32 under a 1 MiB budget: refused, nothing allocated.
  auto large = evaluate_at_load(g, *expand, {c, Tensor::from_vector<int64_t>({1}, {1LL << 30})},
                                *host, SessionOptions(), size_t{1} << 20);
  ASSERT_FALSE(large.ok());
  EXPECT_EQ(large.status().code(), ErrorCode::kOutOfRange) << large.status().message();
}

}  // namespace
}  // namespace recur
