// ScatterElements, Scatter and ScatterND: reductions, duplicate indices, and the errors for
// indices out of range and mismatched updates. Expected values come from numpy loops
// (np.add.at for the duplicates).
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

void expect_node_error(const std::function<void()>& f, const std::string& node,
                       const std::string& why) {
  const std::string msg = error_of(f);
  EXPECT_NE(msg.find(node), std::string::npos) << msg;
  EXPECT_NE(msg.find(why), std::string::npos) << msg;
}

Outputs scatter(const std::string& op, int opset, const Tensor& data, const Tensor& idx,
                const Tensor& upd, int64_t axis, const std::string& reduction = "none") {
  OpTester m(op, opset);
  m.input("x", data).input("i", idx).input("u", upd).output("y");
  if (op != "ScatterND") m.attr("axis", axis);
  if (reduction != "none") m.attr("reduction", reduction);
  return m.run({{"x", data}, {"i", idx}, {"u", upd}});
}

TEST(ScatterElements, MulReductionLeavesTheInputAlone) {
  const Tensor x = Tensor::from_vector<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  Outputs out =
      scatter("ScatterElements", 16, x, Tensor::from_vector<int64_t>({2, 2}, {0, 2, 1, -2}),
              Tensor::from_vector<double>({2, 2}, {10, 20, 2, 3}), 1, "mul");
  EXPECT_EQ(values<double>(out[0]), (std::vector<double>{10, 2, 60, 4, 30, 6}));
  EXPECT_EQ(values<double>(x), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(ScatterElements, AddOnBoolIsOr) {
  const Tensor x = Tensor::from_vector<bool>({3}, {false, true, false});
  Outputs out = scatter("ScatterElements", 16, x, Tensor::from_vector<int64_t>({2}, {0, 1}),
                        Tensor::from_vector<bool>({2}, {true, false}), 0, "add");
  EXPECT_EQ(values<bool>(out[0]), (std::vector<bool>{true, true, false}));
}

TEST(ScatterElements, BadInputsAreErrors) {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {0, 0, 0, 0});
  expect_node_error(
      [&] {
        scatter("ScatterElements", 13, x, Tensor::from_vector<int64_t>({1, 1}, {2}),
                Tensor::from_vector<float>({1, 1}, {1}), 0);
      },
      "node 'node' (ScatterElements)", "out of range");
  expect_node_error(
      [&] {
        scatter("ScatterElements", 13, x, Tensor::from_vector<int64_t>({1, 2}, {0, 0}),
                Tensor::from_vector<float>({1, 1}, {1}), 0);
      },
      "node 'node' (ScatterElements)", "differ in shape");
  expect_node_error(
      [&] {
        scatter("Scatter", 9, x, Tensor::from_vector<int32_t>({1, 1}, {-3}),
                Tensor::from_vector<float>({1, 1}, {1}), 1);
      },
      "node 'node' (Scatter)", "out of range");
}

TEST(Scatter, Opset9IsScatterElements) {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {0, 0, 0, 0});
  Outputs out = scatter("Scatter", 9, x, Tensor::from_vector<int64_t>({1, 2}, {1, 0}),
                        Tensor::from_vector<float>({1, 2}, {5, 6}), 0);
  // numpy: y = x.copy(); y[1, 0] = 5; y[0, 1] = 6
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0, 6, 5, 0}));
}

TEST(ScatterND, AddWithDuplicateIndices) {
  // numpy: y = np.zeros((4, 2)); np.add.at(y, [1, 3, 1], updates)
  Outputs out = scatter("ScatterND", 16, Tensor::zeros(DType::kFloat32, {4, 2}),
                        Tensor::from_vector<int64_t>({3, 1}, {1, 3, 1}),
                        Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6}), 0, "add");
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0, 0, 6, 8, 0, 0, 3, 4}));
}

TEST(ScatterND, BadInputsAreErrors) {
  const Tensor x = Tensor::zeros(DType::kFloat32, {4, 2});
  expect_node_error(
      [&] {
        scatter("ScatterND", 13, x, Tensor::from_vector<int64_t>({1, 1}, {4}),
                Tensor::from_vector<float>({1, 2}, {1, 2}), 0);
      },
      "node 'node' (ScatterND)", "out of range");
  expect_node_error(
      [&] {
        scatter("ScatterND", 13, x, Tensor::from_vector<int64_t>({1, 1}, {-5}),
                Tensor::from_vector<float>({1, 2}, {1, 2}), 0);
      },
      "node 'node' (ScatterND)", "out of range");
  expect_node_error(
      [&] {
        scatter("ScatterND", 13, x, Tensor::from_vector<int64_t>({1, 1}, {0}),
                Tensor::from_vector<float>({1, 3}, {1, 2, 3}), 0);
      },
      "node 'node' (ScatterND)", "updates have shape");
  expect_node_error(
      [&] {
        scatter("ScatterND", 13, x, Tensor::from_vector<int64_t>({1, 3}, {0, 0, 0}),
                Tensor::from_vector<float>({1}, {1}), 0);
      },
      "node 'node' (ScatterND)", "too long");
}

TEST(ScatterND, ReductionsNeedTheirOpset) {
  // max/min arrived in opset 18, reductions at all in opset 16.
  const Tensor x = Tensor::from_vector<float>({2}, {1, 2});
  const Tensor i = Tensor::from_vector<int64_t>({1, 1}, {0});
  const Tensor u = Tensor::from_vector<float>({1}, {5});
  Outputs out = scatter("ScatterND", 18, x, i, u, 0, "max");
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{5, 2}));
  expect_node_error([&] { scatter("ScatterND", 16, x, i, u, 0, "min"); }, "node 'node'",
                    "needs opset 18");
  expect_node_error([&] { scatter("ScatterElements", 13, x, i, u, 0, "add"); }, "node 'node'",
                    "needs opset 16");
}

}  // namespace
}  // namespace recur::test
