// Building small ONNX models in C++ tests, with onnx's protobuf classes.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "recur/tensor.h"

namespace recur::testing {

// A ModelProto under construction: graph inputs, outputs, initializers and nodes.
class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17, int64_t ir_version = 8);

  // dims: a number, or -1 with a symbol name in `symbols` at the same position.
  ModelBuilder& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                      const std::vector<std::string>& symbols = {});
  ModelBuilder& output(const std::string& name, DType dtype, const std::vector<int64_t>& dims = {},
                       bool with_shape = false);
  // A graph input or output of type map(key, value), or seq(map(key, value)).
  ModelBuilder& map_input(const std::string& name, DType key, DType value);
  ModelBuilder& map_output(const std::string& name, DType key, DType value, bool in_sequence);
  ModelBuilder& initializer(const std::string& name, const Tensor& value);
  // Appends a node and returns it so attributes can be added.
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "");
  ModelBuilder& opset(const std::string& domain, int version);

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  std::string bytes() const;
  // Writes model.onnx into `dir` (created) and returns its path.
  std::string save(const std::filesystem::path& dir, const std::string& file = "model.onnx") const;

 private:
  onnx::ModelProto model_;
};

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto& n, const std::string& name, float v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v);
void set_attr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g);

// A fresh empty folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A float tensor with the given values.
Tensor floats(const Shape& shape, const std::vector<float>& values);
// float32 values amplitude * sin(step * i + phase), i the flat index: smooth, of both signs,
// and different in every element and for every phase.
Tensor sine_wave(const Shape& shape, float phase, float step = 0.7f, float amplitude = 1.0f);
// float32 values drawn uniformly from [-scale, scale) by `rng`.
Tensor random_tensor(const Shape& shape, std::mt19937& rng, float scale = 0.5f);
// float32 values that make orderings hard: the integers -3..3 (so rows have ties), with
// infinities, zeros of both signs and, in every third row of the last axis, NaNs.
Tensor tricky_floats(const Shape& shape, std::mt19937& rng);

}  // namespace recur::testing
