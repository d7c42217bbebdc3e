#include "tools/recur_run/json_text.h"

namespace recur::tools {

namespace {

void append(const Json& j, std::string& out) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
      out += ": ";
      append(value, out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (size_t i = 0; i < j.size(); ++i) {
      if (i) out += ", ";
      append(j[i], out);
    }
    out += ']';
  } else {
    // Invalid UTF-8 in a name becomes U+FFFD rather than an exception mid-report.
    out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace

std::string json_text(const Json& j) {
  std::string out;
  append(j, out);
  return out;
}

}  // namespace recur::tools
