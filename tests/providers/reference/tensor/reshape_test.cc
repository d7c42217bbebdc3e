// Reshape, Squeeze, Unsqueeze, Flatten and Identity: views of the input's memory, the
// errors for impossible shapes, and static shape inference with constant inputs.
#include <cstring>
#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor iota_f32(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i);
  return t;
}

// The kernels return views (tests/runtime/engine/session/memory_plan_test.cc checks that in
// the executor's frame); a session copies an output that views a feed, since the caller owns
// and may reuse the feed's buffer.
TEST(TensorViews, SessionOutputsOfFeedsAreCopies) {
  const Tensor x = iota_f32({2, 1, 3});
  struct Case {
    OpTester model;
    Shape want;
  };
  std::vector<Case> cases;
  cases.push_back({OpTester("Reshape", 14)
                       .input("x", x)
                       .constant("s", Tensor::from_vector<int64_t>({2}, {3, -1}))
                       .output("y"),
                   {3, 2}});
  cases.push_back({OpTester("Squeeze", 13).input("x", x).output("y"), {2, 3}});
  cases.push_back({OpTester("Unsqueeze", 13)
                       .input("x", x)
                       .constant("a", Tensor::from_vector<int64_t>({1}, {-1}))
                       .output("y"),
                   {2, 1, 3, 1}});
  cases.push_back(
      {OpTester("Flatten", 13).input("x", x).attr("axis", int64_t{2}).output("y"), {2, 3}});
  cases.push_back({OpTester("Identity", 16).input("x", x).output("y"), {2, 1, 3}});
  for (const Case& c : cases) {
    Outputs out = c.model.run({{"x", x}});
    EXPECT_EQ(out[0].shape(), c.want);
    EXPECT_NE(out[0].raw_data(), x.raw_data());
    EXPECT_EQ(std::memcmp(out[0].raw_data(), x.raw_data(), x.nbytes()), 0);
  }
}

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  const Tensor x = iota_f32({2, 3, 4});
  // numpy: x.reshape(2, 3 * 4 // 2, 2) for the spec [0, -1, 2].
  Outputs out = OpTester("Reshape", 13)
                    .input("x", x)
                    .input("s", DType::kInt64, {3})
                    .output("y")
                    .run({{"x", x}, {"s", Tensor::from_vector<int64_t>({3}, {0, -1, 2})}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 6, 2}));
}

TEST(Reshape, AllowZeroKeepsZero) {
  const Tensor x = Tensor::empty(DType::kFloat32, {0, 3});
  // numpy: np.zeros((0, 3)).reshape(3, 0).shape == (3, 0)
  Outputs out = OpTester("Reshape", 14)
                    .input("x", x)
                    .input("s", DType::kInt64, {2})
                    .attr("allowzero", int64_t{1})
                    .output("y")
                    .run({{"x", x}, {"s", Tensor::from_vector<int64_t>({2}, {3, 0})}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 0}));
}

