// Provider settings, parsed once. A session passes "<provider>.<key>=<value>" strings; each
// provider turns them into its own options struct at configure(), and kernels read that
// struct through CompileContext::provider_options<T>() instead of parsing strings again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace recur {

// What every provider gets from the session. A provider with settings derives from it.
struct ProviderOptions {
  virtual ~ProviderOptions() = default;
  int threads = 0;  // SessionOptions::threads: 0 leaves the choice to the provider
  bool plan_only = false;
  bool deterministic = false;  // SessionOptions::deterministic: no choice may depend on timing
};

// A table of the settings a provider accepts. parse() applies them in key order and fails on
// the first unknown key or bad value, listing what is accepted, so every provider words its
// errors the same way.
class SettingsParser {
 public:
  explicit SettingsParser(std::string provider) : provider_(std::move(provider)) {}

  // One of `values`; `set` receives the value given.
  SettingsParser& choice(std::string key, std::vector<std::string> values,
                         std::function<void(const std::string&)> set);
  // 1/0, true/false or on/off.
  SettingsParser& flag(std::string key, bool* out);
  // An integer in [min, max].
  SettingsParser& integer(std::string key, int64_t min, int64_t max,
                          std::function<void(int64_t)> set);

  Status parse(const std::map<std::string, std::string>& settings) const;
  // "impl (auto|any|ldigo), tune (0|1)", or "none".
  std::string accepted() const;

 private:
  struct Entry {
    std::string key;
    std::string what;  // "auto|any|ldigo", "0|1", "0..15"
    // Applies the value, or returns what was expected.
    std::function<bool(const std::string&)> apply;
  };
  std::string provider_;
  std::vector<Entry> entries_;
};

}  // namespace recur
