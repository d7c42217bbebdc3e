#include "runtime/rnn/rnn_spec.h"

#include <algorithm>
#include <cctype>

#include "runtime/core/checked_math.h"
#include "runtime/core/code_layout.h"

namespace recur {

namespace {

struct ActivationInfo {
  const char* name;
  RnnActivation::Kind kind;
  bool takes_alpha;
  bool takes_beta;
  float default_alpha;
  float default_beta;
};

// Defaults are those of the ONNX operators of the same name. Affine and ScaledTanh, whose
// operators left them out, default to the identity-like alpha=1, beta=0 and alpha=1, beta=1.
constexpr ActivationInfo kActivations[] = {
    {"Relu", RnnActivation::Kind::kRelu, false, false, 0.0f, 0.0f},
    {"Tanh", RnnActivation::Kind::kTanh, false, false, 0.0f, 0.0f},
    {"Sigmoid", RnnActivation::Kind::kSigmoid, false, false, 0.0f, 0.0f},
    {"Affine", RnnActivation::Kind::kAffine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", RnnActivation::Kind::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"ThresholdedRelu", RnnActivation::Kind::kThresholdedRelu, true, false, 1.0f, 0.0f},
    {"ScaledTanh", RnnActivation::Kind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"HardSigmoid", RnnActivation::Kind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"Elu", RnnActivation::Kind::kElu, true, false, 1.0f, 0.0f},
    {"Softsign", RnnActivation::Kind::kSoftsign, false, false, 0.0f, 0.0f},
    {"Softplus", RnnActivation::Kind::kSoftplus, false, false, 0.0f, 0.0f},
};

const ActivationInfo* find_activation(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& a : kActivations) {
    std::string n;
    for (const char* p = a.name; *p; ++p) n += static_cast<char>(std::tolower(*p));
    if (n == lower) return &a;
  }
  return nullptr;
}

RECUR_LOAD_PATH std::vector<std::string> default_activation_names(RnnCell cell) {
  switch (cell) {
    case RnnCell::kLstm:
      return {"Sigmoid", "Tanh", "Tanh"};
    case RnnCell::kGru:
      return {"Sigmoid", "Tanh"};
    case RnnCell::kRnn:
      return {"Tanh"};
  }
  return {};
}

std::string shape_of(const Tensor* t) { return shape_to_string(t->shape()); }

}  // namespace

const char* RnnActivation::name() const {
  for (const auto& a : kActivations)
    if (a.kind == kind) return a.name;
  return "?";
}

const char* RnnSpec::cell_name() const {
  return cell == RnnCell::kLstm ? "LSTM" : cell == RnnCell::kGru ? "GRU" : "RNN";
}

RECUR_LOAD_PATH bool RnnSpec::default_activations() const {
  const auto names = default_activation_names(cell);
  for (int d = 0; d < num_directions(); ++d) {
    for (int k = 0; k < activations_per_direction(); ++k) {
      if (std::string(activation(d, k).name()) != names[static_cast<size_t>(k)]) return false;
    }
  }
  return true;
}

RECUR_LOAD_PATH Result<RnnSpec> RnnSpec::parse(const Node& node) {
  RnnSpec s;
  const std::string where = node.describe() + ": ";
  if (node.op_type == "LSTM") {
    s.cell = RnnCell::kLstm;
  } else if (node.op_type == "GRU") {
    s.cell = RnnCell::kGru;
  } else if (node.op_type == "RNN") {
    s.cell = RnnCell::kRnn;
  } else {
    return internal_error(where + "not an RNN node");
  }
  AttrReader a(node);
  const std::string direction = a.get_string("direction", "forward");
  s.hidden_size = a.get_int("hidden_size", -1);
  const int64_t layout = a.get_int("layout", 0);
  const bool has_clip = a.has("clip");
  const float clip = a.get_float("clip", 0.0f);
  const int64_t input_forget = a.get_int("input_forget", 0);
  const int64_t lbr = a.get_int("linear_before_reset", 0);
  std::vector<std::string> names = a.get_strings("activations");
  const std::vector<float> alphas = a.get_floats("activation_alpha");
  const std::vector<float> betas = a.get_floats("activation_beta");
  RECUR_RETURN_IF_ERROR(a.status());

  if (direction == "forward") {
    s.direction = RnnDirection::kForward;
  } else if (direction == "reverse") {
    s.direction = RnnDirection::kReverse;
  } else if (direction == "bidirectional") {
    s.direction = RnnDirection::kBidirectional;
  } else {
    return invalid_model(where + "direction '" + direction +
                         "' is not forward, reverse or bidirectional");
  }
  if (a.has("hidden_size") && s.hidden_size <= 0) {
    return invalid_model(where + "hidden_size must be positive, got " +
                         std::to_string(s.hidden_size));
  }
  if (layout != 0 && layout != 1) {
    return invalid_model(where + "layout must be 0 or 1, got " + std::to_string(layout));
  }
  if (layout == 1 && node.opset < 14) {
    return invalid_model(where + "layout=1 needs opset 14 or later (the model uses opset " +
                         std::to_string(node.opset) + ")");
  }
  s.layout = static_cast<int>(layout);
  if (has_clip) {
    if (!(clip > 0.0f)) {
      return invalid_model(where + "clip must be positive, got " + std::to_string(clip));
    }
    s.clip = clip;
  }
  if (input_forget != 0 && s.cell != RnnCell::kLstm) {
    return invalid_model(where + "input_forget applies only to LSTM");
  }
  s.input_forget = input_forget != 0;
  if (lbr != 0 && s.cell != RnnCell::kGru) {
    return invalid_model(where + "linear_before_reset applies only to GRU");
  }
  s.linear_before_reset = lbr != 0;

  const int per_dir = s.activations_per_direction();
  const int dirs = s.num_directions();
  s.activations_given = !names.empty();
  s.alpha_beta_given = !alphas.empty() || !betas.empty();
  bool shared_set = false;
  if (names.empty()) {
    for (int d = 0; d < dirs; ++d)
      for (const auto& n : default_activation_names(s.cell)) names.push_back(n);
  } else if (static_cast<int>(names.size()) == per_dir && dirs == 2) {
    // One set given for a bidirectional node: both directions use it.
    const auto once = names;
    names.insert(names.end(), once.begin(), once.end());
    shared_set = true;
  } else if (static_cast<int>(names.size()) != per_dir * dirs) {
    return invalid_model(where + "activations lists " + std::to_string(names.size()) +
                         " functions; a " + direction + " " + s.cell_name() + " needs " +
                         std::to_string(per_dir * dirs));
  }
  size_t ai = 0, bi = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    const ActivationInfo* info = find_activation(names[k]);
    if (!info) return not_implemented(where + "unknown activation '" + names[k] + "'");
    RnnActivation act;
    act.kind = info->kind;
    // The reverse direction of a shared set takes further values if the lists have them, and
    // otherwise those of its forward twin rather than the defaults.
    const RnnActivation* twin =
        shared_set && k >= static_cast<size_t>(per_dir) ? &s.activations[k - per_dir] : nullptr;
    if (info->takes_alpha) {
      act.alpha = ai < alphas.size() ? alphas[ai++] : twin ? twin->alpha : info->default_alpha;
    }
    if (info->takes_beta) {
      act.beta = bi < betas.size() ? betas[bi++] : twin ? twin->beta : info->default_beta;
    }
    s.activations.push_back(act);
  }
  if (s.hidden_size > 0) {
    RECUR_RETURN_IF_ERROR(
        check_rnn_size_limits(node, s, s.hidden_size, 1, ErrorCode::kInvalidModel));
  }
  return s;
}

