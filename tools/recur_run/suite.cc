#include "tools/recur_run/suite.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "runtime/engine/onnx/tensor_proto.h"

namespace recur::tools {

namespace {

namespace fs = std::filesystem;

// Test name -> reason. Read as a regular file only: a FIFO named here must not hang the run.
std::map<std::string, std::string> read_expect_fail(const std::string& path) {
  auto text = read_regular_file(path, "expected-failures list");
  if (!text.ok()) throw Error(text.status().code(), "--expect-fail: " + text.status().message());
  std::istringstream in(std::move(text).value());
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line.substr(0, line.find('#')));
    std::string name;
    if (!(ss >> name)) continue;
    std::string reason;
    std::getline(ss, reason);
    out[name] = reason;
  }
  return out;
}

std::vector<fs::path> test_dirs(const std::string& root) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  // Linked folders are followed: a suite may be a selection of another's tests, as links.
  for (auto it = fs::recursive_directory_iterator(
           root, fs::directory_options::follow_directory_symlink, ec);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file() && it->path().filename() == "model.onnx") {
      dirs.push_back(it->path().parent_path());
    }
  }
  if (ec) throw Error(ErrorCode::kIo, "cannot read suite root '" + root + "'");
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

struct Tally {
  int passed = 0, failed = 0;
  std::vector<std::string> unexpected_fail, unexpected_pass;
  std::set<std::string> seen;
};

void run_one(const fs::path& d, const Args& a, const std::map<std::string, std::string>& expected,
             Tally& tally) {
  std::string name = fs::relative(d, a.suite_root).string();
  if (name == ".") name = d.filename().string();
  tally.seen.insert(name);
  const TestResult r = run_test_dir(d.string(), a.session, a.tol, nullptr);
  const bool listed = expected.count(name) > 0;
  if (r.outcome == TestResult::Outcome::kPass) {
    ++tally.passed;
    std::cout << "PASS " << name << (listed ? "  (listed as expected to fail)" : "") << "\n";
    if (listed) tally.unexpected_pass.push_back(name);
  } else {
    ++tally.failed;
    std::string reason = r.reason;
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    if (reason.size() > 300) reason = reason.substr(0, 300) + "...";
    std::cout << "FAIL " << name << ": " << reason << (listed ? "  (expected)" : "") << "\n";
    if (!listed) tally.unexpected_fail.push_back(name);
  }
  std::cout.flush();
}

int report_expected(const std::map<std::string, std::string>& expected, const Tally& t) {
  std::vector<std::string> missing;
  for (const auto& [n, why] : expected)
    if (!t.seen.count(n)) missing.push_back(n);
  for (const auto& n : t.unexpected_fail) std::cout << "unexpected failure: " << n << "\n";
  for (const auto& n : t.unexpected_pass) std::cout << "stale entry (now passes): " << n << "\n";
  for (const auto& n : missing) std::cout << "stale entry (no such test): " << n << "\n";
  std::cout << "expected failures: " << (t.failed - static_cast<int>(t.unexpected_fail.size()))
            << " of " << expected.size() << " listed\n";
  return t.unexpected_fail.empty() && t.unexpected_pass.empty() && missing.empty() ? kExitOk
                                                                                   : kExitMismatch;
}

}  // namespace

int run_suite(const Args& a) {
  const std::vector<fs::path> dirs = test_dirs(a.suite_root);
  std::map<std::string, std::string> expected;
  if (!a.expect_fail.empty()) expected = read_expect_fail(a.expect_fail);
  Tally tally;
  for (const auto& d : dirs) run_one(d, a, expected, tally);
  int status = tally.failed == 0 ? kExitOk : kExitMismatch;
  if (!a.expect_fail.empty()) status = report_expected(expected, tally);
  std::cout << tally.passed << " passed, " << tally.failed << " failed\n";
  return status;
}

}  // namespace recur::tools
