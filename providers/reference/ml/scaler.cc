// Scaler (ai.onnx.ml 1): Y = (X - offset) * scale over X's last axis, in float. offset and
// scale each hold one value for every column or a single value for all of them; an absent one
// is 0 or 1. ONNX Runtime asks the two to have the same length; the specification does not,
// and nothing is ambiguous when they differ, so that is accepted here.
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class ScalerKernel final : public Kernel {
 public:
  ScalerKernel(std::vector<float> offset, std::vector<float> scale)
      : offset_(std::move(offset)), scale_(std::move(scale)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ml::FeatureRows rows;
    RECUR_RETURN_IF_ERROR(ml::read_feature_rows(ctx, *x, &rows));
    for (const auto* v : {&offset_, &scale_}) {
      if (v->size() > 1 && static_cast<int64_t>(v->size()) != rows.cols) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         std::string(v == &offset_ ? "offset" : "scale") + " has " +
                             std::to_string(v->size()) + " values but X has " +
                             std::to_string(rows.cols) + " columns");
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    float* out = y->data<float>();
    for (int64_t r = 0; r < rows.rows; ++r) {
      const float* in = rows.row(r);
      for (int64_t c = 0; c < rows.cols; ++c) {
        out[r * rows.cols + c] = (in[c] - pick(offset_, c, 0.0f)) * pick(scale_, c, 1.0f);
      }
    }
    return ok_status();
  }

 private:
  static float pick(const std::vector<float>& v, int64_t c, float absent) {
    if (v.empty()) return absent;
    return v.size() == 1 ? v[0] : v[static_cast<size_t>(c)];
  }

  std::vector<float> offset_, scale_;
};

Result<std::unique_ptr<Kernel>> create_scaler(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::vector<float> offset = attrs.get_floats("offset");
  std::vector<float> scale = attrs.get_floats("scale");
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<ScalerKernel>(std::move(offset), std::move(scale));
}

}  // namespace

Status infer_float_like_input0(InferContext& ctx) {
  ctx.set_output(0, TypeInfo{DType::kFloat32, ctx.input_type(0).shape});
  return ok_status();
}

void register_scaler(Registrar& r) {
  r.add({.op_type = "Scaler", .domain = kMlDomain, .since = 1, .create = create_scaler},
        infer_float_like_input0);
}

}  // namespace recur::reference
