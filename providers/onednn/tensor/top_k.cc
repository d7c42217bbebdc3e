// TopK of float32 along the last axis (a decoder's beam candidates, a retrieval's best scores)
// on AVX-512: the k best so far are kept sorted, and the row is compared with the k-th 16
// values at a time; only a value that beats it is inserted. The order is the reference
// provider's (tensor/top_k.cc): largest (or smallest) first, equal values by index. A row with a
// NaN, which counts as larger than every number, is sorted by those rules instead; other axes
// and types stay with the reference.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"

namespace recur::onednn {

namespace {

// The k best of row x[0..n) into (v, at), sorted; false (and v, at unspecified) if the row holds
// a NaN. The scan is forward, so a later value never beats an equal one.
RECUR_AVX512 bool row_top_k(const float* x, int64_t n, int64_t k, bool largest, float* v,
                            int64_t* at) {
  auto insert = [&](float val, int64_t i, int64_t filled) {
    int64_t p = filled;
    while (p > 0 && (largest ? val > v[p - 1] : val < v[p - 1])) {
      if (p < k) {
        v[p] = v[p - 1];
        at[p] = at[p - 1];
      }
      --p;
    }
    if (p < k) {
      v[p] = val;
      at[p] = i;
    }
  };
  for (int64_t i = 0; i < k; ++i) {
    if (std::isnan(x[i])) return false;
    insert(x[i], i, i);
  }
  float worst = v[k - 1];
  for (int64_t i = k; i < n; i += avx512::kLanes) {
    const __mmask16 m = avx512::lanes(n - i);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
    if (_mm512_mask_cmp_ps_mask(m, xv, xv, _CMP_UNORD_Q)) return false;
    const __m512 w = _mm512_set1_ps(worst);
    __mmask16 beat = largest ? _mm512_mask_cmp_ps_mask(m, xv, w, _CMP_GT_OQ)
                             : _mm512_mask_cmp_ps_mask(m, xv, w, _CMP_LT_OQ);
    while (beat) {
      const int j = __builtin_ctz(beat);
      beat &= static_cast<__mmask16>(beat - 1);
      const float val = x[i + j];
      if (largest ? val > worst : val < worst) {  // `worst` may have moved within this vector
        insert(val, i + j, k);
        worst = v[k - 1];
      }
    }
  }
  return true;
}

// A row with a NaN: the partial sort with the reference's rules (NaN above every number, ties
// and NaNs among themselves by index).
void nan_row_top_k(const float* x, int64_t n, int64_t k, bool largest, std::vector<int64_t>& order,
                   float* v, int64_t* at) {
  order.resize(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  auto rank = [&](int64_t a, int64_t b) {
    const float va = x[a], vb = x[b];
    const bool na = std::isnan(va), nb = std::isnan(vb);
    if (na != nb) return largest ? na : nb;  // NaN first when largest, last when smallest
    if (!na && va != vb) return largest ? va > vb : va < vb;
    return a < b;
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), rank);
  for (int64_t i = 0; i < k; ++i) {
    at[i] = order[static_cast<size_t>(i)];
    v[i] = x[at[i]];
  }
}

class TopKKernel final : public Kernel {
 public:
  TopKKernel(std::optional<int64_t> k, bool largest) : k_(k), largest_(largest) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "the input is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu() || x->rank() == 0) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "the oneDNN TopK takes float32 of rank >= 1 on the host");
    }
    int64_t k = 0;
    if (k_) {
      k = *k_;
    } else {
      const Tensor* kt = ctx.input(1);
      if (!kt || kt->dtype() != DType::kInt64 || kt->numel() != 1 || !kt->is_cpu()) {
        return ctx.error(ErrorCode::kInvalidArgument, "K must be one int64 value");
      }
      k = kt->data<int64_t>()[0];
    }
    const int64_t n = x->dim(-1);
    if (k < 0 || k > n) {
      return ctx.error(ErrorCode::kOutOfRange,
                       "k " + std::to_string(k) + " is out of range for axis " +
                           std::to_string(x->rank() - 1) + " of size " + std::to_string(n));
    }
    Shape out = x->shape();
    out.back() = k;
    RECUR_ASSIGN_OR_RETURN(Tensor * values, ctx.allocate_output(0, DType::kFloat32, out));
    RECUR_ASSIGN_OR_RETURN(Tensor * indices, ctx.allocate_output(1, DType::kInt64, out));
    if (k == 0 || x->numel() == 0) return ok_status();
    const int64_t rows = x->numel() / n;
    const float* px = x->data<float>();
    float* pv = values->data<float>();
    int64_t* pi = indices->data<int64_t>();
    thread_local std::vector<int64_t> order;  // NaN rows only; kept from run to run
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = px + r * n;
      if (!row_top_k(row, n, k, largest_, pv + r * k, pi + r * k)) {
        nan_row_top_k(row, n, k, largest_, order, pv + r * k, pi + r * k);
      }
    }
    return ok_status();
  }

 private:
  std::optional<int64_t> k_;  // the attribute, before opset 10
  bool largest_;
};

}  // namespace

void register_top_k(KernelRegistry& r) {
  r.add({.op_type = "TopK",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(ctx.node());
           const bool largest = attrs.get_int("largest", 1) != 0;
           std::optional<int64_t> k;
           if (ctx.opset() < 10) k = attrs.require_int("k");
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::unique_ptr<Kernel>(std::make_unique<TopKKernel>(k, largest));
         },
         .claim = [](const Node& n, const Graph& g) { return claim_last_axis_float32(n, g, -1); }});
}

}  // namespace recur::onednn
