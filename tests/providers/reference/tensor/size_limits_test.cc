// Absurd sizes from corrupt or hostile inputs: ConstantOfShape, Expand, Tile, Range, OneHot
// and Pad must refuse them with a clear error before allocating, at run time and, where the
// sizes are constants, at load.
#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
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
  OpTester m = OpTester("ConstantOfShape", 9).input("s", DType::kInt64, {-1}).output("y");
  const Session s = m.session();
  expect_node_error(
      [&] {
        s.run({{"s", i64({kBig, kBig, kBig})}});
      },
      "node 'node' (ConstantOfShape)", "exceed the host's memory");
  // The product overflows int64.
  expect_node_error(
      [&] {
        s.run({{"s", i64({kBig, kBig, kBig, kBig})}});
      },
      "node 'node' (ConstantOfShape)", "exceed the host's memory");
  expect_node_error(
      [&] {
        s.run({{"s", i64({2, -1})}});
      },
      "node 'node' (ConstantOfShape)", "negative dimension");
  // A zero dimension makes the rest harmless.
  EXPECT_EQ(s.run({{"s", i64({0, std::numeric_limits<int64_t>::max()})}})[0].numel(), 0);
  expect_node_error(
      [] {
        OpTester("ConstantOfShape", 9).constant("s", i64({kBig, kBig, kBig})).output("y").session();
      },
      "node 'node' (ConstantOfShape)", "exceed the host's memory");
}

TEST(SizeLimits, Expand) {
  const Tensor x = Tensor::from_vector<float>({1}, {1.0f});
  OpTester m = OpTester("Expand", 13).input("x", x).input("s", DType::kInt64, {-1}).output("y");
  const Session s = m.session();
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"s", i64({kBig, kBig, kBig})}});
      },
      "node 'node' (Expand)", "exceed the host's memory");
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"s", i64({3, -2})}});
      },
      "node 'node' (Expand)", "negative dimension");
  const Tensor x2 = Tensor::from_vector<float>({2}, {1.0f, 2.0f});
  expect_node_error(
      [&] {
        OpTester("Expand", 13)
            .input("x", x2)
            .input("s", DType::kInt64, {1})
            .output("y")
            .run({{"x", x2}, {"s", i64({3})}});
      },
      "node 'node' (Expand)", "broadcast");
}

TEST(SizeLimits, Tile) {
  const Tensor x = Tensor::from_vector<float>({1, 2}, {1.0f, 2.0f});
  OpTester m = OpTester("Tile", 13).input("x", x).input("r", DType::kInt64, {2}).output("y");
  const Session s = m.session();
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"r", i64({kBig, kBig * kBig})}});
      },
      "node 'node' (Tile)", "exceed the host's memory");
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"r", i64({2, std::numeric_limits<int64_t>::max()})}});
      },
      "node 'node' (Tile)", "overflows");
  expect_node_error(
      [&] {
        s.run({{"x", x}, {"r", i64({2, -1})}});
      },
      "node 'node' (Tile)", "negative count");
  expect_node_error(
      [&] {
        OpTester("Tile", 13)
            .input("x", x)
            .input("r", DType::kInt64, {3})
            .output("y")
            .run({{"x", x}, {"r", i64({1, 1, 1})}});
      },
      "node 'node' (Tile)", "3 entries for an input of rank 2");
}

TEST(SizeLimits, Range) {
  OpTester m = OpTester("Range", 11)
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
  expect_node_error([&] { run(0, std::numeric_limits<int64_t>::max(), 1); }, "node 'node' (Range)",
                    "exceed the host's memory");
  expect_node_error(
      [&] { run(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 1); },
      "node 'node' (Range)", "too many elements");
  expect_node_error([&] { run(0, 5, 0); }, "node 'node' (Range)", "delta is 0");
  // numpy: np.arange(-9 * 10**18, 9 * 10**18, 4 * 10**18); i * delta overflows int64 here.
  const int64_t e18 = 1'000'000'000'000'000'000;
  EXPECT_EQ(values<int64_t>(run(-9 * e18, 9 * e18, 4 * e18)[0]),
            (std::vector<int64_t>{-9 * e18, -5 * e18, -1 * e18, 3 * e18, 7 * e18}));
  const std::string msg = error_of([] {
    OpTester("Range", 11)
        .constant("a", Tensor::scalar<float>(0.0f))
        .constant("b", Tensor::scalar<float>(1e30f))
        .constant("c", Tensor::scalar<float>(1.0f))
        .output("y")
        .session();
  });
  EXPECT_NE(msg.find("node 'node' (Range)"), std::string::npos) << msg;
}

TEST(SizeLimits, OneHotDepth) {
  const Tensor idx = Tensor::from_vector<int64_t>({kBig, 1}, std::vector<int64_t>(kBig, 0));
  expect_node_error(
      [&] {
        OpTester("OneHot", 11)
            .input("i", idx)
            .input("d", DType::kInt64, {})
            .input("v", DType::kFloat32, {2})
            .output("y")
            .run({{"i", idx},
                  {"d", Tensor::scalar<int64_t>(kBig * kBig)},
                  {"v", Tensor::from_vector<float>({2}, {0, 1})}});
      },
      "node 'node' (OneHot)", "exceed the host's memory");
}

// An axes input declared with 2^40 elements made Unsqueeze's shape rule build a 2^40-long
// dimension list at load (found by mutating models under ASan). The rule now leaves such a
// rank unknown; the session loads, and a run then checks the feeds against the declaration.
TEST(SizeLimits, InferredRankFromACorruptDeclaration) {
  OpTester m = OpTester("Unsqueeze", 13)
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
}  // namespace recur::test
