// recur-run: run ONNX models and backend-test folders, compare, time, and explain where each
// node runs. Options: options.cc; exit statuses: options.h.
#include <iostream>

#include "recur/recur.h"
#include "tools/recur_run/model_run.h"
#include "tools/recur_run/options.h"
#include "tools/recur_run/suite.h"

namespace {

using namespace recur;
using namespace recur::tools;

void print_providers() {
  for (const auto& p : list_providers()) {
    std::cout << p.name << ": " << (p.available ? "available" : "unavailable (" + p.reason + ")")
              << "\n";
  }
}

int run(const Args& a) {
  if (a.list_providers) print_providers();
  if (a.list_providers && a.target.empty() && a.suite_root.empty()) return kExitOk;
  if (!a.suite_root.empty()) return run_suite(a);
  if (a.target.empty()) usage_error("no model or folder given");
  return run_model(a);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::cerr << "recur-run: error: " << e.what() << "\n";
    return kExitError;
  }
}
