#include "runtime/engine/session/cuda_module.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "providers/cuda/cuda_module_abi.h"
#include "recur/version.h"
#include "runtime/core/device_memory.h"

namespace recur {

namespace {

// The file of the binary this function is compiled into: dladdr names shared libraries by
// path, but the main program by an empty name, whose path /proc/self/exe gives.
std::string this_binary() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&this_binary), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) != 0 &&
      map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.string();
}

struct Loaded {
  const RecurCudaModule* module = nullptr;
  std::string path;
  std::string error;  // why module is null
};

std::string list_paths(const std::vector<std::string>& paths) {
  std::string s;
  for (const auto& p : paths) {
    s += (s.empty() ? "" : ", ") + p;
    if (p.find('/') == std::string::npos) s += " on the library search path";
  }
  return s;
}

Loaded check_module(void* handle, const std::string& path) {
  Loaded l;
  l.path = path;
  auto entry = reinterpret_cast<RecurCudaModuleEntry>(dlsym(handle, RECUR_CUDA_MODULE_ENTRY));
  if (entry == nullptr) {
    l.error = path + " has no " RECUR_CUDA_MODULE_ENTRY " (not a recur CUDA module?)";
    return l;
  }
  const RecurCudaModule* m = entry();
  if (m == nullptr || m->abi != RECUR_CUDA_MODULE_ABI ||
      std::string(m->recur_version) != RECUR_VERSION_STRING ||
      m->provider_size != sizeof(ExecutionProvider)) {
    l.error = path + " is from another recur build (module ABI " +
              (m ? std::to_string(m->abi) + ", recur " + m->recur_version : "?") +
              "; this library: ABI " + std::to_string(RECUR_CUDA_MODULE_ABI) + ", recur " +
              RECUR_VERSION_STRING + ")";
    return l;
  }
  l.module = m;
  return l;
}

Loaded open_module() {
  const auto candidates = cuda_module_candidates();
  for (const std::string& path : candidates) {
    // A bare file name is the loader's search; a path is tried only where a file is.
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && ::access(path.c_str(), F_OK) != 0) continue;
    // Never closed: providers, kernels and tensor deleters from the module live as long as
    // the process may use them.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return check_module(handle, path);
    const char* err = dlerror();
    const std::string text = err ? err : "unknown error";
    if (bare && dlopen_error_is_file_not_found(text, path)) break;
    Loaded l;
    l.path = path;
    l.error = "dlopen failed: " + text;
    return l;
  }
  Loaded l;
  l.error = "CUDA module " RECUR_CUDA_MODULE_FILE " not found (looked for " +
            list_paths(candidates) + ")";
  return l;
}

const Loaded& module() {
  static const Loaded loaded = open_module();
  return loaded;
}

}  // namespace

bool dlopen_error_is_file_not_found(const std::string& message, const std::string& file) {
  // glibc names the file it could not open first: the module's own name only when the module
  // itself is absent, a dependency's (libcudnn.so.9) when the module is there.
  return message.rfind(file + ": cannot open shared object file", 0) == 0;
}

std::vector<std::string> cuda_module_candidates() {
  if (const char* env = std::getenv("RECUR_CUDA_MODULE"); env != nullptr && *env != '\0') {
    return {env};
  }
  std::vector<std::string> out;
  const std::filesystem::path self = this_binary();
  if (!self.empty()) {
    const auto dir = self.parent_path();
    out.push_back((dir / RECUR_CUDA_MODULE_FILE).string());
    out.push_back((dir.parent_path() / "lib" / RECUR_CUDA_MODULE_FILE).lexically_normal().string());
  }
  out.push_back(RECUR_CUDA_MODULE_FILE);
  return out;
}

std::unique_ptr<ExecutionProvider> make_cuda_module_provider(const std::string& name,
                                                             std::string* why) {
  const Loaded& l = module();
  if (l.module == nullptr) {
    if (why) *why = l.error;
    return nullptr;
  }
  std::unique_ptr<ExecutionProvider> p(l.module->make_provider(name.c_str()));
  if (p == nullptr) {
    if (why) *why = l.path + " has no provider '" + name + "'";
    return nullptr;
  }
  // The module installs its hooks in its own copy of the runtime; this one needs them too.
  if (const DeviceMemoryHooks* hooks = l.module->memory_hooks()) {
    set_device_memory_hooks(Device::Kind::kCUDA, *hooks);
  }
  return p;
}

}  // namespace recur
