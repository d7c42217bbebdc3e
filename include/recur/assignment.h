// Where each node runs, and why.
#pragma once

#include <string>
#include <vector>

namespace recur {

// Which provider runs a node, and why each provider before it declined.
struct NodeAssignment {
  struct Decline {
    std::string provider;
    std::string reason;
  };
  std::string node;
  std::string op;
  std::string provider;  // empty if no provider claimed the node
  std::vector<Decline> declined;
  std::vector<std::string> notes;  // e.g. "weights repacked at load", "fused 2 LSTM layers"
};

}  // namespace recur
