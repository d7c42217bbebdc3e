// cuda-generic's data movement: Transpose, Expand, Slice, Pad, Concat, Split, Gather,
// ScatterElements, ConstantOfShape, Range, and the views (Reshape, Squeeze, Unsqueeze, Flatten,
// Identity, inference Dropout) that share their input's device memory.
#include <cmath>
#include <cstring>

#include "providers/cuda/ops/gpu_kernel.h"

namespace recur::cuda::ops {

namespace {

bool movable(DType t) {
  const size_t e = dtype_size(t);
  return t != DType::kUndefined && t != DType::kString && (e == 1 || e == 2 || e == 4 || e == 8);
}

Claim claim_movable(const Node& n, const Graph& g) {
  const DType t = input_dtype(n, g, 0);
  if (!movable(t)) {
    return Claim::decline("input 0 is " +
                          std::string(t == DType::kUndefined ? "of unknown type" : dtype_name(t)) +
                          ": the GPU kernels move 1, 2, 4 and 8-byte elements");
  }
  return Claim::accept();
}

Status strided_to(KernelContext& ctx, GpuRun& run, const Tensor& x, const Strided& s, Tensor& y) {
  if (y.numel() == 0) return ok_status();
  RECUR_LAUNCH_CHECK(ctx, launch_strided_copy(dtype_size(x.dtype()), s, x.raw_data(), y.raw_data(),
                                              y.numel(), run.stream));
  return ok_status();
}

class TransposeKernel final : public GpuKernel {
 public:
  explicit TransposeKernel(std::vector<int64_t> perm) : perm_(std::move(perm)) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    Shape out;
    auto s = transpose_strided(x->shape(), perm_, &out);
    if (!s.ok()) return s.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), out));
    return strided_to(ctx, run, *x, *s, *y);
  }

 private:
  std::vector<int64_t> perm_;
};

class ExpandKernel final : public GpuKernel {
 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(auto shape, host_ints(ctx, 1));
    if (!shape) return ctx.error(ErrorCode::kInvalidArgument, "the shape input is missing");
    auto out = broadcast_shape({x->shape(), *shape});
    if (!out.ok()) return out.status().with_context(ctx.node().describe());
    auto s = broadcast_strided(x->shape(), *out);
    if (!s.ok()) return s.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), *out));
    return strided_to(ctx, run, *x, *s, *y);
  }
};

class SliceKernel final : public GpuKernel {
 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    std::vector<int64_t> starts, ends;
    std::optional<std::vector<int64_t>> axes, steps;
    if (ctx.node().opset < 10) {
      AttrReader a(ctx.node());
      starts = a.get_ints("starts");
      ends = a.get_ints("ends");
      if (a.has("axes")) axes = a.get_ints("axes");
      RECUR_RETURN_IF_ERROR(a.status());
    } else {
      RECUR_ASSIGN_OR_RETURN(auto s, host_ints(ctx, 1));
      RECUR_ASSIGN_OR_RETURN(auto e, host_ints(ctx, 2));
      if (!s || !e) return ctx.error(ErrorCode::kInvalidArgument, "starts or ends is missing");
      starts = *s;
      ends = *e;
      RECUR_ASSIGN_OR_RETURN(axes, host_ints(ctx, 3));
      RECUR_ASSIGN_OR_RETURN(steps, host_ints(ctx, 4));
    }
    Shape out;
    auto s = slice_strided(x->shape(), starts, ends, axes, steps, &out);
    if (!s.ok()) return s.status().with_context(ctx.node().describe());
    if (out == x->shape() && s->contiguous && s->offset == 0) return ctx.set_output(0, *x);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), out));
    return strided_to(ctx, run, *x, *s, *y);
  }
};

// The fill value of a Pad before opset 11 (the `value` attribute, a float), as the bits of X's
// dtype; those opsets define Pad for float16, float32 and float64 only.
Result<uint64_t> pad_attr_fill(DType t, float value) {
  uint64_t bits = 0;
  switch (t) {
    case DType::kFloat32:
      std::memcpy(&bits, &value, sizeof value);
      return bits;
    case DType::kFloat64: {
      const double v = value;
      std::memcpy(&bits, &v, sizeof v);
      return bits;
    }
    case DType::kFloat16: {
      const Float16 v(value);
      std::memcpy(&bits, &v, sizeof v);
      return bits;
    }
    default:
      return invalid_argument("Pad before opset 11 takes float16, float32 or float64, not " +
                              std::string(dtype_name(t)));
  }
}

