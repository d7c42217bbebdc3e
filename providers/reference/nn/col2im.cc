// Col2Im (opset 18): sums column blocks [N, C * prod(block_shape), L] back into an image
// [N, C, image_shape...], the adjoint of the im2col a convolution with the same window uses.
// Floating types only (the backend tests and every known use); others are refused by name.
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

// The window of the convolution whose im2col gives the input: image and block spatial sizes.
Result<Window> col2im_window(const WindowAttrs& attrs, const std::vector<int64_t>& image,
                             const std::vector<int64_t>& block) {
  if (image.size() != block.size() || image.empty()) {
    return invalid_argument("image_shape " + shape_to_string(image) + " and block_shape " +
                            shape_to_string(block) + " must have the same, positive, length");
  }
  for (int64_t d : image) {
    if (d <= 0) return invalid_argument("image_shape " + shape_to_string(image) + " is invalid");
  }
  return resolve_window(attrs, image, block);
}

class Col2ImKernel final : public Kernel {
 public:
  explicit Col2ImKernel(WindowAttrs attrs) : attrs_(std::move(attrs)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* is, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* bs, required_input(ctx, 2));
    auto image = read_int_values(*is, "image_shape");
    if (!image.ok()) return image.status().with_context(ctx.node().describe());
    auto block = read_int_values(*bs, "block_shape");
    if (!block.ok()) return block.status().with_context(ctx.node().describe());
    auto w = col2im_window(attrs_, *image, *block);
    if (!w.ok()) return w.status().with_context(ctx.node().describe());
    if (x->rank() != 3) {
      return ctx.error(
          ErrorCode::kInvalidArgument,
          "input must be [N, C * prod(block_shape), L], not " + shape_to_string(x->shape()));
    }
    const int64_t n = x->shape()[0], k = w->kernel_size(), l = w->out_size();
    if (x->shape()[1] % k != 0 || x->shape()[2] != l) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input " + shape_to_string(x->shape()) + " does not hold " +
                           std::to_string(k) + "-element blocks at " + std::to_string(l) +
                           " positions (block_shape " + shape_to_string(*block) + ")");
    }
    const int64_t c = x->shape()[1] / k;
    Shape out_shape{n, c};
    out_shape.insert(out_shape.end(), image->begin(), image->end());
    RECUR_ASSIGN_OR_RETURN(int64_t numel, checked_numel(out_shape, "output"));
    auto xs = read_as_double(*x, "input");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    std::vector<double> ys(static_cast<size_t>(numel), 0.0);
    const int64_t image_size = w->in_size();
    for (int64_t b = 0; b < n; ++b) {
      col2im_add(xs->data() + b * c * k * l, c, *w, ys.data() + b * c * image_size);
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  WindowAttrs attrs_;
};

Result<std::unique_ptr<Kernel>> create_col2im(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(WindowAttrs attrs, read_window_attrs(ctx.node()));
  return std::make_unique<Col2ImKernel>(std::move(attrs));
}

Status infer_col2im(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  TypeInfo out{in.dtype, std::nullopt};
  // The output's rank comes from image_shape's length, its spatial dims from its values.
  if (const Tensor* image = ctx.input_value(1)) {
    auto v = read_int_values(*image, "image_shape");
    if (!v.ok()) return ctx.error(v.status().message());
    std::vector<Dim> dims(2 + v->size());
    if (in.shape && in.shape->size() == 3) dims[0] = (*in.shape)[0];
    for (size_t i = 0; i < v->size(); ++i) dims[2 + i] = Dim{(*v)[i], {}};
    out.shape = std::move(dims);
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_col2im(Registrar& r) {
  r.add({.op_type = "Col2Im", .since = 18, .create = create_col2im}, infer_col2im);
}

}  // namespace recur::reference
