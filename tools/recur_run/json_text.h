// recur-run's JSON output text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace recur::tools {

// Keys keep the order they were added in.
using Json = nlohmann::ordered_json;

// One line with ", " and ": " between items, as Python's json.dumps writes it: the form
// recur-run has always printed, which scripts and tests may match as text.
std::string json_text(const Json& j);

}  // namespace recur::tools
