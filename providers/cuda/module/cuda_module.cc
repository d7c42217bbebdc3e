// The entry point of librecur_cuda.so (providers/cuda/cuda_module_abi.h). Built only into
// the module, never into the static provider library that the tests link.
#include <cstring>

#include "providers/cuda/cuda_module_abi.h"
#include "providers/cuda/cuda_provider.h"
#include "recur/version.h"

namespace {

recur::ExecutionProvider* make_provider(const char* name) {
  if (std::strcmp(name, "cudnn") == 0) return recur::make_cudnn_provider().release();
  if (std::strcmp(name, "cuda-generic") == 0) return recur::make_cuda_generic_provider().release();
  return nullptr;
}

const recur::DeviceMemoryHooks* memory_hooks() {
  return recur::device_memory_hooks(recur::Device::Kind::kCUDA);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const RecurCudaModule* recur_cuda_module_v1() {
  static const RecurCudaModule module = {RECUR_CUDA_MODULE_ABI, RECUR_VERSION_STRING,
                                         sizeof(recur::ExecutionProvider), &make_provider,
                                         &memory_hooks};
  return &module;
}