class PadKernel final : public GpuKernel {
 public:
  PadKernel(int32_t mode, std::optional<std::vector<int64_t>> pads, float value)
      : mode_(mode), pads_(std::move(pads)), value_(value) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    std::vector<int64_t> pads;
    std::optional<std::vector<int64_t>> axes;
    uint64_t fill = 0;
    if (pads_) {
      pads = *pads_;
      auto f = pad_attr_fill(x->dtype(), value_);
      if (!f.ok()) return f.status().with_context(ctx.node().describe());
      fill = *f;
    } else {
      RECUR_ASSIGN_OR_RETURN(auto p, host_ints(ctx, 1));
      if (!p) return ctx.error(ErrorCode::kInvalidArgument, "pads is missing");
      pads = std::move(*p);
      if (const Tensor* c = ctx.input(2); c && c->numel() > 0) {
        if (c->dtype() != x->dtype() || c->numel() != 1 || !c->is_cpu()) {
          return ctx.error(ErrorCode::kInvalidArgument,
                           "constant_value must be one " + std::string(dtype_name(x->dtype())) +
                               ", not " + std::string(dtype_name(c->dtype())) +
                               shape_to_string(c->shape()));
        }
        std::memcpy(&fill, c->raw_data(), dtype_size(c->dtype()));
      }
      RECUR_ASSIGN_OR_RETURN(axes, host_ints(ctx, 3));
    }
    Shape out;
    auto g = pad_plan(x->shape(), pads, axes, mode_, &out);
    if (!g.ok()) return g.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), out));
    if (y->numel() == 0) return ok_status();
    RECUR_LAUNCH_CHECK(ctx, launch_pad(dtype_size(x->dtype()), *g, x->raw_data(), y->raw_data(),
                                       fill, y->numel(), run.stream));
    return ok_status();
  }

 private:
  int32_t mode_;
  std::optional<std::vector<int64_t>> pads_;  // the attribute, before opset 11
  float value_;
};

Result<std::unique_ptr<Kernel>> create_pad(CompileContext& ctx) {
  AttrReader a(ctx.node());
  const std::string mode = a.get_string("mode", "constant");
  std::optional<std::vector<int64_t>> pads;
  float value = 0.0f;
  if (ctx.node().opset < 11) {
    const char* name = ctx.node().opset < 2 ? "paddings" : "pads";
    if (!a.has(name))
      return ctx.error(ErrorCode::kInvalidModel, "missing attribute " + std::string(name));
    pads = a.get_ints(name);
    value = a.get_float("value", 0.0f);
  }
  RECUR_RETURN_IF_ERROR(a.status());
  const int32_t m = mode == "constant"  ? kPadConstant
                    : mode == "reflect" ? kPadReflect
                    : mode == "edge"    ? kPadEdge
                    : mode == "wrap"    ? kPadWrap
                                        : -1;
  if (m < 0 || (m == kPadWrap && ctx.node().opset < 19)) {
    return ctx.error(ErrorCode::kInvalidModel, "mode '" + mode + "' is not a Pad mode of opset " +
                                                   std::to_string(ctx.node().opset));
  }
  return std::make_unique<PadKernel>(m, std::move(pads), value);
}

Status copy_blocks(KernelContext& ctx, GpuRun& run, const BlockCopy& b, size_t e, const void* src,
                   void* dst) {
  if (b.width == 0 || b.outer == 0) return ok_status();
  const char* s = static_cast<const char*>(src) + static_cast<size_t>(b.src_offset) * e;
  char* d = static_cast<char*>(dst) + static_cast<size_t>(b.dst_offset) * e;
  const size_t width = static_cast<size_t>(b.width) * e;
  if (b.outer == 1) {
    RECUR_CUDA_CHECK(cudaMemcpyAsync(d, s, width, cudaMemcpyDeviceToDevice, run.stream));
    return ok_status();
  }
  const cudaError_t err = cudaMemcpy2DAsync(
      d, static_cast<size_t>(b.dst_pitch) * e, s, static_cast<size_t>(b.src_pitch) * e, width,
      static_cast<size_t>(b.outer), cudaMemcpyDeviceToDevice, run.stream);
  if (err == cudaSuccess) return ok_status();
  (void)cudaGetLastError();  // a pitch beyond the 2D copy's limit: row by row
  for (int64_t o = 0; o < b.outer; ++o) {
    RECUR_CUDA_CHECK(cudaMemcpyAsync(d + static_cast<size_t>(o * b.dst_pitch) * e,
                                     s + static_cast<size_t>(o * b.src_pitch) * e, width,
                                     cudaMemcpyDeviceToDevice, run.stream));
  }
  return ok_status();
}

