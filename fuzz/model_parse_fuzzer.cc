// Harness: model bytes -> runtime/engine/onnx/model_parse.cc, which copies the main graph's
// large raw_data itself and leaves the rest to protobuf, against protobuf's own parse of the same
// bytes. With the copy threshold at 1 byte every initializer's raw_data takes recur's path; the
// two must agree on whether the bytes parse, and on every byte of the message when they do.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/engine/onnx/model_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > INT32_MAX) return 0;
  onnx::ModelProto expected;
  const bool parsed = size != 0 && expected.ParseFromArray(data, static_cast<int>(size));
  const std::string want = parsed ? expected.SerializeAsString() : std::string();
  for (const size_t copy_from : {size_t{1}, size_t{100}, recur::ParseOptions{}.copy_from}) {
    recur::ParseOptions options;
    options.copy_from = copy_from;
    onnx::ModelProto got;
    const recur::ParseResult r =
        recur::parse_model_proto(reinterpret_cast<const char*>(data), size, options, &got);
    if ((r == recur::ParseResult::kParsed) != parsed) {
      std::fprintf(stderr, "recur-fuzz: protobuf %s the bytes, recur's parse %s (copy_from %zu)\n",
                   parsed ? "parses" : "refuses", parsed ? "refuses" : "parses", copy_from);
      std::abort();
    }
    if (parsed && got.SerializeAsString() != want) {
      std::fprintf(stderr, "recur-fuzz: the two parses differ (copy_from %zu)\n", copy_from);
      std::abort();
    }
  }
  return 0;
}
