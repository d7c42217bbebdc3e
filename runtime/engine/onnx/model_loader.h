// Reads an ONNX ModelProto into the graph IR.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recur/model_metadata.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur {

// The highest default-domain opset this build implements (ONNX 1.12).
inline constexpr int kMaxOnnxOpset = 26;
// The highest ai.onnx.ml opset.
inline constexpr int kMaxMlOpset = 5;
// The highest com.microsoft opset (ONNX Runtime's contrib operators; only those in
// tools/schema/contrib_operators.txt have kernels).
inline constexpr int kMaxMicrosoftOpset = 1;

struct Model {
  std::shared_ptr<Graph> graph;
  ModelMetadata metadata;
  std::string path;  // for error messages
  // What the loader let pass but the user should hear of (unknown attributes when the schema
  // check is not strict), each naming the file and node.
  std::vector<std::string> warnings;
};

struct LoadOptions {
  // Every node is checked against its operator's schema; an unknown attribute is an error if
  // strict and a warning otherwise (SessionOptions::strict_schema).
  bool strict_schema = true;
};

// Errors name the file.
Result<Model> load_model(const std::string& path, const LoadOptions& options = {});
// `base_dir` resolves external data; `display_name` names the model in errors.
Result<Model> load_model_from_bytes(const void* data, size_t size, const std::string& base_dir,
                                    const std::string& display_name,
                                    const LoadOptions& options = {});

}  // namespace recur
