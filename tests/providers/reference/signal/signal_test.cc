// DFT, STFT and the windows: zero padding with onesided output, the inverse transform, a
// one-sample symmetric window, output_datatype, and errors. Expected values from numpy.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Dft, PaddedOnesidedRealInput) {
  // np.fft.rfft([1, 2, 3], n=4) == [6, -2-2j, 2]
  auto y = OpTester("DFT", 17)
               .input(tensor<float>({1, 3, 1}, {1, 2, 3}))
               .constant(Tensor::scalar<int64_t>(4))
               .attr("onesided", int64_t{1})
               .run();
  expect_tensor<float>(y[0], {1, 3, 2}, {6, 0, -2, -2, 2, 0}, 1e-6);
}

TEST(Dft, InverseOfComplexInput) {
  // np.fft.ifft([6, -2-2j, 2, -2+2j]) == [1, 2, 3, 0]
  auto y = OpTester("DFT", 17)
               .input(tensor<double>({1, 4, 2}, {6, 0, -2, -2, 2, 0, -2, 2}))
               .attr("inverse", int64_t{1})
               .run();
  expect_tensor<double>(y[0], {1, 4, 2}, {1, 0, 2, 0, 3, 0, 0, 0}, 1e-12);
}

TEST(Dft, BadShapesAndLengthsAreErrors) {
  expect_error(OpTester("DFT", 17).input(tensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6})),
               ErrorCode::kInvalidArgument, "1 or 2");
  expect_error(OpTester("DFT", 17)
                   .input(tensor<float>({1, 2, 1}, {1, 2}))
                   .constant(Tensor::scalar<int64_t>(0)),
               ErrorCode::kInvalidArgument, "dft_length 0");
  expect_error(OpTester("DFT", 17).input(tensor<float>({1, 2, 1}, {1, 2})).attr("axis", int64_t{2}),
               ErrorCode::kOutOfRange, "axis 2");
}

TEST(Stft, FrameLongerThanTheSignalIsAnError) {
  expect_error(OpTester("STFT", 17)
                   .input(tensor<float>({1, 4, 1}, {1, 2, 3, 4}))
                   .constant(Tensor::scalar<int64_t>(1))
                   .omitted()
                   .constant(Tensor::scalar<int64_t>(8)),
               ErrorCode::kInvalidArgument, "frame_length 8");
}

TEST(Stft, TwoFramesWithAWindow) {
  // x = [1, 2, 3, 4], frame length 3 (the window's), step 1: frames [1, 2, 3] and [2, 3, 4],
  // times the window [1, 0, 1]: np.fft.rfft([1, 0, 3]) == [4, -0.5+2.59807621j] and
  // np.fft.rfft([2, 0, 4]) == [6, 0+3.46410162j]
  auto y = OpTester("STFT", 17)
               .input(tensor<double>({1, 4, 1}, {1, 2, 3, 4}))
               .constant(Tensor::scalar<int64_t>(1))
               .constant(tensor<double>({3}, {1, 0, 1}))
               .run();
  expect_tensor<double>(y[0], {1, 2, 2, 2},
                        {4, 0, -0.5, 2.598076211353316, 6, 0, 0, 3.4641016151377544}, 1e-12);
}

TEST(Windows, SymmetricSizeOneAndPeriodicHammingAsDouble) {
  // np.hanning(1) == [1.]
  auto h = OpTester("HannWindow", 17)
               .input(Tensor::scalar<int32_t>(1))
               .attr("periodic", int64_t{0})
               .run();
  expect_tensor<float>(h[0], {1}, {1.0f});
  // 25/46 - 21/46 * np.cos(2 * np.pi * np.arange(4) / 4)
  auto m = OpTester("HammingWindow", 17)
               .input(Tensor::scalar<int64_t>(4))
               .attr("output_datatype", static_cast<int64_t>(DType::kFloat64))
               .run();
  expect_tensor<double>(m[0], {4}, {4.0 / 46, 25.0 / 46, 1.0, 25.0 / 46}, 1e-12);
  expect_error(OpTester("BlackmanWindow", 17).input(Tensor::scalar<int64_t>(-1)),
               ErrorCode::kInvalidArgument, "negative");
}

}  // namespace
}  // namespace recur::test
