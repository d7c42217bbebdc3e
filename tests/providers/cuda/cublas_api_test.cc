// cuBLAS is opened on first use, not linked (providers/cuda/cublas_api.h): a process that never
// runs a GEMM on a device does not carry its ~210 MiB. Opening and looking up symbols needs no
// GPU, so this runs on any machine of a CUDA build. CTest runs each test in its own process,
// so "not mapped before the first call" holds for this one.
#if RECUR_HAVE_CUDA

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "providers/cuda/cublas_api.h"

namespace recur::testing {
namespace {

bool cublas_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream all;
  all << maps.rdbuf();
  return all.str().find("libcublas") != std::string::npos;
}

TEST(CublasApi, OpenedOnFirstUseWithEverySymbol) {
  ASSERT_FALSE(cublas_mapped()) << "libcublas is loaded before recur asked for it (linked?)";
  Result<const cuda::CublasApi*> api = cuda::cublas_api();
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_TRUE(cublas_mapped());
  const cuda::CublasApi& f = **api;
  EXPECT_NE(f.create, nullptr);
  EXPECT_NE(f.destroy, nullptr);
  EXPECT_NE(f.set_stream, nullptr);
  EXPECT_NE(f.set_workspace, nullptr);
  EXPECT_NE(f.set_math_mode, nullptr);
  EXPECT_NE(f.sgemm_strided_batched, nullptr);
  EXPECT_NE(f.dgemm_strided_batched, nullptr);
  EXPECT_NE(f.gemm_strided_batched_ex, nullptr);
  // A second call returns the same table, not a second load.
  Result<const cuda::CublasApi*> again = cuda::cublas_api();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *api);
}

}  // namespace
}  // namespace recur::testing

#endif  // RECUR_HAVE_CUDA
