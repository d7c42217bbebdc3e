// Normalizer (ai.onnx.ml 1): divides each row of X by its MAX, L1 or L2 norm, in float.
//
// As in ONNX Runtime (measured against 1.30), MAX is the row's largest value, not its largest
// magnitude (so [-1, -2, -0.5] becomes [2, 4, 1]), NaN entries are passed over when finding it,
// and a row whose norm is 0 is left as it is. The ONNX reference implementation divides by the
// largest magnitude instead; recur follows ONNX Runtime, whose results deployed models were
// validated against, and the specification's words (Y = X / max(X)).
#include <cmath>
#include <limits>
#include <string>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

enum class Norm { kMax, kL1, kL2 };

class NormalizerKernel final : public Kernel {
 public:
  explicit NormalizerKernel(Norm norm) : norm_(norm) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ml::FeatureRows rows;
    RECUR_RETURN_IF_ERROR(ml::read_feature_rows(ctx, *x, &rows));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    float* out = y->data<float>();
    for (int64_t r = 0; r < rows.rows; ++r) {
      const float* in = rows.row(r);
      float* o = out + r * rows.cols;
      const float norm = row_norm(in, rows.cols);
      for (int64_t c = 0; c < rows.cols; ++c) o[c] = norm == 0 ? in[c] : in[c] / norm;
    }
    return ok_status();
  }

 private:
  float row_norm(const float* in, int64_t n) const {
    float acc = norm_ == Norm::kMax ? std::numeric_limits<float>::lowest() : 0.0f;
    for (int64_t c = 0; c < n; ++c) {
      if (norm_ == Norm::kMax && in[c] > acc) acc = in[c];
      if (norm_ == Norm::kL1) acc += std::abs(in[c]);
      if (norm_ == Norm::kL2) acc += in[c] * in[c];
    }
    return norm_ == Norm::kL2 ? std::sqrt(acc) : acc;
  }

  Norm norm_;
};

Result<std::unique_ptr<Kernel>> create_normalizer(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::string name = attrs.get_string("norm", "MAX");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (name == "MAX") return std::make_unique<NormalizerKernel>(Norm::kMax);
  if (name == "L1") return std::make_unique<NormalizerKernel>(Norm::kL1);
  if (name == "L2") return std::make_unique<NormalizerKernel>(Norm::kL2);
  return ctx.error(ErrorCode::kInvalidModel, "norm '" + name + "' is not MAX, L1 or L2");
}

}  // namespace

void register_normalizer(Registrar& r) {
  r.add({.op_type = "Normalizer", .domain = kMlDomain, .since = 1, .create = create_normalizer},
        infer_float_like_input0);
}

}  // namespace recur::reference
