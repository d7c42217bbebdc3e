// What the random operators share (random_ops.h).
#include <bit>
#include <cmath>
#include <numbers>
#include <string>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/random/random_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

// double -> T, through float for the 16-bit types (their constructors take float).
template <class T>
T narrow(double v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return T(static_cast<float>(v));
  }
}

}  // namespace

Result<std::optional<uint64_t>> seed_attr(const Node& node) {
  const Attribute* a = node.attr("seed");
  if (!a) return std::optional<uint64_t>();
  switch (a->type) {
    case AttrType::kFloat:
      // The float's bits, so that every distinct seed gives distinct draws (1.5 and 1 too).
      return std::optional<uint64_t>(std::bit_cast<uint32_t>(a->f));
    case AttrType::kInt:
      return std::optional<uint64_t>(static_cast<uint64_t>(a->i));
    default:
      return invalid_model(node.describe() + ": attribute seed must be a float or an int, not " +
                           attr_type_name(a->type));
  }
}

RandomDraw next_draw(const KernelContext& ctx, const std::optional<uint64_t>& seed) {
  const RunRandom* run = ctx.env().random;
  const uint64_t draw = run ? run->next_draw() : 0;
  // A node seed is offset from the run seeds' space, so seed=0 on a node and a session seeded
  // with 0 do not draw the same values.
  return RandomDraw::make(seed ? mix64(*seed ^ 0xA0761D6478BD642Full) : (run ? run->seed() : 0),
                          draw);
}

bool is_draw_float(DType t) {
  return t == DType::kFloat16 || t == DType::kFloat32 || t == DType::kFloat64 ||
         t == DType::kBFloat16;
}

Result<std::optional<DType>> dtype_attr(const Node& node, bool (*allowed)(DType),
                                        const char* what) {
  const Attribute* a = node.attr("dtype");
  if (!a) return std::optional<DType>();
  if (a->type != AttrType::kInt) {
    return invalid_model(node.describe() + ": attribute dtype must be an int, not " +
                         attr_type_name(a->type));
  }
  const auto t = static_cast<DType>(a->i);
  if (a->i < 0 || a->i > 255 || !allowed(t)) {
    return invalid_model(node.describe() + ": dtype " + std::to_string(a->i) + " (" +
                         std::string(a->i >= 0 && a->i <= 255 ? dtype_name(t) : "unknown") +
                         ") is not one this operator outputs: " + what);
  }
  return std::optional<DType>(t);
}

void fill_normal(Tensor& out, const RandomDraw& draw, double mean, double scale) {
  visit_dtype(kFloatTypes, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const int64_t n = out.numel();
    // Box-Muller: each pair of uniforms gives a pair of independent standard normals. 1 - u
    // lies in (0, 1], so the logarithm is finite.
    for (int64_t i = 0; i < n; i += 2) {
      const auto pair = static_cast<uint64_t>(i);
      const double r = std::sqrt(-2.0 * std::log(1.0 - draw.uniform(pair)));
      const double theta = 2.0 * std::numbers::pi * draw.uniform(pair + 1);
      p[i] = narrow<T>(mean + scale * r * std::cos(theta));
      if (i + 1 < n) p[i + 1] = narrow<T>(mean + scale * r * std::sin(theta));
    }
  });
}

void fill_uniform(Tensor& out, const RandomDraw& draw, double low, double high) {
  visit_dtype(kFloatTypes, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) {
      p[i] = narrow<T>(low + (high - low) * draw.uniform(static_cast<uint64_t>(i)));
    }
  });
}

namespace {

// Why a -Like node without a dtype attribute cannot draw over an input of dtype `dt`.
std::string like_dtype_error(DType dt) {
  return "without a dtype attribute the output takes the input's dtype, and " +
         std::string(dtype_name(dt)) + " is not " + kDrawFloats;
}

class FillKernel final : public Kernel {
 public:
  FillKernel(FillOp op, bool like, std::optional<DType> dtype, std::optional<Shape> shape,
             std::optional<uint64_t> seed, double a, double b)
      : op_(op), like_(like), dtype_(dtype), shape_(std::move(shape)), seed_(seed), a_(a), b_(b) {}

  Status run(KernelContext& ctx) const override {
    DType dt = DType::kFloat32;
    const Shape* shape = shape_ ? &*shape_ : nullptr;
    if (like_) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
      shape = &x->shape();
      dt = x->dtype();
      if (!dtype_ && !is_draw_float(dt)) {
        return ctx.error(ErrorCode::kInvalidArgument, like_dtype_error(dt));
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, dtype_.value_or(dt), *shape));
    op_.fill(*out, next_draw(ctx, seed_), a_, b_);
    return ok_status();
  }

 private:
  FillOp op_;
  bool like_;
  std::optional<DType> dtype_;
  std::optional<Shape> shape_;
  std::optional<uint64_t> seed_;
  double a_, b_;
};

// The `shape` attribute of the forms without an input.
Result<Shape> shape_attr(const Node& node) {
  AttrReader attrs(node);
  if (!attrs.has("shape")) return invalid_model(node.describe() + ": attribute shape is required");
  const std::vector<int64_t> shape = attrs.get_ints("shape");
  RECUR_RETURN_IF_ERROR(attrs.status());
  for (int64_t d : shape) {
    if (d < 0) {
      return invalid_model(node.describe() + ": attribute shape " + shape_to_string(shape) +
                           " has a negative dimension");
    }
  }
  return Shape(shape.begin(), shape.end());
}

Result<std::unique_ptr<Kernel>> create_fill(CompileContext& ctx, const FillOp& op, bool like) {
  const Node& node = ctx.node();
  RECUR_ASSIGN_OR_RETURN(std::optional<DType> dtype, dtype_attr(node, is_draw_float, kDrawFloats));
  RECUR_ASSIGN_OR_RETURN(std::optional<uint64_t> seed, seed_attr(node));
  std::optional<Shape> shape;
  if (!like) {
    RECUR_ASSIGN_OR_RETURN(Shape s, shape_attr(node));
    shape = std::move(s);
  }
  AttrReader attrs(node);
  const double a = attrs.get_float(op.a, op.a_default);
  const double b = attrs.get_float(op.b, op.b_default);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<FillKernel>(op, like, dtype, std::move(shape), seed, a, b);
}

Status infer_fill(InferContext& ctx, bool like) {
  auto dtype = dtype_attr(ctx.node(), is_draw_float, kDrawFloats);
  if (!dtype.ok()) return dtype.status();
  if (!like) {
    auto shape = shape_attr(ctx.node());
    if (!shape.ok()) return shape.status();
    ctx.set_output(0, TypeInfo::of(dtype->value_or(DType::kFloat32), *shape));
    return ok_status();
  }
  const TypeInfo& in = ctx.input_type(0);
  DType dt = in.dtype;
  if (*dtype) {
    dt = **dtype;
  } else if (dt != DType::kUndefined && !is_draw_float(dt)) {
    return ctx.error(like_dtype_error(dt));
  }
  ctx.set_output(0, TypeInfo{dt, in.shape});
  return ok_status();
}

}  // namespace

void register_fill(Registrar& r, const std::string& op_type, const FillOp& op) {
  for (const bool like : {false, true}) {
    r.add({.op_type = like ? op_type + "Like" : op_type,
           .since = 1,
           .create = [op, like](CompileContext& ctx) { return create_fill(ctx, op, like); },
           .shape_only_inputs = like ? std::vector<size_t>{0} : std::vector<size_t>{},
           .takes_strings = like},
          [like](InferContext& ctx) { return infer_fill(ctx, like); });
  }
}

}  // namespace recur::reference
