#include "providers/cuda/cublas_api.h"

#include <dlfcn.h>

#include <string>

namespace recur::cuda {

namespace {

// Two steps, so that a name cublas_v2.h defines as a macro is expanded before it is quoted.
#define RECUR_SYMBOL_NAME_(f) #f
#define RECUR_SYMBOL_NAME(f) RECUR_SYMBOL_NAME_(f)

template <class F>
Status find_symbol(void* lib, const char* name, const std::string& from, F* out) {
  void* p = dlsym(lib, name);
  if (!p) return device_error(from + " has no symbol " + name);
  *out = reinterpret_cast<F>(p);
  return ok_status();
}

Result<CublasApi> open_cublas() {
  std::string tried;
  void* lib = nullptr;
  std::string opened;
  for (const char* path : {RECUR_CUBLAS_SONAME, RECUR_CUBLAS_PATH}) {
    // RTLD_LOCAL: recur sees only the symbols it looks up; RTLD_NOW: a library that cannot
    // resolve its own dependencies fails here, with dlerror's reason, not at the first call.
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      opened = path;
      break;
    }
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : path);
  }
  if (!lib) return device_error("cuBLAS could not be opened: " + tried);
  CublasApi api{};
#define RECUR_FIND(field, f) \
  RECUR_RETURN_IF_ERROR(find_symbol(lib, RECUR_SYMBOL_NAME(f), opened, &api.field))
  RECUR_FIND(create, cublasCreate);
  RECUR_FIND(destroy, cublasDestroy);
  RECUR_FIND(set_stream, cublasSetStream);
  RECUR_FIND(set_workspace, cublasSetWorkspace);
  RECUR_FIND(set_math_mode, cublasSetMathMode);
  RECUR_FIND(sgemm_strided_batched, cublasSgemmStridedBatched);
  RECUR_FIND(dgemm_strided_batched, cublasDgemmStridedBatched);
  RECUR_FIND(gemm_strided_batched_ex, cublasGemmStridedBatchedEx);
#undef RECUR_FIND
  // The library stays open for the life of the process: handles made through it may live as
  // long as the stream pool does.
  return api;
}

}  // namespace

Result<const CublasApi*> cublas_api() {
  static const Result<CublasApi> loaded = open_cublas();
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

}  // namespace recur::cuda
