// ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceLogSumExp of float32 over one
// contiguous block of axes (the last axes: a pooled embedding, a mean or a maximum over time; or
// a middle block: a sum over channels) on AVX-512, sums in float32 as ONNX Runtime computes
// them: along the last axes each row in 64 partial sums (four vectors); over a middle block the
// input's rows are combined in order into the output row, which stays in L1 while the input
// streams past. The reference provider (reduce/reduce.cc) sums in double; the rules are its
// own: no axes means every axis, an empty sum is 0, an empty mean NaN, an empty maximum (and
// log-sum-exp) -inf and minimum +inf, and a NaN anywhere in a maximum's or minimum's values is
// the result (numpy's maximum). Axes that are not constants, that are not one block, or
// noop_with_empty_axes with no axes stay with the reference.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn {

namespace {

enum class Op { kSum, kMean, kMax, kMin, kLogSumExp };

// ReduceSum takes its axes as an input from opset 13, the others from 18.
bool axes_from_input(Op op, int opset) { return opset >= 18 || (op == Op::kSum && opset >= 13); }

// The node's axes when they are known at load: the attribute, or a constant second input; an
// empty list where there are none. nullopt where they come at run time.
std::optional<std::vector<int64_t>> constant_axes(const Node& n, const Graph& g, Op op, int opset) {
  std::vector<int64_t> axes;
  if (axes_from_input(op, opset)) {
    if (!n.has_input(1)) return axes;
    const Tensor* t = g.constant(n.inputs[1]);
    if (!t || t->dtype() != DType::kInt64) return std::nullopt;
    for (int64_t i = 0; i < t->numel(); ++i) axes.push_back(t->data<int64_t>()[i]);
    return axes;
  }
  if (const Attribute* a = n.attr("axes")) axes = a->ints;
  return axes;
}

// The reduced axes as one block [first, last] of a rank-`rank` input: every axis where `axes`
// is empty; nullopt where an axis is out of range, given twice, or the axes leave a gap.
struct Block {
  int64_t first, last;
};
std::optional<Block> block_of(const std::vector<int64_t>& axes, int64_t rank) {
  if (rank == 0 || rank > 64) return std::nullopt;
  if (axes.empty()) return Block{0, rank - 1};
  uint64_t on = 0;  // a bit per axis: nothing to allocate on every run
  for (int64_t a : axes) {
    const int64_t d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank || (on >> d & 1)) return std::nullopt;
    on |= uint64_t{1} << d;
  }
  const int64_t first = __builtin_ctzll(on), last = 63 - __builtin_clzll(on);
  // One block: every bit from first to last is set.
  if (std::popcount(on) != last - first + 1) return std::nullopt;
  return Block{first, last};
}

RECUR_AVX512 float row_sum(const float* x, int64_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 * avx512::kLanes <= n; i += 4 * avx512::kLanes) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + avx512::kLanes));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 2 * avx512::kLanes));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 3 * avx512::kLanes));
  }
  for (; i < n; i += avx512::kLanes)
    a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(avx512::lanes(n - i), x + i));
  // Through memory: GCC 12 warns of an uninitialized read inside _mm512_reduce_add_ps.
  alignas(64) float lane[avx512::kLanes];
  _mm512_store_ps(lane, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  float sum = 0.0f;
  for (const float v : lane) sum += v;
  return sum;
}

// y = 0 + x: the sum (and the mean, divided by 1) over one value, as the loops below compute
// it, where the sum starts from +0 (so -0 gives +0).
RECUR_AVX512 void plus_zero(const float* x, int64_t n, float* y) {
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += avx512::kLanes) {
    const __mmask16 m = avx512::lanes(n - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(zero, _mm512_maskz_loadu_ps(m, x + i)));
  }
}

