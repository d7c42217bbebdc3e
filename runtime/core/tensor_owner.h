// Owners for host bytes that a Tensor wraps without copying them.
#pragma once

#include <memory>
#include <string>

namespace recur {

// Makes a string's bytes (an initializer's raw_data released from its TensorProto) the owner
// of a Tensor, without a copy.
//
// Defined in tensor.cc on purpose: the shared_ptr control block it instantiates is emitted with
// that file's code, which every session creation runs, so the load that frees a repacked weight
// (CompileContext::release_input_now) does not fault in a 64 KiB code window of its own for it.
// runtime/core/code_layout.h says why windows matter.
std::shared_ptr<void> own_string(std::unique_ptr<std::string> bytes);

}  // namespace recur
