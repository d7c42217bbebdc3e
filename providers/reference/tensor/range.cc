// Range: start, start + delta, ... up to (not including) limit; the count is
// max(ceil((limit - start) / delta), 0).
#include <cmath>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

inline constexpr TypeList<float, double, int16_t, int32_t, int64_t> kRangeTypes{};

template <class T>
Result<int64_t> range_count(T start, T limit, T delta) {
  if constexpr (std::is_integral_v<T>) {
    if (delta == 0) return invalid_argument("delta is 0");
    const __int128 diff = static_cast<__int128>(limit) - start;
    __int128 n = diff / delta;
    if (n * delta != diff) ++n;  // a partial step still yields an element (n > 0 here)
    if (n < 0) n = 0;
    if (n > std::numeric_limits<int64_t>::max()) return out_of_range("too many elements");
    return static_cast<int64_t>(n);
  } else {
    const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                               static_cast<double>(delta));
    if (std::isnan(n)) {
      return invalid_argument("the element count of start " + std::to_string(start) + ", limit " +
                              std::to_string(limit) + ", delta " + std::to_string(delta) +
                              " is not a number");
    }
    if (n <= 0) return int64_t{0};
    if (!(n < 9.2e18)) return out_of_range("too many elements");
    return static_cast<int64_t>(n);
  }
}

class RangeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* in[3];
    for (size_t i = 0; i < 3; ++i) {
      RECUR_ASSIGN_OR_RETURN(in[i], required_input(ctx, i));
      if (in[i]->numel() != 1 || in[i]->dtype() != in[0]->dtype()) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "start, limit and delta must be scalars of one dtype; input " +
                             std::to_string(i) + " is " + std::string(dtype_name(in[i]->dtype())) +
                             shape_to_string(in[i]->shape()));
      }
    }
    Status st;
    const bool handled = visit_dtype(kRangeTypes, in[0]->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T start = in[0]->data<T>()[0], limit = in[1]->data<T>()[0], delta = in[2]->data<T>()[0];
      auto n = range_count(start, limit, delta);
      if (!n.ok()) {
        st = n.status().with_context(ctx.node().describe());
        return;
      }
      auto out = allocate_checked(ctx, 0, in[0]->dtype(), {*n});
      if (!out.ok()) {
        st = out.status();
        return;
      }
      T* p = (*out)->template data<T>();
      for (int64_t i = 0; i < *n; ++i) {
        if constexpr (std::is_integral_v<T>) {
          // Every value lies between start and limit, so it fits T; i * delta may not fit int64.
          p[i] = static_cast<T>(static_cast<__int128>(start) + static_cast<__int128>(i) * delta);
        } else {
          p[i] = static_cast<T>(static_cast<double>(start) +
                                static_cast<double>(i) * static_cast<double>(delta));
        }
      }
    });
    if (!handled) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(in[0]->dtype())) + " is not supported");
    }
    return st;
  }
};

Status infer_range(InferContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  const Tensor* v[3] = {ctx.input_value(0), ctx.input_value(1), ctx.input_value(2)};
  std::vector<Dim> out(1);
  if (v[0] && v[1] && v[2] && v[0]->dtype() == v[1]->dtype() && v[0]->dtype() == v[2]->dtype() &&
      v[0]->numel() == 1 && v[1]->numel() == 1 && v[2]->numel() == 1) {
    Status st;
    visit_dtype(kRangeTypes, v[0]->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto n = range_count(v[0]->data<T>()[0], v[1]->data<T>()[0], v[2]->data<T>()[0]);
      if (!n.ok()) {
        st = n.status();
        return;
      }
      auto checked = checked_numel({*n}, v[0]->dtype());
      if (!checked.ok()) {
        st = checked.status();
        return;
      }
      out[0] = Dim{*n, {}};
    });
    if (!st.ok()) return ctx.error(st.message());
  }
  ctx.set_output(0, type_with_dims(dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_range(Registrar& r) {
  r.add({.op_type = "Range", .since = 11, .create = make_simple<RangeKernel>()}, infer_range);
}

}  // namespace recur::reference
