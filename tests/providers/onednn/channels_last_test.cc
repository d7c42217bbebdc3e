// The NCHW <-> NHWC copies of the channels-last convolutions (providers/onednn/common/
// channels_last.h): every element lands where y[p][c][r] = x[p][r][c] puts it, for sizes on and
// off the 16 x 16 tiles (AVX-512) and the 8 x 8 ones (AVX2: isa-avx2/ runs these under
// ONEDNN_MAX_CPU_ISA=AVX2), one and two threads, and a copy there and back gives the input.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <vector>

#include "providers/onednn/common/channels_last.h"

namespace recur::onednn {
namespace {

TEST(ChannelsLast, TransposePlanesPutsEveryElementInPlace) {
  struct Case {
    int64_t planes, rows, cols;
  };
  // The last is large enough (2^18 values) to be split between threads.
  for (const Case& c :
       {Case{1, 16, 16}, Case{2, 32, 48}, Case{3, 17, 5}, Case{1, 1, 40}, Case{2, 40, 1},
        Case{2, 33, 31}, Case{1, 8, 8}, Case{3, 24, 13}, Case{2, 9, 23}, Case{4, 256, 257}}) {
    const int64_t n = c.planes * c.rows * c.cols;
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
    for (int threads : {1, 2}) {
      std::vector<float> y(x.size(), -1.0f), back(x.size(), -1.0f);
      transpose_planes(x.data(), y.data(), c.planes, c.rows, c.cols, threads, false);
      int64_t wrong = 0;
      for (int64_t p = 0; p < c.planes; ++p)
        for (int64_t r = 0; r < c.rows; ++r)
          for (int64_t k = 0; k < c.cols; ++k)
            wrong += y[static_cast<size_t>((p * c.cols + k) * c.rows + r)] !=
                     x[static_cast<size_t>((p * c.rows + r) * c.cols + k)];
      EXPECT_EQ(wrong, 0) << c.planes << "x" << c.rows << "x" << c.cols << ", " << threads
                          << " threads";
      transpose_planes(y.data(), back.data(), c.planes, c.cols, c.rows, threads, false);
      EXPECT_EQ(back, x) << c.planes << "x" << c.rows << "x" << c.cols;
    }
  }
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
