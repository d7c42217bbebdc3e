// Pad: `pads` (begins then ends, per axis) is an attribute before opset 11 (`paddings` in
// opset 1) and an input after, with the constant value as input 2 and, in opset 18, the axes
// as input 3. Modes: constant, reflect, edge, wrap. A negative pad crops; cropping happens
// before the padding, so reflect and edge repeat the values that remain.
#include <cstring>
#include <tuple>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/last_plan.h"
#include "providers/reference/common/util.h"
#include "providers/reference/math/elementwise.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

Result<PadMode> parse_mode(const std::string& s) {
  if (s == "constant") return PadMode::kConstant;
  if (s == "reflect") return PadMode::kReflect;
  if (s == "edge") return PadMode::kEdge;
  if (s == "wrap") return PadMode::kWrap;
  return invalid_model("unknown mode '" + s + "' (constant, reflect, edge or wrap)");
}

// Begin and end pads of every axis: up to rank 8 without the heap.
using FullPads = SmallVector<int64_t, 16>;

// Full-rank begin and end pads from `pads` and optional `axes`.
Result<FullPads> full_pads(size_t rank, const Shape& pads, const std::optional<Shape>& axes) {
  Shape ax;
  if (axes) {
    for (int64_t a : *axes) {
      RECUR_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, static_cast<int64_t>(rank), "axis"));
      ax.push_back(n);
    }
  } else {
    for (size_t d = 0; d < rank; ++d) ax.push_back(static_cast<int64_t>(d));
  }
  if (pads.size() != 2 * ax.size()) {
    return invalid_argument("pads " + ints_to_string(pads) + " must have " +
                            std::to_string(2 * ax.size()) + " entries (a begin and an end for " +
                            std::to_string(ax.size()) + " axes)");
  }
  FullPads full(2 * rank, 0);
  for (size_t i = 0; i < ax.size(); ++i) {
    full[static_cast<size_t>(ax[i])] = pads[i];
    full[rank + static_cast<size_t>(ax[i])] = pads[ax.size() + i];
  }
  return full;
}

// For each dimension, the source index of each output position, or -1 for the constant.
struct PadPlan {
  Shape out_shape;
  std::vector<std::vector<int64_t>> maps;
};

int64_t pad_source(PadMode mode, int64_t j, int64_t m) {
  if (j >= 0 && j < m) return j;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return j < 0 ? 0 : m - 1;
    case PadMode::kWrap:
      return ((j % m) + m) % m;
    case PadMode::kReflect: {
      if (m == 1) return 0;
      const int64_t period = 2 * (m - 1);
      j = ((j % period) + period) % period;
      return j < m ? j : period - j;
    }
  }
  return -1;
}

Result<PadPlan> plan_pad(const Shape& in, const FullPads& pads, PadMode mode, DType dtype) {
  const size_t rank = in.size();
  PadPlan p;
  p.out_shape.resize(rank);
  p.maps.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t n = in[d], pb = pads[d], pe = pads[rank + d];
    if (pb < -n || pe < -n || (pb < 0 && pe < 0 && -pb > n + pe)) {
      return invalid_argument("pads " + ints_to_string(pads.to_vector()) + " crop more than the " +
                              std::to_string(n) + " elements of dimension " + std::to_string(d));
    }
    const int64_t lo = pb < 0 ? -pb : 0;            // first input index kept
    const int64_t m = n - lo - (pe < 0 ? -pe : 0);  // elements kept
    const int64_t before = pb > 0 ? pb : 0, after = pe > 0 ? pe : 0;
    int64_t out = 0;
    if (__builtin_add_overflow(m, before, &out) || __builtin_add_overflow(out, after, &out)) {
      return out_of_range("pads " + ints_to_string(pads.to_vector()) + " overflow dimension " +
                          std::to_string(d));
    }
    if (m == 0 && out > 0 && mode != PadMode::kConstant) {
      return invalid_argument("cannot pad dimension " + std::to_string(d) +
                              " in this mode: no elements remain to repeat");
    }
    p.out_shape[d] = out;
  }
  RECUR_ASSIGN_OR_RETURN(const int64_t total, checked_numel(p.out_shape, dtype));
  // An empty output's other dimensions may be huge; it needs no maps.
  for (size_t d = 0; d < rank && total > 0; ++d) {
    const int64_t pb = pads[d];
    const int64_t lo = pb < 0 ? -pb : 0, before = pb > 0 ? pb : 0;
    const int64_t m = in[d] - lo - (pads[rank + d] < 0 ? -pads[rank + d] : 0);
    auto& map = p.maps[d];
    map.resize(static_cast<size_t>(p.out_shape[d]));
    for (int64_t o = 0; o < p.out_shape[d]; ++o) {
      const int64_t s = pad_source(mode, o - before, m);
      map[static_cast<size_t>(o)] = s < 0 ? -1 : lo + s;
    }
  }
  return p;
}