TEST(Reshape, Opset1ShapeAttribute) {
  const Tensor x = iota_f32({6});
  Outputs out = OpTester("Reshape", 1)
                    .input("x", x)
                    .attr("shape", std::vector<int64_t>{3, 2})
                    .output("y")
                    .run({{"x", x}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
}

// Each bad shape spec, fed at run time.
TEST(Reshape, ImpossibleShapesAreErrorsNamingTheNode) {
  const Tensor x = iota_f32({2, 3});
  const std::vector<std::pair<std::vector<int64_t>, std::string>> cases = {
      {{5}, "6 elements"},
      {{-1, -1}, "more than one -1"},
      {{4, -1}, "cannot be inferred"},
      {{0, 0, 0}, "copies dimension 2"},
      {{-2, 3}, "negative dimension"},
      {{std::numeric_limits<int64_t>::max(), 2}, "too large"},
  };
  OpTester m = OpTester("Reshape", 14).input("x", x).input("s", DType::kInt64, {-1}).output("y");
  const Session s = m.session();
  for (const auto& [spec, why] : cases) {
    const Tensor st = Tensor::from_vector<int64_t>({static_cast<int64_t>(spec.size())}, spec);
    const std::string msg = error_of([&] { s.run({{"x", x}, {"s", st}}); });
    EXPECT_NE(msg.find("node 'node' (Reshape)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
  }
}

TEST(Reshape, AllowZeroWithMinusOneIsAnError) {
  const Tensor x = Tensor::empty(DType::kFloat32, {0, 3});
  const std::string msg = error_of([&] {
    OpTester("Reshape", 14)
        .input("x", x)
        .input("s", DType::kInt64, {2})
        .attr("allowzero", int64_t{1})
        .output("y")
        .run({{"x", x}, {"s", Tensor::from_vector<int64_t>({2}, {0, -1})}});
  });
  EXPECT_NE(msg.find("allowzero"), std::string::npos) << msg;
}

TEST(Reshape, ConstantBadShapeFailsAtLoad) {
  const std::string msg = error_of([] {
    OpTester("Reshape", 13)
        .input("x", DType::kFloat32, {2, 3})
        .constant("s", Tensor::from_vector<int64_t>({2}, {4, 4}))
        .output("y")
        .session();
  });
  EXPECT_NE(msg.find("node 'node' (Reshape)"), std::string::npos) << msg;
}

TEST(Reshape, InfersSymbolicShapesFromConstantSpec) {
  // [d0, 3, 4] with [0, -1]: the symbolic batch cancels, so -1 is 12.
  Session s = OpTester("Reshape", 13)
                  .input("x", DType::kFloat32, {-1, 3, 4})
                  .constant("s", Tensor::from_vector<int64_t>({2}, {0, -1}))
                  .output("y")
                  .session();
  ASSERT_TRUE(s.outputs()[0].shape.has_value());
  EXPECT_EQ(s.outputs()[0].shape_string(), "[d0,12]");
  // [d0, 6] to [-1, 3]: the -1 absorbs the symbol and stays unknown.
  Session s2 = OpTester("Reshape", 13)
                   .input("x", DType::kFloat32, {-1, 6})
                   .constant("s", Tensor::from_vector<int64_t>({2}, {-1, 3}))
                   .output("y")
                   .session();
  ASSERT_TRUE(s2.outputs()[0].shape.has_value());
  EXPECT_EQ(s2.outputs()[0].shape->size(), 2u);
  EXPECT_FALSE((*s2.outputs()[0].shape)[0].is_fixed());
  EXPECT_EQ((*s2.outputs()[0].shape)[1].value, 3);
}

TEST(Squeeze, AxisOfSizeOtherThanOneIsAnError) {
  const Tensor x = iota_f32({2, 1, 3});
  const std::string msg = error_of([&] {
    OpTester("Squeeze", 13)
        .input("x", x)
        .input("a", DType::kInt64, {1})
        .output("y")
        .run({{"x", x}, {"a", Tensor::from_vector<int64_t>({1}, {0})}});
  });
  EXPECT_NE(msg.find("node 'node' (Squeeze)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not 1"), std::string::npos) << msg;
}

TEST(Squeeze, Opset11AxesAttributeWithNegativeAxis) {
  const Tensor x = iota_f32({2, 3, 1});
  Outputs out = OpTester("Squeeze", 11)
                    .input("x", x)
                    .attr("axes", std::vector<int64_t>{-1})
                    .output("y")
                    .run({{"x", x}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
}

TEST(Unsqueeze, RepeatedOrOutOfRangeAxesAreErrors) {
  const Tensor x = iota_f32({2, 3});
  for (const std::vector<int64_t>& axes :
       {std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, -3}, std::vector<int64_t>{4}}) {
    const std::string msg = error_of([&] {
      OpTester("Unsqueeze", 13)
          .input("x", x)
          .input("a", DType::kInt64, {static_cast<int64_t>(axes.size())})
          .output("y")
          .run({{"x", x},
                {"a", Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes)}});
    });
    EXPECT_NE(msg.find("node 'node' (Unsqueeze)"), std::string::npos) << msg;
  }
}

TEST(Unsqueeze, InfersFromConstantAxes) {
  Session s = OpTester("Unsqueeze", 13)
                  .input("x", DType::kFloat32, {-1, 3})
                  .constant("a", Tensor::from_vector<int64_t>({2}, {0, -1}))
                  .output("y")
                  .session();
  EXPECT_EQ(s.outputs()[0].shape_string(), "[1,d0,3,1]");
}

TEST(Unsqueeze, Opset1AxesAttribute) {
  const Tensor x = iota_f32({3});
  Outputs out = OpTester("Unsqueeze", 1)
                    .input("x", x)
                    .attr("axes", std::vector<int64_t>{0, 2})
                    .output("y")
                    .run({{"x", x}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 3, 1}));
}

TEST(Flatten, AxisOutOfRangeIsAnError) {
  const Tensor x = iota_f32({2, 3});
  const std::string msg = error_of([&] {
    OpTester("Flatten", 13).input("x", x).attr("axis", int64_t{3}).output("y").run({{"x", x}});
  });
  EXPECT_NE(msg.find("node 'node' (Flatten)"), std::string::npos) << msg;
}

TEST(TensorViews, Opset21MovesInt4AndFloat8) {
  // Reshape-21, Transpose-21 and Identity-21 take int4 and float8: one byte per element here.
  OpTester("Reshape", 21)
      .input(tensor<Int4>({2, 2}, {Int4{-8}, Int4{1}, Int4{7}, Int4{-1}}))
      .constant(Tensor::from_vector<int64_t>({1}, {4}))
      .expect<Int4>({4}, {Int4{-8}, Int4{1}, Int4{7}, Int4{-1}})
      .check();
  OpTester("Transpose", 21)
      .input(tensor<UInt4>({2, 2}, {UInt4{0}, UInt4{1}, UInt4{2}, UInt4{15}}))
      .expect<UInt4>({2, 2}, {UInt4{0}, UInt4{2}, UInt4{1}, UInt4{15}})
      .check();
  const auto f8 = [](uint8_t b) { return Float8E5M2::from_bits(b); };
  OpTester("Identity", 21)
      .input(tensor<Float8E5M2>({2}, {f8(0x3C), f8(0x7C)}))
      .expect<Float8E5M2>({2}, {f8(0x3C), f8(0x7C)})
      .check();
}

}  // namespace
}  // namespace recur::test
