// ZipMap (ai.onnx.ml 1): float X of shape [N, C] (or [C], one row) becomes a sequence of N maps,
// row n mapping classlabels_strings[c] (or classlabels_int64s[c]) to X[n, c]. This is what the
// scikit-learn converters put after a classifier's probabilities by default.
//
// Each map keeps the labels' order. The maps of one run share one keys tensor, and their values
// are views of one copy of X, so a run allocates three blocks whatever N is. A label given twice
// is refused at load: ONNX Runtime keeps the later column for it, silently dropping a class.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class ZipMapKernel final : public Kernel {
 public:
  ZipMapKernel(std::vector<int64_t> ints, std::vector<std::string> strings)
      : ints_(std::move(ints)), strings_(std::move(strings)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() != DType::kFloat32) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be float32, not " + std::string(dtype_name(x->dtype())));
    }
    if (x->rank() != 1 && x->rank() != 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be [C] or [N, C], not " + shape_to_string(x->shape()));
    }
    const int64_t labels = strings_.empty() ? static_cast<int64_t>(ints_.size())
                                            : static_cast<int64_t>(strings_.size());
    const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
    if (x->dim(-1) != labels) {
      return ctx.error(ErrorCode::kInvalidArgument, "X has " + std::to_string(x->dim(-1)) +
                                                        " columns for " + std::to_string(labels) +
                                                        " class labels");
    }
    Tensor keys = strings_.empty() ? Tensor::from_vector<int64_t>({labels}, ints_)
                                   : Tensor::from_vector<std::string>({labels}, strings_);
    Tensor values = x->clone();
    const auto* base = static_cast<float*>(values.raw_data());
    std::vector<Tensor> maps;
    maps.reserve(static_cast<size_t>(rows));
    for (int64_t n = 0; n < rows; ++n) {
      Tensor row = Tensor::wrap(values.owner(), const_cast<float*>(base + n * labels),
                                DType::kFloat32, {labels});
      maps.push_back(Tensor::map(keys, std::move(row)));
    }
    return ctx.set_output(0, Tensor::sequence(std::move(maps), DType::kMap));
  }

 private:
  std::vector<int64_t> ints_;
  std::vector<std::string> strings_;
};

template <typename T>
std::optional<T> first_repeated(std::vector<T> labels) {
  std::sort(labels.begin(), labels.end());
  const auto it = std::adjacent_find(labels.begin(), labels.end());
  if (it == labels.end()) return std::nullopt;
  return *it;
}

Result<std::unique_ptr<Kernel>> create_zip_map(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::vector<int64_t> ints = attrs.get_ints("classlabels_int64s");
  std::vector<std::string> strings = attrs.get_strings("classlabels_strings");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (ints.empty() == strings.empty()) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "exactly one of classlabels_int64s and classlabels_strings must be set and "
                     "non-empty");
  }
  if (auto twice = first_repeated(ints)) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "class label " + std::to_string(*twice) + " is given twice");
  }
  if (auto twice = first_repeated(strings)) {
    return ctx.error(ErrorCode::kInvalidModel, "class label '" + *twice + "' is given twice");
  }
  return std::make_unique<ZipMapKernel>(std::move(ints), std::move(strings));
}

Status infer_zip_map(InferContext& ctx) {
  TypeInfo out;
  out.dtype = DType::kSequence;
  out.element_dtype = DType::kMap;
  AttrReader attrs(ctx.node());
  out.map_key_dtype =
      attrs.get_strings("classlabels_strings").empty() ? DType::kInt64 : DType::kString;
  out.map_value_dtype = DType::kFloat32;
  ctx.set_output(0, std::move(out));
  return ok_status();
}

}  // namespace

void register_zip_map(Registrar& r) {
  r.add({.op_type = "ZipMap", .domain = kMlDomain, .since = 1, .create = create_zip_map},
        infer_zip_map);
}

}  // namespace recur::reference
