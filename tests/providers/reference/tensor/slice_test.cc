// Slice: clamping, negative and extreme steps, the errors for impossible arguments, the
// opset-1 attribute form, and shape inference with constant inputs. Expected values are
// numpy's basic slicing of the same arrays.
#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor arange_i32(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kInt32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(i);
  return t;
}

Tensor i64(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

Outputs slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
              const std::vector<int64_t>& axes, const std::vector<int64_t>& steps) {
  return OpTester("Slice", 13)
      .input("x", x)
      .input("s", DType::kInt64, {-1})
      .input("e", DType::kInt64, {-1})
      .input("a", DType::kInt64, {-1})
      .input("t", DType::kInt64, {-1})
      .output("y")
      .run({{"x", x}, {"s", i64(starts)}, {"e", i64(ends)}, {"a", i64(axes)}, {"t", i64(steps)}});
}

TEST(Slice, ClampsAndStepsLikeNumpy) {
  const Tensor x = arange_i32({10});
  struct Case {
    int64_t start, end, step;
    std::vector<int32_t> want;
  };
  const std::vector<Case> cases = {
      {8, 1, -3, {8, 5, 2}},                             // x[8:1:-3]
      {kMax, kMin, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},  // x[::-1] written with extremes
      {-(int64_t{1} << 62), 3, 1, {0, 1, 2}},            // x[-2**62:3]
      {5, 0, kMin, {5}},                                 // x[5:0:-2**63]
      {0, kMax, kMax, {0}},                              // x[0::2**63-1]
      {-3, -100, -2, {7, 5, 3, 1}},                      // x[-3:-100:-2]
      {20, 5, 1, {}},                                    // x[20:5]
  };
  for (const Case& c : cases) {
    Outputs out = slice(x, {c.start}, {c.end}, {0}, {c.step});
    EXPECT_EQ(values<int32_t>(out[0]), c.want) << c.start << ":" << c.end << ":" << c.step;
  }
}

TEST(Slice, TwoAxesWithNegativeAxisAndStep) {
  // numpy: np.arange(12).reshape(3, 4)[::-1, 3:0:-2]
  Outputs out = slice(arange_i32({3, 4}), {-1, 3}, {kMin, 0}, {0, -1}, {-1, -2});
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{11, 9, 7, 5, 3, 1}));
}

TEST(Slice, ImpossibleArgumentsAreErrors) {
  const Tensor x = arange_i32({3, 4});
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
    std::string why;
  };
  const std::vector<Case> cases = {
      {{0}, {2}, {0}, {0}, "contain 0"},
      {{0, 0}, {2, 2}, {1, -1}, {1, 1}, "repeat an axis"},
      {{0}, {2, 3}, {0}, {1}, "differ in length"},
      {{0}, {2}, {2}, {1}, "out of range"},
      {{0}, {2}, {0}, {1, 1}, "differ in length"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of([&] { slice(x, c.starts, c.ends, c.axes, c.steps); });
    EXPECT_NE(msg.find("node 'node' (Slice)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.why), std::string::npos) << msg;
  }
}

TEST(Slice, Opset1Attributes) {
  const Tensor x = arange_i32({3, 4});
  // numpy: x[:, 1:-1]
  Outputs out = OpTester("Slice", 1)
                    .input("x", x)
                    .attr("starts", std::vector<int64_t>{1})
                    .attr("ends", std::vector<int64_t>{-1})
                    .attr("axes", std::vector<int64_t>{1})
                    .output("y")
                    .run({{"x", x}});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{1, 2, 5, 6, 9, 10}));
}

TEST(Slice, InfersShapesFromConstantInputs) {
  Session s = OpTester("Slice", 13)
                  .input("x", DType::kFloat32, {-1, 10, -1})
                  .constant("s", i64({2, 0}))
                  .constant("e", i64({8, kMax}))
                  .constant("a", i64({1, 2}))
                  .output("y")
                  .session();
  EXPECT_EQ(s.outputs()[0].shape_string(), "[d0,6,d2]");
  Session s2 = OpTester("Slice", 13)
                   .input("x", DType::kFloat32, {-1, 10})
                   .constant("s", i64({1, -1}))
                   .constant("e", i64({kMax, kMin}))
                   .constant("a", i64({0, 1}))
                   .constant("t", i64({1, -3}))
                   .output("y")
                   .session();
  ASSERT_TRUE(s2.outputs()[0].shape.has_value());
  EXPECT_FALSE((*s2.outputs()[0].shape)[0].is_fixed());  // d0 - 1
  EXPECT_EQ((*s2.outputs()[0].shape)[1].value, 4);       // x[9::-3] has 4 elements
}

}  // namespace
}  // namespace recur::test