template <class U>
void pad_copy(const U* in, U* out, const Shape& in_shape, const PadPlan& p, U fill) {
  const int64_t total = shape_numel(p.out_shape);
  if (total == 0) return;
  if (shape_numel(in_shape) == 0) {  // every position is padding
    for (int64_t i = 0; i < total; ++i) out[i] = fill;
    return;
  }
  const size_t rank = p.out_shape.size();
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  const Shape strides = contiguous_strides(in_shape);
  const auto& inner_map = p.maps[rank - 1];
  const int64_t inner = p.out_shape[rank - 1];
  Shape idx(rank, 0);
  for (int64_t o = 0; o < total; o += inner) {
    int64_t base = 0;
    bool valid = true;
    for (size_t d = 0; d + 1 < rank; ++d) {
      const int64_t s = p.maps[d][static_cast<size_t>(idx[d])];
      if (s < 0) valid = false;
      base += s * strides[d];
    }
    U* dst = out + o;
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t s = inner_map[static_cast<size_t>(j)];
      dst[j] = valid && s >= 0 ? in[base + s] : fill;
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < p.out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

// The fill value converted to the data's dtype, as raw bits.
Result<uint64_t> fill_bits(DType dtype, double value) {
  uint64_t bits = 0;
  const bool ok = visit_dtype(kAllTypes, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (std::is_same_v<T, bool>) {
      v = value != 0;
    } else if constexpr (std::is_integral_v<T>) {
      // NaN or a value out of T's range has no C++ conversion (a fuzzer find under UBSan):
      // converted as Cast converts, truncated and wrapped, NaN to 0.
      v = float_to_int<T>(value);
    } else {
      v = static_cast<T>(static_cast<compute_t<T>>(value));
    }
    std::memcpy(&bits, &v, sizeof(T));
  });
  if (!ok) return not_implemented("dtype " + std::string(dtype_name(dtype)) + " is not supported");
  return bits;
}

class PadKernel final : public Kernel {
 public:
  PadKernel(PadMode mode, std::optional<std::vector<int64_t>> pads, double value)
      : mode_(mode), pads_(std::move(pads)), value_(value) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    Shape pads;
    std::optional<Shape> axes;
    uint64_t fill = 0;
    if (pads_) {
      pads = *pads_;
      auto f = fill_bits(x->dtype(), value_);
      if (!f.ok()) return f.status().with_context(ctx.node().describe());
      fill = *f;
    } else {
      RECUR_ASSIGN_OR_RETURN(const Tensor* p, required_input(ctx, 1));
      auto v = read_int_values(*p, "pads");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      pads = std::move(v).value();
      if (const Tensor* c = ctx.input(2); c && c->numel() > 0) {
        if (c->dtype() != x->dtype() || c->numel() != 1) {
          return ctx.error(ErrorCode::kInvalidArgument,
                           "constant_value must be one " + std::string(dtype_name(x->dtype())) +
                               ", not " + std::string(dtype_name(c->dtype())) +
                               shape_to_string(c->shape()));
        }
        std::memcpy(&fill, c->raw_data(), dtype_size(c->dtype()));
      }
      RECUR_ASSIGN_OR_RETURN(axes, optional_int_input(ctx, 3, "axes"));
    }
    auto full = full_pads(x->shape().size(), pads, axes);
    if (!full.ok()) return full.status().with_context(ctx.node().describe());
    auto plan = plan_.get(std::make_tuple(x->shape(), *full, x->dtype()),
                          [&] { return plan_pad(x->shape(), *full, mode_, x->dtype()); });
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    const PadPlan& p = **plan;
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), p.out_shape));
    visit_element_size(dtype_size(x->dtype()), [&](auto tag) {
      using U = typename decltype(tag)::type;
      U f;
      std::memcpy(&f, &fill, sizeof(U));
      pad_copy(static_cast<const U*>(x->raw_data()), static_cast<U*>(out->raw_data()), x->shape(),
               p, f);
    });
    return ok_status();
  }

 private:
  PadMode mode_;
  std::optional<std::vector<int64_t>> pads_;  // the attribute, before opset 11
  double value_;
  // The last run's plan, by input shape, pads and dtype.
  LastPlan<std::tuple<Shape, FullPads, DType>, PadPlan> plan_;
};

