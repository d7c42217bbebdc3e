// cuda-generic's elementwise operators: arithmetic and comparisons with numpy broadcasting,
// activations and other unary functions, Where, Cast, Clip and inference BatchNormalization.
#include <cmath>

#include "providers/cuda/ops/gpu_kernel.h"

namespace recur::cuda::ops {

namespace {

const std::vector<DType> kArith = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32,
                                   DType::kInt64};
const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64, DType::kFloat16};

// --- Binary ----------------------------------------------------------------------------------

class BinaryKernel final : public GpuKernel {
 public:
  explicit BinaryKernel(int32_t op) : op_(op) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, need_input(ctx, 1));
    if (a->dtype() != b->dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "inputs differ in type: " + std::string(dtype_name(a->dtype())) + " and " +
                           std::string(dtype_name(b->dtype())));
    }
    auto shape = broadcast_shape({a->shape(), b->shape()});
    if (!shape.ok()) return shape.status().with_context(ctx.node().describe());
    BinaryArgs g;
    g.op = op_;
    auto sa = broadcast_strided(a->shape(), *shape);
    auto sb = broadcast_strided(b->shape(), *shape);
    if (!sa.ok()) return sa.status().with_context(ctx.node().describe());
    if (!sb.ok()) return sb.status().with_context(ctx.node().describe());
    g.a = *sa;
    g.b = *sb;
    const DType out_t = is_comparison(op_) ? DType::kBool : a->dtype();
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, out_t, *shape));
    RECUR_LAUNCH_CHECK(
        ctx, launch_binary(a->dtype(), g, a->raw_data(), b->raw_data(), y->raw_data(), y->numel(),
                           run.flag, run.site("integer division by zero"), run.stream));
    return ok_status();
  }

 private:
  int32_t op_;
};

// Max, Min and Sum over any number of inputs, pairwise.
class VariadicKernel final : public GpuKernel {
 public:
  explicit VariadicKernel(int32_t op) : op_(op) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (const Tensor* t = ctx.input(i)) ins.push_back(t);
    if (ins.empty()) return ctx.error(ErrorCode::kInvalidArgument, "no inputs");
    if (ins.size() == 1) return ctx.set_output(0, *ins[0]);
    std::vector<Shape> shapes;
    for (const Tensor* t : ins) {
      if (t->dtype() != ins[0]->dtype()) {
        return ctx.error(ErrorCode::kInvalidArgument, "inputs differ in type");
      }
      shapes.push_back(t->shape());
    }
    auto out_shape = broadcast_shape(shapes);
    if (!out_shape.ok()) return out_shape.status().with_context(ctx.node().describe());
    Tensor acc = *ins[0];
    for (size_t k = 1; k < ins.size(); ++k) {
      auto partial = broadcast_shape({acc.shape(), ins[k]->shape()});
      if (!partial.ok()) return partial.status().with_context(ctx.node().describe());
      Tensor next;
      if (k + 1 == ins.size()) {
        RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, acc.dtype(), *partial));
        next = *y;
      } else {
        next = Tensor::empty(acc.dtype(), *partial, ctx.device());
      }
      BinaryArgs g;
      g.op = op_;
      RECUR_ASSIGN_OR_RETURN(g.a, broadcast_strided(acc.shape(), *partial));
      RECUR_ASSIGN_OR_RETURN(g.b, broadcast_strided(ins[k]->shape(), *partial));
      RECUR_LAUNCH_CHECK(
          ctx, launch_binary(acc.dtype(), g, acc.raw_data(), ins[k]->raw_data(), next.raw_data(),
                             next.numel(), run.flag, 0, run.stream));
      acc = next;
    }
    return ok_status();
  }

 private:
  int32_t op_;
};

bool legacy_broadcast(const Node& n) { return n.opset < 7; }

void add_binary(KernelRegistry& r, const char* op, int32_t code, std::vector<DType> types,
                int since = 7) {
  ClaimFn types_ok = claim_input_types(0, types);
  r.add({.op_type = op,
         .since = since,
         .create = [code](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<BinaryKernel>(code);
         },
         .claim =
             [types_ok](const Node& n, const Graph& g) {
               if (legacy_broadcast(n)) return Claim::decline("legacy broadcast (opset < 7)");
               if (input_dtype(n, g, 0) != input_dtype(n, g, 1)) {
                 return Claim::decline("inputs of different types");
               }
               return types_ok(n, g);
             }});
}

// --- Unary -----------------------------------------------------------------------------------

