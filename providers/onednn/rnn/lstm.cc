// LSTM through oneDNN's lstm_forward, peepholes included.
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

RECUR_LOAD_PATH Claim claim_lstm(const Node& node, const Graph& graph) {
  auto spec = RnnSpec::parse(node);
  if (!spec.ok()) return Claim::decline(spec.status().message());
  if (spec->input_forget && spec->clip) {
    return Claim::decline(
        "input_forget together with clip: oneDNN expresses input_forget by negating the input "
        "gate, which clip would break, and has no clip");
  }
  Claim c = claim_rnn_common(node, graph, *spec);
  if (!c.yes) return c;
  c = claim_default_activations(*spec, "Sigmoid,Tanh,Tanh");
  if (!c.yes) return c;
  return claim_alpha_beta(node, *spec);
}

RnnPd create_lstm_pd(const RnnSpec& spec, int dir, const RnnDescs& d, dnnl::rnn_direction direction,
                     const dnnl::primitive_attr& attr, bool make_primitive) {
  dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_inference, direction, d.src_layer,
                                d.src_iter, d.src_iter_c, d.weights_layer, d.weights_iter,
                                d.weights_peephole, d.bias, d.dst_layer, d.dst_iter, d.dst_iter_c);
  return finish_rnn_pd<dnnl::lstm_forward>(
      dnnl::lstm_forward::primitive_desc(desc, attr, cpu_engine()), make_primitive);
}

}  // namespace recur::onednn
