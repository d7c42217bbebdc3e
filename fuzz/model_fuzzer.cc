// Harness: any model bytes -> load, optimize, plan, one run (fuzz/model_runner.cc).
#include <cstdint>

#include "fuzz/model_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  recur::fuzz::run_model_bytes(data, size);
  return 0;
}
