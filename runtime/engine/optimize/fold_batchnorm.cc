// Inference BatchNormalization after a Conv, folded into the Conv's weights and bias:
//   y = s*(conv(x, W) + b - mean) + beta,  s = scale/sqrt(var + eps)
//     = conv(x, s*W) + s*(b - mean) + beta,
// with s applied per output channel. One node less on every provider, and the Conv's own bias
// takes the rest. After a MatMul of 2-D output (BatchNorm1d after a Linear without bias, as
// Open-Unmix writes it) likewise, s times each column of B, and the rest an Add, which the
// MatMul fusion then takes as its bias.
#include <cmath>

#include "runtime/engine/optimize/optimizer.h"

namespace recur {

namespace {

bool is_op(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op; }

// The M channels of `w` scaled and the bias folded: channel m's `per` weights lie at
// m * m_stride + k * k_stride (a Conv's W [M, ...]: per = numel / M, strides per and 1; a
// MatMul's B [K, M]: per = K, strides 1 and M).
template <class T>
void fold(const Tensor& w, int64_t M, int64_t m_stride, int64_t k_stride, const Tensor* b,
          const Tensor& scale, const Tensor& beta, const Tensor& mean, const Tensor& var,
          double eps, Tensor& new_w, Tensor& new_b) {
  const int64_t per = M ? w.numel() / M : 0;
  const T* wp = w.data<T>();
  T* nw = new_w.data<T>();
  T* nb = new_b.data<T>();
  for (int64_t m = 0; m < M; ++m) {
    const double s = static_cast<double>(scale.data<T>()[m]) /
                     std::sqrt(static_cast<double>(var.data<T>()[m]) + eps);
    for (int64_t k = 0; k < per; ++k) {
      const int64_t i = m * m_stride + k * k_stride;
      nw[i] = static_cast<T>(s * wp[i]);
    }
    const double bias = b ? static_cast<double>(b->data<T>()[m]) : 0.0;
    nb[m] = static_cast<T>(s * (bias - static_cast<double>(mean.data<T>()[m])) +
                           static_cast<double>(beta.data<T>()[m]));
  }
}

// The inference BatchNormalization node `bn`'s epsilon and its four constant parameters of
// `channels` values of dtype `dt` each, or false.
bool inference_batchnorm(const Graph& graph, const Node& bn, int64_t channels, DType dt,
                         double* eps, const Tensor* p[4]) {
  if (!is_op(bn, "BatchNormalization") || bn.inputs.size() != 5 || !bn.has_input(0) ||
      !bn.has_output(0))
    return false;
  AttrReader attrs(bn);
  *eps = attrs.get_float("epsilon", 1e-5f);
  const int64_t training = attrs.get_int("training_mode", 0);
  const int64_t spatial = attrs.get_int("spatial", 1);
  if (!attrs.status().ok() || training != 0 || spatial != 1) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (bn.outputs[i] != kNoValue && !graph.value(bn.outputs[i]).consumers.empty()) return false;
  }
  for (int k = 0; k < 4; ++k) {
    p[k] = graph.constant(bn.inputs[static_cast<size_t>(k + 1)]);
    if (!p[k] || p[k]->dtype() != dt || p[k]->numel() != channels || !p[k]->is_cpu()) return false;
  }
  return true;
}

// The node producing `bn`'s input, where nothing else reads that input, or null.
const Node* sole_producer(const Graph& graph, const Node& bn) {
  if (!is_op(bn, "BatchNormalization") || !bn.has_input(0)) return nullptr;
  const Value& x = graph.value(bn.inputs[0]);
  if (x.producer < 0 || x.is_graph_output || x.consumers.size() != 1) return nullptr;
  return &graph.node(x.producer);
}

// Drops the initializers no node reads any more (the unfolded weights, the BatchNormalization's
// parameters).
void drop_unread_initializers(Graph& graph) {
  std::vector<ValueId> unused;
  for (const auto& [v, t] : graph.initializers()) {
    const Value& val = graph.value(v);
    if (val.consumers.empty() && !val.is_graph_input && !val.is_graph_output) unused.push_back(v);
  }
  for (ValueId v : unused) graph.remove_initializer(v);
}

}  // namespace

