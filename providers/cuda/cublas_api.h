// cuBLAS is opened on first use rather than linked. Loading libcublas brings libcublasLt with
// it, and the two take about 210 MiB of resident memory as soon as the process starts
// (measured: an empty program linked against libcublas peaks at 212 MiB, 1 MiB unlinked).
// Linked, every process that embeds recur would pay that, GPU or not; opened here, only a
// session that runs a GEMM on a device does.
#pragma once

#include <cublas_v2.h>

#include "runtime/core/status.h"

namespace recur::cuda {

// The cuBLAS entry points recur calls. cublas_v2.h maps some names onto their _v2 symbols;
// decltype sees the mapped declarations, and the loader looks up the mapped names.
struct CublasApi {
  decltype(&::cublasCreate) create;
  decltype(&::cublasDestroy) destroy;
  decltype(&::cublasSetStream) set_stream;
  decltype(&::cublasSetWorkspace) set_workspace;
  decltype(&::cublasSetMathMode) set_math_mode;
  decltype(&::cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&::cublasDgemmStridedBatched) dgemm_strided_batched;
  // Overloaded in C++ (an inline form takes cudaDataType for the compute type): the exported
  // form, spelled out.
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                            int, int, int, const void*, const void*, cudaDataType,
                                            int, long long, const void*, cudaDataType, int,
                                            long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t);
};

// Opens cuBLAS once per process: the toolkit's soname through the usual search path
// (LD_LIBRARY_PATH, then the binary's run path), then the library recur was built against.
// The error says which library could not be opened or which symbol it lacks.
Result<const CublasApi*> cublas_api();

// A cuBLAS handle with the table its calls go through.
struct Blas {
  const CublasApi* api = nullptr;
  cublasHandle_t handle = nullptr;
};

}  // namespace recur::cuda
