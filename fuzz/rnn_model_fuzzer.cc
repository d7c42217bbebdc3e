// Harness: RNN models -> load, optimize, plan, one run. The same body as fuzz_model, started
// from the RNN cases and driven by the structure-aware mutator (rnn_mutator.cc), which edits
// the LSTM/GRU/RNN nodes rather than bytes.
#include <cstdint>

#include "fuzz/model_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  recur::fuzz::run_model_bytes(data, size);
  return 0;
}