class ConcatKernel final : public GpuKernel {
 public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    std::vector<const Tensor*> ins;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) continue;
      if (!ins.empty() && t->dtype() != ins[0]->dtype()) {
        return ctx.error(ErrorCode::kInvalidArgument, "inputs differ in type");
      }
      ins.push_back(t);
      shapes.push_back(t->shape());
    }
    Shape out;
    auto blocks = concat_blocks(shapes, axis_, &out);
    if (!blocks.ok()) return blocks.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, ins[0]->dtype(), out));
    const size_t e = dtype_size(y->dtype());
    for (size_t k = 0; k < ins.size(); ++k) {
      RECUR_RETURN_IF_ERROR(
          copy_blocks(ctx, run, (*blocks)[k], e, ins[k]->raw_data(), y->raw_data()));
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

class SplitKernel final : public GpuKernel {
 public:
  SplitKernel(int64_t axis, std::vector<int64_t> split) : axis_(axis), split_(std::move(split)) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    std::vector<int64_t> sizes = split_;
    if (ctx.node().opset >= 13) {
      RECUR_ASSIGN_OR_RETURN(auto s, host_ints(ctx, 1));
      if (s) sizes = *s;
    }
    const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
    RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis_, x->rank(), "axis"));
    if (sizes.empty()) {
      // Equal parts; the last is smaller when the dimension does not divide (opset 18).
      const int64_t dim = x->dim(a);
      const int64_t part = (dim + n_out - 1) / std::max<int64_t>(n_out, 1);
      for (int64_t k = 0; k < n_out; ++k) {
        sizes.push_back(std::max<int64_t>(0, std::min(part, dim - k * part)));
      }
      if (ctx.node().opset < 18 && dim % std::max<int64_t>(n_out, 1) != 0) {
        return ctx.error(ErrorCode::kInvalidArgument, "dimension " + std::to_string(dim) +
                                                          " does not split into " +
                                                          std::to_string(n_out) + " equal parts");
      }
    }
    if (static_cast<int64_t>(sizes.size()) != n_out) {
      return ctx.error(
          ErrorCode::kInvalidArgument,
          std::to_string(sizes.size()) + " split sizes for " + std::to_string(n_out) + " outputs");
    }
    std::vector<Shape> outs;
    auto blocks = split_blocks(x->shape(), a, sizes, &outs);
    if (!blocks.ok()) return blocks.status().with_context(ctx.node().describe());
    const size_t e = dtype_size(x->dtype());
    for (size_t k = 0; k < outs.size(); ++k) {
      RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, k, x->dtype(), outs[k]));
      RECUR_RETURN_IF_ERROR(copy_blocks(ctx, run, (*blocks)[k], e, x->raw_data(), y->raw_data()));
    }
    return ok_status();
  }

 private:
  int64_t axis_;
  std::vector<int64_t> split_;
};

class GatherKernel final : public GpuKernel {
 public:
  explicit GatherKernel(int64_t axis) : axis_(axis) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* data, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* idx, need_input(ctx, 1));
    if (idx->dtype() != DType::kInt32 && idx->dtype() != DType::kInt64) {
      return ctx.error(ErrorCode::kInvalidArgument, "indices must be int32 or int64");
    }
    Shape out;
    int64_t outer = 0;
    auto g = gather_plan(data->shape(), idx->shape(), axis_, &out, &outer);
    if (!g.ok()) return g.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, data->dtype(), out));
    if (y->numel() == 0) return ok_status();
    RECUR_LAUNCH_CHECK(
        ctx, launch_gather(dtype_size(data->dtype()), idx->dtype() == DType::kInt64, *g,
                           data->raw_data(), idx->raw_data(), y->raw_data(), y->numel(), run.flag,
                           run.site("an index is out of range"), run.stream));
    return ok_status();
  }

 private:
  int64_t axis_;
};

