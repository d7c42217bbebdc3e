// Harness: serialized TensorProto bytes -> runtime/engine/onnx/tensor_proto.cc, every encoding
// (raw_data, the typed fields, packed 4-bit, strings). A tensor it accepts is written back and
// read again, which must succeed and give the same shape.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>

#include "runtime/engine/onnx/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  // No ExternalData: external tensors are refused here; the model harness reaches the file
  // checks through Session::from_bytes.
  auto t = recur::tensor_from_proto(proto, nullptr, "fuzz input");
  if (!t.ok()) return 0;
  if (t->dtype() != recur::DType::kString) {
    volatile uint8_t sink = 0;
    const auto* p = static_cast<const uint8_t*>(t->raw_data());
    for (size_t i = 0; i < t->nbytes(); ++i) sink = sink ^ p[i];
  }
  onnx::TensorProto back;
  if (!recur::tensor_to_proto(*t, "x", &back).ok()) return 0;
  auto again = recur::tensor_from_proto(back, nullptr, "fuzz round trip");
  // A tensor recur wrote must read back as itself: anything else is a bug, reported as one.
  if (!again.ok() || again->shape() != t->shape() || again->dtype() != t->dtype()) std::abort();
  return 0;
}
