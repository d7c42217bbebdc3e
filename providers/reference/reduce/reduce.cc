// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp, ReduceSumSquare.
//
// Axes come from the `axes` attribute, or from the optional second input for ReduceSum from
// opset 13 (and every reduction from opset 18). No axes means every axis, unless
// noop_with_empty_axes=1: then nothing is reduced, and each element is reduced alone (x for
// Sum, x*x for SumSquare, |x| for L1, log(x) for LogSum, ...). Reducing an empty set gives the
// operation's identity: 0 for Sum, 1 for Prod, -inf (or the lowest integer) for Max, NaN for a
// floating Mean; an integer Mean of an empty set is an error.
//
// Floats accumulate in double. Integer Sum, Prod, SumSquare and L1 wrap; integer L2, LogSum
// and LogSumExp are computed in double and converted back as Cast does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/math/elementwise.h"
#include "providers/reference/reduce/reduce.h"

namespace recur::reference {

namespace {

enum class Reduction { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

bool axes_from_input(Reduction op, int opset) {
  return opset >= 18 || (op == Reduction::kSum && opset >= 13);
}

// What the reduction does with x's shape.
struct Plan {
  Shape keep;     // x's shape with 1 at every reduced axis
  Shape out;      // `keep`, or without the reduced axes when keepdims=0
  int64_t count;  // elements per output element
  SmallVector<bool, 8> reduced;
};

Result<Plan> make_plan(const Shape& in, const Shape& axes, bool all_if_empty, bool keepdims) {
  const auto rank = static_cast<int64_t>(in.size());
  SmallVector<bool, 8> reduced(in.size(), false);
  if (axes.empty() && all_if_empty) {
    reduced.assign(in.size(), true);
  }
  for (int64_t a : axes) {
    RECUR_ASSIGN_OR_RETURN(int64_t d, normalize_axis(a, rank, "axis"));
    if (reduced[static_cast<size_t>(d)]) {
      return invalid_argument("axis " + std::to_string(a) + " is given twice");
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  Plan p{in, {}, 1, reduced};
  for (size_t d = 0; d < in.size(); ++d) {
    if (reduced[d]) {
      p.count *= in[d];
      p.keep[d] = 1;
      if (keepdims) p.out.push_back(1);
    } else {
      p.out.push_back(in[d]);
    }
  }
  return p;
}

// The accumulators, kept by each thread from run to run so that a reduction of a shape seen
// before allocates nothing (they grow to the largest output the thread has reduced to).
std::vector<double>& thread_acc() {
  thread_local std::vector<double> acc;
  return acc;
}
std::vector<double>& thread_max() {
  thread_local std::vector<double> mx;
  return mx;
}

// x as [outer, count, inner] with the reduced axes in the middle, where they make one run
// once axes of size 1 are left out (the last axis, the first, or a block of adjacent ones: nearly
// every reduction a model makes). Output element o * inner + i reduces
// x[o][0..count)[i]. `one_run` is false otherwise, and for empty tensors.
struct Runs {
  bool one_run = false;
  int64_t outer = 1, count = 1, inner = 1;
};

Runs find_runs(const Shape& in, const Plan& p) {
  Runs r;
  int state = 0;  // 0: kept axes before the run, 1: in the run, 2: kept axes after it
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 0) return r;
    if (in[d] == 1) continue;
    if (p.reduced[d]) {
      if (state == 2) return r;
      state = 1;
      r.count *= in[d];
    } else if (state == 0) {
      r.outer *= in[d];
    } else {
      state = 2;
      r.inner *= in[d];
    }
  }
  r.one_run = true;
  return r;
}

// Calls f(output index, x value as double) for every element of x. Where the reduced axes
// make one run the loops are plain; otherwise each element's output offset comes from
// broadcasting.
template <class T, class F>
void for_each_reduced(const Tensor& x, const Plan& p, const Runs& r, F&& f) {
  const T* px = x.data<T>();
  if (!r.one_run) {
    for_each_broadcast<1>(x.shape(), {&p.keep}, [&](int64_t i, const std::array<int64_t, 1>& off) {
      f(static_cast<size_t>(off[0]), static_cast<double>(to_compute(px[i])));
    });
    return;
  }
  for (int64_t o = 0; o < r.outer; ++o)
    for (int64_t c = 0; c < r.count; ++c) {
      const T* row = px + (o * r.count + c) * r.inner;
      const size_t base = static_cast<size_t>(o * r.inner);
      for (int64_t i = 0; i < r.inner; ++i)
        f(base + static_cast<size_t>(i), static_cast<double>(to_compute(row[i])));
    }
}

// sum(g(x)) over a contiguous row, in four partial sums: one running sum would wait on the
// previous addition at every element.
template <class T, class G>
double sum_row(const T* x, int64_t n, G&& g) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) s[k] += g(static_cast<double>(to_compute(x[i + k])));
  for (; i < n; ++i) s[0] += g(static_cast<double>(to_compute(x[i])));
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// Floating types: accumulate in double.
template <class T>
Status reduce_float(Reduction op, const Tensor& x, const Plan& p, Tensor& y) {
  const size_t n = static_cast<size_t>(shape_numel(p.keep));
  const Runs runs = find_runs(x.shape(), p);
  auto each = [&](auto&& f) { for_each_reduced<T>(x, p, runs, f); };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double>& acc = thread_acc();
  acc.assign(n, 0.0);
  // Sums where the reduced axes make one run: over the last axes a row at a time; over
  // middle axes a row of x into a row of accumulators, which the compiler vectorizes.
  auto sum_rows = [&](auto&& g) {
    if (!runs.one_run) return false;
    const T* px = x.data<T>();
    for (int64_t o = 0; o < runs.outer; ++o) {
      if (runs.inner == 1) {
        acc[static_cast<size_t>(o)] = sum_row(px + o * runs.count, runs.count, g);
        continue;
      }
      double* __restrict a = acc.data() + o * runs.inner;
      for (int64_t c = 0; c < runs.count; ++c) {
        const T* __restrict row = px + (o * runs.count + c) * runs.inner;
        for (int64_t i = 0; i < runs.inner; ++i) a[i] += g(static_cast<double>(to_compute(row[i])));
      }
    }
    return true;
  };
  switch (op) {
    case Reduction::kSum:
    case Reduction::kMean:
    case Reduction::kLogSum:
      if (!sum_rows([](double v) { return v; })) each([&](size_t o, double v) { acc[o] += v; });
      break;
    case Reduction::kL1:
      if (!sum_rows([](double v) { return std::fabs(v); }))
        each([&](size_t o, double v) { acc[o] += std::fabs(v); });
      break;
    case Reduction::kL2:
    case Reduction::kSumSquare:
      if (!sum_rows([](double v) { return v * v; }))
        each([&](size_t o, double v) { acc[o] += v * v; });
      break;
    case Reduction::kProd:
      acc.assign(n, 1.0);
      each([&](size_t o, double v) { acc[o] *= v; });
      break;
    case Reduction::kMax:
      acc.assign(n, -inf);
      each([&](size_t o, double v) { acc[o] = nan_max(acc[o], v); });
      break;
    case Reduction::kMin:
      acc.assign(n, inf);
      each([&](size_t o, double v) { acc[o] = nan_min(acc[o], v); });
      break;
    case Reduction::kLogSumExp: {
      std::vector<double>& mx = thread_max();
      mx.assign(n, -inf);
      each([&](size_t o, double v) { mx[o] = nan_max(mx[o], v); });
      // An infinite (or NaN) maximum is the result; exp(x - max) would give NaN.
      each([&](size_t o, double v) {
        if (std::isfinite(mx[o])) acc[o] += std::exp(v - mx[o]);
      });
      for (size_t o = 0; o < n; ++o)
        acc[o] = std::isfinite(mx[o]) ? mx[o] + std::log(acc[o]) : mx[o];
      break;
    }
  }
  const double count = static_cast<double>(p.count);
  T* py = y.data<T>();
  for (size_t o = 0; o < n; ++o) {
    double r = acc[o];
    if (op == Reduction::kMean) r /= count;
    if (op == Reduction::kL2) r = std::sqrt(r);
    if (op == Reduction::kLogSum) r = std::log(r);
    py[o] = convert<T>(r);
  }
  return ok_status();
}

// Integer types: exact, wrapping where the result does not fit.
template <class T>
Status reduce_int(Reduction op, const Tensor& x, const Plan& p, Tensor& y) {
  if (op == Reduction::kL2 || op == Reduction::kLogSum || op == Reduction::kLogSumExp) {
    // Through double: take a double copy of x.
    Tensor xd = Tensor::empty(DType::kFloat64, x.shape());
    Tensor yd = Tensor::empty(DType::kFloat64, p.out);
    const T* px = x.data<T>();
    double* pxd = xd.data<double>();
    for (int64_t i = 0; i < x.numel(); ++i) pxd[i] = static_cast<double>(px[i]);
    RECUR_RETURN_IF_ERROR(reduce_float<double>(op, xd, p, yd));
    const double* pyd = yd.data<double>();
    T* py = y.data<T>();
    for (int64_t i = 0; i < y.numel(); ++i) py[i] = convert<T>(pyd[i]);
    return ok_status();
  }
  if (op == Reduction::kMean && p.count == 0) {
    return invalid_argument("the integer mean of an empty set has no value");
  }
  const size_t n = static_cast<size_t>(shape_numel(p.keep));
  const T* px = x.data<T>();
  T* py = y.data<T>();
  auto each = [&](auto&& f) {
    for_each_broadcast<1>(x.shape(), {&p.keep}, [&](int64_t i, const std::array<int64_t, 1>& off) {
      f(static_cast<size_t>(off[0]), px[i]);
    });
  };
  if (op == Reduction::kMax || op == Reduction::kMin) {
    const bool is_max = op == Reduction::kMax;
    std::fill(py, py + n,
              is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max());
    each([&](size_t o, T v) { py[o] = is_max ? std::max(py[o], v) : std::min(py[o], v); });
    return ok_status();
  }
  // Modulo 2^64, sign-extended: the low bits are the wrapped result in T.
  thread_local std::vector<uint64_t> acc;  // kept from run to run
  acc.assign(n, op == Reduction::kProd ? 1u : 0u);
  auto u = [](T v) {
    return static_cast<uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
  };
  switch (op) {
    case Reduction::kSum:
    case Reduction::kMean:
      each([&](size_t o, T v) { acc[o] += u(v); });
      break;
    case Reduction::kL1:
      each([&](size_t o, T v) { acc[o] += v < T(0) ? 0 - u(v) : u(v); });
      break;
    case Reduction::kSumSquare:
      each([&](size_t o, T v) { acc[o] += u(v) * u(v); });
      break;
    case Reduction::kProd:
      each([&](size_t o, T v) { acc[o] *= u(v); });
      break;
    default:
      break;
  }
  for (size_t o = 0; o < n; ++o) {
    if (op == Reduction::kMean) {
      const auto count = static_cast<uint64_t>(p.count);
      if constexpr (std::is_signed_v<T>) {
        py[o] = static_cast<T>(static_cast<int64_t>(acc[o]) / static_cast<int64_t>(count));
      } else {
        py[o] = static_cast<T>(acc[o] / count);
      }
    } else {
      py[o] = static_cast<T>(acc[o]);
    }
  }
  return ok_status();
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(Reduction op, std::optional<Shape> axes, bool keepdims, bool noop)
      : op_(op), axes_(std::move(axes)), keepdims_(keepdims), noop_(noop) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    Shape axes;
    if (axes_) {
      axes = *axes_;
    } else if (const Tensor* a = ctx.input(1)) {
      auto v = read_int_values(*a, "axes");
      if (!v.ok()) return ctx.error(v.status().code(), v.status().message());
      axes = std::move(v).value();
    }
    auto plan = make_plan(x->shape(), axes, !noop_, keepdims_);
    if (!plan.ok()) return ctx.error(plan.status().code(), plan.status().message());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), plan->out));
    Status st;
    bool handled = visit_dtype(kFloatTypes, x->dtype(), [&](auto tag) {
      st = reduce_float<typename decltype(tag)::type>(op_, *x, *plan, *y);
    });
    if (!handled) {
      handled = visit_dtype(kIntTypes, x->dtype(), [&](auto tag) {
        st = reduce_int<typename decltype(tag)::type>(op_, *x, *plan, *y);
      });
    }
    // ReduceMax/ReduceMin take bool from opset 20: any / all, false / true over an empty set.
    const bool bool_ok =
        (op_ == Reduction::kMax || op_ == Reduction::kMin) && ctx.node().opset >= 20;
    if (!handled && bool_ok && x->dtype() == DType::kBool) {
      handled = true;
      st = reduce_int<bool>(op_, *x, *plan, *y);
    }
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    if (!st.ok()) return ctx.error(st.code(), st.message());
    return ok_status();
  }

 private:
  Reduction op_;
  std::optional<Shape> axes_;  // nullopt: from input 1
  bool keepdims_;
  bool noop_;
};

