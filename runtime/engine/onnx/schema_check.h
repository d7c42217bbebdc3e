// Checks each node of a model as loaded against its operator's ONNX schema: attribute names,
// types and required flags, input and output counts, and the allowed values of enum-like and
// range-limited attributes (docs/semantics.md, "Schema validation"). The schemas are a constant
// table generated from ONNX's operator changelogs (tools/gen_schema_table.py).
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/graph/graph.h"

namespace recur {

// Checks `node` (its domain, op_type and resolved opset) against its schema. `where` prefixes
// messages ("model.onnx" or "model.onnx: subgraph 'body' of node 'loop' (Loop)"). Nodes of
// other domains, and operators or versions ONNX does not define, pass: providers refuse what
// they cannot run. An unknown attribute is an error when `strict`, otherwise a line appended
// to `warnings`.
Status check_node_schema(const Node& node, const std::string& where, bool strict,
                         std::vector<std::string>* warnings);

// The since_version of the version of `op` that opset `opset` of `domain` selects, as ONNX's
// registry resolves it; 0 where the table has no such operator (or domain).
int schema_since_version(const std::string& domain, const std::string& op, int opset);

// The allowed-value rules (schema_values.cc): the message of the first rule `node` breaks,
// without the node prefix ("attribute 'input_forget' must be 0 or 1, got 5"), or "".
std::string check_attribute_values(const Node& node);

}  // namespace recur
