// Upsample (opset 7: scales attribute; opsets 9 and 10: scales input). Nearest neighbour
// truncates the asymmetric coordinate x / scale; linear interpolates it.
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

Result<ResizeParams::Mode> parse_resize_mode(const Node& node, const std::string& m,
                                             bool allow_cubic);  // resize.cc
Status infer_resize_like(InferContext& ctx, size_t scales_index, size_t sizes_index,
                         const std::vector<float>& attr_scales);  // resize.cc

namespace {

class UpsampleKernel final : public Kernel {
 public:
  UpsampleKernel(ResizeParams p, std::vector<double> scales)
      : p_(std::move(p)), scales_(std::move(scales)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    std::vector<double> scales = scales_;
    if (ctx.node().opset >= 9) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1));
      if (s->dtype() != DType::kFloat32) {
        return invalid_argument("scales must be float32, not " + dtype_str(s->dtype()));
      }
      RECUR_ASSIGN_OR_RETURN(scales, read_as_double(*s, "scales"));
    }
    RECUR_ASSIGN_OR_RETURN(Shape out, resize_shape_from_scales(x->shape(), scales));
    return resize_into(ctx, p_, *x, scales, out, {});
  }

 private:
  ResizeParams p_;
  std::vector<double> scales_;
};

}  // namespace

void register_upsample(Registrar& r) {
  r.add({.op_type = "Upsample",
         .since = 7,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const std::string mode = r.get_string("mode", "nearest");
           std::vector<float> attr_scales;
           if (ctx.opset() < 9) attr_scales = r.get_floats("scales");
           RECUR_RETURN_IF_ERROR(r.status());
           ResizeParams p;
           RECUR_ASSIGN_OR_RETURN(p.mode, parse_resize_mode(ctx.node(), mode, false));
           p.coordinate_mode = "asymmetric";
           p.nearest_mode = "simple";
           if (ctx.opset() < 9 && attr_scales.empty()) {
             return ctx.error(ErrorCode::kInvalidModel, "attribute scales is required");
           }
           return std::make_unique<UpsampleKernel>(
               std::move(p), std::vector<double>(attr_scales.begin(), attr_scales.end()));
         }},
        [](InferContext& ctx) -> Status {
          if (ctx.opset() >= 9) return infer_resize_like(ctx, 1, 99, {});
          AttrReader r(ctx.node());
          const std::vector<float> scales = r.get_floats("scales");
          RECUR_RETURN_IF_ERROR(r.status());
          return infer_resize_like(ctx, 99, 99, scales);
        });
}

}  // namespace recur::reference
