// GRU through oneDNN's gru_forward (linear_before_reset=0) and lbr_gru_forward (=1).
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

RnnPd create_gru_pd(const RnnSpec& spec, int dir, const RnnDescs& d, dnnl::rnn_direction direction,
                    const dnnl::primitive_attr& attr, bool make_primitive) {
  if (spec.linear_before_reset) {
    dnnl::lbr_gru_forward::desc desc(dnnl::prop_kind::forward_inference, direction, d.src_layer,
                                     d.src_iter, d.weights_layer, d.weights_iter, d.bias,
                                     d.dst_layer, d.dst_iter);
    return finish_rnn_pd<dnnl::lbr_gru_forward>(
        dnnl::lbr_gru_forward::primitive_desc(desc, attr, cpu_engine()), make_primitive);
  }
  dnnl::gru_forward::desc desc(dnnl::prop_kind::forward_inference, direction, d.src_layer,
                               d.src_iter, d.weights_layer, d.weights_iter, d.bias, d.dst_layer,
                               d.dst_iter);
  return finish_rnn_pd<dnnl::gru_forward>(
      dnnl::gru_forward::primitive_desc(desc, attr, cpu_engine()), make_primitive);
}

}  // namespace recur::onednn