class ScatterElementsKernel final : public GpuKernel {
 public:
  explicit ScatterElementsKernel(int64_t axis) : axis_(axis) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* data, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* idx, need_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* upd, need_input(ctx, 2));
    if (idx->shape() != upd->shape() || idx->rank() != data->rank() ||
        upd->dtype() != data->dtype() || data->rank() > kMaxRank ||
        (idx->dtype() != DType::kInt32 && idx->dtype() != DType::kInt64)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "indices and updates must have one shape, the rank of data, and int "
                       "indices");
    }
    RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis_, data->rank(), "axis"));
    for (int64_t d = 0; d < data->rank(); ++d) {
      if (d != a && idx->dim(d) > data->dim(d)) {
        return ctx.error(ErrorCode::kInvalidArgument, "indices " + shape_to_string(idx->shape()) +
                                                          " exceed data " +
                                                          shape_to_string(data->shape()));
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, data->dtype(), data->shape()));
    if (y->nbytes()) {
      RECUR_CUDA_CHECK(cudaMemcpyAsync(y->raw_data(), data->raw_data(), y->nbytes(),
                                       cudaMemcpyDeviceToDevice, run.stream));
    }
    ScatterArgs g;
    g.rank = static_cast<int32_t>(data->rank());
    g.axis = static_cast<int32_t>(a);
    g.axis_dim = data->dim(a);
    int64_t stride = 1;
    for (int64_t d = data->rank() - 1; d >= 0; --d) {
      g.idx_dims[d] = idx->dim(d);
      g.data_strides[d] = stride;
      stride *= data->dim(d);
    }
    if (idx->numel() == 0) return ok_status();
    RECUR_LAUNCH_CHECK(
        ctx, launch_scatter(dtype_size(data->dtype()), idx->dtype() == DType::kInt64, g,
                            idx->raw_data(), upd->raw_data(), y->raw_data(), idx->numel(), run.flag,
                            run.site("an index is out of range"), run.stream));
    return ok_status();
  }

 private:
  int64_t axis_;
};

class ConstantOfShapeKernel final : public GpuKernel {
 public:
  explicit ConstantOfShapeKernel(Tensor value) : value_(std::move(value)) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(auto shape, host_ints(ctx, 0));
    if (!shape) return ctx.error(ErrorCode::kInvalidArgument, "the shape input is missing");
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, value_.dtype(), *shape));
    if (y->numel() == 0) return ok_status();
    uint64_t bits = 0;
    std::memcpy(&bits, value_.raw_data(), dtype_size(value_.dtype()));
    if (bits == 0) {
      RECUR_CUDA_CHECK(cudaMemsetAsync(y->raw_data(), 0, y->nbytes(), run.stream));
      return ok_status();
    }
    RECUR_LAUNCH_CHECK(
        ctx, launch_fill(dtype_size(value_.dtype()), bits, y->raw_data(), y->numel(), run.stream));
    return ok_status();
  }

 private:
  Tensor value_;
};

class RangeKernel final : public GpuKernel {
 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* st, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const double start, host_scalar(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const double limit, host_scalar(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const double delta, host_scalar(ctx, 2));
    if (delta == 0) return ctx.error(ErrorCode::kInvalidArgument, "delta is 0");
    const double n = std::ceil((limit - start) / delta);
    if (!(n < 1e12)) return ctx.error(ErrorCode::kInvalidArgument, "Range would be too long");
    const int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, st->dtype(), {count}));
    RECUR_LAUNCH_CHECK(
        ctx, launch_range(st->dtype(), start, delta, static_cast<long long>(start),
                          static_cast<long long>(delta), y->raw_data(), count, run.stream));
    return ok_status();
  }
};

// --- Views -------------------------------------------------------------------------------------

// Output 0 shares input 0's memory with another shape; `shape_of` computes the shape.
class ViewKernel final : public Kernel {
 public:
  using ShapeFn = std::function<Result<Shape>(const KernelContext&, const Tensor&)>;
  explicit ViewKernel(ShapeFn fn) : fn_(std::move(fn)) {}
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    auto shape = fn_(ctx, *x);
    if (!shape.ok()) return shape.status().with_context(ctx.node().describe());
    if (shape_numel(*shape) != x->numel()) {
      return ctx.error(ErrorCode::kInvalidArgument, "cannot view " + shape_to_string(x->shape()) +
                                                        " as " + shape_to_string(*shape));
    }
    return ctx.set_output(0, x->reshaped(*shape));
  }

 private:
  ShapeFn fn_;
};

