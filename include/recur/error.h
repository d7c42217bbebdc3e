// Errors at the public API surface.
#pragma once

#include <stdexcept>
#include <string>

#include "recur/export.h"

namespace recur {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad input from the caller: a missing input, a wrong dtype or shape
  kInvalidModel,     // the model file or graph is malformed
  kNotImplemented,   // an operator, attribute or type that no provider supports
  kOutOfRange,       // an index, length or count outside its valid range
  kFailedPrecondition,
  kIo,      // the file system
  kDevice,  // CUDA, cuDNN or oneDNN reported an error
  kInternal,
  kCancelled,  // the run was ended by RunOptions::terminate() or its deadline
};

RECUR_API const char* to_string(ErrorCode code);

// Thrown by the public API; the message names the file, node or input concerned.
class RECUR_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace recur
