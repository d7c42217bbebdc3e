// What a model file says about itself: ModelProto's descriptive fields, as ONNX Runtime's
// ModelMetadata gives them (get_modelmeta() in its Python API). Deployed models keep class
// labels, sample rates or normalisation constants in metadata_props.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace recur {

struct ModelMetadata {
  std::string producer_name;  // "pytorch", "skl2onnx", "tf2onnx", ...
  std::string producer_version;
  std::string domain;
  std::string description;  // the model's doc_string
  int64_t version = 0;      // model_version
  std::string graph_name;
  std::string graph_description;  // the main graph's doc_string
  int64_t ir_version = 0;
  // The opsets the file imports: domain ("" for ai.onnx) to version. Functions' own imports
  // that loading adds are not listed.
  std::map<std::string, int64_t> opsets;
  // metadata_props. A key given twice keeps its last value, as in ONNX Runtime; loading
  // warns about it (Session::warnings).
  std::map<std::string, std::string> custom;
};

}  // namespace recur
