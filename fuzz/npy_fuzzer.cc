// Harness: .npy bytes -> tools/common/npy.cc's reader. A refusal (an error Result) is fine; a
// tensor it accepts must hold as many bytes as its shape says, which the read touches.
#include <cstdint>
#include <cstring>
#include <string>

#include "tools/common/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t =
      recur::tools::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  if (t.ok()) {
    // Reading every byte lets ASan see a tensor whose memory is smaller than its shape.
    volatile uint8_t sink = 0;
    const auto* p = static_cast<const uint8_t*>(t->raw_data());
    for (size_t i = 0; i < t->nbytes(); ++i) sink = sink ^ p[i];
  }
  return 0;
}
