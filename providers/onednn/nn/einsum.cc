// Einsum of two float32 operands through oneDNN's matmul: every two-operand equation is a
// batched matrix product over the labels' batch, M, N and K groups (runtime/graph/einsum_plan.h).
// Where a group's labels lie in an operand with one stride between them (attention's
// "bhid,bhjd->bhij" and "bhij,bhjd->bhid", a transpose, a plain product), the primitive reads
// and writes the tensors where they are, through strided descriptors; otherwise (a diagonal, an
// operand broadcast along a summed label) that operand is first gathered into a dense copy. An
// equation that sums a label of one operand only stays with the reference, whose loops need no
// such copy.
// Other operand counts and types stay with the reference provider.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <tuple>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"
#include "runtime/core/checked_math.h"
#include "runtime/graph/einsum_plan.h"

namespace recur::onednn {

namespace {

using dnnl::memory;
using einsum::GemmAxes;

// One group of labels as one dimension: its extent and the stride between its elements.
struct Dim {
  int64_t extent = 1, stride = 0;
};

// The labels of `v` (the last fastest) as one dimension under `stride`, where they merge; an
// empty group is one element.
std::optional<Dim> merge(const std::vector<GemmAxes::Axis>& v, int64_t GemmAxes::Axis::*stride) {
  Dim d;
  bool first = true;
  for (size_t i = v.size(); i-- > 0;) {
    const GemmAxes::Axis& a = v[i];
    if (a.extent == 1) continue;
    if (first) {
      if (a.*stride <= 0) return std::nullopt;
      d = {a.extent, a.*stride};
      first = false;
    } else {
      if (a.*stride != d.stride * d.extent) return std::nullopt;
      d.extent *= a.extent;
    }
  }
  if (first) d = {1, 1};
  return d;
}

struct EinsumPlan {
  Shape out;
  int64_t bt = 0, mt = 0, nt = 0, kt = 0;
  GemmAxes axes;
  // Per operand (A, B, Y): read or written in place through `md`, or gathered / scattered
  // through a dense [bt, rows, cols] buffer.
  memory::desc a, b, y;
  bool gather_a = false, gather_b = false, scatter_y = false;
  CachedPrimitive prim;
  // The copies' sizes, 0 for an operand read or written in place.
  static size_t bytes(bool copied, int64_t elems) {
    return copied ? static_cast<size_t>(elems) * sizeof(float) : size_t{0};
  }
  size_t a_copy_bytes() const { return bytes(gather_a, bt * mt * kt); }
  size_t b_copy_bytes() const { return bytes(gather_b, bt * kt * nt); }
  size_t y_copy_bytes() const { return bytes(scatter_y, bt * mt * nt); }
};

size_t copy_bytes(const EinsumPlan& p) {
  return p.a_copy_bytes() + p.b_copy_bytes() + p.y_copy_bytes();
}

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(einsum::Parsed p, Threads threads, std::string what)
      : p_(std::move(p)), threads_(threads), what_(std::move(what)) {}

