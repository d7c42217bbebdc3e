// Vanilla RNN through oneDNN's vanilla_rnn_forward: Tanh, Relu, Sigmoid and LeakyRelu (a Relu
// with a negative slope).
#include <cmath>

#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

RnnPd create_vanilla_pd(const RnnSpec& spec, int dir, const RnnDescs& d,
                        dnnl::rnn_direction direction, const dnnl::primitive_attr& attr,
                        bool make_primitive) {
  const RnnActivation& act = spec.activation(dir, 0);
  dnnl::algorithm alg = dnnl::algorithm::eltwise_tanh;
  float alpha = 0.0f;
  switch (act.kind) {
    case RnnActivation::Kind::kRelu:
      alg = dnnl::algorithm::eltwise_relu;
      break;
    case RnnActivation::Kind::kLeakyRelu:
      alg = dnnl::algorithm::eltwise_relu;
      alpha = act.alpha;
      break;
    case RnnActivation::Kind::kSigmoid:
      alg = dnnl::algorithm::eltwise_logistic;
      break;
    default:
      break;
  }
  dnnl::vanilla_rnn_forward::desc desc(
      dnnl::prop_kind::forward_inference, alg, direction, d.src_layer, d.src_iter, d.weights_layer,
      d.weights_iter, d.bias, d.dst_layer, d.dst_iter, dnnl::rnn_flags::undef, alpha);
  return finish_rnn_pd<dnnl::vanilla_rnn_forward>(
      dnnl::vanilla_rnn_forward::primitive_desc(desc, attr, cpu_engine()), make_primitive);
}

}  // namespace recur::onednn
