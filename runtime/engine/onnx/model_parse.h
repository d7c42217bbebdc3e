// Parsing a serialized ModelProto, with the largest weights copied outside protobuf's parser.
#pragma once

#include <cstddef>

namespace onnx {
class ModelProto;
}

namespace recur {

// protobuf 3.21 reserves at most this many bytes for a string field before it reads it; a
// longer one grows by doubling as it is read, so that for a moment the old and the new copy are
// both resident (parse_context.h, kSafeStringSize).
inline constexpr size_t kProtobufSafeStringSize = 50'000'000;

struct ParseOptions {
  // The bytes are a private read-only mapping of the model file: pages the parser has passed may
  // be given back to the kernel (they would be read from the file again if touched). Never for
  // memory the caller lent.
  bool may_discard = false;
  // raw_data fields of the main graph's initializers this long or longer are copied into their
  // strings by recur, reserved once at their full length, instead of by protobuf's parser.
  size_t copy_from = kProtobufSafeStringSize + 1;
};

enum class ParseResult {
  kParsed,
  kInvalid,  // not a ModelProto: truncated, or not protobuf at all
  kTooDeep,  // would parse but for protobuf's limit of 100 nested messages
};

// `mp` ends up exactly as protobuf's own parse of the bytes would leave it (fuzz/model_parse
// checks that). `size` is at most INT32_MAX.
ParseResult parse_model_proto(const char* data, size_t size, const ParseOptions& options,
                              onnx::ModelProto* mp);

}  // namespace recur
