// Inference BatchNormalization after a Conv, folded into the Conv's weights and bias:
//   y = s*(conv(x, W) + b - mean) + beta,  s = scale/sqrt(var + eps)
//     = conv(x, s*W) + s*(b - mean) + beta,
// with s applied per output channel. One node less on every provider, and the Conv's own bias
// takes the rest.
#include <cmath>

#include "runtime/engine/optimize/optimizer.h"

namespace recur {

namespace {

bool is_op(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op; }

template <class T>
void fold(const Tensor& w, const Tensor* b, const Tensor& scale, const Tensor& beta,
          const Tensor& mean, const Tensor& var, double eps, Tensor& new_w, Tensor& new_b) {
  const int64_t M = w.dim(0);
  const int64_t per = M ? w.numel() / M : 0;
  const T* wp = w.data<T>();
  T* nw = new_w.data<T>();
  T* nb = new_b.data<T>();
  for (int64_t m = 0; m < M; ++m) {
    const double s = static_cast<double>(scale.data<T>()[m]) /
                     std::sqrt(static_cast<double>(var.data<T>()[m]) + eps);
    for (int64_t k = 0; k < per; ++k) nw[m * per + k] = static_cast<T>(s * wp[m * per + k]);
    const double bias = b ? static_cast<double>(b->data<T>()[m]) : 0.0;
    nb[m] = static_cast<T>(s * (bias - static_cast<double>(mean.data<T>()[m])) +
                           static_cast<double>(beta.data<T>()[m]));
  }
}

}  // namespace

Status fold_batchnorm_into_conv(Graph& graph) {
  std::vector<bool> dead(graph.nodes().size(), false);
  bool any = false;
  for (size_t bi = 0; bi < graph.nodes().size(); ++bi) {
    const Node& bn = graph.node(static_cast<int>(bi));
    if (!is_op(bn, "BatchNormalization") || bn.inputs.size() != 5 || !bn.has_input(0)) continue;
    AttrReader attrs(bn);
    const double eps = attrs.get_float("epsilon", 1e-5f);
    const int64_t training = attrs.get_int("training_mode", 0);
    const int64_t spatial = attrs.get_int("spatial", 1);
    if (!attrs.status().ok() || training != 0 || spatial != 1) continue;
    bool extra_outputs = false;
    for (size_t i = 1; i < bn.outputs.size(); ++i) {
      if (bn.outputs[i] != kNoValue && !graph.value(bn.outputs[i]).consumers.empty())
        extra_outputs = true;
    }
    if (extra_outputs || !bn.has_output(0)) continue;
    const Value& x = graph.value(bn.inputs[0]);
    if (x.producer < 0 || x.is_graph_output || x.consumers.size() != 1) continue;
    const Node& conv = graph.node(x.producer);
    if (!is_op(conv, "Conv") || dead[static_cast<size_t>(conv.index)] || conv.outputs.size() != 1)
      continue;
    const Tensor* w = conv.has_input(1) ? graph.constant(conv.inputs[1]) : nullptr;
    const Tensor* b = conv.has_input(2) ? graph.constant(conv.inputs[2]) : nullptr;
    if (!w || (conv.has_input(2) && !b) || w->rank() < 3) continue;
    const Tensor* p[4];
    bool ok = true;
    for (int k = 0; k < 4; ++k) {
      p[k] = graph.constant(bn.inputs[static_cast<size_t>(k + 1)]);
      ok =
          ok && p[k] && p[k]->dtype() == w->dtype() && p[k]->numel() == w->dim(0) && p[k]->is_cpu();
    }
    const DType dt = w->dtype();
    if (!ok || !w->is_cpu() || (dt != DType::kFloat32 && dt != DType::kFloat64)) continue;
    if (b && (b->dtype() != dt || b->numel() != w->dim(0))) continue;

    Tensor new_w = Tensor::empty(dt, w->shape());
    Tensor new_b = Tensor::empty(dt, {w->dim(0)});
    if (dt == DType::kFloat32) {
      fold<float>(*w, b, *p[0], *p[1], *p[2], *p[3], eps, new_w, new_b);
    } else {
      fold<double>(*w, b, *p[0], *p[1], *p[2], *p[3], eps, new_w, new_b);
    }
    const std::string base = conv.name + "/bn_folded";
    const ValueId wv = graph.add_value(base + "_W");
    const ValueId bv = graph.add_value(base + "_B");
    graph.set_initializer(wv, std::move(new_w));
    graph.set_initializer(bv, std::move(new_b));
    const ValueId y = bn.outputs[0];
    const std::string bn_name = bn.name;
    Node& c = graph.mutable_node(conv.index);
    c.inputs.resize(3, kNoValue);
    c.inputs[1] = wv;
    c.inputs[2] = bv;
    c.outputs[0] = y;
    c.notes.push_back("BatchNormalization '" + bn_name +
                      "' folded into the weights and bias at load");
    dead[bi] = true;
    any = true;
  }
  if (!any) return ok_status();
  graph.remove_nodes(dead);
  RECUR_RETURN_IF_ERROR(graph.finalize());
  // Weights no node reads any more (the unfolded W, B and the BatchNormalization's
  // parameters) are dropped.
  std::vector<ValueId> unused;
  for (const auto& [v, t] : graph.initializers()) {
    const Value& val = graph.value(v);
    if (val.consumers.empty() && !val.is_graph_input && !val.is_graph_output) unused.push_back(v);
  }
  for (ValueId v : unused) graph.remove_initializer(v);
  return ok_status();
}

}  // namespace recur
