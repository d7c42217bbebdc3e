// MatMul + bias Add (+ Relu or Gelu) fusion (runtime/engine/optimize/optimizer.h,
// fuse_matmul_bias): the chain becomes one recur::MatMulBias node that --explain shows, on
// every provider that runs here, with the outputs of the reference provider running the nodes
// unfused; what the fused node cannot take (a bias that is an input, a MatMul read twice) is
// left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"

namespace recur::testing {
namespace {

struct Chain {
  std::string activation;      // "" or the op after the Add
  std::string approximate;     // Gelu's attribute, where set
  Shape b_shape = {6, 5};      // B; N = its last dimension
  Shape bias_shape = {5};      // the bias
  bool bias_is_input = false;  // the bias a graph input: not a constant
  bool product_read_twice = false;
  bool bias_first = false;  // Add(bias, product)
  int64_t k = 6;            // A's last dimension (A: [2, 3, k], or [3, k] with rank2)
  bool rank2 = false;
  bool nan_in_a = false;  // a NaN in A's second value: its row's sums are NaN
};

std::string chain_model(const TempDir& dir, const Chain& c) {
  ModelBuilder m(20);
  const Shape a_shape = c.rank2 ? Shape{3, c.k} : Shape{2, 3, c.k};
  m.input("a", DType::kFloat32, a_shape);
  m.initializer("B", sine_wave(c.b_shape, 0.3f));
  if (c.bias_is_input) {
    m.input("bias", DType::kFloat32, c.bias_shape);
  } else {
    m.initializer("bias", sine_wave(c.bias_shape, 1.1f));
  }
  m.output("y", DType::kFloat32);
  if (c.product_read_twice) m.output("p2", DType::kFloat32);
  m.node("MatMul", {"a", "B"}, {"p"}, "mm");
  if (c.product_read_twice) m.node("Neg", {"p"}, {"p2"}, "neg");
  const std::string sum = c.activation.empty() ? "y" : "s";
  m.node(
      "Add",
      c.bias_first ? std::vector<std::string>{"bias", "p"} : std::vector<std::string>{"p", "bias"},
      {sum}, "add");
  if (!c.activation.empty()) {
    auto& act = m.node(c.activation, {"s"}, {"y"}, "act");
    if (!c.approximate.empty()) set_attr(act, "approximate", c.approximate);
  }
  return m.save(dir.path());
}

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

Feeds feeds_for(const Chain& c) {
  Feeds f = {{"a", sine_wave(c.rank2 ? Shape{3, c.k} : Shape{2, 3, c.k}, 0.0f)}};
  if (c.nan_in_a) f[0].second.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  if (c.bias_is_input) f.push_back({"bias", sine_wave(c.bias_shape, 1.1f)});
  return f;
}

// Runs the chain fused on every provider here and compares with the unfused reference.
void check(const Chain& c, int want_fused) {
  TempDir dir;
  const std::string path = chain_model(dir, c);
  const Feeds feeds = feeds_for(c);
  Session unfused(path, SessionOptions().providers({"reference"}).optimize(false));
  const Outputs want = unfused.run(feeds);
  for (const std::string& p : test::OpTester::runnable_providers()) {
    // The reference behind a provider takes the nodes it declines (an unfused Add).
    const std::vector<std::string> providers =
        p == "reference" ? std::vector<std::string>{p} : std::vector<std::string>{p, "reference"};
    Session s(path, SessionOptions().providers(providers));
    EXPECT_EQ(count_op(s, "recur::MatMulBias"), want_fused) << p << "\n" << s.explain();
    if (want_fused) {
      EXPECT_EQ(count_op(s, "Add"), 0) << p;
      if (!c.activation.empty()) {
        EXPECT_EQ(count_op(s, c.activation), 0) << p;
      }
      EXPECT_NE(s.explain().find("fused MatMul 'mm', Add 'add'"), std::string::npos);
    }
    const Outputs got = s.run(feeds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].shape(), want[o].shape()) << p;
      for (int64_t i = 0; i < got[o].numel(); ++i) {
        const float g = got[o].data<float>()[i], w = want[o].data<float>()[i];
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(g)) << p << " output " << o << " at " << i << ": " << g;
        } else {
          EXPECT_NEAR(g, w, 1e-5) << p << " output " << o << " at " << i;
        }
      }
    }
  }
}

TEST(FuseMatMul, BiasAloneMatchesTheUnfusedReference) { check({}, 1); }

TEST(FuseMatMul, BiasAndReluMatchTheUnfusedReference) { check({.activation = "Relu"}, 1); }

// A Relu's NaN stays NaN when fused: the reference's MatMulBias and oneDNN's Relu post-op
// gave 0 for it, where the unfused Relu keeps it.
TEST(FuseMatMul, ANaNInAStaysNaNThroughTheFusedRelu) {
  check({.activation = "Relu", .nan_in_a = true}, 1);
  check({.activation = "Relu",
         .b_shape = {1024, 1100},
         .bias_shape = {1100},
         .k = 1024,
         .nan_in_a = true},
        1);
}

TEST(FuseMatMul, BiasAndEachGeluMatchTheUnfusedReference) {
  check({.activation = "Gelu"}, 1);
  check({.activation = "Gelu", .approximate = "tanh"}, 1);
}

// The bias on the Add's left, as a [1, 1, N] tensor; A of rank 2.
TEST(FuseMatMul, TheBiasOnEitherSideAndOfAnyLeadingOnes) {
  check({.bias_shape = {1, 1, 5}, .bias_first = true}, 1);
  check({.activation = "Relu", .rank2 = true}, 1);
}

// A large product takes oneDNN's primitive (its bias and eltwise post-op), not recur's own
// loop for small ones.
TEST(FuseMatMul, ALargeProductMatchesTooThroughThePrimitive) {
  check({.activation = "Gelu", .b_shape = {1024, 1100}, .bias_shape = {1100}, .k = 1024}, 1);
}

TEST(FuseMatMul, WhatTheFusedNodeCannotTakeIsLeftAlone) {
  check({.bias_is_input = true}, 0);                        // not a constant
  check({.product_read_twice = true}, 0);                   // the product read twice
  check({.bias_shape = {3, 5}}, 0);                         // not one value a column
  check({.activation = "Gelu", .approximate = "none"}, 1);  // the default, written out
}

}  // namespace
}  // namespace recur::testing