// y[0..inner) combined with x's rows k0 to len - 1 of `inner` floats, in order: y = f(y, row),
// a vector at a time, y staying in L1 while x streams past.
template <class F>
RECUR_AVX512 void combine_rows(const float* x, int64_t k0, int64_t len, int64_t inner, float* y,
                               F f) {
  for (int64_t k = k0; k < len; ++k) {
    const float* row = x + k * inner;
    for (int64_t i = 0; i < inner; i += avx512::kLanes) {
      const __mmask16 m = avx512::lanes(inner - i);
      _mm512_mask_storeu_ps(y + i, m,
                            f(_mm512_maskz_loadu_ps(m, y + i), _mm512_maskz_loadu_ps(m, row + i)));
    }
  }
}

struct Add {
  RECUR_AVX512 __m512 operator()(__m512 a, __m512 b) const { return _mm512_add_ps(a, b); }
};

// y[0..inner) = sum over k < len of x[k*inner + 0..inner): x's rows in order, each added into
// y from 0.
RECUR_AVX512 void block_sum(const float* x, int64_t len, int64_t inner, float* y) {
  for (int64_t i = 0; i < inner; ++i) y[i] = 0.0f;
  combine_rows(x, 0, len, inner, y, Add{});
}

// The larger (kMax) or smaller of acc and v in each lane, a NaN in either the result:
// max(v, acc) returns acc where either is a NaN, which keeps acc's; v's is put back.
template <bool kMax>
RECUR_AVX512 inline __m512 extreme(__m512 acc, __m512 v) {
  const __m512 r = kMax ? _mm512_max_ps(v, acc) : _mm512_min_ps(v, acc);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}

template <bool kMax>
float extreme(float a, float v) {
  if (std::isnan(a)) return a;
  if (std::isnan(v)) return v;
  return kMax ? (a < v ? v : a) : (v < a ? v : a);
}

template <bool kMax>
constexpr float empty_extreme() {
  return kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
}

// The maximum (or minimum) of n floats, in four vectors of lanes.
template <bool kMax>
RECUR_AVX512 float row_extreme(const float* x, int64_t n) {
  const __m512 init = _mm512_set1_ps(empty_extreme<kMax>());
  __m512 a0 = init, a1 = init, a2 = init, a3 = init;
  int64_t i = 0;
  for (; i + 4 * avx512::kLanes <= n; i += 4 * avx512::kLanes) {
    a0 = extreme<kMax>(a0, _mm512_loadu_ps(x + i));
    a1 = extreme<kMax>(a1, _mm512_loadu_ps(x + i + avx512::kLanes));
    a2 = extreme<kMax>(a2, _mm512_loadu_ps(x + i + 2 * avx512::kLanes));
    a3 = extreme<kMax>(a3, _mm512_loadu_ps(x + i + 3 * avx512::kLanes));
  }
  for (; i < n; i += avx512::kLanes)
    a0 = extreme<kMax>(a0, _mm512_mask_loadu_ps(init, avx512::lanes(n - i), x + i));
  alignas(64) float lane[avx512::kLanes];
  _mm512_store_ps(lane, extreme<kMax>(extreme<kMax>(a0, a1), extreme<kMax>(a2, a3)));
  float r = empty_extreme<kMax>();
  for (const float v : lane) r = extreme<kMax>(r, v);
  return r;
}

template <bool kMax>
struct Extreme {
  RECUR_AVX512 __m512 operator()(__m512 a, __m512 b) const { return extreme<kMax>(a, b); }
};

