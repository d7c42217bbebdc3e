// Reshape: the shape comes from an attribute before opset 5 and from input 1 after. 0 copies
// the input's dimension (unless allowzero=1, opset 14), -1 is inferred. The output is a view.
#include <map>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

Result<Shape> reshape_shape(const Shape& in, const Shape& spec, bool allowzero) {
  Shape out(spec.size());
  int infer_at = -1;
  bool has_zero = false;
  int64_t known = 1;
  bool overflow = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) {
        return invalid_argument("shape " + ints_to_string(spec) + " has more than one -1");
      }
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < -1) {
      return invalid_argument("shape " + ints_to_string(spec) + " has a negative dimension " +
                              std::to_string(d));
    }
    if (d == 0) {
      has_zero = true;
      if (!allowzero) {
        if (i >= in.size()) {
          return invalid_argument("shape " + ints_to_string(spec) + " copies dimension " +
                                  std::to_string(i) + " with 0, but the input " +
                                  shape_to_string(in) + " has rank " + std::to_string(in.size()));
        }
        d = in[i];
      }
    }
    out[i] = d;
    if (__builtin_mul_overflow(known, d, &known)) overflow = true;
  }
  if (allowzero && has_zero && infer_at >= 0) {
    return invalid_argument("shape " + ints_to_string(spec) +
                            " has both 0 and -1, which allowzero=1 forbids");
  }
  const int64_t numel = shape_numel(in);
  if (overflow) {
    return invalid_argument("shape " + ints_to_string(spec) + " is too large for the " +
                            std::to_string(numel) + " elements of input " + shape_to_string(in));
  }
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0) {
      return invalid_argument("cannot reshape input " + shape_to_string(in) + " (" +
                              std::to_string(numel) + " elements) to " + ints_to_string(spec) +
                              ": the -1 dimension cannot be inferred");
    }
    out[static_cast<size_t>(infer_at)] = numel / known;
  } else if (known != numel) {
    return invalid_argument("cannot reshape input " + shape_to_string(in) + " (" +
                            std::to_string(numel) + " elements) to " + ints_to_string(spec) + " (" +
                            std::to_string(known) + " elements)");
  }
  return out;
}

namespace {

class ReshapeKernel final : public Kernel {
 public:
  ReshapeKernel(std::optional<Shape> spec, bool allowzero)
      : spec_(std::move(spec)), allowzero_(allowzero) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    Shape spec;
    if (spec_) {
      spec = *spec_;
    } else {
      RECUR_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1));
      if (s->rank() != 1) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "shape must be 1-D, not " + shape_to_string(s->shape()));
      }
      auto v = read_int_values(*s, "shape");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      spec = std::move(v).value();
    }
    auto out = reshape_shape(x->shape(), spec, allowzero_);
    if (!out.ok()) return out.status().with_context(ctx.node().describe());
    return ctx.set_output(0, x->reshaped(*out));
  }

 private:
  std::optional<Shape> spec_;  // known at compile time
  bool allowzero_;
};

Result<std::unique_ptr<Kernel>> create_reshape(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const bool allowzero = attrs.get_int("allowzero", 0) != 0;
  std::optional<std::vector<int64_t>> spec;
  if (ctx.opset() < 5) {
    if (!attrs.has("shape")) return ctx.error(ErrorCode::kInvalidModel, "missing attribute shape");
    spec = attrs.get_ints("shape");
  } else if (const Tensor* s = ctx.constant_input(1)) {
    if (s->rank() != 1) {
      return ctx.error(ErrorCode::kInvalidModel,
                       "shape must be 1-D, not " + shape_to_string(s->shape()));
    }
    auto v = read_int_values(*s, "shape");
    if (!v.ok()) return v.status().with_context(ctx.node().describe());
    spec = std::move(v).value();
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<ReshapeKernel>(std::move(spec), allowzero);
}

Status infer_reshape(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  AttrReader attrs(ctx.node());
  const bool allowzero = attrs.get_int("allowzero", 0) != 0;
  std::optional<std::vector<int64_t>> spec;
  if (ctx.opset() < 5) {
    spec = attrs.get_ints("shape");
  } else {
    spec = constant_ints(ctx, 1);
    if (!spec) {
      // The output rank is the length of the shape input, when that is known.
      const TypeInfo& st = ctx.input_type(1);
      if (st.shape && st.shape->size() == 1 && (*st.shape)[0].is_fixed()) {
        ctx.set_output(0, type_with_rank(in.dtype, static_cast<size_t>((*st.shape)[0].value)));
      } else {
        ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
      }
      return ok_status();
    }
  }
  if (auto s = fixed_shape(in.shape)) {
    auto out = reshape_shape(*s, *spec, allowzero);
    if (!out.ok()) return ctx.error(out.status().message());
    ctx.set_output(0, TypeInfo::of(in.dtype, *out));
    return ok_status();
  }
  // Symbolic input: fixed dims, copies, and a -1 solved by cancelling the symbolic factors
  // that the copies carry over ([batch,3,4] -> [0,-1] gives [batch,12]).
  std::vector<Dim> out(spec->size());
  int infer_at = -1;
  int64_t out_fixed = 1;
  std::map<std::string, int> symbols;  // input symbols minus output symbols
  bool solvable = in.shape.has_value();
  if (in.shape) {
    for (const Dim& d : *in.shape) {
      if (d.is_fixed()) continue;
      if (d.symbol.empty()) solvable = false;
      ++symbols[d.symbol];
    }
  }
  for (size_t i = 0; i < spec->size(); ++i) {
    const int64_t v = (*spec)[i];
    if (v == -1) {
      if (infer_at >= 0) return ctx.error("shape " + ints_to_string(*spec) + " has two -1s");
      infer_at = static_cast<int>(i);
    } else if (v < -1) {
      return ctx.error("shape " + ints_to_string(*spec) + " has a negative dimension");
    } else if (v == 0 && !allowzero) {
      if (!in.shape) {
        solvable = false;
        continue;
      }
      if (i >= in.shape->size()) {
        return ctx.error("shape " + ints_to_string(*spec) + " copies dimension " +
                         std::to_string(i) + " of an input of rank " +
                         std::to_string(in.shape->size()));
      }
      out[i] = (*in.shape)[i];
      if (out[i].is_fixed()) {
        solvable = solvable && !__builtin_mul_overflow(out_fixed, out[i].value, &out_fixed);
      } else {
        --symbols[out[i].symbol];
      }
    } else {
      out[i] = Dim{v, {}};
      solvable = solvable && !__builtin_mul_overflow(out_fixed, v, &out_fixed);
    }
  }
  if (infer_at >= 0 && solvable) {
    bool cancelled = true;
    for (const auto& [sym, n] : symbols) cancelled = cancelled && n == 0;
    int64_t in_fixed = 1;
    for (const Dim& d : *in.shape)
      if (d.is_fixed())
        cancelled = cancelled && !__builtin_mul_overflow(in_fixed, d.value, &in_fixed);
    if (cancelled && out_fixed != 0 && in_fixed % out_fixed == 0) {
      out[static_cast<size_t>(infer_at)] = Dim{in_fixed / out_fixed, {}};
    }
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_reshape(Registrar& r) {
  r.add({.op_type = "Reshape", .since = 1, .create = create_reshape}, infer_reshape);
}

}  // namespace recur::reference