class UnaryKernel final : public GpuKernel {
 public:
  UnaryKernel(int32_t op, float alpha, float beta) : op_(op), alpha_(alpha), beta_(beta) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    double lo = alpha_, hi = beta_;
    if (op_ == kClip) {
      std::optional<double> in_lo, in_hi;
      if (ctx.node().opset >= 11 && ctx.input(1)) {
        RECUR_ASSIGN_OR_RETURN(in_lo, host_scalar(ctx, 1));
      }
      if (ctx.node().opset >= 11 && ctx.input(2)) {
        RECUR_ASSIGN_OR_RETURN(in_hi, host_scalar(ctx, 2));
      }
      auto b = clip_bounds(ctx.node(), in_lo, in_hi);
      if (!b.ok()) return b.status().with_context(ctx.node().describe());
      lo = b->lo;
      hi = b->hi;
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), x->shape()));
    RECUR_LAUNCH_CHECK(ctx, launch_unary(x->dtype(), op_, lo, hi, x->raw_data(), y->raw_data(),
                                         x->numel(), run.stream));
    return ok_status();
  }

 private:
  int32_t op_;
  float alpha_, beta_;
};

struct UnaryDef {
  const char* op;
  int32_t code;
  int since;
  const char* alpha_attr;
  float alpha;
  const char* beta_attr;
  float beta;
  bool ints;  // int32/int64 too
};

void add_unary(KernelRegistry& r, const UnaryDef& d) {
  std::vector<DType> types = kFloats;
  if (d.ints) {
    types.push_back(DType::kInt32);
    types.push_back(DType::kInt64);
  }
  const UnaryDef def = d;
  r.add({.op_type = d.op,
         .since = d.since,
         .create = [def](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           float alpha = def.alpha_attr ? a.get_float(def.alpha_attr, def.alpha) : def.alpha;
           float beta = def.beta_attr ? a.get_float(def.beta_attr, def.beta) : def.beta;
           int32_t code = def.code;
           if (code == kGeluErf && a.get_string("approximate", "none") == "tanh") code = kGeluTanh;
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<UnaryKernel>(code, alpha, beta);
         },
         .claim = claim_input_types(0, types),
         .host_inputs =
             std::string(d.op) == "Clip" ? std::vector<size_t>{1, 2} : std::vector<size_t>{}});
}

// --- Where, Cast, BatchNormalization ----------------------------------------------------------

class WhereKernel final : public GpuKernel {
 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* c, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* y, need_input(ctx, 2));
    if (c->dtype() != DType::kBool || x->dtype() != y->dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "Where takes a bool condition and X, Y of one type");
    }
    auto shape = broadcast_shape({c->shape(), x->shape(), y->shape()});
    if (!shape.ok()) return shape.status().with_context(ctx.node().describe());
    WhereArgs g;
    RECUR_ASSIGN_OR_RETURN(g.c, broadcast_strided(c->shape(), *shape));
    RECUR_ASSIGN_OR_RETURN(g.x, broadcast_strided(x->shape(), *shape));
    RECUR_ASSIGN_OR_RETURN(g.y, broadcast_strided(y->shape(), *shape));
    RECUR_ASSIGN_OR_RETURN(Tensor * out, new_output(ctx, 0, x->dtype(), *shape));
    RECUR_LAUNCH_CHECK(ctx, launch_where(dtype_size(x->dtype()), g, c->data<bool>(), x->raw_data(),
                                         y->raw_data(), out->raw_data(), out->numel(), run.stream));
    return ok_status();
  }
};

bool castable(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
      return true;
    default:
      return false;
  }
}

class CastKernel final : public GpuKernel {
 public:
  explicit CastKernel(DType to) : to_(to) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    if (x->dtype() == to_) return ctx.set_output(0, *x);
    if (!castable(x->dtype())) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "Cast from " + std::string(dtype_name(x->dtype())) + " on the GPU");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, to_, x->shape()));
    RECUR_LAUNCH_CHECK(
        ctx, launch_cast(static_cast<int32_t>(x->dtype()), x->raw_data(), static_cast<int32_t>(to_),
                         y->raw_data(), x->numel(), run.stream));
    return ok_status();
  }

 private:
  DType to_;
};

