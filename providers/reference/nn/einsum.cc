// Einsum (opset 12): explicit and implicit output, repeated labels (diagonals), ellipsis
// broadcasting. One loop nest over every label: output labels outside, summed labels inside;
// two float operands run the same sums as a batched GEMM.
#include <algorithm>
#include <map>
#include <optional>

#include "providers/reference/common/gemm.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"
#include "runtime/core/checked_math.h"
#include "runtime/graph/einsum_plan.h"

namespace recur::reference {

namespace {

using einsum::GemmAxes;
using einsum::LoopNest;
using einsum::Parsed;

// Walks the nest over n inputs: body(offsets) at every point, emit(o) after output element o's
// summed labels.
template <class Body, class Emit>
void run_loops(const LoopNest& nest, size_t n, Body&& body, Emit&& emit) {
  const size_t L = nest.loop.size();
  const auto& stride = nest.stride;
  const auto& extent = nest.extent;
  std::vector<int64_t> idx(L, 0), off(n, 0);
  for (int64_t o = 0; o < nest.out_total; ++o) {
    for (int64_t s = 0; s < nest.inner; ++s) {
      body(off);
      for (size_t k = L; k-- > 0;) {
        ++idx[k];
        for (size_t i = 0; i < n; ++i) off[i] += stride[i][k];
        if (idx[k] < extent[k]) break;
        for (size_t i = 0; i < n; ++i) off[i] -= stride[i][k] * extent[k];
        idx[k] = 0;
      }
    }
    emit(o);
  }
}

// Floating types sum their products in double.
template <class T>
void einsum_float(const std::vector<const Tensor*>& xs, const LoopNest& nest, Tensor* y) {
  using C = compute_t<T>;
  const size_t n = xs.size();
  std::vector<const T*> ps(n);
  for (size_t i = 0; i < n; ++i) ps[i] = xs[i]->data<T>();
  T* yp = y->data<T>();
  double acc = 0;
  run_loops(
      nest, n,
      [&](const std::vector<int64_t>& off) {
        double v = 1;
        for (size_t i = 0; i < n; ++i) v *= static_cast<double>(static_cast<C>(ps[i][off[i]]));
        acc += v;
      },
      [&](int64_t o) {
        yp[o] = static_cast<T>(static_cast<C>(acc));
        acc = 0;
      });
}

// Two float operands as one batched GEMM over gathered copies in double: every label of the
// nest is a batch label (kept, in both operands or in neither), M (kept, in A only), N (kept, in
// B only) or K (summed). The strides carry diagonals (a repeated label's strides add up) and
// broadcasting (stride 0), so every two-operand equation takes this form. The GEMM adds the
// products of each output element in the order the loop nest does, so the result is the same;
// it is only much faster (a nest step per product costs more than the product). Returns false,
// having done nothing, where the copies would exceed `limit` doubles (an operand broadcast along
// a long summed label): the nest then runs.
template <class T>
bool einsum_gemm(const std::vector<const Tensor*>& xs, const LoopNest& nest, size_t num_out,
                 Tensor* y, int64_t limit) {
  using C = compute_t<T>;
  const GemmAxes g = einsum::gemm_axes(nest, num_out, y->shape());
  const auto obt = GemmAxes::total(g.batch), omt = GemmAxes::total(g.m), ont = GemmAxes::total(g.n),
             okt = GemmAxes::total(g.k);
  if (!obt || !omt || !ont || !okt) return false;
  const int64_t bt = *obt, mt = *omt, nt = *ont, kt = *okt;
  const auto mk = checked_mul(mt, kt), kn = checked_mul(kt, nt), mn = checked_mul(mt, nt);
  if (!mk || !kn || !mn) return false;
  const auto sum = checked_add(*mk, *kn);
  const auto per_batch = sum ? checked_add(*sum, *mn) : std::nullopt;
  const auto need = per_batch ? checked_mul(bt, *per_batch) : std::nullopt;
  if (!need || *need > limit) return false;
  std::vector<double> a2(static_cast<size_t>(bt * mt * kt)), b2(static_cast<size_t>(bt * kt * nt)),
      c2(static_cast<size_t>(bt * mt * nt));
  const T* pa = xs[0]->data<T>();
  const T* pb = xs[1]->data<T>();
  size_t at = 0;
  einsum::walk({&g.batch, &g.m, &g.k}, &GemmAxes::Axis::sa,
               [&](int64_t off) { a2[at++] = static_cast<double>(static_cast<C>(pa[off])); });
  at = 0;
  einsum::walk({&g.batch, &g.k, &g.n}, &GemmAxes::Axis::sb,
               [&](int64_t off) { b2[at++] = static_cast<double>(static_cast<C>(pb[off])); });
  for (int64_t b = 0; b < bt; ++b) {
    gemm<double>(false, false, mt, nt, kt, 1.0, a2.data() + b * mt * kt, kt,
                 b2.data() + b * kt * nt, nt, 0.0, c2.data() + b * mt * nt, nt);
  }
  T* py = y->data<T>();
  at = 0;
  einsum::walk({&g.batch, &g.m, &g.n}, &GemmAxes::Axis::sy,
               [&](int64_t off) { py[off] = static_cast<T>(static_cast<C>(c2[at++])); });
  return true;
}

// Integer types sum in uint64, wrapping as numpy's integer arithmetic does.
template <class T>
void einsum_int(const std::vector<const Tensor*>& xs, const LoopNest& nest, Tensor* y) {
  const size_t n = xs.size();
  std::vector<const T*> ps(n);
  for (size_t i = 0; i < n; ++i) ps[i] = xs[i]->data<T>();
  T* yp = y->data<T>();
  uint64_t acc = 0;
  run_loops(
      nest, n,
      [&](const std::vector<int64_t>& off) {
        uint64_t v = 1;
        for (size_t i = 0; i < n; ++i) {
          if constexpr (std::is_signed_v<T>) {
            v *= static_cast<uint64_t>(static_cast<int64_t>(ps[i][off[i]]));
          } else {
            v *= static_cast<uint64_t>(ps[i][off[i]]);
          }
        }
        acc += v;
      },
      [&](int64_t o) {
        yp[o] = static_cast<T>(acc);
        acc = 0;
      });
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(Parsed p) : p_(std::move(p)) {}

  Status run(KernelContext& ctx) const override {
    const size_t n = p_.inputs.size();
    if (ctx.num_inputs() != n) {
      return invalid_argument("the equation has " + std::to_string(n) + " operands, the node " +
                              std::to_string(ctx.num_inputs()) + " inputs");
    }
    std::vector<const Tensor*> xs(n);
    for (size_t i = 0; i < n; ++i) {
      RECUR_ASSIGN_OR_RETURN(xs[i], required_input(ctx, i));
      if (xs[i]->dtype() != xs[0]->dtype()) return invalid_argument("inputs have different dtypes");
    }
    std::vector<Shape> shapes;
    for (const Tensor* x : xs) shapes.push_back(x->shape());
    RECUR_ASSIGN_OR_RETURN(const einsum::Labels lb, einsum::label_dimensions(p_.inputs, shapes));
    RECUR_ASSIGN_OR_RETURN(const std::vector<int> out_labels, einsum::output_labels(p_, lb));
    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(lb.size[static_cast<size_t>(l)]);
    RECUR_RETURN_IF_ERROR(checked_numel(out_shape, "the output shape").status());
    const LoopNest nest = einsum::build_loop_nest(shapes, lb, out_labels, out_shape);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, xs[0]->dtype(), out_shape));
    if (y->numel() == 0) return ok_status();
    // The GEMM's copies may take as much as the inputs and output twice over, in double.
    const int64_t limit =
        2 * (xs[0]->numel() + (n > 1 ? xs[1]->numel() : 0) + y->numel()) + (int64_t{1} << 20);
    bool handled = visit_dtype(kNnFloatTypes, xs[0]->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (n != 2 || !einsum_gemm<T>(xs, nest, out_labels.size(), y, limit)) {
        einsum_float<T>(xs, nest, y);
      }
    });
    if (!handled) {
      handled = visit_dtype(kIntTypes, xs[0]->dtype(), [&](auto tag) {
        einsum_int<typename decltype(tag)::type>(xs, nest, y);
      });
    }
    if (!handled)
      return not_implemented("dtype " + dtype_str(xs[0]->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  Parsed p_;
};

}  // namespace

void register_einsum(Registrar& r) {
  r.add({.op_type = "Einsum",
         .since = 12,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           auto p = einsum::parse_node_equation(ctx.node());
           if (!p.ok()) return p.status().with_context(ctx.node().describe());
           return std::make_unique<EinsumKernel>(std::move(p).value());
         }},
        [](InferContext& ctx) {
          // The dtype of the first input; the shape is left to run time.
          TypeInfo t;
          t.dtype = ctx.input_type(0).dtype;
          ctx.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
