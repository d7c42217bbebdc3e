// TopK: the k largest (or, from opset 11, smallest) elements along `axis` and their indices,
// sorted; equal values keep their original order. k is an attribute before opset 10 and an
// input after. NaN counts as larger than every number, as in numpy's sort order.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

template <class C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// a sorts before b in ascending order, NaN last.
template <class C>
bool ascending(C a, C b) {
  if (is_nan(a)) return false;
  if (is_nan(b)) return true;
  return a < b;
}

// The k first of a row in output order (largest or smallest first, ties by index), scanning
// once with a heap of the k best so far, the one that ranks last on top: an element that does
// not beat it costs one comparison. The result is the partial sort's: the order is total (the
// index breaks ties), so the k first are the same elements in the same order. Returns false,
// with `best` unspecified, when the row holds a NaN (the NaN rules are the caller's).
template <class C, class T>
bool scan_top_k(const T* base, int64_t inner, int64_t dim, int64_t k, bool largest,
                std::vector<std::pair<C, int64_t>>& best) {
  const auto ranks_before = [largest](const std::pair<C, int64_t>& a,
                                      const std::pair<C, int64_t>& b) {
    if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  };
  best.clear();
  for (int64_t i = 0; i < k; ++i) {
    const C v = to_compute(base[i * inner]);
    if (is_nan(v)) return false;
    best.emplace_back(v, i);
    std::push_heap(best.begin(), best.end(), ranks_before);
  }
  C worst = best.front().first;
  // One comparison for the common case: true for a better value (a later index never beats an
  // equal one) and for NaN. The loop is instantiated per direction and for unit stride.
  const auto scan = [&](auto is_largest, auto stride) {
    for (int64_t i = k; i < dim; ++i) {
      const C v = to_compute(base[i * stride]);
      if (is_largest ? !(v <= worst) : !(v >= worst)) {
        if (is_nan(v)) return false;
        std::pop_heap(best.begin(), best.end(), ranks_before);
        best.back() = {v, i};
        std::push_heap(best.begin(), best.end(), ranks_before);
        worst = best.front().first;
      }
    }
    return true;
  };
  using Unit = std::integral_constant<int64_t, 1>;
  const bool ok =
      largest ? (inner == 1 ? scan(std::true_type{}, Unit{}) : scan(std::true_type{}, inner))
              : (inner == 1 ? scan(std::false_type{}, Unit{}) : scan(std::false_type{}, inner));
  if (!ok) return false;
  std::sort_heap(best.begin(), best.end(), ranks_before);
  return true;
}

