#include "tools/recur_run/by_op.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace recur::tools {

namespace {

void finish(std::vector<TimeRow>& rows, double run_ms) {
  for (TimeRow& r : rows) {
    r.mean_ms = r.count ? r.total_ms / static_cast<double>(r.count) : 0;
    r.share = run_ms > 0 ? r.total_ms / run_ms : 0;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TimeRow& a, const TimeRow& b) { return a.total_ms > b.total_ms; });
}

std::string table(const std::vector<TimeRow>& rows, size_t top, bool nodes) {
  const size_t n = std::min(top, rows.size());
  size_t wn = nodes ? 4 : 7, wo = 2, wp = 8;
  for (size_t i = 0; i < n; ++i) {
    wn = std::max(wn, rows[i].name.size());
    wo = std::max(wo, rows[i].op.size());
    wp = std::max(wp, rows[i].provider.size());
  }
  std::string s;
  char buf[512];
  if (nodes) {
    std::snprintf(buf, sizeof buf, "%-*s  %-*s  %-*s  %8s  %12s  %10s  %6s\n", static_cast<int>(wn),
                  "node", static_cast<int>(wo), "op", static_cast<int>(wp), "provider", "count",
                  "total ms", "mean ms", "share");
  } else {
    std::snprintf(buf, sizeof buf, "%-*s  %-*s  %8s  %12s  %10s  %6s\n", static_cast<int>(wn),
                  "op type", static_cast<int>(wp), "provider", "count", "total ms", "mean ms",
                  "share");
  }
  s += buf;
  for (size_t i = 0; i < n; ++i) {
    const TimeRow& r = rows[i];
    if (nodes) {
      std::snprintf(buf, sizeof buf, "%-*s  %-*s  %-*s  %8lld  %12.3f  %10.4f  %5.1f%%\n",
                    static_cast<int>(wn), r.name.c_str(), static_cast<int>(wo), r.op.c_str(),
                    static_cast<int>(wp), r.provider.c_str(), static_cast<long long>(r.count),
                    r.total_ms, r.mean_ms, 100 * r.share);
    } else {
      std::snprintf(buf, sizeof buf, "%-*s  %-*s  %8lld  %12.3f  %10.4f  %5.1f%%\n",
                    static_cast<int>(wn), r.name.c_str(), static_cast<int>(wp), r.provider.c_str(),
                    static_cast<long long>(r.count), r.total_ms, r.mean_ms, 100 * r.share);
    }
    s += buf;
  }
  if (rows.size() > n) {
    // Appended piecewise: GCC 12 reports a false -Wrestrict for "(" + std::string + "...".
    s += '(';
    s += std::to_string(rows.size() - n);
    s += " more)\n";
  }
  return s;
}

Json rows_json(const std::vector<TimeRow>& rows, size_t top, bool nodes) {
  Json list = Json::array();
  for (size_t i = 0; i < std::min(top, rows.size()); ++i) {
    const TimeRow& r = rows[i];
    Json j;
    j[nodes ? "node" : "op"] = r.name;
    if (nodes) j["op"] = r.op;
    j["provider"] = r.provider;
    j["count"] = r.count;
    j["total_ms"] = r.total_ms;
    j["mean_ms"] = r.mean_ms;
    j["share"] = r.share;
    list.push_back(j);
  }
  return list;
}

}  // namespace

TimeBreakdown time_breakdown(const std::vector<ProfileEvent>& events, int64_t first_run) {
  TimeBreakdown b;
  // Subgraph nodes are keyed by their parent too: two bodies may reuse a node name.
  std::map<std::string, size_t> node_at;
  std::map<std::string, size_t> op_at;
  std::map<std::string, std::set<std::string>> op_providers;
  for (const ProfileEvent& e : events) {
    if (e.run < first_run) continue;
    const double ms = e.dur_us / 1000.0;
    if (e.category == "run") {
      ++b.runs;
      b.run_ms += ms;
      continue;
    }
    if (e.category != "node" && e.category != "copy") continue;
    const std::string name = e.parent.empty() ? e.name : e.parent + "/" + e.name;
    auto [n, new_node] = node_at.emplace(name, b.nodes.size());
    if (new_node) b.nodes.push_back({name, e.op, e.provider});
    b.nodes[n->second].count++;
    b.nodes[n->second].total_ms += ms;
    auto [o, new_op] = op_at.emplace(e.op, b.ops.size());
    if (new_op) b.ops.push_back({e.op});
    b.ops[o->second].count++;
    b.ops[o->second].total_ms += ms;
    if (!e.provider.empty()) op_providers[e.op].insert(e.provider);
  }
  for (TimeRow& r : b.ops) {
    for (const std::string& p : op_providers[r.name])
      r.provider += (r.provider.empty() ? "" : ",") + p;
  }
  finish(b.nodes, b.run_ms);
  finish(b.ops, b.run_ms);
  return b;
}

std::string by_op_text(const TimeBreakdown& b, size_t top) {
  char head[160];
  std::snprintf(head, sizeof head,
                "\ntime by node over %lld runs (%.3f ms in all; a subgraph's nodes are also "
                "counted in their If/Loop/Scan):\n",
                static_cast<long long>(b.runs), b.run_ms);
  return head + table(b.nodes, top, true) + "\ntime by op type:\n" +
         table(b.ops, b.ops.size(), false);
}

Json by_op_json(const TimeBreakdown& b, size_t top) {
  Json j;
  j["runs"] = b.runs;
  j["run_ms"] = b.run_ms;
  j["nodes"] = rows_json(b.nodes, top, true);
  j["ops"] = rows_json(b.ops, b.ops.size(), false);
  return j;
}

}  // namespace recur::tools