// y[0..inner) = the maximum (or minimum) over k < len of x[k*inner + 0..inner): the first row,
// then each of the others in order.
template <bool kMax>
RECUR_AVX512 void block_extreme(const float* x, int64_t len, int64_t inner, float* y) {
  std::copy(x, x + inner, y);
  combine_rows(x, 1, len, inner, y, Extreme<kMax>{});
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(Op op, std::vector<int64_t> axes, bool keepdims)
      : op_(op), axes_(std::move(axes)), keepdims_(keepdims) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "the input is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN kernel runs float32 on the host");
    }
    const int64_t rank = x->rank();
    const std::optional<Block> b = block_of(axes_, rank);
    if (!b) {
      return ctx.error(ErrorCode::kInvalidArgument, "the axes are out of range for rank " +
                                                        std::to_string(rank) +
                                                        ", repeated, or not one block of axes");
    }
    int64_t outer = 1, len = 1, inner = 1;
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t s = x->dim(d);
      if (d < b->first) {
        outer *= s;
      } else if (d > b->last) {
        inner *= s;
      } else {
        len *= s;
      }
      if (d < b->first || d > b->last) {
        out.push_back(s);
      } else if (keepdims_) {
        out.push_back(1);
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    const float* px = x->data<float>();
    float* py = y->data<float>();
    if (len == 0) {  // the empty sum, the mean of nothing, the empty extremes and log-sum-exp
      const float v = op_ == Op::kSum    ? 0.0f
                      : op_ == Op::kMean ? std::numeric_limits<float>::quiet_NaN()
                      : op_ == Op::kMin  ? empty_extreme<false>()
                                         : empty_extreme<true>();
      for (int64_t i = 0; i < y->numel(); ++i) py[i] = v;
      return ok_status();
    }
    if (op_ == Op::kMax) return run_extreme<true>(px, outer, len, inner, py);
    if (op_ == Op::kMin) return run_extreme<false>(px, outer, len, inner, py);
    if (op_ == Op::kLogSumExp) return run_log_sum_exp(px, outer, len, inner, py);
    if (len == 1) {
      // Axes of size 1 (a CRNN's feature map of height 1, averaged away): 1.8 ms a run on the
      // row loop for [64, 50, 256, 1] at batch 64, a pass over memory here.
      plus_zero(px, x->numel(), py);
      return ok_status();
    }
    const auto count = static_cast<float>(len);
    if (inner == 1 && len <= avx512::kLanes) {
      // Rows shorter than a vector (a mean over 2 values, an OCR line's height): row_sum's
      // masked load, store and 16-lane sum cost about 10 ns a row for one or two adds. Summed
      // in the same order (row_sum's lanes hold one value each), so the bits are the same.
      for (int64_t o = 0; o < outer; ++o) {
        float s = 0.0f;
        for (int64_t k = 0; k < len; ++k) s += px[o * len + k];
        py[o] = op_ == Op::kMean ? s / count : s;
      }
      return ok_status();
    }
    for (int64_t o = 0; o < outer; ++o) {
      if (inner == 1) {
        const float s = row_sum(px + o * len, len);
        py[o] = op_ == Op::kMean ? s / count : s;
      } else {
        float* row = py + o * inner;
        block_sum(px + o * len * inner, len, inner, row);
        if (op_ == Op::kMean) {
          for (int64_t i = 0; i < inner; ++i) row[i] /= count;
        }
      }
    }
    return ok_status();
  }

 private:
  // A maximum or minimum: one value is itself (-0 and NaN's bits kept); rows shorter than a
  // vector in a scalar loop.
  template <bool kMax>
  static Status run_extreme(const float* px, int64_t outer, int64_t len, int64_t inner, float* py) {
    for (int64_t o = 0; o < outer; ++o) {
      const float* x = px + o * len * inner;
      if (inner > 1 || len == 1) {
        block_extreme<kMax>(x, len, inner, py + o * inner);
      } else if (len <= avx512::kLanes) {
        float r = x[0];
        for (int64_t k = 1; k < len; ++k) r = extreme<kMax>(r, x[k]);
        py[o] = r;
      } else {
        py[o] = row_extreme<kMax>(x, len);
      }
    }
    return ok_status();
  }

  // max + log(sum of exp(x - max)), as the reference computes it: a maximum that is not finite
  // (an infinity, a NaN, or -inf over an empty or all -inf set) is the result. The maxima come
  // first, into y; then the sums of exp along the last axes a row at a time, over a middle block
  // for up to 256 columns at a time in a buffer on the stack.
  RECUR_AVX512 static Status run_log_sum_exp(const float* px, int64_t outer, int64_t len,
                                             int64_t inner, float* py) {
    constexpr int64_t kChunk = 256;
    alignas(64) float sums[kChunk];
    for (int64_t o = 0; o < outer; ++o) {
      const float* x = px + o * len * inner;
      float* y = py + o * inner;
      if (inner == 1) {
        const float mx = row_extreme<true>(x, len);
        if (!std::isfinite(mx)) {
          *y = mx;
          continue;
        }
        __m512 sv = _mm512_setzero_ps();
        for (int64_t i = 0; i < len; i += avx512::kLanes) {
          const __mmask16 m = avx512::lanes(len - i);
          const __m512 e =
              avx512::exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_set1_ps(mx)));
          sv = _mm512_add_ps(sv, _mm512_maskz_mov_ps(m, e));
        }
        // Through memory, as row_sum (GCC 12's warning inside _mm512_reduce_add_ps).
        _mm512_store_ps(sums, sv);
        float sum = 0.0f;
        for (int64_t i = 0; i < avx512::kLanes; ++i) sum += sums[i];
        *y = mx + std::log(sum);
        continue;
      }
      block_extreme<true>(x, len, inner, y);
      for (int64_t c0 = 0; c0 < inner; c0 += kChunk) {
        const int64_t n = std::min(kChunk, inner - c0);
        std::fill(sums, sums + n, 0.0f);
        for (int64_t k = 0; k < len; ++k) {
          const float* row = x + k * inner + c0;
          for (int64_t i = 0; i < n; i += avx512::kLanes) {
            const __mmask16 m = avx512::lanes(n - i);
            const __m512 mx = _mm512_maskz_loadu_ps(m, y + c0 + i);
            const __m512 e = avx512::exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + i), mx));
            _mm512_mask_storeu_ps(sums + i, m,
                                  _mm512_add_ps(_mm512_maskz_loadu_ps(m, sums + i), e));
          }
        }
        for (int64_t i = 0; i < n; ++i) {
          float& r = y[c0 + i];
          if (std::isfinite(r)) r += std::log(sums[i]);
        }
      }
    }
    return ok_status();
  }

  Op op_;
  std::vector<int64_t> axes_;
  bool keepdims_;
};

