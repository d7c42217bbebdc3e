// Absurd sizes from corrupt or hostile inputs: ConstantOfShape, Expand, Tile, Range, OneHot
// and Pad must refuse them with a clear error before allocating, at run time and, where the
// sizes are constants, at load.
#include <limits>

#include "tests/providers/reference/tensor/node_model.h"

namespace recur::tensor_test {
namespace {

Tensor i64(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

void expect_node_error(const std::function<void()>& f, const std::string& node,
                       const std::string& why) {
  const std::string msg = error_of(f);
  EXPECT_NE(msg.find(node), std::string::npos) << msg;
  EXPECT_NE(msg.find(why), std::string::npos) << msg;
}

constexpr int64_t kBig = int64_t{1} << 20;

TEST(SizeLimits, ConstantOfShape) {
  NodeModel m = NodeModel("ConstantOfShape", 9).input("s", DType::kInt64, {-1}).output("y");
  const Session s = m.session();
  expect_node_error(
      [&] {
        s.run({{"s", i64({kBig, kBig, kBig})}});
      },
      "node 'n' (ConstantOfShape)", "exceed the host's memory");
  // The product overflows int64.
  expect_node_error(
      [&] {
        s.run({{"s", i64({kBig, kBig, kBig, kBig})}});
      },
      "node 'n' (ConstantOfShape)", "exceed the host's memory");
  expect_node_error(
      [&] {
        s.run({{"s", i64({2, -1})}});
      },
      "node 'n' (ConstantOfShape)", "negative dimension");
  // A zero dimension makes the rest harmless.
  EXPECT_EQ(s.run({{"s", i64({0, std::numeric_limits<int64_t>::max()})}})[0].numel(), 0);
  expect_node_error(
      [] {
        NodeModel("ConstantOfShape", 9)
            .constant("s", i64({kBig, kBig, kBig}))
            .output("y")
            .session();
      },
      "node 'n' (ConstantOfShape)", "exceed the host's memory");
}

TEST(SizeLimits, Expand) {
  const Tensor x = Tensor::from_vector<float>({1}, {1.0f});
  NodeModel m = NodeModel("Expand", 13).input("x", x).input("s", DType::kInt64, {-1}).output("y");
  const Session s = m.session();
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"s", i64({kBig, kBig, kBig})}});
      },
      "node 'n' (Expand)", "exceed the host's memory");
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"s", i64({3, -2})}});
      },
      "node 'n' (Expand)", "negative dimension");
  const Tensor x2 = Tensor::from_vector<float>({2}, {1.0f, 2.0f});
  expect_node_error(
      [&] {
        NodeModel("Expand", 13)
            .input("x", x2)
            .input("s", DType::kInt64, {1})
            .output("y")
            .run({{"x", x2}, {"s", i64({3})}});
      },
      "node 'n' (Expand)", "broadcast");
}

TEST(SizeLimits, Tile) {
  const Tensor x = Tensor::from_vector<float>({1, 2}, {1.0f, 2.0f});
  NodeModel m = NodeModel("Tile", 13).input("x", x).input("r", DType::kInt64, {2}).output("y");
  const Session s = m.session();
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"r", i64({kBig, kBig * kBig})}});
      },
      "node 'n' (Tile)", "exceed the host's memory");
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"r", i64({2, std::numeric_limits<int64_t>::max()})}});
      },
      "node 'n' (Tile)", "overflows");
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"r", i64({2, -1})}});
      },
      "node 'n' (Tile)", "negative count");
  expect_node_error(
      [&] {
        NodeModel("Tile", 13)
            .input("x", x)
            .input("r", DType::kInt64, {3})
            .output("y")
            .run({{"x", x}, {"r", i64({1, 1, 1})}});
      },
      "node 'n' (Tile)", "3 entries for an input of rank 2");
}

TEST(SizeLimits, Range) {
  NodeModel m = NodeModel("Range", 11)
                    .input("a", DType::kInt64, {})
                    .input("b", DType::kInt64, {})
                    .input("c", DType::kInt64, {})
                    .output("y");
  const Session s = m.session();
  auto run = [&](int64_t a, int64_t b, int64_t c) {
    return s.run({{"a", Tensor::scalar<int64_t>(a)},
                  {"b", Tensor::scalar<int64_t>(b)},
                  {"c", Tensor::scalar<int64_t>(c)}});
  };
  expect_node_error([&] { run(0, std::numeric_limits<int64_t>::max(), 1); }, "node 'n' (Range)",
                    "exceed the host's memory");
  expect_node_error(
      [&] { run(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 1); },
      "node 'n' (Range)", "too many elements");
  expect_node_error([&] { run(0, 5, 0); }, "node 'n' (Range)", "delta is 0");
  // numpy: np.arange(-9 * 10**18, 9 * 10**18, 4 * 10**18); i * delta overflows int64 here.
  const int64_t e18 = 1'000'000'000'000'000'000;
  EXPECT_EQ(values_of<int64_t>(run(-9 * e18, 9 * e18, 4 * e18)[0]),
            (std::vector<int64_t>{-9 * e18, -5 * e18, -1 * e18, 3 * e18, 7 * e18}));
  const std::string msg = error_of([] {
    NodeModel("Range", 11)
        .constant("a", Tensor::scalar<float>(0.0f))
        .constant("b", Tensor::scalar<float>(1e30f))
        .constant("c", Tensor::scalar<float>(1.0f))
        .output("y")
        .session();
  });
  EXPECT_NE(msg.find("node 'n' (Range)"), std::string::npos) << msg;
}

TEST(SizeLimits, OneHotDepth) {
  const Tensor idx = Tensor::from_vector<int64_t>({kBig, 1}, std::vector<int64_t>(kBig, 0));
  expect_node_error(
      [&] {
        NodeModel("OneHot", 11)
            .input("i", idx)
            .input("d", DType::kInt64, {})
            .input("v", DType::kFloat32, {2})
            .output("y")
            .run({{"i", idx},
                  {"d", Tensor::scalar<int64_t>(kBig * kBig)},
                  {"v", Tensor::from_vector<float>({2}, {0, 1})}});
      },
      "node 'n' (OneHot)", "exceed the host's memory");
}

// An axes input declared with 2^40 elements made Unsqueeze's shape rule build a 2^40-long
// dimension list at load (found by mutating models under ASan). The rule now leaves such a
// rank unknown; the session loads, and a run then checks the feeds against the declaration.
TEST(SizeLimits, InferredRankFromACorruptDeclaration) {
  NodeModel m = NodeModel("Unsqueeze", 13)
                    .input("x", DType::kFloat32, {2, 3})
                    .input("axes", DType::kInt64, {int64_t{1} << 40})
                    .output("y");
  const Session s = m.session();  // loads: the inferred rank is left unknown
  const std::string msg = error_of([&] {
    s.run({{"x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}, {"axes", i64({0})}});
  });
  EXPECT_NE(msg.find("input 'axes' has shape [1]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace recur::tensor_test