RECUR_LOAD_PATH Status check_rnn_size_limits(const Node& node, const RnnSpec& spec, int64_t H,
                                             int64_t I, ErrorCode code) {
  // The largest buffer is a weight matrix, D * G * H * max(H, I) elements; 2G covers B and the
  // 4-gate bias of LBR-GRU, and 16 covers a double's 8 bytes with room for the sum of W, R and
  // B that a cuDNN weight space holds, so that no size the converters derive can overflow.
  // Sizes that are not positive are the shape checks' errors, with better messages.
  const int64_t in = std::max<int64_t>({H, I, 1});
  if (H <= 0 || I < 0 ||
      checked_product({spec.num_directions(), 2 * spec.num_gates(), H, in, 16})) {
    return ok_status();
  }
  return Status(code, node.describe() + ": hidden_size " + std::to_string(H) + " with input_size " +
                          std::to_string(I) + " is too large: the " + spec.cell_name() +
                          " weight sizes would overflow 64 bits");
}

RECUR_LOAD_PATH Result<RnnDims> check_rnn_inputs(const Node& node, const RnnSpec& spec,
                                                 const Tensor* x, const Tensor* w, const Tensor* r,
                                                 const Tensor* b, const Tensor* seq_lens,
                                                 const Tensor* initial_h, const Tensor* initial_c,
                                                 const Tensor* p) {
  // The node is named only on an error: this runs on every run of every RNN kernel.
  auto bad = [&](const std::string& m) {
    return Status(ErrorCode::kInvalidArgument, node.describe() + ": " + m);
  };
  if (!x) return bad("input X is missing");
  if (!w) return bad("input W is missing");
  if (!r) return bad("input R is missing");
  if (x->rank() != 3) return bad("input X must have rank 3, got shape " + shape_of(x));
  const DType dt = x->dtype();
  if (!is_floating(dt)) {
    return bad("input X must be a floating-point tensor, got " + std::string(dtype_name(dt)));
  }
  RnnDims d;
  d.directions = spec.num_directions();
  d.seq_length = spec.layout == 0 ? x->dim(0) : x->dim(1);
  d.batch = spec.layout == 0 ? x->dim(1) : x->dim(0);
  d.input_size = x->dim(2);
  const int64_t G = spec.num_gates();
  const int64_t D = d.directions;

  auto same_dtype = [&](const Tensor* t, const char* name) RECUR_LOAD_PATH -> Status {
    if (t && t->dtype() != dt) {
      return bad(std::string("input ") + name + " is " + std::string(dtype_name(t->dtype())) +
                 " but X is " + std::string(dtype_name(dt)));
    }
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(same_dtype(w, "W"));
  RECUR_RETURN_IF_ERROR(same_dtype(r, "R"));
  RECUR_RETURN_IF_ERROR(same_dtype(b, "B"));
  RECUR_RETURN_IF_ERROR(same_dtype(initial_h, "initial_h"));
  RECUR_RETURN_IF_ERROR(same_dtype(initial_c, "initial_c"));
  RECUR_RETURN_IF_ERROR(same_dtype(p, "P"));

  if (r->rank() != 3 || r->dim(0) != D) {
    return bad("input R must have shape [" + std::to_string(D) + ", " + std::to_string(G) +
               "*hidden_size, hidden_size], got " + shape_of(r));
  }
  const int64_t H = spec.hidden_size > 0 ? spec.hidden_size : r->dim(2);
  d.hidden = H;
  if (H <= 0) return bad("hidden size must be positive; R has shape " + shape_of(r));
  RECUR_RETURN_IF_ERROR(
      check_rnn_size_limits(node, spec, H, d.input_size, ErrorCode::kInvalidArgument));
  if (r->dim(1) != G * H || r->dim(2) != H) {
    return bad("input R has shape " + shape_of(r) + " but hidden_size " + std::to_string(H) +
               " needs [" + std::to_string(D) + "," + std::to_string(G * H) + "," +
               std::to_string(H) + "]");
  }
  if (w->rank() != 3 || w->dim(0) != D || w->dim(1) != G * H) {
    return bad("input W has shape " + shape_of(w) + " but hidden_size " + std::to_string(H) +
               " needs [" + std::to_string(D) + "," + std::to_string(G * H) + ",input_size]");
  }
  if (w->dim(2) != d.input_size) {
    return bad("input X has input size (last dimension) " + std::to_string(d.input_size) +
               " but W expects " + std::to_string(w->dim(2)) + " (X shape " + shape_of(x) +
               ", W shape " + shape_of(w) + ")");
  }
  if (b && (b->rank() != 2 || b->dim(0) != D || b->dim(1) != 2 * G * H)) {
    return bad("input B must have shape [" + std::to_string(D) + "," + std::to_string(2 * G * H) +
               "], got " + shape_of(b));
  }
  const Shape state = spec.layout == 0 ? Shape{D, d.batch, H} : Shape{d.batch, D, H};
  if (initial_h && initial_h->shape() != state) {
    return bad("input initial_h must have shape " + shape_to_string(state) + ", got " +
               shape_of(initial_h));
  }
  if (initial_c && spec.cell != RnnCell::kLstm) return bad("initial_c applies only to LSTM");
  if (initial_c && initial_c->shape() != state) {
    return bad("input initial_c must have shape " + shape_to_string(state) + ", got " +
               shape_of(initial_c));
  }
  if (p && spec.cell != RnnCell::kLstm) return bad("P applies only to LSTM");
  if (p && (p->rank() != 2 || p->dim(0) != D || p->dim(1) != 3 * H)) {
    return bad("input P must have shape [" + std::to_string(D) + "," + std::to_string(3 * H) +
               "], got " + shape_of(p));
  }
  if (seq_lens) {
    if (seq_lens->dtype() != DType::kInt32) {
      return bad("input sequence_lens must be int32, got " +
                 std::string(dtype_name(seq_lens->dtype())));
    }
    if (seq_lens->rank() != 1 || seq_lens->dim(0) != d.batch) {
      return bad("input sequence_lens must have shape [" + std::to_string(d.batch) + "], got " +
                 shape_of(seq_lens));
    }
    if (seq_lens->is_cpu()) {
      const int32_t* lens = seq_lens->data<int32_t>();
      for (int64_t i = 0; i < d.batch; ++i) {
        if (lens[i] < 0 || lens[i] > d.seq_length) {
          return Status(ErrorCode::kOutOfRange,
                        node.describe() + ": sequence_lens[" + std::to_string(i) +
                            "] = " + std::to_string(lens[i]) + " is outside [0, " +
                            std::to_string(d.seq_length) + "] (the sequence length T)");
        }
      }
    }
  }
  return d;
}

RECUR_LOAD_PATH Status infer_rnn(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, RnnSpec::parse(ctx.node()));
  const TypeInfo& x = ctx.input_type(kRnnX);
  const TypeInfo& w = ctx.input_type(kRnnW);
  const TypeInfo& r = ctx.input_type(kRnnR);
  const int64_t G = spec.num_gates();
  const int64_t D = spec.num_directions();

  for (size_t i : {kRnnX, kRnnW, kRnnR}) {
    if (!ctx.has_input(i)) {
      return ctx.error(std::string("input ") +
                       (i == kRnnX   ? "X"
                        : i == kRnnW ? "W"
                                     : "R") +
                       " is missing");
    }
  }
  const char* kNames[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  const int kRanks[] = {3, 3, 3, 2, 1, 3, 3, 2};
  for (size_t i = 0; i < ctx.num_inputs() && i <= kRnnP; ++i) {
    const TypeInfo& t = ctx.input_type(i);
    if (!ctx.has_input(i)) continue;
    if (t.has_rank() && t.rank() != kRanks[i]) {
      return ctx.error(std::string("input ") + kNames[i] + " must have rank " +
                       std::to_string(kRanks[i]) + ", got " + t.to_string());
    }
    if (t.dtype == DType::kUndefined) continue;
    if (i == kRnnSeqLens) {
      if (t.dtype != DType::kInt32) {
        return ctx.error("input sequence_lens must be int32, got " +
                         std::string(dtype_name(t.dtype)));
      }
    } else if (!is_floating(t.dtype)) {
      return ctx.error(std::string("input ") + kNames[i] +
                       " must be a floating-point tensor, got " + std::string(dtype_name(t.dtype)));
    } else if (x.dtype != DType::kUndefined && t.dtype != x.dtype) {
      return ctx.error(std::string("input ") + kNames[i] + " is " +
                       std::string(dtype_name(t.dtype)) + " but X is " +
                       std::string(dtype_name(x.dtype)));
    }
  }

  // hidden_size against constant W and R: a load-time error rather than a run-time one.
  int64_t H = spec.hidden_size;
  if (r.is_static() && r.rank() == 3) {
    const Shape rs = r.static_shape();
    // Sizes first: G * H below must not overflow, whether H is the attribute or R's.
    const int64_t I = w.is_static() && w.rank() == 3 ? w.static_shape()[2] : 1;
    RECUR_RETURN_IF_ERROR(
        check_rnn_size_limits(ctx.node(), spec, H > 0 ? H : rs[2], I, ErrorCode::kInvalidModel));
    if (H > 0 && (rs[1] != G * H || rs[2] != H)) {
      return ctx.error("hidden_size " + std::to_string(H) + " disagrees with R of shape " +
                       shape_to_string(rs) + " (expected [" + std::to_string(D) + "," +
                       std::to_string(G * H) + "," + std::to_string(H) + "])");
    }
    if (rs[0] != D) {
      return ctx.error("R has " + std::to_string(rs[0]) + " directions but direction needs " +
                       std::to_string(D));
    }
    if (H <= 0) H = rs[2];
  }
  if (w.is_static() && w.rank() == 3) {
    const Shape ws = w.static_shape();
    if (H > 0) {
      RECUR_RETURN_IF_ERROR(
          check_rnn_size_limits(ctx.node(), spec, H, ws[2], ErrorCode::kInvalidModel));
    }
    if (H > 0 && ws[1] != G * H) {
      return ctx.error("hidden_size " + std::to_string(H) + " disagrees with W of shape " +
                       shape_to_string(ws) + " (expected dimension 1 to be " +
                       std::to_string(G * H) + ")");
    }
    if (ws[0] != D) {
      return ctx.error("W has " + std::to_string(ws[0]) + " directions but direction needs " +
                       std::to_string(D));
    }
    if (x.rank() == 3 && (*x.shape)[2].is_fixed() && (*x.shape)[2].value != ws[2]) {
      return ctx.error("X has input size " + std::to_string((*x.shape)[2].value) +
                       " but W expects " + std::to_string(ws[2]));
    }
  }

  Dim t, n, h = H > 0 ? Dim{H, {}} : Dim{};
  if (x.rank() == 3) {
    t = (*x.shape)[spec.layout == 0 ? 0 : 1];
    n = (*x.shape)[spec.layout == 0 ? 1 : 0];
  }
  const Dim d{D, {}};
  TypeInfo y, state;
  y.dtype = state.dtype = x.dtype;
  if (x.rank() == 3 || x.rank() < 0) {
    // Filled in place, not from braced lists: std::vector<Dim>'s initializer-list constructor is
    // an out-of-line instantiation far from the load path (runtime/core/code_layout.h).
    std::vector<Dim>& ys = y.shape.emplace(4);
    std::vector<Dim>& ss = state.shape.emplace(3);
    // layout 0: Y [T, D, N, H], Y_h [D, N, H]; layout 1: Y [N, T, D, H], Y_h [N, D, H].
    const bool batch_first = spec.layout != 0;
    ys[0] = batch_first ? n : t;
    ys[1] = batch_first ? t : d;
    ys[2] = batch_first ? d : n;
    ys[3] = h;
    ss[0] = batch_first ? n : d;
    ss[1] = batch_first ? d : n;
    ss[2] = h;
  }
  ctx.set_output(kRnnY, y);
  ctx.set_output(kRnnYh, state);
  if (spec.cell == RnnCell::kLstm) ctx.set_output(kRnnYc, state);
  return ok_status();
}

}  // namespace recur
