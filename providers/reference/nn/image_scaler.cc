// ImageScaler, an experimental operator of opsets before 10 that ONNX Runtime still runs in old
// image models: y[n, c, h, w] = scale * x[n, c, h, w] + bias[c] over an NCHW tensor.
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class ImageScalerKernel final : public Kernel {
 public:
  ImageScalerKernel(double scale, std::vector<float> bias)
      : scale_(scale), bias_(std::move(bias)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 4) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input must be 4-D (NCHW), not " + shape_to_string(x->shape()));
    }
    const int64_t c = x->dim(1);
    if (!bias_.empty() && static_cast<int64_t>(bias_.size()) != c) {
      return ctx.error(ErrorCode::kInvalidArgument, "bias has " + std::to_string(bias_.size()) +
                                                        " values for " + std::to_string(c) +
                                                        " channels");
    }
    const int64_t plane = x->dim(2) * x->dim(3);
    RECUR_ASSIGN_OR_RETURN(std::vector<double> v, read_as_double(*x, "input"));
    for (size_t i = 0; i < v.size(); ++i) {
      const auto ch = static_cast<size_t>((static_cast<int64_t>(i) / plane) % c);
      v[i] = scale_ * v[i] + (bias_.empty() ? 0.0 : static_cast<double>(bias_[ch]));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    write_from_double(v, *y);
    return ok_status();
  }

 private:
  double scale_;
  std::vector<float> bias_;
};

}  // namespace

void register_image_scaler(Registrar& r) {
  r.add({.op_type = "ImageScaler",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const double scale = a.get_float("scale", 1.0f);
           std::vector<float> bias = a.get_floats("bias");
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<ImageScalerKernel>(scale, std::move(bias));
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
