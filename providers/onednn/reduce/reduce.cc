// ReduceSum and ReduceMean of float32 over one contiguous block of axes (the last axes: a
// pooled embedding, a mean over time; or a middle block: a sum over channels) on AVX-512, in
// float32 as ONNX Runtime computes them: along the last axes each row in 64 partial sums (four
// vectors); over a middle block the input's rows are added in order into the output row, which
// stays in L1 while the input streams past. The reference provider (reduce/reduce.cc) sums in
// double; the rules are
// its own: no axes means every axis, an empty sum is 0 and an empty mean NaN. Axes that are not
// constants, that are not one block, or noop_with_empty_axes with no axes stay with the
// reference.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"

namespace recur::onednn {

namespace {

bool axes_from_input(bool mean, int opset) { return opset >= 18 || (!mean && opset >= 13); }

// The node's axes when they are known at load: the attribute, or a constant second input; an
// empty list where there are none. nullopt where they come at run time.
std::optional<std::vector<int64_t>> constant_axes(const Node& n, const Graph& g, bool mean,
                                                  int opset) {
  std::vector<int64_t> axes;
  if (axes_from_input(mean, opset)) {
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

// y[0..inner) = sum over k < len of x[k*inner + 0..inner): x's rows in order, each added into
// y, which stays in L1 while x streams past.
RECUR_AVX512 void block_sum(const float* x, int64_t len, int64_t inner, float* y) {
  for (int64_t i = 0; i < inner; ++i) y[i] = 0.0f;
  for (int64_t k = 0; k < len; ++k) {
    const float* row = x + k * inner;
    for (int64_t i = 0; i < inner; i += avx512::kLanes) {
      const __mmask16 m = avx512::lanes(inner - i);
      _mm512_mask_storeu_ps(
          y + i, m,
          _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i), _mm512_maskz_loadu_ps(m, row + i)));
    }
  }
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(bool mean, std::vector<int64_t> axes, bool keepdims)
      : mean_(mean), axes_(std::move(axes)), keepdims_(keepdims) {}

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
    if (len == 0) {  // the empty sum, and the mean of nothing
      const float v = mean_ ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
      for (int64_t i = 0; i < y->numel(); ++i) py[i] = v;
      return ok_status();
    }
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
        py[o] = mean_ ? s / count : s;
      }
      return ok_status();
    }
    for (int64_t o = 0; o < outer; ++o) {
      if (inner == 1) {
        const float s = row_sum(px + o * len, len);
        py[o] = mean_ ? s / count : s;
      } else {
        float* row = py + o * inner;
        block_sum(px + o * len * inner, len, inner, row);
        if (mean_) {
          for (int64_t i = 0; i < inner; ++i) row[i] /= count;
        }
      }
    }
    return ok_status();
  }

 private:
  bool mean_;
  std::vector<int64_t> axes_;
  bool keepdims_;
};

Claim claim_reduce(const Node& n, const Graph& g, bool mean, int opset) {
  if (!avx512::have_avx512()) return Claim::decline("this processor has no AVX-512");
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  const TypeInfo& t = g.value(n.inputs[0]).type;
  if (!t.shape) return Claim::decline("the input's rank is not known at load");
  const std::optional<std::vector<int64_t>> axes = constant_axes(n, g, mean, opset);
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

void add_reduce(KernelRegistry& r, const char* op, bool mean) {
  r.add({.op_type = op,
         .since = 1,
         .create = [mean](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(ctx.node());
           const bool keepdims = attrs.get_int("keepdims", 1) != 0;
           RECUR_RETURN_IF_ERROR(attrs.status());
           std::optional<std::vector<int64_t>> axes =
               constant_axes(ctx.node(), ctx.graph(), mean, ctx.opset());
           if (!axes) return ctx.error(ErrorCode::kNotImplemented, "the axes are not a constant");
           return std::unique_ptr<Kernel>(
               std::make_unique<ReduceKernel>(mean, std::move(*axes), keepdims));
         },
         .claim = [mean](const Node& n,
                         const Graph& g) { return claim_reduce(n, g, mean, n.opset); }});
}

}  // namespace

void register_reduce_sum_mean(KernelRegistry& r) {
  add_reduce(r, "ReduceSum", false);
  add_reduce(r, "ReduceMean", true);
}

}  // namespace recur::onednn
