// Finding and opening librecur_cuda.so, the module with the GPU providers
// (providers/cuda/cuda_module_abi.h), once per process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/provider/execution_provider.h"

namespace recur {

// Where the module is looked for, in order: $RECUR_CUDA_MODULE alone when it is set; else
// the folder of the binary that holds this code (librecur.so, or a program linking recur
// statically) and that folder's ../lib, then the dynamic loader's own search by file name.
std::vector<std::string> cuda_module_candidates();

// A "cudnn" or "cuda-generic" provider from the module, or null with `why` saying what went
// wrong: the module not found (and where it was looked for), dlopen's error text (a missing
// libcudart or libcudnn), or a module of another version. A provider from the module may
// still be unavailable (no driver, no GPU): its available() says so.
std::unique_ptr<ExecutionProvider> make_cuda_module_provider(const std::string& name,
                                                             std::string* why);

// Whether `message`, dlerror() after dlopen(`file`) of a bare file name, says that `file` itself
// is not on the search path, rather than a library it needs (libcudnn, libcudart): both read
// "NAME: cannot open shared object file", and only the first means the module is absent.
bool dlopen_error_is_file_not_found(const std::string& message, const std::string& file);

}  // namespace recur