Result<Shape> reshape_to(const Shape& in, const std::vector<int64_t>& spec, bool allowzero) {
  Shape out(spec.size());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (v == 0 && !allowzero) {
      if (i >= in.size())
        return invalid_argument("shape " + shape_to_string(spec) + " copies a missing dimension");
      v = in[i];
    }
    if (v == -1) {
      if (infer >= 0) return invalid_argument("shape " + shape_to_string(spec) + " has two -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (v < 0) return invalid_argument("shape " + shape_to_string(spec) + " has a negative size");
    out[i] = v;
    if (v > 0 && known > INT64_MAX / v) return invalid_argument("shape is too large");
    known *= v;
  }
  const int64_t total = shape_numel(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      return invalid_argument("cannot reshape " + shape_to_string(in) + " to " +
                              shape_to_string(spec));
    }
    out[static_cast<size_t>(infer)] = total / known;
  }
  return out;
}

Result<std::vector<int64_t>> view_axes(const KernelContext& ctx, size_t input) {
  if (ctx.node().opset >= 13) {
    RECUR_ASSIGN_OR_RETURN(auto a, host_ints(ctx, input));
    return a ? *a : std::vector<int64_t>{};
  }
  AttrReader r(ctx.node());
  auto axes = r.get_ints("axes");
  RECUR_RETURN_IF_ERROR(r.status());
  return axes;
}

void add_view(KernelRegistry& r, const char* op, int since, ViewKernel::ShapeFn fn,
              std::vector<size_t> host = {}, ClaimFn claim = nullptr) {
  r.add({.op_type = op,
         .since = since,
         .create = [fn](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<ViewKernel>(fn);
         },
         .claim = claim,
         .host_inputs = std::move(host)});
}

template <class K, class... A>
KernelFactory factory(A... args) {
  return [=](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
    return std::make_unique<K>(args...);
  };
}

}  // namespace

