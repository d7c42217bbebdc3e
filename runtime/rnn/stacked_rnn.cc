#include "runtime/rnn/stacked_rnn.h"

namespace recur {

namespace {

// Index of `which` within a layer's block of inputs.
size_t layer_slot(RnnInput which) {
  switch (which) {
    case kRnnW:
      return 0;
    case kRnnR:
      return 1;
    case kRnnB:
      return 2;
    case kRnnInitialH:
      return 3;
    case kRnnInitialC:
      return 4;
    default:
      return 0;
  }
}

}  // namespace

size_t stacked_input(int layer, RnnInput which) {
  return 2 + static_cast<size_t>(layer) * kStackedInputsPerLayer + layer_slot(which);
}

size_t stacked_output(int layer, RnnOutput which) {
  return 1 + static_cast<size_t>(layer) * kStackedOutputsPerLayer + (which == kRnnYc ? 1 : 0);
}

Result<StackedRnnSpec> parse_stacked_rnn(const Node& fused) {
  AttrReader a(fused);
  const std::string cell = a.get_string("cell");
  const int64_t layers = a.get_int("num_layers", 0);
  const int64_t opset = a.get_int("onnx_opset", 0);
  RECUR_RETURN_IF_ERROR(a.status());
  if (cell != "LSTM" && cell != "GRU" && cell != "RNN") {
    return invalid_model(fused.describe() + ": cell must be LSTM, GRU or RNN, got '" + cell + "'");
  }
  if (layers < 1 || layers > 1024) {
    return invalid_model(fused.describe() + ": num_layers must be in [1, 1024], got " +
                         std::to_string(layers));
  }
  if (fused.inputs.size() > 2 + static_cast<size_t>(layers) * kStackedInputsPerLayer ||
      fused.outputs.size() > 1 + static_cast<size_t>(layers) * kStackedOutputsPerLayer) {
    return invalid_model(fused.describe() + ": too many inputs or outputs for " +
                         std::to_string(layers) + " layers");
  }
  StackedRnnSpec s;
  s.num_layers = static_cast<int>(layers);
  s.onnx_opset = static_cast<int>(opset);
  RECUR_ASSIGN_OR_RETURN(s.spec, RnnSpec::parse(stacked_layer_node(fused, 0)));
  if (s.spec.layout != 0) {
    return invalid_model(fused.describe() + ": only layout 0 is fused");
  }
  return s;
}

Node stacked_layer_node(const Node& fused, int layer) {
  Node n;
  n.index = fused.index;
  n.name = fused.name + "/layer" + std::to_string(layer);
  const Attribute* cell = fused.attr("cell");
  n.op_type = cell ? cell->s : "LSTM";
  const Attribute* opset = fused.attr("onnx_opset");
  n.opset = opset ? static_cast<int>(opset->i) : 7;
  for (const auto& [k, v] : fused.attributes) {
    if (k != "cell" && k != "num_layers" && k != "onnx_opset") n.attributes.emplace(k, v);
  }
  auto in = [&](size_t i) { return i < fused.inputs.size() ? fused.inputs[i] : kNoValue; };
  auto out = [&](size_t i) { return i < fused.outputs.size() ? fused.outputs[i] : kNoValue; };
  n.inputs = {layer == 0 ? in(0) : kNoValue,
              in(stacked_input(layer, kRnnW)),
              in(stacked_input(layer, kRnnR)),
              in(stacked_input(layer, kRnnB)),
              in(1),
              in(stacked_input(layer, kRnnInitialH)),
              in(stacked_input(layer, kRnnInitialC))};
  n.outputs = {kNoValue, out(stacked_output(layer, kRnnYh)), out(stacked_output(layer, kRnnYc))};
  return n;
}

Node make_stacked_rnn_node(const std::vector<const Node*>& layers, std::string name) {
  const Node& first = *layers.front();
  Node f;
  f.name = std::move(name);
  f.domain = kStackedRnnDomain;
  f.op_type = kStackedRnnOp;
  f.opset = 1;
  f.attributes = first.attributes;
  Attribute cell;
  cell.type = AttrType::kString;
  cell.s = first.op_type;
  f.attributes["cell"] = cell;
  Attribute num;
  num.type = AttrType::kInt;
  num.i = static_cast<int64_t>(layers.size());
  f.attributes["num_layers"] = num;
  Attribute opset;
  opset.type = AttrType::kInt;
  opset.i = first.opset;
  f.attributes["onnx_opset"] = opset;
  const int L = static_cast<int>(layers.size());
  f.inputs.assign(2 + static_cast<size_t>(L) * kStackedInputsPerLayer, kNoValue);
  f.outputs.assign(1 + static_cast<size_t>(L) * kStackedOutputsPerLayer, kNoValue);
  f.inputs[0] = first.inputs[kRnnX];
  f.inputs[1] = first.has_input(kRnnSeqLens) ? first.inputs[kRnnSeqLens] : kNoValue;
  for (int l = 0; l < L; ++l) {
    const Node& n = *layers[static_cast<size_t>(l)];
    for (RnnInput w : {kRnnW, kRnnR, kRnnB, kRnnInitialH, kRnnInitialC}) {
      if (n.has_input(w)) f.inputs[stacked_input(l, w)] = n.inputs[w];
    }
    if (n.has_output(kRnnYh)) f.outputs[stacked_output(l, kRnnYh)] = n.outputs[kRnnYh];
    if (n.has_output(kRnnYc)) f.outputs[stacked_output(l, kRnnYc)] = n.outputs[kRnnYc];
  }
  if (layers.back()->has_output(kRnnY)) f.outputs[0] = layers.back()->outputs[kRnnY];
  while (f.inputs.size() > 1 && f.inputs.back() == kNoValue) f.inputs.pop_back();
  while (f.outputs.size() > 1 && f.outputs.back() == kNoValue) f.outputs.pop_back();
  return f;
}

Status infer_stacked_rnn(InferContext& ctx) {
  const Node& f = ctx.node();
  RECUR_ASSIGN_OR_RETURN(StackedRnnSpec s, parse_stacked_rnn(f));
  const int64_t D = s.spec.num_directions(), G = s.spec.num_gates();
  const TypeInfo& x = ctx.input_type(0);
  int64_t H = s.spec.hidden_size;
  Dim t, n;
  if (x.rank() == 3) {
    t = (*x.shape)[0];
    n = (*x.shape)[1];
  }
  for (int l = 0; l < s.num_layers; ++l) {
    const size_t wi = stacked_input(l, kRnnW);
    if (!ctx.has_input(wi) || !ctx.has_input(stacked_input(l, kRnnR))) {
      return ctx.error("layer " + std::to_string(l) + " has no W or R");
    }
    const TypeInfo& w = ctx.input_type(wi);
    if (!w.is_static() || w.rank() != 3) continue;
    const Shape ws = w.static_shape();
    if (H <= 0) H = ws[1] / G;
    int64_t want_in = -1;
    if (l > 0) {
      want_in = D * H;
    } else if (x.rank() == 3 && (*x.shape)[2].is_fixed()) {
      want_in = (*x.shape)[2].value;
    }
    if (ws[0] != D || ws[1] != G * H || (want_in >= 0 && ws[2] != want_in)) {
      return ctx.error("layer " + std::to_string(l) + ": W has shape " + shape_to_string(ws) +
                       ", expected [" + std::to_string(D) + "," + std::to_string(G * H) + "," +
                       (want_in >= 0 ? std::to_string(want_in) : std::string("I")) + "]");
    }
  }
  const Dim h = H > 0 ? Dim{H, {}} : Dim{};
  const Dim d{D, {}};
  TypeInfo y, state;
  y.dtype = state.dtype = x.dtype;
  y.shape = std::vector<Dim>{t, d, n, h};
  state.shape = std::vector<Dim>{d, n, h};
  ctx.set_output(0, y);
  for (int l = 0; l < s.num_layers; ++l) {
    ctx.set_output(stacked_output(l, kRnnYh), state);
    if (s.spec.cell == RnnCell::kLstm) ctx.set_output(stacked_output(l, kRnnYc), state);
  }
  return ok_status();
}

}  // namespace recur
