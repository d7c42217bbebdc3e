// Model-local functions (ModelProto.functions, IR version 8 on): PyTorch's exporter writes
// them with export_modules_as_functions, its dynamo exporter and onnxscript too. recur expands
// every call into the function's body at load, as ONNX Runtime does, so that the optimizer,
// the partitioner and the providers see one flat graph (docs/semantics.md, "Model-local
// functions").
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace onnx {
class ModelProto;
}

namespace recur {

// Replaces each node of mp's graph and subgraphs that calls one of mp's functions (same
// domain, name and overload) by a copy of the function's body: its formal inputs and outputs
// become the call's values, its other values and nodes get names under the call's node name
// ("call/value"), and attribute references (ref_attr_name) take the call's attributes or the
// function's defaults. Calls inside bodies expand too. A domain a function imports and the
// model does not is added to mp's opset_import; one both import at different versions must
// select the same version of each operator the body uses (ONNX's rule). Errors name `file`,
// the call and the function. An attribute the function does not declare is an error if
// `strict`, otherwise a line in `warnings`. A model without functions is left as it is.
Status inline_local_functions(onnx::ModelProto& mp, const std::string& file, bool strict,
                              std::vector<std::string>* warnings);

}  // namespace recur