void register_movement_kernels(KernelRegistry& r) {
  r.add({.op_type = "Transpose",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           auto perm = a.get_ints("perm");
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<TransposeKernel>(std::move(perm));
         },
         .claim = claim_movable});
  r.add({.op_type = "Expand",
         .since = 8,
         .create = factory<ExpandKernel>(),
         .claim = claim_movable,
         .host_inputs = {1}});
  r.add({.op_type = "Slice",
         .since = 1,
         .create = factory<SliceKernel>(),
         .claim = claim_movable,
         .host_inputs = {1, 2, 3, 4}});
  r.add({.op_type = "Pad",
         .since = 1,
         .create = create_pad,
         .claim =
             [](const Node& n, const Graph& g) {
               // Before opset 11 the fill is a float attribute, which pad_attr_fill converts
               // for the float types only (the reference converts it for the others).
               if (n.opset < 11 && !is_float_type(input_dtype(n, g, 0))) {
                 return Claim::decline(
                     "a Pad before opset 11 on a type other than float16, "
                     "float32 or float64 is not on the GPU");
               }
               return claim_movable(n, g);
             },
         .host_inputs = {1, 2, 3}});
  r.add({.op_type = "Concat",
         .since = 4,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.require_int("axis");
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<ConcatKernel>(axis);
         },
         .claim = claim_movable});
  r.add({.op_type = "Split",
         .since = 2,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.get_int("axis", 0);
           auto split = a.get_ints("split");
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<SplitKernel>(axis, std::move(split));
         },
         .claim = claim_movable,
         .host_inputs = {1}});
  r.add({.op_type = "Gather",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.get_int("axis", 0);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<GatherKernel>(axis);
         },
         .claim = claim_movable});
  r.add({.op_type = "ScatterElements",
         .since = 11,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.get_int("axis", 0);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<ScatterElementsKernel>(axis);
         },
         .claim =
             [](const Node& n, const Graph& g) {
               const Attribute* red = n.attr("reduction");
               if (red && red->s != "none") {
                 return Claim::decline("reduction=" + red->s + " is not on the GPU");
               }
               return claim_movable(n, g);
             }});
  r.add({.op_type = "ConstantOfShape",
         .since = 9,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const Tensor* v = a.get_tensor("value");
           RECUR_RETURN_IF_ERROR(a.status());
           Tensor value = v ? *v : Tensor::from_vector<float>({1}, {0.0f});
           if (value.numel() != 1 || !movable(value.dtype())) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "value must be one element of a numeric type");
           }
           return std::make_unique<ConstantOfShapeKernel>(value.clone());
         },
         .host_inputs = {0}});
  r.add({.op_type = "Range",
         .since = 11,
         .create = factory<RangeKernel>(),
         .claim =
             claim_input_types(0, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}),
         .host_inputs = {0, 1, 2}});

  add_view(r, "Reshape", 5,
           [](const KernelContext& ctx, const Tensor& x) -> Result<Shape> {
             RECUR_ASSIGN_OR_RETURN(auto spec, host_ints(ctx, 1));
             if (!spec) return invalid_argument("the shape input is missing");
             AttrReader a(ctx.node());
             const bool allowzero = a.get_int("allowzero", 0) != 0;
             return reshape_to(x.shape(), *spec, allowzero);
           },
           {1});
  add_view(r, "Flatten", 1, [](const KernelContext& ctx, const Tensor& x) -> Result<Shape> {
    AttrReader a(ctx.node());
    return flatten_shape(x.shape(), a.get_int("axis", 1));
  });
  add_view(r, "Squeeze", 1,
           [](const KernelContext& ctx, const Tensor& x) -> Result<Shape> {
             RECUR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, view_axes(ctx, 1));
             std::vector<bool> drop(x.shape().size(), false);
             for (int64_t a : axes) {
               RECUR_ASSIGN_OR_RETURN(const int64_t ax, axis_in(a, x.rank(), "axis"));
               if (x.dim(ax) != 1) {
                 return invalid_argument("cannot squeeze axis " + std::to_string(a) + " of " +
                                         shape_to_string(x.shape()));
               }
               drop[static_cast<size_t>(ax)] = true;
             }
             Shape out;
             for (int64_t d = 0; d < x.rank(); ++d) {
               const bool gone = axes.empty() ? x.dim(d) == 1 : drop[static_cast<size_t>(d)];
               if (!gone) out.push_back(x.dim(d));
             }
             return out;
           },
           {1});
  add_view(r, "Unsqueeze", 1,
           [](const KernelContext& ctx, const Tensor& x) -> Result<Shape> {
             RECUR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, view_axes(ctx, 1));
             const int64_t rank = x.rank() + static_cast<int64_t>(axes.size());
             std::vector<bool> ins(static_cast<size_t>(rank), false);
             for (int64_t a : axes) {
               RECUR_ASSIGN_OR_RETURN(const int64_t ax, axis_in(a, rank, "axis"));
               if (ins[static_cast<size_t>(ax)]) return invalid_argument("repeated axis");
               ins[static_cast<size_t>(ax)] = true;
             }
             Shape out;
             size_t k = 0;
             for (int64_t d = 0; d < rank; ++d) {
               out.push_back(ins[static_cast<size_t>(d)] ? 1 : x.shape()[k++]);
             }
             return out;
           },
           {1});
  add_view(r, "Identity", 1,
           [](const KernelContext&, const Tensor& x) -> Result<Shape> { return x.shape(); });
  add_view(
      r, "Dropout", 1,
      [](const KernelContext&, const Tensor& x) -> Result<Shape> { return x.shape(); }, {1, 2},
      [](const Node& n, const Graph& g) {
        if (n.has_output(1) && !g.value(n.outputs[1]).consumers.empty()) {
          return Claim::decline("the mask output is used");
        }
        if (n.has_output(1) && g.value(n.outputs[1]).is_graph_output) {
          return Claim::decline("the mask output is a graph output");
        }
        if (n.has_input(2)) {
          const Tensor* t = g.constant(n.inputs[2]);
          if (!t || t->dtype() != DType::kBool || t->data<bool>()[0]) {
            return Claim::decline("training_mode is not a constant false");
          }
        }
        return Claim::accept();
      });
}

}  // namespace recur::cuda::ops