Status fold_batchnorm_into_matmul(Graph& graph) {
  bool any = false;
  for (size_t bi = 0; bi < graph.nodes().size(); ++bi) {
    const Node& bn = graph.node(static_cast<int>(bi));
    const Node* mm = sole_producer(graph, bn);
    // Opset 7 on: the Add that takes the rest broadcasts.
    if (!mm || !is_op(*mm, "MatMul") || mm->inputs.size() != 2 || bn.opset < 7 ||
        graph.value(bn.inputs[0]).type.rank() != 2)
      continue;
    const Tensor* w = graph.constant(mm->inputs[1]);
    if (!w || w->rank() != 2 || !w->is_cpu() ||
        (w->dtype() != DType::kFloat32 && w->dtype() != DType::kFloat64))
      continue;
    const int64_t K = w->dim(0), C = w->dim(1);
    double eps = 0.0;
    const Tensor* p[4];
    if (!inference_batchnorm(graph, bn, C, w->dtype(), &eps, p)) continue;
    const DType dt = w->dtype();
    Tensor new_w = Tensor::empty(dt, {K, C}), new_b = Tensor::empty(dt, {C});
    if (dt == DType::kFloat32) {
      fold<float>(*w, C, 1, C, nullptr, *p[0], *p[1], *p[2], *p[3], eps, new_w, new_b);
    } else {
      fold<double>(*w, C, 1, C, nullptr, *p[0], *p[1], *p[2], *p[3], eps, new_w, new_b);
    }
    const std::string base = mm->name + "/bn_folded";
    const ValueId wv = graph.add_value(base + "_B");
    const ValueId bv = graph.add_value(base + "_bias");
    graph.set_initializer(wv, std::move(new_w));
    graph.set_initializer(bv, std::move(new_b));
    const std::string bn_name = bn.name;
    Node& m = graph.mutable_node(mm->index);
    m.inputs[1] = wv;
    m.notes.push_back("BatchNormalization '" + bn_name +
                      "' folded into B at load, its shift into the Add after");
    // The BatchNormalization node becomes that Add: X (the MatMul's output) plus the shift.
    Node& add = graph.mutable_node(static_cast<int>(bi));
    add.op_type = "Add";
    add.attributes.clear();
    add.inputs = {add.inputs[0], bv};
    add.outputs.resize(1);
    any = true;
  }
  if (!any) return ok_status();
  RECUR_RETURN_IF_ERROR(graph.finalize());
  drop_unread_initializers(graph);
  return ok_status();
}

Status fold_batchnorm_into_conv(Graph& graph) {
  std::vector<bool> dead(graph.nodes().size(), false);
  bool any = false;
  for (size_t bi = 0; bi < graph.nodes().size(); ++bi) {
    const Node& bn = graph.node(static_cast<int>(bi));
    const Node* conv = sole_producer(graph, bn);
    if (!conv || !is_op(*conv, "Conv") || dead[static_cast<size_t>(conv->index)] ||
        conv->outputs.size() != 1)
      continue;
    const Tensor* w = conv->has_input(1) ? graph.constant(conv->inputs[1]) : nullptr;
    const Tensor* b = conv->has_input(2) ? graph.constant(conv->inputs[2]) : nullptr;
    if (!w || (conv->has_input(2) && !b) || w->rank() < 3) continue;
    const DType dt = w->dtype();
    if (!w->is_cpu() || (dt != DType::kFloat32 && dt != DType::kFloat64)) continue;
    double eps = 0.0;
    const Tensor* p[4];
    if (!inference_batchnorm(graph, bn, w->dim(0), dt, &eps, p)) continue;
    if (b && (b->dtype() != dt || b->numel() != w->dim(0))) continue;

    Tensor new_w = Tensor::empty(dt, w->shape());
    Tensor new_b = Tensor::empty(dt, {w->dim(0)});
    const int64_t M = w->dim(0), per = M ? w->numel() / M : 0;
    if (dt == DType::kFloat32) {
      fold<float>(*w, M, per, 1, b, *p[0], *p[1], *p[2], *p[3], eps, new_w, new_b);
    } else {
      fold<double>(*w, M, per, 1, b, *p[0], *p[1], *p[2], *p[3], eps, new_w, new_b);
    }
    const std::string base = conv->name + "/bn_folded";
    const ValueId wv = graph.add_value(base + "_W");
    const ValueId bv = graph.add_value(base + "_B");
    graph.set_initializer(wv, std::move(new_w));
    graph.set_initializer(bv, std::move(new_b));
    const ValueId y = bn.outputs[0];
    const std::string bn_name = bn.name;
    Node& c = graph.mutable_node(conv->index);
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
  drop_unread_initializers(graph);
  return ok_status();
}

}  // namespace recur
