// ArgMax and ArgMin of float32 along the last axis (the logits of a greedy decoder, a
// classifier's scores) on AVX-512: per row, one pass for the extreme and whether the row holds
// a NaN, one for its first (or, with select_last_index, last) position. The rules are the
// reference provider's (reduce/arg_max.cc): NaN counts as the extreme, as in numpy. A row with
// a NaN, other axes and other types stay with the reference provider's loop.
#include <cmath>
#include <limits>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"

namespace recur::onednn {

namespace {

// The index of the row's extreme and whether the row holds a NaN (then the index is unset).
struct RowArg {
  int64_t index = 0;
  bool nan = false;
};

RECUR_AVX512 RowArg row_arg(const float* x, int64_t n, bool is_max, bool last) {
  // Pass 1: the extreme, NaNs aside, and whether there are any.
  const float init =
      is_max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  __m512 best = _mm512_set1_ps(init);
  __mmask16 nans = 0;
  for (int64_t i = 0; i < n; i += avx512::kLanes) {
    const __mmask16 m = avx512::lanes(n - i);
    const __m512 v = _mm512_mask_loadu_ps(best, m, x + i);
    nans |= _mm512_mask_cmp_ps_mask(m, v, v, _CMP_UNORD_Q);
    best = is_max ? _mm512_max_ps(best, v) : _mm512_min_ps(best, v);
  }
  if (nans) return {0, true};
  const float extreme = is_max ? _mm512_reduce_max_ps(best) : _mm512_reduce_min_ps(best);
  // Pass 2: where it is. Every value is a number, so one lane equals it (the extreme of a row of
  // infinities included).
  const __m512 e = _mm512_set1_ps(extreme);
  if (!last) {
    for (int64_t i = 0; i < n; i += avx512::kLanes) {
      const __mmask16 m = avx512::lanes(n - i);
      const __mmask16 eq =
          _mm512_mask_cmp_ps_mask(m, _mm512_maskz_loadu_ps(m, x + i), e, _CMP_EQ_OQ);
      if (eq) return {i + __builtin_ctz(eq), false};
    }
  } else {
    for (int64_t i = (n - 1) / avx512::kLanes * avx512::kLanes; i >= 0; i -= avx512::kLanes) {
      const __mmask16 m = avx512::lanes(n - i);
      const __mmask16 eq =
          _mm512_mask_cmp_ps_mask(m, _mm512_maskz_loadu_ps(m, x + i), e, _CMP_EQ_OQ);
      if (eq) return {i + 31 - __builtin_clz(static_cast<unsigned>(eq)), false};
    }
  }
  return {0, false};
}

// The reference's rule, for a row with a NaN: the first NaN (the last, with select_last_index).
int64_t nan_row_arg(const float* x, int64_t n, bool last) {
  int64_t arg = -1;
  for (int64_t k = 0; k < n; ++k) {
    if (std::isnan(x[k])) {
      arg = k;
      if (!last) break;
    }
  }
  return arg;
}

class ArgKernel final : public Kernel {
 public:
  ArgKernel(bool is_max, int64_t axis, bool keepdims, bool last)
      : is_max_(is_max), axis_(axis), keepdims_(keepdims), last_(last) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "the input is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu() || x->rank() == 0) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN " +
                                                       std::string(is_max_ ? "ArgMax" : "ArgMin") +
                                                       " takes float32 of rank >= 1 on the host");
    }
    const int64_t rank = x->rank();
    if (axis_ != -1 && axis_ != rank - 1) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN kernel reduces the last axis only");
    }
    const int64_t n = x->dim(-1);
    const int64_t rows = n == 0 ? 0 : x->numel() / n;
    Shape out = x->shape();
    out.pop_back();
    if (keepdims_) out.push_back(1);
    if (n == 0 && shape_numel(out) != 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "axis " + std::to_string(axis_) + " is empty: there is no index to return");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, out));
    const float* px = x->data<float>();
    int64_t* py = y->data<int64_t>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = px + r * n;
      const RowArg a = row_arg(row, n, is_max_, last_);
      py[r] = a.nan ? nan_row_arg(row, n, last_) : a.index;
    }
    return ok_status();
  }

 private:
  bool is_max_;
  int64_t axis_;
  bool keepdims_;
  bool last_;
};

void add_arg(KernelRegistry& r, const char* op, bool is_max) {
  r.add({.op_type = op,
         .since = 1,
         .create = [is_max](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(ctx.node());
           const int64_t axis = attrs.get_int("axis", 0);
           const bool keepdims = attrs.get_int("keepdims", 1) != 0;
           const bool last = attrs.get_int("select_last_index", 0) != 0;
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::unique_ptr<Kernel>(
               std::make_unique<ArgKernel>(is_max, axis, keepdims, last));
         },
         .claim = [](const Node& n, const Graph& g) { return claim_last_axis_float32(n, g, 0); }});
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  add_arg(r, "ArgMax", true);
  add_arg(r, "ArgMin", false);
  register_reduce(r);
}

}  // namespace recur::onednn
