// Asserting that the public API raises a clear recur::Error.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "recur/error.h"

namespace recur::testing {

// Expects `f` to throw recur::Error with `code` whose message contains every string of
// `parts` (a file, node or input name, and what was wrong).
template <class F>
void expect_error(F&& f, ErrorCode code, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error was raised";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& p : parts) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "'" << p << "' not in: " << e.what();
    }
  }
}

}  // namespace recur::testing