struct ReduceAttrs {
  std::optional<std::vector<int64_t>> axes;  // nullopt: from input 1
  bool keepdims = true;
  bool noop = false;
};

Result<ReduceAttrs> read_attrs(Reduction op, const Node& node) {
  AttrReader attrs(node);
  ReduceAttrs r;
  r.keepdims = attrs.get_int("keepdims", 1) != 0;
  if (axes_from_input(op, node.opset)) {
    if (attrs.has("axes")) {
      return invalid_model(node.describe() + ": axes are an input, not an attribute, at opset " +
                           std::to_string(node.opset));
    }
    r.noop = attrs.get_int("noop_with_empty_axes", 0) != 0;
  } else {
    r.axes = attrs.get_ints("axes");
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  return r;
}

InferFn infer_reduce(Reduction op) {
  return [op](InferContext& ctx) -> Status {
    TypeInfo out;
    out.dtype = ctx.input_type(0).dtype;
    const TypeInfo& in = ctx.input_type(0);
    auto attrs = read_attrs(op, ctx.node());
    if (!attrs.ok()) return attrs.status();
    std::optional<std::vector<int64_t>> axes = attrs->axes;
    if (!axes) {
      if (!ctx.has_input(1)) {
        axes = std::vector<int64_t>{};
      } else if (const Tensor* a = ctx.input_value(1)) {
        auto v = read_int_values(*a, "axes");
        if (v.ok()) axes = *v;
      }
    }
    if (in.shape && axes) {
      Shape dims;
      for (const Dim& d : *in.shape) dims.push_back(d.is_fixed() ? d.value : 1);
      auto plan = make_plan(dims, *axes, !attrs->noop, attrs->keepdims);
      if (!plan.ok()) return ctx.error(plan.status().message());
      // The declared dims (symbols included) of the axes that stay.
      std::vector<Dim> od;
      for (size_t d = 0; d < in.shape->size(); ++d) {
        if (!plan->reduced[d]) {
          od.push_back((*in.shape)[d]);
        } else if (attrs->keepdims) {
          od.push_back(Dim{1, {}});
        }
      }
      out.shape = std::move(od);
    }
    ctx.set_output(0, out);
    return ok_status();
  };
}

void add_reduce(Registrar& r, const char* name, Reduction op) {
  r.add({.op_type = name,
         .since = 1,
         .create = [op](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(ReduceAttrs a, read_attrs(op, c.node()));
           return std::make_unique<ReduceKernel>(op, std::move(a.axes), a.keepdims, a.noop);
         }},
        infer_reduce(op));
}

}  // namespace

void register_reduce(Registrar& r) {
  add_reduce(r, "ReduceSum", Reduction::kSum);
  add_reduce(r, "ReduceMean", Reduction::kMean);
  add_reduce(r, "ReduceMax", Reduction::kMax);
  add_reduce(r, "ReduceMin", Reduction::kMin);
  add_reduce(r, "ReduceProd", Reduction::kProd);
  add_reduce(r, "ReduceL1", Reduction::kL1);
  add_reduce(r, "ReduceL2", Reduction::kL2);
  add_reduce(r, "ReduceLogSum", Reduction::kLogSum);
  add_reduce(r, "ReduceLogSumExp", Reduction::kLogSumExp);
  add_reduce(r, "ReduceSumSquare", Reduction::kSumSquare);
}

}  // namespace recur::reference
