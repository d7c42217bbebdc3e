// LSTM through oneDNN's lstm_forward, peepholes included.
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

RnnPd create_lstm_pd(const RnnSpec& spec, int dir, const RnnDescs& d, dnnl::rnn_direction direction,
                     const dnnl::primitive_attr& attr, bool make_primitive) {
  dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_inference, direction, d.src_layer,
                                d.src_iter, d.src_iter_c, d.weights_layer, d.weights_iter,
                                d.weights_peephole, d.bias, d.dst_layer, d.dst_iter, d.dst_iter_c);
  return finish_rnn_pd<dnnl::lstm_forward>(
      dnnl::lstm_forward::primitive_desc(desc, attr, cpu_engine()), make_primitive);
}

}  // namespace recur::onednn
