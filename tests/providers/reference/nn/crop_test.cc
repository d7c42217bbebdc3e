// Crop and ImageScaler, the experimental image operators of opsets before 10: their values are
// checked against ONNX Runtime's in tests/data/experimental/exp_*; here, what they refuse.
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor image(const Shape& s) {
  return Tensor::from_vector<float>(s, std::vector<float>(static_cast<size_t>(shape_numel(s)), 1));
}

TEST(Crop, RefusesWindowsThatDoNotFit) {
  OpTester("Crop", 8)
      .input("x", image({1, 1, 4, 4}))
      .attr("border", std::vector<int64_t>{1, 1, 1})
      .output("y")
      .expect_error(ErrorCode::kInvalidModel, "border must hold 4 values")
      .check();
  OpTester("Crop", 8)
      .input("x", image({1, 1, 4, 4}))
      .attr("border", std::vector<int64_t>{2, 0, 3, 0})
      .output("y")
      .expect_error(ErrorCode::kInvalidModel, "leaves nothing of 4x4")
      .check();
  OpTester("Crop", 8)
      .input("x", image({1, 1, 4, 4}))
      .dynamic_shapes()
      .attr("border", std::vector<int64_t>{1, 1, 0, 0})
      .attr("scale", std::vector<int64_t>{4, 2})
      .output("y")
      .expect_error(ErrorCode::kInvalidArgument, "does not fit in 4x4")
      .check();
  // A declared rank other than 4 is the model's error, found at load.
  OpTester("Crop", 8)
      .input("x", image({4, 4}))
      .attr("border", std::vector<int64_t>{0, 0, 0, 0})
      .output("y")
      .expect_error(ErrorCode::kInvalidModel, "4-D (NCHW)")
      .check();
}

TEST(ImageScaler, RefusesABiasPerChannelOfAnotherCount) {
  OpTester("ImageScaler", 8)
      .input("x", image({1, 3, 2, 2}))
      .attr("bias", std::vector<float>{1.0f, 2.0f})
      .output("y")
      .expect_error(ErrorCode::kInvalidArgument, "bias has 2 values for 3 channels")
      .check();
  // Without bias: scale alone.
  OpTester("ImageScaler", 8)
      .input("x", image({1, 2, 1, 1}))
      .attr("scale", 3.0f)
      .output("y")
      .expect<float>({1, 2, 1, 1}, {3.0f, 3.0f})
      .check();
}

}  // namespace
}  // namespace recur::test
