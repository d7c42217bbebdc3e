// Reading and writing numpy .npy files (format versions 1-3, C order).
#pragma once

#include <string>

#include "recur/tensor.h"
#include "runtime/core/status.h"

namespace recur::tools {

Result<Tensor> read_npy(const std::string& path);
// The whole .npy file (version 1.0) for a host tensor.
Result<std::string> encode_npy(const Tensor& t);
// The bytes of a .npy file; `path` names them in errors. The fuzzer feeds it directly.
Result<Tensor> parse_npy(std::string bytes, const std::string& path);
Status write_npy(const Tensor& t, const std::string& path);

// .npy or .pb (a serialized TensorProto), by the file's extension.
Result<Tensor> read_tensor_file(const std::string& path);

}  // namespace recur::tools
