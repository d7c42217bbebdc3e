// --perf --by-op: where the time of the timed runs went, by node and by op type, from the
// session's in-memory profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recur/profile.h"
#include "tools/recur_run/json_text.h"

namespace recur::tools {

struct TimeRow {
  std::string name;      // node name, or op type
  std::string op;        // for nodes
  std::string provider;  // for nodes; "a,b" for an op type run by several
  int64_t count = 0;
  double total_ms = 0;
  double mean_ms = 0;
  double share = 0;  // of the runs' total time
};

struct TimeBreakdown {
  int64_t runs = 0;
  double run_ms = 0;           // the runs' total time
  std::vector<TimeRow> nodes;  // by total time, longest first
  std::vector<TimeRow> ops;
};

// Counts the events of runs numbered `first_run` and later (so warm-up runs can be left out).
TimeBreakdown time_breakdown(const std::vector<ProfileEvent>& events, int64_t first_run);

// The top `top` nodes, then every op type.
std::string by_op_text(const TimeBreakdown& b, size_t top);
Json by_op_json(const TimeBreakdown& b, size_t top);

}  // namespace recur::tools
