// ArgMax and ArgMin along `axis`, int64 indices, keepdims, and select_last_index (opset 12) to
// take the last of equal extremes instead of the first. NaN counts as the extreme, as in
// numpy's argmax/argmin. An empty axis has no index: an error.
#include <cmath>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/reduce/reduce.h"

namespace recur::reference {

namespace {

class ArgKernel final : public Kernel {
 public:
  ArgKernel(bool is_max, int64_t axis, bool keepdims, bool last)
      : is_max_(is_max), axis_(axis), keepdims_(keepdims), last_(last) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    auto axis = normalize_axis(axis_, x->rank(), "axis");
    if (!axis.ok()) return ctx.error(axis.status().code(), axis.status().message());
    const Shape& shape = x->shape();
    int64_t outer = 1, inner = 1;
    const int64_t n = shape[static_cast<size_t>(*axis)];
    Shape out_shape;
    for (int64_t d = 0; d < x->rank(); ++d) {
      const int64_t v = shape[static_cast<size_t>(d)];
      if (d < *axis) outer *= v;
      if (d > *axis) inner *= v;
      if (d != *axis) {
        out_shape.push_back(v);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    if (n == 0 && outer * inner != 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "axis " + std::to_string(axis_) + " is empty: there is no index to return");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, out_shape));
    int64_t* py = y->data<int64_t>();
    const bool handled = visit_dtype(kNumericTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x->data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * n * inner + i;
          auto best = to_compute(px[base]);
          int64_t arg = 0;
          for (int64_t k = 1; k < n; ++k) {
            const auto v = to_compute(px[base + k * inner]);
            if (better(v, best)) {
              best = v;
              arg = k;
            }
          }
          py[o * inner + i] = arg;
        }
      }
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }

 private:
  // Whether v replaces the current best.
  template <class C>
  bool better(C v, C best) const {
    if (is_nan(best)) return last_ && is_nan(v);
    if (is_nan(v)) return true;
    if (v == best) return last_;
    return is_max_ ? v > best : v < best;
  }

  bool is_max_;
  int64_t axis_;
  bool keepdims_;
  bool last_;
};

Status infer_arg(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", 0);
  const bool keepdims = attrs.get_int("keepdims", 1) != 0;
  RECUR_RETURN_IF_ERROR(attrs.status());
  TypeInfo out;
  out.dtype = DType::kInt64;
  const TypeInfo& in = ctx.input_type(0);
  if (in.shape) {
    const auto rank = static_cast<int64_t>(in.shape->size());
    auto a = normalize_axis(axis, rank, "axis");
    if (!a.ok()) return ctx.error(a.status().message());
    std::vector<Dim> dims;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != *a) {
        dims.push_back((*in.shape)[static_cast<size_t>(d)]);
      } else if (keepdims) {
        dims.push_back(Dim{1, {}});
      }
    }
    out.shape = std::move(dims);
  }
  ctx.set_output(0, out);
  return ok_status();
}

void add_arg(Registrar& r, const char* name, bool is_max) {
  r.add({.op_type = name,
         .since = 1,
         .create = [is_max](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const int64_t axis = attrs.get_int("axis", 0);
           const bool keepdims = attrs.get_int("keepdims", 1) != 0;
           const bool last = attrs.get_int("select_last_index", 0) != 0;
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<ArgKernel>(is_max, axis, keepdims, last);
         }},
        infer_arg);
}

}  // namespace

void register_arg_max(Registrar& r) {
  add_arg(r, "ArgMax", true);
  add_arg(r, "ArgMin", false);
}

}  // namespace recur::reference
