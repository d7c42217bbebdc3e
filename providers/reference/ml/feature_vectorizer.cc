// FeatureVectorizer (ai.onnx.ml 1): joins its inputs column-wise into one float [N, sum of
// inputdimensions]. Input i ([N, ...], its trailing dimensions flattened; a 1-D input is one row,
// as in ONNX Runtime) gives inputdimensions[i] columns: its first ones, or all of them followed by
// zeros. Every input must have the same N. Inputs may be int32, int64, float or double, and may
// differ in type (ONNX Runtime requires one type).
#include <algorithm>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class FeatureVectorizerKernel final : public Kernel {
 public:
  FeatureVectorizerKernel(std::vector<int64_t> dims, int64_t width)
      : dims_(std::move(dims)), width_(width) {}

  Status run(KernelContext& ctx) const override {
    int64_t rows = -1;
    for (size_t i = 0; i < dims_.size(); ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, i));
      if (in->rank() == 0) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(i) + " is a scalar; it needs a dimension");
      }
      const int64_t n = in->rank() == 1 ? 1 : in->dim(0);
      if (rows >= 0 && n != rows) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(i) + " has " + std::to_string(n) +
                             " rows but input 0 has " + std::to_string(rows));
      }
      rows = n;
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, {rows, width_}));
    float* out = y->data<float>();
    int64_t offset = 0;
    for (size_t i = 0; i < dims_.size(); ++i) {
      const Tensor& in = *ctx.input(i);
      const int64_t cols = rows == 0 ? 0 : in.numel() / rows;
      const int64_t keep = std::min(cols, dims_[i]);
      const bool ok =
          visit_dtype(TypeList<float, double, int64_t, int32_t>{}, in.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* src = in.data<T>();
            for (int64_t r = 0; r < rows; ++r) {
              float* o = out + r * width_ + offset;
              for (int64_t c = 0; c < keep; ++c) o[c] = static_cast<float>(src[r * cols + c]);
              for (int64_t c = keep; c < dims_[i]; ++c) o[c] = 0;
            }
          });
      if (!ok) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(i) +
                             " must be int32, int64, float or double, not " +
                             std::string(dtype_name(in.dtype())));
      }
      offset += dims_[i];
    }
    return ok_status();
  }

 private:
  std::vector<int64_t> dims_;
  int64_t width_;
};

// inputdimensions, checked: non-negative, one per input, and a total that fits the memory a
// tensor can have.
Result<std::vector<int64_t>> read_dimensions(const Node& node, int64_t* width) {
  AttrReader attrs(node);
  std::vector<int64_t> dims = attrs.get_ints("inputdimensions");
  RECUR_RETURN_IF_ERROR(attrs.status());
  const std::string where = node.describe() + ": ";
  if (dims.size() != node.inputs.size()) {
    return invalid_model(where + "inputdimensions has " + std::to_string(dims.size()) +
                         " values for " + std::to_string(node.inputs.size()) + " inputs");
  }
  *width = 0;
  for (int64_t d : dims) {
    if (d < 0 || d > (int64_t{1} << 32) - *width) {
      return invalid_model(where + "inputdimensions holds " + std::to_string(d) +
                           "; each must be at least 0, and their sum at most 2^32");
    }
    *width += d;
  }
  return dims;
}

Result<std::unique_ptr<Kernel>> create_feature_vectorizer(CompileContext& ctx) {
  int64_t width = 0;
  RECUR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, read_dimensions(ctx.node(), &width));
  return std::make_unique<FeatureVectorizerKernel>(std::move(dims), width);
}

Status infer_feature_vectorizer(InferContext& ctx) {
  int64_t width = 0;
  RECUR_RETURN_IF_ERROR(read_dimensions(ctx.node(), &width).status());
  Dim rows{};
  const TypeInfo& x = ctx.input_type(0);
  if (x.shape && x.shape->size() == 1) rows = Dim{1, ""};
  if (x.shape && x.shape->size() >= 2) rows = (*x.shape)[0];
  ctx.set_output(0, TypeInfo{DType::kFloat32, std::vector<Dim>{rows, Dim{width, ""}}});
  return ok_status();
}

}  // namespace

void register_feature_vectorizer(Registrar& r) {
  r.add({.op_type = "FeatureVectorizer",
         .domain = kMlDomain,
         .since = 1,
         .create = create_feature_vectorizer},
        infer_feature_vectorizer);
}

}  // namespace recur::reference