Claim claim_reduce(const Node& n, const Graph& g, Op op, int opset) {
  if (!avx512::have_avx512()) return Claim::decline(cpu::why_not(cpu::Feature::kAvx512));
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  const TypeInfo& t = g.value(n.inputs[0]).type;
  if (!t.shape) return Claim::decline("the input's rank is not known at load");
  const std::optional<std::vector<int64_t>> axes = constant_axes(n, g, op, opset);
  if (!axes) return Claim::decline("the axes are not a constant");
  const Attribute* noop = n.attr("noop_with_empty_axes");
  if (axes->empty() && noop && noop->i != 0) {
    return Claim::decline("noop_with_empty_axes with no axes");
  }
  if (!block_of(*axes, static_cast<int64_t>(t.shape->size()))) {
    return Claim::decline("the reduced axes are not one block of axes");
  }
  return Claim::accept();
}

void add_reduce(KernelRegistry& r, const char* op_type, Op op) {
  r.add({.op_type = op_type,
         .since = 1,
         .create = [op](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(ctx.node());
           const bool keepdims = attrs.get_int("keepdims", 1) != 0;
           RECUR_RETURN_IF_ERROR(attrs.status());
           std::optional<std::vector<int64_t>> axes =
               constant_axes(ctx.node(), ctx.graph(), op, ctx.opset());
           if (!axes) return ctx.error(ErrorCode::kNotImplemented, "the axes are not a constant");
           return std::unique_ptr<Kernel>(
               std::make_unique<ReduceKernel>(op, std::move(*axes), keepdims));
         },
         .claim = [op](const Node& n, const Graph& g) { return claim_reduce(n, g, op, n.opset); }});
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  add_reduce(r, "ReduceSum", Op::kSum);
  add_reduce(r, "ReduceMean", Op::kMean);
  add_reduce(r, "ReduceMax", Op::kMax);
  add_reduce(r, "ReduceMin", Op::kMin);
  add_reduce(r, "ReduceLogSumExp", Op::kLogSumExp);
}

}  // namespace recur::onednn
