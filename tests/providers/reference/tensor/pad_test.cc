// Pad: negative pads (cropping) combined with reflect/edge/constant padding, reflection past
// the edge, the attribute forms of old opsets, and the errors for impossible pads. Expected
// values are numpy's np.pad of the cropped array.
#include <cmath>
#include <utility>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor i64(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

Outputs pad(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode) {
  return OpTester("Pad", 13)
      .input("x", x)
      .input("p", DType::kInt64, {-1})
      .attr("mode", mode)
      .output("y")
      .run({{"x", x}, {"p", i64(pads)}});
}

TEST(Pad, ReflectAfterCropping) {
  // numpy: np.pad(np.arange(5)[1:], (0, 3), 'reflect')
  Outputs out = pad(i64({0, 1, 2, 3, 4}), {-1, 3}, "reflect");
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{1, 2, 3, 4, 3, 2, 1}));
}

TEST(Pad, ReflectFurtherThanTheDimension) {
  // numpy: np.pad([1, 2, 3], (5, 5), 'reflect')
  Outputs out = pad(i64({1, 2, 3}), {5, 5}, "reflect");
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2}));
}

TEST(Pad, EdgeOnFloat16) {
  const Tensor x = Tensor::from_vector<Float16>(
      {2, 2}, {Float16(1.5f), Float16(2.5f), Float16(3.5f), Float16(4.5f)});
  // numpy: np.pad(x, ((1, 0), (0, 2)), 'edge')
  Outputs out = pad(x, {1, 0, 0, 2}, "edge");
  ASSERT_EQ(out[0].shape(), (Shape{3, 4}));
  std::vector<float> got;
  for (Float16 h : values<Float16>(out[0])) got.push_back(static_cast<float>(h));
  EXPECT_EQ(got, (std::vector<float>{1.5, 2.5, 2.5, 2.5, 1.5, 2.5, 2.5, 2.5, 3.5, 4.5, 4.5, 4.5}));
}

TEST(Pad, CropOneEndPadTheOther) {
  const Tensor x = Tensor::from_vector<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  // Axis 1 gains one element at the start and loses one at the end.
  Outputs out = OpTester("Pad", 13)
                    .input("x", x)
                    .constant("p", i64({0, 1, 0, -1}))
                    .attr("mode", std::string("edge"))
                    .output("y")
                    .run({{"x", x}});
  // numpy: np.pad(x[:, :-1], ((0, 0), (1, 0)), 'edge')
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{0, 0, 1, 3, 3, 4}));
}

TEST(Pad, ConstantValueInputAndCrop) {
  const Tensor x = Tensor::from_vector<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  // numpy: np.pad(x[:, 1:], ((1, 1), (0, 0)), constant_values=7)
  Outputs out = OpTester("Pad", 11)
                    .input("x", x)
                    .input("p", DType::kInt64, {4})
                    .input("c", DType::kInt32, {})
                    .output("y")
                    .run({{"x", x}, {"p", i64({1, -1, 1, 0})}, {"c", Tensor::scalar<int32_t>(7)}});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{7, 7, 1, 2, 4, 5, 7, 7}));
}

TEST(Pad, Opset2PadsAttributeAndOpset1Paddings) {
  const Tensor x = Tensor::from_vector<float>({2}, {1.0f, 2.0f});
  // numpy: np.pad([1, 2], (1, 2), constant_values=-1)
  Outputs out2 = OpTester("Pad", 2)
                     .input("x", x)
                     .attr("pads", std::vector<int64_t>{1, 2})
                     .attr("value", -1.0f)
                     .output("y")
                     .run({{"x", x}});
  EXPECT_EQ(values<float>(out2[0]), (std::vector<float>{-1, 1, 2, -1, -1}));
  Outputs out1 = OpTester("Pad", 1)
                     .input("x", x)
                     .attr("paddings", std::vector<int64_t>{1, 2})
                     .attr("mode", std::string("edge"))
                     .output("y")
                     .run({{"x", x}});
  EXPECT_EQ(values<float>(out1[0]), (std::vector<float>{1, 1, 2, 2, 2}));
}

// Opset 2's `value` is a float, converted to the data's integer type as Cast converts
// (np.array([v]).astype(np.uint16) for the finite ones): truncated and wrapped, NaN to 0. A C++
// cast of NaN or 70000.0 to uint16 is undefined (a fuzzer find under UBSan).
TEST(Pad, Opset2FloatValueIntoIntegers) {
  const Tensor x = Tensor::from_vector<uint16_t>({1}, {7});
  for (const auto& [value, want] : std::vector<std::pair<float, uint16_t>>{
           {std::nanf(""), 0}, {70000.0f, 4464}, {-1.0f, 65535}, {3.9f, 3}}) {
    Outputs o = OpTester("Pad", 2)
                    .input("x", x)
                    .attr("pads", std::vector<int64_t>{1, 0})
                    .attr("value", value)
                    .output("y")
                    .run({{"x", x}});
    EXPECT_EQ(values<uint16_t>(o[0]), (std::vector<uint16_t>{want, 7})) << value;
  }
}

TEST(Pad, ImpossiblePadsAreErrors) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  struct Case {
    std::vector<int64_t> pads;
    std::string mode, why;
  };
  const std::vector<Case> cases = {
      {{0, -4, 0, 0}, "constant", "crop more than"},
      {{0, -2, 0, -2}, "constant", "crop more than"},
      {{0, std::numeric_limits<int64_t>::min(), 0, 0}, "edge", "crop more than"},
      {{1, 1}, "constant", "must have 4 entries"},
      {{0, -3, 0, 1}, "reflect", "no elements remain"},
      {{0, int64_t{1} << 40, 0, int64_t{1} << 40}, "constant", "exceed the host's memory"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of([&] { pad(x, c.pads, c.mode); });
    EXPECT_NE(msg.find("node 'node' (Pad)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.why), std::string::npos) << msg;
  }
}

TEST(Pad, ConstantPadsGiveShapesAtLoad) {
  Session s = OpTester("Pad", 13)
                  .input("x", DType::kFloat32, {-1, 5})
                  .constant("p", i64({0, -1, 0, 3}))
                  .output("y")
                  .session();
  EXPECT_EQ(s.outputs()[0].shape_string(), "[d0,7]");
  const std::string msg = error_of([] {
    OpTester("Pad", 13)
        .input("x", DType::kFloat32, {2, 5})
        .constant("p", i64({0, -6, 0, 0}))
        .output("y")
        .session();
  });
  EXPECT_NE(msg.find("node 'node' (Pad)"), std::string::npos) << msg;
}

TEST(Pad, WrapNeedsOpset19) {
  // numpy: np.pad([1, 2, 3], (2, 1), 'wrap')
  const Tensor x = i64({1, 2, 3});
  Outputs out = OpTester("Pad", 19)
                    .input("x", x)
                    .constant("p", i64({2, 1}))
                    .attr("mode", std::string("wrap"))
                    .output("y")
                    .run({{"x", x}});
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{2, 3, 1, 2, 3, 1}));
  OpTester("Pad", 18)
      .input(x)
      .constant(i64({2, 1}))
      .attr("mode", std::string("wrap"))
      .expect_error(ErrorCode::kInvalidModel, "needs opset 19")
      .check();
}

}  // namespace
}  // namespace recur::test
