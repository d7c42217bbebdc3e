// Where the tests find the shipped models and the test data: the source tree's, or the folders
// that RECUR_MODELS_DIR and RECUR_TEST_DATA_DIR name where the tests run from a bundle built in
// another folder or on another machine (tools/gpu-check.sh sets both).
#pragma once

#include <cstdlib>
#include <string>

namespace recur::testing {

inline std::string models_dir() {
  const char* env = std::getenv("RECUR_MODELS_DIR");
  return env && *env ? env : std::string(RECUR_SOURCE_DIR) + "/models";
}

inline std::string test_data_dir() {
  const char* env = std::getenv("RECUR_TEST_DATA_DIR");
  return env && *env ? env : std::string(RECUR_TEST_DATA_DIR);
}

}  // namespace recur::testing
