// TensorProto <-> Tensor, every encoding, with external data mapped from disk.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "recur/tensor.h"
#include "runtime/core/status.h"

namespace onnx {
class SparseTensorProto;
class TensorProto;
}  // namespace onnx

namespace recur {

// Resolves a TensorProto's external data against the model's folder. Files are mapped once
// and shared by every tensor that lives in them.
class ExternalData {
 public:
  // `model_dir` is the folder the model was loaded from; paths may not leave it.
  explicit ExternalData(std::filesystem::path model_dir) : dir_(std::move(model_dir)) {}
  // The bytes [offset, offset+length) of `location`; length < 0 means "to the end".
  Result<Tensor> read(const std::string& location, int64_t offset, int64_t length, DType dtype,
                      const Shape& shape, const std::string& tensor_name);

 private:
  struct Mapping {
    std::shared_ptr<void> base;
    size_t size = 0;
  };
  Result<Mapping> map(const std::filesystem::path& path);

  std::filesystem::path dir_;
  std::mutex mutex_;
  std::map<std::string, Mapping> maps_;
};

// Whether `code` is a TensorProto data_type that recur holds in a Tensor.
bool known_tensor_dtype(int32_t code);

// `external` may be null, in which case external data is an error. `what` names the tensor's
// origin in errors ("initializer 'W' of model.onnx").
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, ExternalData* external,
                                 const std::string& what);
// The same, but a plain raw_data payload is taken out of `proto` rather than copied: the
// tensor then owns the parsed bytes, and the weights are never held twice.
Result<Tensor> tensor_from_proto_taking(onnx::TensorProto* proto, ExternalData* external,
                                        const std::string& what);
// A SparseTensorProto as the dense tensor it stands for (zeros, or empty strings, elsewhere),
// as ONNX Runtime holds sparse initializers. Indices are linear [NNZ] or coordinates
// [NNZ, rank], in any order (a repeated index keeps its last value); one outside the shape, or
// a dense form above 4 GiB, is an error.
Result<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& proto,
                                        ExternalData* external, const std::string& what);
Status tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

// Opens `path` read-only, refusing anything but a regular file before and after the open:
// a FIFO would block open() until a writer came, and a device or directory is never a model or
// a tensor. `kind` names the file in errors ("the model file"). The caller closes the fd.
Result<int> open_regular_file(const std::string& path, const std::string& kind);
// The whole of a regular file, refused as open_regular_file refuses.
Result<std::string> read_regular_file(const std::string& path, const std::string& kind);

// A serialized TensorProto file (input_0.pb). Also returns the name stored in it.
Result<Tensor> read_tensor_pb(const std::string& path, std::string* name = nullptr);
Status write_tensor_pb(const Tensor& t, const std::string& name, const std::string& path);
// A serialized SequenceProto of tensors or of maps, as a sequence value (Tensor::is_sequence()).
Result<Tensor> read_sequence_pb(const std::string& path, std::string* name = nullptr);
// A serialized MapProto (int64 or string keys, one single-element tensor per value), as a map
// value (Tensor::is_map()).
Result<Tensor> read_map_pb(const std::string& path, std::string* name = nullptr);
// A serialized OptionalProto: its tensor or sequence, or Tensor::none() when empty.
Result<Tensor> read_optional_pb(const std::string& path, std::string* name = nullptr);

}  // namespace recur
