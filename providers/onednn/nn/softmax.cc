// Softmax and LogSoftmax through oneDNN's softmax_v2. Before opset 13 the input is coerced to
// 2-D at `axis` (default 1); from 13 the operation runs along `axis` (default -1).
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/finite.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

namespace {

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(bool log, int64_t axis, bool coerce_2d, Threads threads, std::string what,
                bool small)
      : log_(log),
        axis_(axis),
        coerce_2d_(coerce_2d),
        threads_(threads),
        what_(std::move(what)),
        small_(small && avx512::have_avx512()) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "input 0 is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN kernel runs float32 on the host");
    }
    const int64_t rank = x->rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (rank == 0 || axis < 0 || axis >= rank) {
      return ctx.error(
          ErrorCode::kOutOfRange,
          "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    if (x->numel() == 0) return ok_status();
    Shape shape = x->shape();
    int64_t run_axis = axis;
    if (coerce_2d_) {
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < rank; ++i)
        (i < axis ? outer : inner) *= shape[static_cast<size_t>(i)];
      shape = {outer, inner};
      run_axis = 1;
    }
    // Rows along the last axis below threads_for's one-thread bound: recur's own loop
    // (avx512.h). Up to 64K elements a oneDNN call costs more than the work; above, on one
    // thread either way, the loop still ran 1.3-1.45x faster than oneDNN's softmax ([1, 80,
    // 6625], an OCR head's classes: 304 against 209 us; [1, 35, 30000]: 611 against 463).
    if (small_) {
      int64_t inner = 1;
      for (size_t i = static_cast<size_t>(run_axis) + 1; i < shape.size(); ++i) inner *= shape[i];
      const int64_t d = shape[static_cast<size_t>(run_axis)], outer = x->numel() / (d * inner);
      if (inner == 1 && x->numel() < 4194304) {
        avx512::softmax_rows(x->data<float>(), outer, d, log_, y->data<float>());
        return ok_status();
      }
      if (inner > 1) {
        run_columns(x->data<float>(), outer, d, inner, y->data<float>());
        return ok_status();
      }
    }
    if (!all_finite(x->data<float>(), x->numel())) {
      run_nonfinite(x->data<float>(), shape, run_axis, y->data<float>());
      return ok_status();
    }
    RECUR_ASSIGN_OR_RETURN(auto prim, cache_.get(std::make_tuple(shape, run_axis), [&]() {
      const auto md = dense_desc(shape);
      auto d = [&] {
        return dnnl::softmax_v2_forward::desc(
            dnnl::prop_kind::forward_inference,
            log_ ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate, md, md,
            static_cast<int>(run_axis));
      };
      return make_primitive<dnnl::softmax_v2_forward>(
          d, user_scratchpad_attr(), threads_for(static_cast<double>(x->numel()), threads_), what_);
    }));
    const auto md = dense_desc(shape);
    return execute_primitive(*prim,
                             {{DNNL_ARG_SRC, md, x->raw_data()}, {DNNL_ARG_DST, md, y->raw_data()}},
                             scratch_, what_);
  }
  // Row by row (or columns by columns): avx512's softmax loops read an element of X before they
  // write Y's at its index and never after, and oneDNN's softmax takes Y over X.
  uint32_t overwritable_inputs() const override { return 1; }

 private:
  // oneDNN's softmax takes the maximum with x86's max, which skips a NaN, and clamps exp's
  // input: a row holding a NaN or +inf came out with 0 or -inf where the reference gives NaN.
  // X with any NaN or infinity runs here instead, row by row in double as the reference
  // computes: the maximum (a NaN wins), exp(x - max) (an all -inf row against 0), the sum.
  void run_nonfinite(const float* x, const Shape& shape, int64_t axis, float* y) const {
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<int64_t>(i) < axis) outer *= shape[i];
      if (static_cast<int64_t>(i) > axis) inner *= shape[i];
    }
    const int64_t d = shape[static_cast<size_t>(axis)];
    std::vector<double> row(static_cast<size_t>(d));  // a rare path: X holds NaN or infinities
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * d * inner + i;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < d; ++k) {
          const double v = x[base + k * inner];
          row[static_cast<size_t>(k)] = v;
          if (v > mx || (std::isnan(v) && !std::isnan(mx))) mx = v;
        }
        if (std::isinf(mx) && mx < 0) mx = 0.0;
        double sum = 0.0;
        for (double& v : row) {
          v -= mx;
          sum += std::exp(v);
        }
        const double log_sum = std::log(sum);
        for (int64_t k = 0; k < d; ++k) {
          const double v = row[static_cast<size_t>(k)];
          y[base + k * inner] = static_cast<float>(log_ ? v - log_sum : std::exp(v) / sum);
        }
      }
    }
  }

  // Along an axis before the last, always recur's loop, a vector of columns at a time: oneDNN
  // 2.6 has only its reference implementation there (softmax_v2 "ref:any"), which took 14.2 ms
  // for [4, 1000, 64] along axis 1 against 0.09, and for an attention pooling's weights over
  // time ([8, 98, 1]) 2-6 ms to make at the first run. Past threads_for's bound the outer blocks,
  // or where they are fewer than the threads the vectors of columns, split among the threads a
  // lease gives.
  void run_columns(const float* x, int64_t outer, int64_t d, int64_t inner, float* y) const {
    const Threads want = threads_for(8.0 * static_cast<double>(outer * d * inner), threads_);
    CoreLease lease;
    if (want.max > 1) lease.acquire(want.max, want.shrink);
    const int64_t jobs = std::max(1, lease.threads());
    const int64_t block = d * inner;
    if (outer >= jobs) {
      in_parts(outer, jobs, [&](int64_t o0, int64_t o1) {
        avx512::softmax_columns(x + o0 * block, o1 - o0, d, inner, inner, log_, y + o0 * block);
      });
      return;
    }
    const int64_t vectors = (inner + avx512::kLanes - 1) / avx512::kLanes;
    in_parts(vectors, std::min(jobs, vectors), [&](int64_t v0, int64_t v1) {
      const int64_t i0 = v0 * avx512::kLanes, i1 = std::min(inner, v1 * avx512::kLanes);
      avx512::softmax_columns(x + i0, outer, d, inner, i1 - i0, log_, y + i0);
    });
  }

  bool log_;
  int64_t axis_;
  bool coerce_2d_;
  Threads threads_;
  std::string what_;  // the node, for errors: described once, not on every run
  bool small_;
  mutable PrimCache<std::tuple<Shape, int64_t>> cache_;
  mutable ScratchPool scratch_;
};

KernelFactory softmax_factory(bool log) {
  return [log](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
    AttrReader a(ctx.node());
    const bool coerce = ctx.opset() < 13;
    const int64_t axis = a.get_int("axis", coerce ? 1 : -1);
    RECUR_RETURN_IF_ERROR(a.status());
    return std::unique_ptr<Kernel>(
        std::make_unique<SoftmaxKernel>(log, axis, coerce, options_of(ctx).team(),
                                        ctx.node().describe(), options_of(ctx).small_cells));
  };
}

}  // namespace

void register_softmax(KernelRegistry& r) {
  for (bool log : {false, true}) {
    r.add({.op_type = log ? "LogSoftmax" : "Softmax",
           .since = 1,
           .create = softmax_factory(log),
           .claim = [](const Node& n, const Graph& g) { return claim_float32_input(n, g); }});
  }
}

}  // namespace recur::onednn