  Status run(KernelContext& ctx) const override {
    if (ctx.num_inputs() != 2) {
      return ctx.error(ErrorCode::kInvalidArgument, "the oneDNN Einsum takes two operands");
    }
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return ctx.error(ErrorCode::kInvalidArgument, "Einsum needs two inputs");
    for (const Tensor* t : {a, b}) {
      if (t->dtype() != DType::kFloat32 || !t->is_cpu()) {
        return ctx.error(ErrorCode::kNotImplemented, "the oneDNN Einsum runs float32 on the host");
      }
    }
    RECUR_ASSIGN_OR_RETURN(auto plan, cache_.get(std::make_tuple(a->shape(), b->shape()), [&] {
      return make_plan(ctx, a->shape(), b->shape());
    }));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, plan->out));
    if (y->numel() == 0) return ok_status();
    if (plan->kt == 0) {
      std::memset(y->raw_data(), 0, y->nbytes());
      return ok_status();
    }
    const GemmAxes& g = plan->axes;
    // Buffers only for the operands that are copied (a lease of 0 bytes holds none).
    ScratchPool::Lease la = copies_.acquire(plan->a_copy_bytes());
    ScratchPool::Lease lb = copies_.acquire(plan->b_copy_bytes());
    ScratchPool::Lease ly = copies_.acquire(plan->y_copy_bytes());
    const void* pa = a->raw_data();
    const void* pb = b->raw_data();
    void* py = plan->scatter_y ? ly.data() : y->raw_data();
    if (plan->gather_a) {
      gather(a->data<float>(), {&g.batch, &g.m, &g.k}, &GemmAxes::Axis::sa,
             static_cast<float*>(la.data()));
      pa = la.data();
    }
    if (plan->gather_b) {
      gather(b->data<float>(), {&g.batch, &g.k, &g.n}, &GemmAxes::Axis::sb,
             static_cast<float*>(lb.data()));
      pb = lb.data();
    }
    RECUR_RETURN_IF_ERROR(execute_primitive(
        plan->prim,
        {{DNNL_ARG_SRC, plan->a, pa}, {DNNL_ARG_WEIGHTS, plan->b, pb}, {DNNL_ARG_DST, plan->y, py}},
        scratch_, what_));
    if (plan->scatter_y) {
      const float* src = static_cast<const float*>(py);
      float* dst = y->data<float>();
      einsum::walk_rows({&g.batch, &g.m, &g.n}, &GemmAxes::Axis::sy,
                        [&](int64_t off, int64_t n, int64_t step) {
                          if (step == 1) {
                            std::memcpy(dst + off, src, static_cast<size_t>(n) * sizeof(float));
                          } else {
                            for (int64_t i = 0; i < n; ++i) dst[off + i * step] = src[i];
                          }
                          src += n;
                        });
    }
    return ok_status();
  }

 private:
  static void gather(const float* src, std::initializer_list<const std::vector<GemmAxes::Axis>*> g,
                     int64_t GemmAxes::Axis::*stride, float* dst) {
    einsum::walk_rows(g, stride, [&](int64_t off, int64_t n, int64_t step) {
      if (step == 1) {
        std::memcpy(dst, src + off, static_cast<size_t>(n) * sizeof(float));
      } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[off + i * step];
      }
      dst += n;
    });
  }

  Result<EinsumPlan> make_plan(const KernelContext& ctx, const Shape& sa, const Shape& sb) const {
    const std::vector<Shape> shapes = {sa, sb};
    auto fail = [&](const Status& st) {
      return ctx.error(ErrorCode::kInvalidArgument, st.message());
    };
    auto lb = einsum::label_dimensions(p_.inputs, shapes);
    if (!lb.ok()) return fail(lb.status());
    auto out_labels = einsum::output_labels(p_, *lb);
    if (!out_labels.ok()) return fail(out_labels.status());
    EinsumPlan plan;
    for (int l : *out_labels) plan.out.push_back(lb->size[static_cast<size_t>(l)]);
    int64_t numel = 1;
    for (int64_t d : plan.out) {
      const auto next = checked_mul(numel, d);
      if (!next) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "the output shape " + shape_to_string(plan.out) + " is too large");
      }
      numel = *next;
    }
    const einsum::LoopNest nest = einsum::build_loop_nest(shapes, *lb, *out_labels, plan.out);
    plan.axes = einsum::gemm_axes(nest, out_labels->size(), plan.out);
    const GemmAxes& g = plan.axes;
    const auto bt = GemmAxes::total(g.batch), mt = GemmAxes::total(g.m), nt = GemmAxes::total(g.n),
               kt = GemmAxes::total(g.k);
    if (!bt || !mt || !nt || !kt) {
      return ctx.error(ErrorCode::kInvalidArgument, "the Einsum's sizes overflow");
    }
    plan.bt = *bt, plan.mt = *mt, plan.nt = *nt, plan.kt = *kt;
    if (numel == 0 || plan.kt == 0) return plan;
    // Each operand in place where its three groups merge (with `dense_only`, only where they
    // merge into a dense batch of matrices), else a dense copy.
    auto view = [](const std::vector<GemmAxes::Axis>& g0, const std::vector<GemmAxes::Axis>& g1,
                   const std::vector<GemmAxes::Axis>& g2, int64_t GemmAxes::Axis::*stride,
                   bool& copy, bool dense_only) {
      const auto d0 = merge(g0, stride), d1 = merge(g1, stride), d2 = merge(g2, stride);
      const int64_t e0 = GemmAxes::total(g0).value_or(0), e1 = GemmAxes::total(g1).value_or(0),
                    e2 = GemmAxes::total(g2).value_or(0);
      copy = !d0 || !d1 || !d2;
      const int64_t dims[3] = {e0, e1, e2};
      if (!copy) {
        // No two elements at one address: a diagonal (a label repeated in the operand) makes
        // its dimensions overlap, which a memory descriptor cannot express.
        std::array<Dim, 3> ds = {*d0, *d1, *d2};
        std::sort(ds.begin(), ds.end(),
                  [](const Dim& x, const Dim& y) { return x.stride < y.stride; });
        int64_t reach = 1;
        for (const Dim& d : ds) {
          if (d.extent == 1) continue;
          if (d.stride < reach) copy = true;
          reach = d.stride * d.extent;
        }
      }
      const int64_t dense[3] = {e1 * e2, e2, 1};
      if (copy) return strided_desc(dims, dense);
      // A dimension of one element gets the stride a dense layout would give it: oneDNN
      // refuses to execute with some others (1x1x20 with strides 1, 1, 1).
      int64_t strides[3] = {d0->stride, d1->stride, d2->stride};
      for (int i = 2; i >= 0; --i) {
        if (dims[i] == 1) strides[i] = i == 2 ? 1 : dims[i + 1] * strides[i + 1];
      }
      if (dense_only && !std::equal(strides, strides + 3, dense)) {
        copy = true;
        return strided_desc(dims, dense);
      }
      return strided_desc(dims, strides);
    };
    const double macs = static_cast<double>(plan.bt) * static_cast<double>(plan.mt) *
                        static_cast<double>(plan.nt) * static_cast<double>(plan.kt);
    auto build = [&](bool dense_only) -> Status {
      // oneDNN checks the descriptors as they are made: its refusals become this node's error.
      RECUR_RETURN_IF_ERROR(dnnl_try(what_, [&] {
        plan.a = view(g.batch, g.m, g.k, &GemmAxes::Axis::sa, plan.gather_a, dense_only);
        plan.b = view(g.batch, g.k, g.n, &GemmAxes::Axis::sb, plan.gather_b, dense_only);
        plan.y = view(g.batch, g.m, g.n, &GemmAxes::Axis::sy, plan.scatter_y, dense_only);
      }));
      RECUR_ASSIGN_OR_RETURN(
          plan.prim,
          make_primitive<dnnl::matmul>([&] { return dnnl::matmul::desc(plan.a, plan.b, plan.y); },
                                       user_scratchpad_attr(), threads_for(macs, threads_), what_));
      return ok_status();
    };
    RECUR_RETURN_IF_ERROR(build(false));
    // oneDNN 2.6 takes an operand strided other than as a dense batch of matrices to its jit
    // sgemm or, for some strides, its reference loops; with dense copies of those operands it
    // takes its brgemm matmul. The reference loops are slow at any size. The sgemm's first call
    // in a process generates its kernels, 38 ms and 3.4 MB of code (DeepFilterNet's grouped
    // linear "btgi,gih->btgh", which reads A as [g][bt][i], at batch 8): copies up to that size
    // cost less.
    constexpr size_t kCopiesForSgemm = size_t{4} << 20;
    const auto rank = [](const std::string& impl) {
      return generic_impl(impl) ? 0 : impl.starts_with("gemm:jit") ? 1 : 2;
    };
    if (rank(plan.prim.impl) < 2) {
      EinsumPlan in_place = plan;
      if (build(true).ok() && rank(plan.prim.impl) > rank(in_place.prim.impl) &&
          (rank(in_place.prim.impl) == 0 || copy_bytes(plan) <= kCopiesForSgemm))
        return plan;
      plan = std::move(in_place);
    }
    return plan;
  }

  einsum::Parsed p_;
  Threads threads_;
  std::string what_;  // the node, for errors
  mutable PrimCache<std::tuple<Shape, Shape>, EinsumPlan> cache_;
  mutable ScratchPool scratch_;
  mutable ScratchPool copies_;  // gathered operands and the output before its scatter
};

}  // namespace

void register_einsum(KernelRegistry& r) {
  r.add({.op_type = "Einsum",
         .since = 12,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           auto p = einsum::parse_node_equation(ctx.node());
           if (!p.ok()) return p.status().with_context(ctx.node().describe());
           return std::unique_ptr<Kernel>(std::make_unique<EinsumKernel>(
               std::move(p).value(), options_of(ctx).team(), ctx.node().describe()));
         },
         .claim = [](const Node& n, const Graph& g) -> Claim {
           if (n.inputs.size() != 2) return Claim::decline("oneDNN's Einsum takes two operands");
           const Attribute* eq = n.attr("equation");
           auto p = einsum::parse_equation(eq ? eq->s : "");
           if (!p.ok()) return Claim::decline("the equation does not parse");
           if (einsum::sums_a_label_of_one_operand(*p)) {
             return Claim::decline(
                 "a label summed in one operand only: as a matrix product the other operand "
                 "would be copied for each of its values");
           }
           Claim c = claim_float32_input(n, g, 0);
           return c.yes ? claim_float32_input(n, g, 1) : c;
         }});
}

}  // namespace recur::onednn
