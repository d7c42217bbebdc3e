// Running the recur-run binary from a test (RECUR_RUN_PATH, set by tests/CMakeLists.txt), and
// the smallest backend-test folder to run it on.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace recur::testing {

struct RunResult {
  int status = -1;     // the exit status; -1 when recur-run did not exit normally
  std::string output;  // stdout and stderr together
};

// `prefix` runs in the same shell first (e.g. a ulimit).
RunResult run_cli(const std::string& args, const std::string& prefix = "");

// A backend-test folder for y = x + x on x = [1, 2, 3] whose expected output is `want`.
void make_test_dir(const std::filesystem::path& dir, const std::vector<float>& want);

}  // namespace recur::testing