class TopKKernel final : public Kernel {
 public:
  TopKKernel(int64_t axis, std::optional<int64_t> k, bool largest)
      : axis_(axis), k_(k), largest_(largest) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    int64_t k = 0;
    if (k_) {
      k = *k_;
    } else {
      RECUR_ASSIGN_OR_RETURN(const Tensor* kt, required_input(ctx, 1));
      auto v = read_int_values(*kt, "K");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      if (v->size() != 1) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "K must have one element, not shape " + shape_to_string(kt->shape()));
      }
      k = (*v)[0];
    }
    auto axis = normalize_axis(axis_, x->rank(), "axis");
    if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
    const auto ax = static_cast<size_t>(*axis);
    const int64_t dim = x->rank() ? x->shape()[ax] : 1;
    if (k < 0 || k > dim) {
      return ctx.error(ErrorCode::kOutOfRange,
                       "k " + std::to_string(k) + " is out of range for axis " +
                           std::to_string(*axis) + " of size " + std::to_string(dim));
    }
    Shape out_shape = x->shape();
    if (x->rank()) out_shape[ax] = k;
    RECUR_ASSIGN_OR_RETURN(Tensor * values, ctx.allocate_output(0, x->dtype(), out_shape));
    RECUR_ASSIGN_OR_RETURN(Tensor * indices, ctx.allocate_output(1, DType::kInt64, out_shape));
    if (x->numel() == 0) return ok_status();
    const int64_t outer = dims_product(x->shape(), 0, ax);
    const int64_t inner = dims_product(x->shape(), ax + 1, x->shape().size());
    const bool ok = visit_dtype(kNumericTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* src = x->data<T>();
      T* vo = values->data<T>();
      int64_t* io = indices->data<int64_t>();
      thread_local std::vector<int64_t> order;  // kept from run to run
      thread_local std::vector<C> row;
      order.resize(static_cast<size_t>(dim));
      row.resize(static_cast<size_t>(dim));
      const bool largest = largest_;
      auto before = [&](int64_t a, int64_t b) {
        const C va = row[static_cast<size_t>(a)], vb = row[static_cast<size_t>(b)];
        const bool lt = largest ? ascending(vb, va) : ascending(va, vb);
        if (lt) return true;
        const bool gt = largest ? ascending(va, vb) : ascending(vb, va);
        return !gt && a < b;  // ties (and NaN with NaN) by index
      };
      thread_local std::vector<std::pair<C, int64_t>> best;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          const T* base = src + o * dim * inner + j;
          if (k > 0 && scan_top_k(base, inner, dim, k, largest, best)) {
            for (int64_t i = 0; i < k; ++i) {
              const int64_t at = (o * k + i) * inner + j;
              const int64_t from = best[static_cast<size_t>(i)].second;
              vo[at] = base[from * inner];
              io[at] = from;
            }
            continue;
          }
          // A row with a NaN (or k of 0): the partial sort with the NaN rules.
          for (int64_t i = 0; i < dim; ++i) {
            row[static_cast<size_t>(i)] = to_compute(base[i * inner]);
            order[static_cast<size_t>(i)] = i;
          }
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t i = 0; i < k; ++i) {
            const int64_t at = (o * k + i) * inner + j;
            const int64_t from = order[static_cast<size_t>(i)];
            vo[at] = base[from * inner];
            io[at] = from;
          }
        }
      }
    });
    if (!ok) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(x->dtype())) + " is not supported");
    }
    return ok_status();
  }

 private:
  int64_t axis_;
  std::optional<int64_t> k_;  // the attribute, before opset 10
  bool largest_;
};

Result<std::unique_ptr<Kernel>> create_top_k(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", -1);
  const bool largest = attrs.get_int("largest", 1) != 0;
  std::optional<int64_t> k;
  if (ctx.opset() < 10) k = attrs.require_int("k");
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<TopKKernel>(axis, k, largest);
}

Status infer_top_k(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    ctx.set_output(1, TypeInfo{DType::kInt64, std::nullopt});
    return ok_status();
  }
  AttrReader attrs(ctx.node());
  auto axis =
      normalize_axis(attrs.get_int("axis", -1), static_cast<int64_t>(in.shape->size()), "axis");
  if (!axis.ok()) return ctx.error(axis.status().message());
  std::vector<Dim> out = *in.shape;
  if (!out.empty()) {
    Dim k;
    if (ctx.opset() < 10) {
      k = Dim{attrs.get_int("k", -1), {}};
    } else if (auto v = constant_ints(ctx, 1); v && v->size() == 1) {
      k = Dim{(*v)[0], {}};
    }
    const Dim& d = out[static_cast<size_t>(*axis)];
    if (k.is_fixed() && d.is_fixed() && k.value > d.value) {
      return ctx.error("k " + std::to_string(k.value) + " is larger than axis " +
                       std::to_string(*axis) + " of size " + std::to_string(d.value));
    }
    out[static_cast<size_t>(*axis)] = k.value >= 0 ? k : Dim{};
  }
  ctx.set_output(0, type_with_dims(in.dtype, out));
  ctx.set_output(1, type_with_dims(DType::kInt64, out));
  return ok_status();
}

}  // namespace

void register_top_k(Registrar& r) {
  r.add({.op_type = "TopK", .since = 1, .create = create_top_k}, infer_top_k);
}

}  // namespace recur::reference