class BatchNormKernel final : public GpuKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(CompileContext& ctx) {
    auto k = std::make_unique<BatchNormKernel>();
    AttrReader a(ctx.node());
    const double eps = a.get_float("epsilon", 1e-5f);
    RECUR_RETURN_IF_ERROR(a.status());
    const Tensor* p[4];
    for (int i = 0; i < 4; ++i) {
      p[i] = ctx.constant_input(static_cast<size_t>(i + 1));
      if (!p[i]) return ctx.error(ErrorCode::kNotImplemented, "parameters must be constants");
    }
    const int64_t C = p[0]->numel();
    std::vector<double> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
    auto val = [](const Tensor& t, int64_t i) {
      switch (t.dtype()) {
        case DType::kFloat64:
          return t.data<double>()[i];
        case DType::kFloat16:
          return static_cast<double>(static_cast<float>(t.data<Float16>()[i]));
        default:
          return static_cast<double>(t.data<float>()[i]);
      }
    };
    for (int i = 1; i < 4; ++i) {
      if (p[i]->numel() != C)
        return ctx.error(ErrorCode::kInvalidModel, "parameters differ in size");
    }
    for (int64_t c = 0; c < C; ++c) {
      const double s = val(*p[0], c) / std::sqrt(val(*p[3], c) + eps);
      scale[static_cast<size_t>(c)] = s;
      shift[static_cast<size_t>(c)] = val(*p[1], c) - val(*p[2], c) * s;
    }
    k->dtype_ = ctx.input_type(0).dtype;
    k->channels_ = C;
    const bool wide = k->dtype_ == DType::kFloat64;
    const size_t es = wide ? 8 : 4;
    auto up = [&](const std::vector<double>& v) -> Result<std::shared_ptr<void>> {
      std::vector<char> bytes(v.size() * es);
      for (size_t i = 0; i < v.size(); ++i) {
        if (wide) {
          reinterpret_cast<double*>(bytes.data())[i] = v[i];
        } else {
          reinterpret_cast<float*>(bytes.data())[i] = static_cast<float>(v[i]);
        }
      }
      const int dev = ctx.provider().device().index;
      RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> d, allocate_device(bytes.size(), dev));
      RECUR_RETURN_IF_ERROR(copy_host_to_device(d.get(), dev, bytes.data(), bytes.size()));
      return d;
    };
    RECUR_ASSIGN_OR_RETURN(k->scale_, up(scale));
    RECUR_ASSIGN_OR_RETURN(k->shift_, up(shift));
    for (size_t i = 1; i <= 4; ++i) ctx.release_input(i);
    ctx.note("folded into a per-channel scale and shift at load");
    return std::unique_ptr<Kernel>(std::move(k));
  }

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    if (x->rank() < 2 || x->dim(1) != channels_ || x->dtype() != dtype_) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X " + shape_to_string(x->shape()) + " does not have " +
                           std::to_string(channels_) + " channels of " +
                           std::string(dtype_name(dtype_)));
    }
    int64_t inner = 1;
    for (int64_t d = 2; d < x->rank(); ++d) inner *= x->dim(d);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), x->shape()));
    RECUR_LAUNCH_CHECK(
        ctx, launch_channel_affine(x->dtype(), x->raw_data(), scale_.get(), shift_.get(),
                                   y->raw_data(), channels_, inner, x->numel(), run.stream));
    return ok_status();
  }

 private:
  DType dtype_ = DType::kFloat32;
  int64_t channels_ = 0;
  std::shared_ptr<void> scale_, shift_;
};

Claim claim_batch_norm(const Node& n, const Graph& g) {
  if (!is_float_type(input_dtype(n, g, 0))) return Claim::decline("X is not a float type");
  AttrReader a(n);
  if (a.get_int("training_mode", 0) != 0) return Claim::decline("training_mode=1");
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (n.has_output(i) && !g.value(n.outputs[i]).consumers.empty()) {
      return Claim::decline("running mean/variance outputs are used (training)");
    }
  }
  for (size_t i = 1; i <= 4; ++i) {
    if (!n.has_input(i) || !g.constant(n.inputs[i])) {
      return Claim::decline("scale, B, mean and var must be constants");
    }
  }
  if (n.opset < 7 && a.get_int("spatial", 1) != 1) return Claim::decline("spatial=0");
  return Claim::accept();
}

}  // namespace

