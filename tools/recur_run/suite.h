// --suite ROOT: every backend-test folder under ROOT, with an optional list of the tests
// expected to fail (--expect-fail).
#pragma once

#include "tools/recur_run/options.h"

namespace recur::tools {

// kExitOk when every test passed (or, with --expect-fail, failed exactly as listed).
int run_suite(const Args& a);

}  // namespace recur::tools
