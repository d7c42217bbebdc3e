// The one place where CUDA, cuDNN and cuBLAS errors become a Status (ErrorCode::kDevice) that
// names the failed call.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "runtime/core/status.h"

namespace recur::cuda {

// `call` is the call's source text; the message keeps its function name.
Status cuda_error(cudaError_t err, const char* call);
Status cudnn_error(cudnnStatus_t status, const char* call);
Status cublas_error(cublasStatus_t status, const char* call);

inline Status check(cudaError_t err, const char* call) {
  return err == cudaSuccess ? ok_status() : cuda_error(err, call);
}
inline Status check(cudnnStatus_t s, const char* call) {
  return s == CUDNN_STATUS_SUCCESS ? ok_status() : cudnn_error(s, call);
}
inline Status check(cublasStatus_t s, const char* call) {
  return s == CUBLAS_STATUS_SUCCESS ? ok_status() : cublas_error(s, call);
}

// Any of cuDNN's "not supported" codes (3000-3999).
inline bool is_not_supported(cudnnStatus_t s) {
  return s / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000;
}

}  // namespace recur::cuda

// RECUR_CUDA_CHECK(cudaMemcpyAsync(...)); returns a kDevice Status naming the call on failure.
// Works for cudaError_t, cudnnStatus_t and cublasStatus_t.
#define RECUR_CUDA_CHECK(call) RECUR_RETURN_IF_ERROR(::recur::cuda::check((call), #call))
