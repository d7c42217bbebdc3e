// ArrayFeatureExtractor (ai.onnx.ml 1): selects the entries `Y` (int64, any shape, read
// flattened) of X's last axis. The output is X.shape[:-1] + [len(Y)]; a 1-D X gives [1, len(Y)],
// as onnxruntime and the ONNX reference implementation do.
#include <string>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class ArrayFeatureExtractorKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* y, required_input(ctx, 1));
    if (x->rank() == 0) {
      return ctx.error(ErrorCode::kInvalidArgument, "X must have at least one dimension");
    }
    if (y->dtype() != DType::kInt64) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "Y must be int64, not " + std::string(dtype_name(y->dtype())));
    }
    const int64_t width = x->shape().back();
    const int64_t* idx = y->data<int64_t>();
    const int64_t n = y->numel();
    for (int64_t k = 0; k < n; ++k) {
      if (idx[k] < 0 || idx[k] >= width) {
        return ctx.error(ErrorCode::kInvalidArgument, "index " + std::to_string(idx[k]) +
                                                          " is out of range for X's last " +
                                                          "dimension " + std::to_string(width));
      }
    }
    Shape out_shape = x->shape();
    if (x->rank() == 1) out_shape.insert(out_shape.begin(), 1);
    out_shape.back() = n;
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), out_shape));
    const int64_t rows = width == 0 ? 0 : x->numel() / width;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < n; ++k) copy_elements(*x, r * width + idx[k], *out, r * n + k, 1);
    }
    return ok_status();
  }
};

Status infer_array_feature_extractor(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  TypeInfo out;
  out.dtype = x.dtype;
  if (x.shape && !x.shape->empty()) {
    out.shape = *x.shape;
    if (out.shape->size() == 1) out.shape->insert(out.shape->begin(), Dim{1, ""});
    const TypeInfo& y = ctx.input_type(1);
    out.shape->back() = y.is_static() ? Dim{shape_numel(y.static_shape()), ""} : Dim{};
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_array_feature_extractor(Registrar& r) {
  r.add({.op_type = "ArrayFeatureExtractor",
         .domain = kMlDomain,
         .since = 1,
         .create = make_simple<ArrayFeatureExtractorKernel>(),
         .takes_strings = true},
        infer_array_feature_extractor);
}

}  // namespace recur::reference
