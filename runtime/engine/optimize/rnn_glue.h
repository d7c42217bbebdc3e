// What exporters write around an ONNX RNN node's Y, shared by the rewrites that remove it
// (stacked_rnn.cc: layers fused into one node; fold_rnn_layout.cc: batch-first RNNs in layout 1).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/graph/graph.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::rnn_glue {

inline bool is_rnn(const Node& n) {
  return n.domain.empty() && (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN");
}

inline int directions(const Node& rnn) {
  const Attribute* d = rnn.attr("direction");
  return d && d->type == AttrType::kString && d->s == "bidirectional" ? 2 : 1;
}

// Whether the node's `layout` attribute is absent or 0.
inline bool layout0(const Node& rnn) {
  const Attribute* l = rnn.attr("layout");
  return !l || (l->type == AttrType::kInt && l->i == 0);
}

// The int values of constant input i of `n`, or of attribute `attr` when the input is absent.
std::optional<std::vector<int64_t>> ints_of(const Graph& g, const Node& n, size_t i,
                                            const char* attr);

// The only reader of value v, if v has exactly one reader that reads it once, through no
// subgraph, and v is no graph output.
const Node* sole_reader(const Graph& g, ValueId v);

// A Transpose of the default domain with exactly this perm and one output.
bool is_transpose(const Node& n, const std::vector<int64_t>& perm);

// The glue that turns an RNN's Y [T, D, N, H] (layout 0) into a sequence [T, N, D*H]: with one
// direction Squeeze(axes 1), with two Transpose(0, 2, 1, 3) and Reshape(0, 0, -1 or 2H). Each
// glue node is the sole reader of the value before it; `seq` is the last one's output.
struct SeqGlue {
  std::vector<int> nodes;
  ValueId seq = kNoValue;
};
std::optional<SeqGlue> seq_glue(const Graph& g, const Node& rnn);

}  // namespace recur::rnn_glue
