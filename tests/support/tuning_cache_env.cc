// Sessions in tests use the default tuning cache location unless a test sets a path, and the
// tests must never read or write the user's cache (docs/tuning-cache.md): before any test
// runs, XDG_CACHE_HOME moves it under the temporary folder. A test that needs a cache of its
// own, or none, sets onednn.tuning_cache explicitly.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

[[maybe_unused]] const bool moved = [] {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec) /
                                    ("recur-test-xdg-cache-" + std::to_string(::getuid()));
  return ::setenv("XDG_CACHE_HOME", dir.c_str(), 1) == 0;
}();

}  // namespace
