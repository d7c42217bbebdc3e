// The boundary between the engine and librecur_cuda.so, the module that holds the cudnn and
// cuda-generic providers. The engine opens it with dlopen (runtime/engine/session/
// cuda_module.cc), so that librecur.so and every program built on it link no CUDA library
// and run CPU models on machines without CUDA. No CUDA header here: the engine includes it.
//
// The module exports one C function, RECUR_CUDA_MODULE_ENTRY, that returns a RecurCudaModule.
// C++ objects (ExecutionProvider, Graph, Tensor) cross the boundary, so the module must come
// from the same recur version and compiler as the engine: the engine refuses a module whose
// `abi` or `recur_version` differ from its own. Raise RECUR_CUDA_MODULE_ABI when this struct
// or the meaning of a member changes.
#pragma once

#include <cstdint>

#include "runtime/core/device_memory.h"
#include "runtime/provider/execution_provider.h"

#define RECUR_CUDA_MODULE_ABI 1
#define RECUR_CUDA_MODULE_ENTRY "recur_cuda_module_v1"
#define RECUR_CUDA_MODULE_FILE "librecur_cuda.so"

extern "C" {

struct RecurCudaModule {
  uint32_t abi;               // RECUR_CUDA_MODULE_ABI of the module
  const char* recur_version;  // RECUR_VERSION_STRING of the module
  uint32_t provider_size;     // sizeof(recur::ExecutionProvider), a cheap layout check
  // A new "cudnn" or "cuda-generic" provider, owned by the caller; null for another name.
  recur::ExecutionProvider* (*make_provider)(const char* name);
  // The module's device memory hooks (installed when its first provider is created; null
  // before): the engine installs a copy, so that its tensors reach CUDA memory too.
  const recur::DeviceMemoryHooks* (*memory_hooks)();
};

typedef const RecurCudaModule* (*RecurCudaModuleEntry)();

}  // extern "C"
