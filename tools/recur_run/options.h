// recur-run's command line: what was asked for, parsed and checked (options.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "recur/options.h"
#include "recur/tensor.h"
#include "tools/common/testdir.h"

namespace recur::tools {

// Exit statuses, documented in --help.
inline constexpr int kExitOk = 0;
inline constexpr int kExitMismatch = 1;  // a comparison failed, or an unexpected suite result
inline constexpr int kExitError = 2;     // bad arguments, an unreadable file, a failed run

struct Args {
  std::string target;  // MODEL.onnx or a backend-test folder
  std::string suite_root;
  std::string expect_fail;
  std::vector<std::pair<std::string, std::string>> inputs;  // --input NAME=FILE, in order
  std::map<std::string, Shape> shapes;                      // --shape INPUT=AxB
  std::map<std::string, int64_t> dims;                      // --dim SYMBOL=N
  std::string output_dir;
  bool overwrite = false;
  bool random_inputs = false;
  bool tune = false;  // --tune: fill the tuning cache (tune.cc)
  bool explain = false;
  bool perf = false;
  bool by_op = false;  // with --perf: time by node and op type, from the in-memory profile
  bool json = false;
  bool list_providers = false;
  bool device_io = false;
  bool compare_fp32 = false;  // --compare-fp32 (compare_fp32.cc)
  int warmup = 3;
  int repeat = 20;
  int concurrency = 1;
  double duration_s = 0;   // 0: --repeat bounds the timed phase
  int64_t timeout_ms = 0;  // --timeout: each run's own deadline; 0: none
  uint64_t seed = 0;
  Tolerance tol;
  // Session-level flags land here directly (see options.cc), so a new SessionOptions or
  // RunOptions setting needs one line there and nothing else.
  SessionOptions session;
  RunOptions run;
};

// The options for one run: a.run, with a deadline --timeout from now when one is set.
RunOptions run_options(const Args& a);

// Parses argv. --help prints the generated help and exits 0; an argument error prints one
// line naming the option and exits with kExitError.
Args parse_args(int argc, char** argv);

// For errors found after parsing (e.g. an --input name the model lacks): same form and exit.
[[noreturn]] void usage_error(const std::string& message);

}  // namespace recur::tools