struct PadAttrs {
  PadMode mode;
  std::optional<std::vector<int64_t>> pads;
  double value = 0;
};

Result<PadAttrs> read_attrs(const Node& node) {
  AttrReader attrs(node);
  PadAttrs a;
  RECUR_ASSIGN_OR_RETURN(a.mode, parse_mode(attrs.get_string("mode", "constant")));
  if (a.mode == PadMode::kWrap && node.opset < 19) {
    return invalid_model("mode 'wrap' needs opset 19, this is " + std::to_string(node.opset));
  }
  if (node.opset < 11) {
    const char* name = node.opset < 2 ? "paddings" : "pads";
    if (!attrs.has(name)) return invalid_model(node.describe() + ": missing attribute " + name);
    a.pads = attrs.get_ints(name);
    a.value = attrs.get_float("value", 0.0f);
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  return a;
}

Result<std::unique_ptr<Kernel>> create_pad(CompileContext& ctx) {
  auto a = read_attrs(ctx.node());
  if (!a.ok()) return a.status().with_context(ctx.node().describe());
  return std::make_unique<PadKernel>(a->mode, a->pads, a->value);
}

Status infer_pad(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  auto a = read_attrs(ctx.node());
  if (!a.ok()) return ctx.error(a.status().message());
  if (!in.shape) {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    return ok_status();
  }
  std::optional<std::vector<int64_t>> pads = a->pads, axes;
  bool known = true;
  if (!pads) {
    pads = constant_ints(ctx, 1);
    known = pads.has_value();
    if (ctx.has_input(3)) known = known && (axes = constant_ints(ctx, 3)).has_value();
  }
  const size_t rank = in.shape->size();
  std::vector<Dim> out = unknown_dims(rank);
  if (known) {
    auto full = full_pads(rank, *pads, axes);
    if (!full.ok()) return ctx.error(full.status().message());
    for (size_t d = 0; d < rank; ++d) {
      const Dim& x = (*in.shape)[d];
      int64_t extra = 0;
      const bool fits = !__builtin_add_overflow((*full)[d], (*full)[rank + d], &extra);
      if ((*full)[d] == 0 && (*full)[rank + d] == 0) {
        out[d] = x;
      } else if (x.is_fixed() && fits && !__builtin_add_overflow(x.value, extra, &out[d].value)) {
        if (out[d].value < 0 || (*full)[d] < -x.value || (*full)[rank + d] < -x.value) {
          return ctx.error("pads " + ints_to_string(*full) + " crop more than the " +
                           std::to_string(x.value) + " elements of dimension " + std::to_string(d));
        }
        out[d].symbol.clear();
      } else {
        out[d] = Dim{};
      }
    }
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_pad(Registrar& r) {
  r.add({.op_type = "Pad", .since = 1, .create = create_pad}, infer_pad);
}

}  // namespace recur::reference
