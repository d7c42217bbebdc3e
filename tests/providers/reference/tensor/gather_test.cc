// Gather, GatherElements and GatherND: negative indices, batch_dims, and the errors for
// indices out of range. Expected values are numpy's indexing of the same arrays.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor arange_f32(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

void expect_node_error(const std::function<void()>& f, const std::string& node,
                       const std::string& why) {
  const std::string msg = error_of(f);
  EXPECT_NE(msg.find(node), std::string::npos) << msg;
  EXPECT_NE(msg.find(why), std::string::npos) << msg;
}

Outputs gather(const Tensor& data, const Tensor& idx, int64_t axis) {
  return OpTester("Gather", 13)
      .input("x", data)
      .input("i", idx)
      .attr("axis", axis)
      .output("y")
      .run({{"x", data}, {"i", idx}});
}

TEST(Gather, NegativeIndicesAndInt32Indices) {
  // numpy: np.arange(6).reshape(2, 3)[:, [-1, 0]]
  Outputs out = gather(arange_f32({2, 3}), Tensor::from_vector<int32_t>({2}, {-1, 0}), 1);
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{2, 0, 5, 3}));
}

TEST(Gather, BoolData) {
  const Tensor x = Tensor::from_vector<bool>({3}, {true, false, true});
  Outputs out = gather(x, Tensor::from_vector<int64_t>({2, 2}, {1, 0, 2, 1}), 0);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<bool>(out[0]), (std::vector<bool>{false, true, true, false}));
}

TEST(Gather, IndexOutOfRangeIsAnError) {
  for (int64_t bad : {int64_t{3}, int64_t{-4}, int64_t{1} << 62}) {
    expect_node_error(
        [&] {
          gather(arange_f32({2, 3}), Tensor::from_vector<int64_t>({2}, {0, bad}), 1);
        },
        "node 'node' (Gather)", "out of range");
  }
  expect_node_error(
      [&] {
        gather(arange_f32({2, 3}), Tensor::from_vector<int64_t>({1}, {0}), 2);
      },
      "node 'node' (Gather)", "axis 2");
}

Outputs gather_elements(const Tensor& data, const Tensor& idx, int64_t axis) {
  return OpTester("GatherElements", 13)
      .input("x", data)
      .input("i", idx)
      .attr("axis", axis)
      .output("y")
      .run({{"x", data}, {"i", idx}});
}

TEST(GatherElements, SmallerIndicesThanData) {
  // numpy: np.take_along_axis(np.arange(12).reshape(3, 4)[:, :2], [[2, -1], [0, 1]] % 3, 0)
  Outputs out =
      gather_elements(arange_f32({3, 4}), Tensor::from_vector<int64_t>({2, 2}, {2, -1, 0, 1}), 0);
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{8, 9, 0, 5}));
}

TEST(GatherElements, BadIndicesAreErrors) {
  const Tensor x = arange_f32({2, 2});
  expect_node_error(
      [&] {
        gather_elements(x, Tensor::from_vector<int64_t>({2, 2}, {0, 1, 2, 0}), 1);
      },
      "node 'node' (GatherElements)", "out of range");
  expect_node_error(
      [&] {
        gather_elements(x, Tensor::from_vector<int64_t>({2, 1}, {0, -3}), 1);
      },
      "node 'node' (GatherElements)", "out of range");
  // Indices larger than the data along another axis would read past it.
  expect_node_error(
      [&] {
        gather_elements(x, Tensor::from_vector<int64_t>({3, 1}, {0, 0, 0}), 1);
      },
      "node 'node' (GatherElements)", "exceed data");
  expect_node_error(
      [&] {
        gather_elements(x, Tensor::from_vector<int64_t>({2}, {0, 0}), 1);
      },
      "node 'node' (GatherElements)", "differ in rank");
}

Outputs gather_nd(const Tensor& data, const Tensor& idx, int64_t batch_dims) {
  return OpTester("GatherND", 13)
      .input("x", data)
      .input("i", idx)
      .attr("batch_dims", batch_dims)
      .output("y")
      .run({{"x", data}, {"i", idx}});
}

TEST(GatherND, BatchDimsWithNegativeIndex) {
  // numpy: data = np.arange(24).reshape(2, 3, 4); [data[b][idx[b, j, 0]] for b, j]
  Outputs out =
      gather_nd(arange_f32({2, 3, 4}), Tensor::from_vector<int64_t>({2, 2, 1}, {2, -1, 0, 1}), 1);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(values<float>(out[0]),
            (std::vector<float>{8, 9, 10, 11, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
}

TEST(GatherND, BadIndicesAreErrors) {
  const Tensor x = arange_f32({2, 3});
  expect_node_error(
      [&] {
        gather_nd(x, Tensor::from_vector<int64_t>({1, 2}, {1, 3}), 0);
      },
      "node 'node' (GatherND)", "out of range");
  expect_node_error(
      [&] {
        gather_nd(x, Tensor::from_vector<int64_t>({1, 2}, {-3, 0}), 0);
      },
      "node 'node' (GatherND)", "out of range");
  expect_node_error(
      [&] {
        gather_nd(x, Tensor::from_vector<int64_t>({1, 3}, {0, 0, 0}), 0);
      },
      "node 'node' (GatherND)", "too long");
  expect_node_error(
      [&] {
        gather_nd(x, Tensor::from_vector<int64_t>({3, 1}, {0, 0, 0}), 1);
      },
      "node 'node' (GatherND)", "batch dimensions");
}

}  // namespace
}  // namespace recur::test
