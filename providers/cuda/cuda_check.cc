#include "providers/cuda/cuda_check.h"

namespace recur::cuda {

namespace {

// "cudnnRNNForward(handle, ...)" -> "cudnnRNNForward".
std::string function_name(const char* call) {
  std::string s(call);
  const auto paren = s.find('(');
  if (paren != std::string::npos) s.resize(paren);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

}  // namespace

Status cuda_error(cudaError_t err, const char* call) {
  // Clear a sticky-free error so later calls on this thread do not report it again.
  (void)cudaGetLastError();
  return device_error(function_name(call) + " failed: " + cudaGetErrorName(err) + " (" +
                      cudaGetErrorString(err) + ")");
}

Status cudnn_error(cudnnStatus_t status, const char* call) {
  std::string detail;
  char buf[512] = {0};
  cudnnGetLastErrorString(buf, sizeof buf);
  if (buf[0]) detail = std::string(": ") + buf;
  return device_error(function_name(call) + " failed: " + cudnnGetErrorString(status) + " (" +
                      std::to_string(static_cast<int>(status)) + ")" + detail);
}

Status cublas_error(cublasStatus_t status, const char* call) {
  return device_error(function_name(call) + " failed: " + cublas_status_name(status));
}

}  // namespace recur::cuda
