// What a profiled session records (SessionOptions::profile, Session::profile()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace recur {

struct ProfileEvent {
  // "node": a kernel; "copy": a device copy the plan inserted; "run": one Session::run;
  // "session": a load phase (load, optimize, plan).
  std::string category;
  std::string name;  // the node's name (a copy: the value's), "run", or the phase
  std::string op;    // domain::op_type, for nodes
  std::string provider;
  // For nodes of a subgraph: the If, Loop or Scan node that ran it, the graph attribute
  // (then_branch, else_branch, body), and for Loop and Scan the iteration (from 0).
  std::string parent;
  std::string subgraph;
  int64_t iteration = -1;
  int64_t run = -1;     // the run's index in the session, from 0; -1 for load phases
  int thread = 0;       // 0 for load phases; runs are numbered by calling thread from 1
  double start_us = 0;  // since the session began loading
  double dur_us = 0;
  bool failed = false;  // the step returned an error
  // Per input of a node, its shape; nullopt for an omitted input or one that is not a tensor.
  std::vector<std::optional<std::vector<int64_t>>> input_shapes;
};

}  // namespace recur
