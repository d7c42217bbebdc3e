// Unique: the distinct elements (or, with `axis`, the distinct slices along it) with the index
// of each one's first occurrence, the inverse mapping and the counts. sorted=1 orders them
// ascending (slices lexicographically); sorted=0 keeps the order of first occurrence.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

template <class T>
int compare_rows(const T* a, const T* b, int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    const auto x = to_compute(a[i]), y = to_compute(b[i]);
    if (x < y) return -1;
    if (y < x) return 1;
  }
  return 0;
}

class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(std::optional<int64_t> axis, bool sorted) : axis_(axis), sorted_(sorted) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    // Items are rows of a [n, len] view: the elements, or the slices along the axis moved to
    // the front.
    Tensor rows = *x;
    std::vector<int64_t> perm;
    Shape item_shape;  // the shape of one slice, in the moved-axis layout
    int64_t n = x->numel(), len = 1;
    size_t ax = 0;
    if (axis_) {
      auto a = normalize_axis(*axis_, x->rank(), "axis");
      if (!a.ok()) return a.status().with_context(ctx.node().describe());
      ax = static_cast<size_t>(*a);
      perm.push_back(*a);
      for (int64_t d = 0; d < x->rank(); ++d)
        if (d != *a) perm.push_back(d);
      Shape moved;
      for (int64_t p : perm) moved.push_back(x->shape()[static_cast<size_t>(p)]);
      item_shape.assign(moved.begin() + 1, moved.end());
      n = moved[0];
      len = shape_numel(item_shape);
      if (ax != 0) {
        rows = Tensor::empty(x->dtype(), moved);
        permute_copy(*x, rows, perm);
      }
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::vector<int64_t> group_of(static_cast<size_t>(n));  // item -> unique group
    std::vector<int64_t> first, counts;                     // per group, in output order
    const bool ok = visit_dtype(kAllTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = rows.template data<T>();
      auto row = [&](int64_t i) { return p + i * len; };
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return compare_rows(row(a), row(b), len) < 0; });
      for (size_t i = 0; i < order.size(); ++i) {
        if (i == 0 || compare_rows(row(order[i - 1]), row(order[i]), len) != 0) {
          first.push_back(order[i]);  // the smallest index of its group (stable sort)
          counts.push_back(0);
        }
        group_of[static_cast<size_t>(order[i])] = static_cast<int64_t>(first.size()) - 1;
        ++counts.back();
      }
    });
    if (!ok) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(x->dtype())) + " is not supported");
    }
    const auto groups = static_cast<int64_t>(first.size());
    std::vector<int64_t> rank_of(static_cast<size_t>(groups));  // sorted group -> output slot
    std::iota(rank_of.begin(), rank_of.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(static_cast<size_t>(groups));
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
        return first[static_cast<size_t>(a)] < first[static_cast<size_t>(b)];
      });
      for (int64_t s = 0; s < groups; ++s) rank_of[static_cast<size_t>(by_first[s])] = s;
    }
    std::vector<int64_t> out_first(static_cast<size_t>(groups)),
        out_counts(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      out_first[static_cast<size_t>(rank_of[g])] = first[static_cast<size_t>(g)];
      out_counts[static_cast<size_t>(rank_of[g])] = counts[static_cast<size_t>(g)];
    }

    // Y: the chosen rows, then the axis moved back.
    Shape y_moved = {groups};
    y_moved.insert(y_moved.end(), item_shape.begin(), item_shape.end());
    const size_t row_bytes = static_cast<size_t>(len) * dtype_size(x->dtype());
    Tensor y_rows = Tensor::empty(x->dtype(), y_moved);
    for (int64_t s = 0; s < groups; ++s) {
      if (row_bytes) {
        copy_bytes(static_cast<char*>(y_rows.raw_data()) + static_cast<size_t>(s) * row_bytes,
                   static_cast<const char*>(rows.raw_data()) +
                       static_cast<size_t>(out_first[static_cast<size_t>(s)]) * row_bytes,
                   row_bytes);
      }
    }
    if (axis_ && ax != 0) {
      std::vector<int64_t> inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = i;
      Shape y_shape = x->shape();
      y_shape[ax] = groups;
      RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), y_shape));
      permute_copy(y_rows, *y, inverse);
    } else {
      RECUR_RETURN_IF_ERROR(ctx.set_output(0, y_rows));
    }

    auto put = [&](size_t i, const std::vector<int64_t>& v) -> Status {
      if (!ctx.output_requested(i)) return ok_status();
      RECUR_ASSIGN_OR_RETURN(
          Tensor * t, ctx.allocate_output(i, DType::kInt64, {static_cast<int64_t>(v.size())}));
      std::copy(v.begin(), v.end(), t->data<int64_t>());
      return ok_status();
    };
    std::vector<int64_t> inverse_indices(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      inverse_indices[static_cast<size_t>(i)] =
          rank_of[static_cast<size_t>(group_of[static_cast<size_t>(i)])];
    RECUR_RETURN_IF_ERROR(put(1, out_first));
    RECUR_RETURN_IF_ERROR(put(2, inverse_indices));
    RECUR_RETURN_IF_ERROR(put(3, out_counts));
    return ok_status();
  }

 private:
  std::optional<int64_t> axis_;
  bool sorted_;
};

Result<std::unique_ptr<Kernel>> create_unique(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::optional<int64_t> axis;
  if (attrs.has("axis")) axis = attrs.get_int("axis", 0);
  const bool sorted = attrs.get_int("sorted", 1) != 0;
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<UniqueKernel>(axis, sorted);
}

Status infer_unique(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  AttrReader attrs(ctx.node());
  if (!attrs.has("axis")) {
    ctx.set_output(0, type_with_rank(in.dtype, 1));
  } else if (in.shape) {
    auto axis =
        normalize_axis(attrs.get_int("axis", 0), static_cast<int64_t>(in.shape->size()), "axis");
    if (!axis.ok()) return ctx.error(axis.status().message());
    std::vector<Dim> out = *in.shape;
    out[static_cast<size_t>(*axis)] = Dim{};
    ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  } else {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
  }
  for (size_t i = 1; i < 4; ++i) ctx.set_output(i, type_with_rank(DType::kInt64, 1));
  return ok_status();
}

}  // namespace

void register_unique(Registrar& r) {
  r.add({.op_type = "Unique", .since = 11, .create = create_unique}, infer_unique);
}

}  // namespace recur::reference
