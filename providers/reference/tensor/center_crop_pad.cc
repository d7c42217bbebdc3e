// CenterCropPad (opset 18): crops or zero-pads the `axes` dimensions to `shape`, keeping the
// centre. A crop starts at floor((in - out) / 2); a pad puts the odd pixel on the right.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

// The target size of every dimension: the input's, except `axes`, which take `shape`.
Result<Shape> target_shape(const Shape& in, const std::vector<int64_t>& shape,
                           const std::optional<std::vector<int64_t>>& axes) {
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> ax;
  if (axes) {
    for (int64_t a : *axes) {
      RECUR_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, "axes"));
      ax.push_back(n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) ax.push_back(d);
  }
  if (shape.size() != ax.size()) {
    return invalid_argument("shape " + ints_to_string(shape) + " has " +
                            std::to_string(shape.size()) + " entries for " +
                            std::to_string(ax.size()) + " axes");
  }
  Shape out = in;
  for (size_t i = 0; i < ax.size(); ++i) {
    if (shape[i] < 0) return invalid_argument("shape " + ints_to_string(shape) + " is negative");
    out[static_cast<size_t>(ax[i])] = shape[i];
  }
  return out;
}

class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(std::optional<std::vector<int64_t>> axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1));
    auto shape = read_int_values(*s, "shape");
    if (!shape.ok()) return shape.status().with_context(ctx.node().describe());
    auto out_shape = target_shape(x->shape(), *shape, axes_);
    if (!out_shape.ok()) return out_shape.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, allocate_checked(ctx, 0, x->dtype(), *out_shape));
    const size_t esize = dtype_size(x->dtype());
    std::memset(y->raw_data(), 0, static_cast<size_t>(y->numel()) * esize);
    if (y->numel() == 0 || x->numel() == 0) return ok_status();
    if (x->rank() == 0) {
      copy_bytes(y->raw_data(), x->raw_data(), esize);
      return ok_status();
    }
    // The overlap of input and output, as a box in each: its size and its two corners.
    const Shape& in = x->shape();
    const size_t rank = in.size();
    Shape box(rank);
    std::vector<int64_t> in_at(rank), out_at(rank);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t o = (*out_shape)[d];
      box[d] = std::min(in[d], o);
      in_at[d] = in[d] > o ? (in[d] - o) / 2 : 0;
      out_at[d] = o > in[d] ? (o - in[d]) / 2 : 0;
    }
    const Shape in_strides = contiguous_strides(in);
    const Shape out_strides = contiguous_strides(*out_shape);
    const auto* src = static_cast<const char*>(x->raw_data());
    auto* dst = static_cast<char*>(y->raw_data());
    // One row (the last dimension of the box) at a time.
    const size_t row = static_cast<size_t>(box[rank - 1]) * esize;
    std::vector<int64_t> idx(rank, 0);
    const int64_t rows = dims_product(box, 0, rank - 1);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t io = 0, oo = 0;
      for (size_t d = 0; d < rank; ++d) {
        io += (in_at[d] + idx[d]) * in_strides[d];
        oo += (out_at[d] + idx[d]) * out_strides[d];
      }
      copy_bytes(dst + static_cast<size_t>(oo) * esize, src + static_cast<size_t>(io) * esize, row);
      for (size_t d = rank - 1; d-- > 0;) {
        if (++idx[d] < box[d]) break;
        idx[d] = 0;
      }
    }
    return ok_status();
  }

 private:
  std::optional<std::vector<int64_t>> axes_;
};

Result<std::unique_ptr<Kernel>> create_center_crop_pad(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::optional<std::vector<int64_t>> axes;
  if (attrs.has("axes")) axes = attrs.get_ints("axes");
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<CenterCropPadKernel>(std::move(axes));
}

Status infer_center_crop_pad(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    return ok_status();
  }
  AttrReader attrs(ctx.node());
  std::optional<std::vector<int64_t>> axes;
  if (attrs.has("axes")) axes = attrs.get_ints("axes");
  RECUR_RETURN_IF_ERROR(attrs.status());
  std::vector<Dim> out = *in.shape;
  // -1 marks the dimensions CenterCropPad keeps; `shape` may not be negative.
  const Shape kept(out.size(), -1);
  if (auto shape = constant_ints(ctx, 1)) {
    auto target = target_shape(kept, *shape, axes);
    if (!target.ok()) return ctx.error(target.status().message());
    for (size_t d = 0; d < out.size(); ++d) {
      if ((*target)[d] >= 0) out[d] = Dim{(*target)[d], {}};
    }
  } else {
    std::vector<int64_t> unknown(axes ? axes->size() : out.size(), 0);
    auto target = target_shape(kept, unknown, axes);
    if (!target.ok()) return ctx.error(target.status().message());
    for (size_t d = 0; d < out.size(); ++d) {
      if ((*target)[d] >= 0) out[d] = Dim{};
    }
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_center_crop_pad(Registrar& r) {
  r.add({.op_type = "CenterCropPad", .since = 18, .create = create_center_crop_pad},
        infer_center_crop_pad);
}

}  // namespace recur::reference
