// Harness: .npy bytes -> tools/common/npy.cc's reader. A refusal (an error Result) is fine; a
// tensor it accepts must hold as many bytes as its shape says, which the read touches, and must
// come back unchanged through the writer (encode_npy, then parse_npy again).
#include <cstdint>
#include <cstring>
#include <string>

#include "tools/common/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t =
      recur::tools::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  if (!t.ok()) return 0;
  // Reading every byte lets ASan see a tensor whose memory is smaller than its shape.
  volatile uint8_t sink = 0;
  const bool strings = t->dtype() == recur::DType::kString;
  if (strings) {
    for (int64_t i = 0; i < t->numel(); ++i) {
      for (char c : t->data<std::string>()[i]) sink = sink ^ static_cast<uint8_t>(c);
    }
  } else {
    const auto* p = static_cast<const uint8_t*>(t->raw_data());
    for (size_t i = 0; i < t->nbytes(); ++i) sink = sink ^ p[i];
  }
  auto bytes = recur::tools::encode_npy(*t);
  if (!bytes.ok()) __builtin_trap();
  auto back = recur::tools::parse_npy(*bytes, "again.npy");
  if (!back.ok() || back->dtype() != t->dtype() || back->shape() != t->shape()) __builtin_trap();
  for (int64_t i = 0; strings && i < t->numel(); ++i) {
    if (back->data<std::string>()[i] != t->data<std::string>()[i]) __builtin_trap();
  }
  if (!strings && std::memcmp(back->raw_data(), t->raw_data(), t->nbytes()) != 0) __builtin_trap();
  return 0;
}