void register_elementwise_kernels(KernelRegistry& r) {
  add_binary(r, "Add", kAdd, kArith);
  add_binary(r, "Sub", kSub, kArith);
  add_binary(r, "Mul", kMul, kArith);
  add_binary(r, "Div", kDiv, kArith);
  add_binary(r, "Pow", kPow, kFloats);
  add_binary(r, "PRelu", kPRelu, kFloats);
  for (auto [op, code] : {std::pair<const char*, int32_t>{"Equal", kEqual},
                          {"Less", kLess},
                          {"LessOrEqual", kLessOrEqual},
                          {"Greater", kGreater},
                          {"GreaterOrEqual", kGreaterOrEqual}}) {
    std::vector<DType> t = kArith;
    if (code == kEqual) t.push_back(DType::kBool);
    add_binary(r, op, code, t);
  }
  for (auto [op, code] : {std::pair<const char*, int32_t>{"And", kAnd}, {"Or", kOr}, {"Xor", kXor}})
    add_binary(r, op, code, {DType::kBool});
  r.add({.op_type = "Mod",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t fmod = a.get_int("fmod", 0);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<BinaryKernel>(fmod ? kFmod : kMod);
         },
         .claim =
             [](const Node& n, const Graph& g) {
               const DType t = input_dtype(n, g, 0);
               if (t != input_dtype(n, g, 1)) return Claim::decline("inputs of different types");
               const bool fmod = AttrReader(n).get_int("fmod", 0) != 0;
               if (is_float_type(t) && fmod) return Claim::accept();
               if ((t == DType::kInt32 || t == DType::kInt64)) return Claim::accept();
               return Claim::decline("Mod on the GPU: ints, or floats with fmod=1");
             }});
  for (auto [op, code] :
       {std::pair<const char*, int32_t>{"Max", kMax}, {"Min", kMin}, {"Sum", kAdd}}) {
    r.add({.op_type = op,
           .since = 8,
           .create = [code = code](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
             return std::make_unique<VariadicKernel>(code);
           },
           .claim = claim_input_types(0, kArith)});
  }

  const UnaryDef unary[] = {
      {"Relu", kRelu, 6, nullptr, 0, nullptr, 0, false},
      {"Tanh", kTanh, 6, nullptr, 0, nullptr, 0, false},
      {"Sigmoid", kSigmoid, 6, nullptr, 0, nullptr, 0, false},
      {"Exp", kExp, 6, nullptr, 0, nullptr, 0, false},
      {"Log", kLog, 6, nullptr, 0, nullptr, 0, false},
      {"Neg", kNeg, 6, nullptr, 0, nullptr, 0, true},
      {"Abs", kAbs, 6, nullptr, 0, nullptr, 0, true},
      {"Sqrt", kSqrt, 6, nullptr, 0, nullptr, 0, false},
      {"Reciprocal", kReciprocal, 6, nullptr, 0, nullptr, 0, false},
      {"Floor", kFloor, 6, nullptr, 0, nullptr, 0, false},
      {"Ceil", kCeil, 6, nullptr, 0, nullptr, 0, false},
      {"Round", kRound, 11, nullptr, 0, nullptr, 0, false},
      {"Erf", kErf, 9, nullptr, 0, nullptr, 0, false},
      {"Sin", kSin, 7, nullptr, 0, nullptr, 0, false},
      {"Cos", kCos, 7, nullptr, 0, nullptr, 0, false},
      {"Softplus", kSoftplus, 1, nullptr, 0, nullptr, 0, false},
      {"Softsign", kSoftsign, 1, nullptr, 0, nullptr, 0, false},
      {"Elu", kElu, 6, "alpha", 1.0f, nullptr, 0, false},
      {"LeakyRelu", kLeakyRelu, 6, "alpha", 0.01f, nullptr, 0, false},
      {"HardSigmoid", kHardSigmoid, 6, "alpha", 0.2f, "beta", 0.5f, false},
      {"Selu", kSelu, 6, "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f,
       false},
      {"Sign", kSign, 9, nullptr, 0, nullptr, 0, true},
      {"ThresholdedRelu", kThresholdedRelu, 10, "alpha", 1.0f, nullptr, 0, false},
      {"HardSwish", kHardSwish, 14, nullptr, 0, nullptr, 0, false},
      {"Celu", kCelu, 12, "alpha", 1.0f, nullptr, 0, false},
      {"Gelu", kGeluErf, 20, nullptr, 0, nullptr, 0, false},
      {"Clip", kClip, 6, nullptr, 0, nullptr, 0, false},  // bounds: clip_bounds
  };
  for (const UnaryDef& d : unary) add_unary(r, d);
  r.add({.op_type = "Not",
         .since = 1,
         .create = [](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<UnaryKernel>(kNot, 0.0f, 0.0f);
         },
         .claim = claim_input_types(0, {DType::kBool})});
  r.add({.op_type = "Where",
         .since = 9,
         .create = [](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<WhereKernel>();
         },
         .claim =
             [](const Node& n, const Graph& g) {
               const DType t = input_dtype(n, g, 1);
               const size_t e = dtype_size(t);
               if (t == DType::kUndefined || t == DType::kString ||
                   (e != 1 && e != 2 && e != 4 && e != 8)) {
                 return Claim::decline("X is of a type the GPU kernel does not move");
               }
               return Claim::accept();
             }});
  r.add({.op_type = "Cast",
         .since = 6,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t to = a.require_int("to");
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<CastKernel>(static_cast<DType>(to));
         },
         .claim =
             [](const Node& n, const Graph& g) {
               const Attribute* to = n.attr("to");
               if (!to || to->type != AttrType::kInt) return Claim::decline("no 'to' attribute");
               const DType from = input_dtype(n, g, 0);
               if (!castable(from) || !castable(static_cast<DType>(to->i))) {
                 return Claim::decline("Cast between these types is not on the GPU");
               }
               return Claim::accept();
             }});
  r.add({.op_type = "BatchNormalization",
         .since = 7,
         .create = &BatchNormKernel::create,
         .claim = &claim_batch_norm,
         .prepacked_inputs = {1, 2, 3, 4}});
}

}  // namespace recur::cuda::ops
