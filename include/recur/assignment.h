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
  // The node's graph attributes as planned (If: then_branch, else_branch; Loop and Scan:
  // body), each with its own nodes' assignment. Empty for a node without subgraphs, and for
  // one whose provider runs its subgraphs some other way than through the session's planner.
  struct Subgraph {
    std::string attribute;
    std::vector<NodeAssignment> nodes;
  };
  std::vector<Subgraph> subgraphs;
};

}  // namespace recur
