// The model harnesses' shared body: model bytes -> load, optimize, plan, and one run with small
// inputs of the declared shapes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace recur::fuzz {

// recur::Error (a refusal) is caught; anything else escapes to the fuzzer as a crash.
void run_model_bytes(const uint8_t* data, size_t size);

}  // namespace recur::fuzz
