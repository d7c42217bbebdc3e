#include "runtime/provider/provider_options.h"

#include <algorithm>
#include <charconv>

namespace recur {

SettingsParser& SettingsParser::choice(std::string key, std::vector<std::string> values,
                                       std::function<void(const std::string&)> set) {
  std::string what;
  for (const auto& v : values) what += (what.empty() ? "" : "|") + v;
  entries_.push_back({std::move(key), std::move(what),
                      [values = std::move(values), set = std::move(set)](const std::string& v) {
                        if (std::find(values.begin(), values.end(), v) == values.end())
                          return false;
                        set(v);
                        return true;
                      }});
  return *this;
}

SettingsParser& SettingsParser::flag(std::string key, bool* out) {
  entries_.push_back({std::move(key), "0|1", [out](const std::string& v) {
                        if (v == "1" || v == "true" || v == "on") {
                          *out = true;
                        } else if (v == "0" || v == "false" || v == "off") {
                          *out = false;
                        } else {
                          return false;
                        }
                        return true;
                      }});
  return *this;
}

SettingsParser& SettingsParser::integer(std::string key, int64_t min, int64_t max,
                                        std::function<void(int64_t)> set) {
  entries_.push_back({std::move(key), std::to_string(min) + ".." + std::to_string(max),
                      [min, max, set = std::move(set)](const std::string& v) {
                        int64_t n = 0;
                        const char* end = v.data() + v.size();
                        auto [p, ec] = std::from_chars(v.data(), end, n);
                        if (v.empty() || ec != std::errc() || p != end || n < min || n > max)
                          return false;
                        set(n);
                        return true;
                      }});
  return *this;
}

std::string SettingsParser::accepted() const {
  std::string s;
  for (const auto& e : entries_) s += (s.empty() ? "" : ", ") + e.key + " (" + e.what + ")";
  return s.empty() ? "none" : s;
}

Status SettingsParser::parse(const std::map<std::string, std::string>& settings) const {
  for (const auto& [key, value] : settings) {
    // A named copy for the lambda: clang 14 (the fuzz build's) cannot capture a binding.
    const std::string& name = key;
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&name](const Entry& e) { return e.key == name; });
    if (it == entries_.end()) {
      return invalid_argument("provider '" + provider_ + "' has no setting '" + key +
                              "' (it accepts: " + accepted() + ")");
    }
    if (!it->apply(value)) {
      return invalid_argument("setting " + provider_ + "." + key + "=" + value + ": expected " +
                              it->what);
    }
  }
  return ok_status();
}

}  // namespace recur
