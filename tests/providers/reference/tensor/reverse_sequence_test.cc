// ReverseSequence with batch_axis 0, and lengths out of range.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Outputs reverse(const Tensor& x, const std::vector<int64_t>& lens) {
  return OpTester("ReverseSequence", 10)
      .input("x", x)
      .input("l", DType::kInt64, {static_cast<int64_t>(lens.size())})
      .attr("batch_axis", int64_t{0})
      .attr("time_axis", int64_t{1})
      .output("y")
      .run({{"x", x},
            {"l", Tensor::from_vector<int64_t>({static_cast<int64_t>(lens.size())}, lens)}});
}

TEST(ReverseSequence, BatchMajorWithZeroLength) {
  std::vector<int16_t> v(12);
  for (int i = 0; i < 12; ++i) v[static_cast<size_t>(i)] = static_cast<int16_t>(i);
  const Tensor x = Tensor::from_vector<int16_t>({3, 4}, v);
  // numpy: y = x.copy(); y[b, :l] = x[b, :l][::-1] for (b, l) in enumerate([4, 0, 2])
  EXPECT_EQ(values<int16_t>(reverse(x, {4, 0, 2})[0]),
            (std::vector<int16_t>{3, 2, 1, 0, 4, 5, 6, 7, 9, 8, 10, 11}));
}

TEST(ReverseSequence, BadLengthsAreErrors) {
  const Tensor x = Tensor::zeros(DType::kFloat32, {3, 4});
  for (const std::vector<int64_t>& lens :
       {std::vector<int64_t>{4, 5, 1}, std::vector<int64_t>{1, -1, 1}, std::vector<int64_t>{1}}) {
    const std::string msg = error_of([&] { reverse(x, lens); });
    EXPECT_NE(msg.find("node 'node' (ReverseSequence)"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace recur::test
