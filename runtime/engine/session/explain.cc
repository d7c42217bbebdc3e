// Session::explain(): where each node runs and why, with copies, folds and released weights.
#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>
#include <sstream>

#include "runtime/engine/session/session_impl.h"

namespace recur {

namespace {

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

std::string human_bytes(size_t b) {
  char buf[64];
  if (b >= (1u << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  } else if (b >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%zu B", b);
  }
  return buf;
}

// "then" and "else" for If's branches; other attributes (Loop and Scan: body) as named.
std::string subgraph_label(const std::string& attribute) {
  if (attribute == "then_branch") return "then:";
  if (attribute == "else_branch") return "else:";
  return attribute + ":";
}

// The assignment table; a subgraph's nodes follow their If, Loop or Scan, indented under a
// line naming the branch or body.
struct Table {
  static constexpr size_t kIndent = 2;
  const std::map<std::string, std::string>* unavailable = nullptr;
  size_t wn = 4, wo = 2, wp = 8;

  void measure(const std::vector<NodeAssignment>& nodes, size_t depth) {
    for (const auto& a : nodes) {
      wn = std::max(wn, depth * 2 * kIndent + a.node.size());
      wo = std::max(wo, a.op.size());
      wp = std::max(wp, a.provider.size());
      for (const auto& sub : a.subgraphs) {
        wn = std::max(wn, (depth * 2 + 1) * kIndent + subgraph_label(sub.attribute).size());
        measure(sub.nodes, depth + 1);
      }
    }
  }

  void print(std::ostream& os, const std::vector<NodeAssignment>& nodes, size_t depth) const {
    const std::string indent(depth * 2 * kIndent, ' ');
    for (const auto& a : nodes) {
      std::vector<std::string> lines;
      for (const auto& d : a.declined) {
        auto u = unavailable->find(d.provider);
        if (u != unavailable->end() && u->second == d.reason) continue;  // said in the header
        lines.push_back(d.provider + ": " + d.reason);
      }
      for (const auto& n : a.notes) lines.push_back("note: " + n);
      if (lines.empty()) lines.push_back("");
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i == 0) {
          os << pad(indent + a.node, wn) << "  " << pad(a.op, wo) << "  " << pad(a.provider, wp)
             << "  " << lines[i] << "\n";
        } else {
          os << std::string(wn + wo + wp + 6, ' ') << lines[i] << "\n";
        }
      }
      for (const auto& sub : a.subgraphs) {
        os << std::string((depth * 2 + 1) * kIndent, ' ') << subgraph_label(sub.attribute) << "\n";
        print(os, sub.nodes, depth + 1);
      }
    }
  }
};

}  // namespace

std::string Session::explain() const {
  const Impl& impl = *impl_;
  std::ostringstream os;
  os << "model: " << impl.model.path << "\n";
  os << "providers (priority order):";
  for (const auto& n : impl.provider_names) os << " " << n;
  os << "\n";
  // A provider that cannot run here declines every node for the same reason: say it once.
  std::map<std::string, std::string> unavailable;
  if (!impl.options.plan_only()) {
    for (const ExecutionProvider* p : impl.providers) {
      std::string why;
      if (!p->available(&why)) {
        unavailable[p->name()] = why;
        os << "  " << p->name() << " is unavailable here and declines every node: " << why << "\n";
      }
    }
  }
  os << "\n";
  Table table;
  table.unavailable = &unavailable;
  table.measure(impl.assignment, 0);
  os << pad("node", table.wn) << "  " << pad("op", table.wo) << "  " << pad("provider", table.wp)
     << "  why not a higher-priority provider / notes\n";
  os << std::string(table.wn, '-') << "  " << std::string(table.wo, '-') << "  "
     << std::string(table.wp, '-') << "  " << std::string(40, '-') << "\n";
  table.print(os, impl.assignment, 0);
  const SubgraphPlan& plan = *impl.plan;
  if (!plan.copies.empty()) {
    os << "\ndevice copies:\n";
    for (const auto& c : plan.copies) {
      os << "  " << c.value << ": " << c.from.to_string() << " -> " << c.to.to_string() << " for "
         << c.consumer << (c.at_load ? " (once, at load)" : " (every run)") << "\n";
    }
  }
  if (!impl.folded.empty()) {
    os << "\nnodes folded into constants at load (shape computations, nodes over constants):";
    for (const auto& f : impl.folded) os << " " << f;
    os << "\n";
  }
  os << impl.runner->explain();
  if (plan.released_bytes) {
    os << "\nconstant weights released after repacking: " << human_bytes(plan.released_bytes)
       << "\n";
  }
  if (impl.options.plan_only()) os << "\n(plan only: no kernel was compiled)\n";
  return os.str();
}

const Tensor& Outputs::operator[](std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return tensors_[i];
  throw Error(ErrorCode::kInvalidArgument, "no output named '" + std::string(name) + "'");
}

}  // namespace recur
