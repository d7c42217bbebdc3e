// OneHotEncoder (ai.onnx.ml 1): Y = X's shape + [K] floats, K the number of categories
// (cats_int64s or cats_strings, exactly one), with a 1 where the element equals category k.
// Numbers are compared as int64: a float or double element is truncated toward zero, as in ONNX
// Runtime, and a NaN, an infinity or a value beyond int64 matches nothing (a C++ cast would be
// undefined there). A number never matches string categories, nor a string int64 ones. A repeated
// category keeps its last position, as ONNX Runtime does. An element with no category leaves its
// row zero (zeros = 1, the default) or is refused, naming it (zeros = 0). int32 X, which the
// specification allows, is taken too (ONNX Runtime has no kernel for it).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class OneHotEncoderKernel final : public Kernel {
 public:
  OneHotEncoderKernel(std::unordered_map<int64_t, int64_t> ints,
                      std::unordered_map<std::string, int64_t> strings, int64_t categories,
                      bool zeros)
      : ints_(std::move(ints)),
        strings_(std::move(strings)),
        categories_(categories),
        zeros_(zeros) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    Shape shape = x->shape();
    shape.push_back(categories_);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, shape));
    float* out = y->data<float>();
    std::fill(out, out + y->numel(), 0.0f);
    const int64_t n = x->numel();
    auto place = [&](int64_t i, int64_t k, auto describe) -> Status {
      if (k >= 0) {
        out[i * categories_ + k] = 1;
      } else if (!zeros_) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "X[" + std::to_string(i) + "] = " + describe() +
                             " is not a category, and zeros = 0 forbids an all-zero row");
      }
      return ok_status();
    };
    if (x->dtype() == DType::kString) {
      const std::string* in = x->data<std::string>();
      for (int64_t i = 0; i < n; ++i) {
        const auto it = strings_.find(in[i]);
        RECUR_RETURN_IF_ERROR(
            place(i, it == strings_.end() ? -1 : it->second, [&] { return "'" + in[i] + "'"; }));
      }
      return ok_status();
    }
    Status status = ok_status();
    const bool ok =
        visit_dtype(TypeList<int64_t, int32_t, float, double>{}, x->dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* in = x->data<T>();
          for (int64_t i = 0; i < n && status.ok(); ++i) {
            status = place(i, index_of(in[i]), [&] { return std::to_string(in[i]); });
          }
        });
    if (!ok) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be string, int64, int32, float or double, not " +
                           std::string(dtype_name(x->dtype())));
    }
    return status;
  }

 private:
  template <typename T>
  int64_t index_of(T v) const {
    if constexpr (std::is_floating_point_v<T>) {
      // 2^63 is exactly representable; anything at or beyond it has no int64 value.
      if (!(std::abs(v) < static_cast<T>(9223372036854775808.0))) return -1;
    }
    const auto it = ints_.find(static_cast<int64_t>(v));
    return it == ints_.end() ? -1 : it->second;
  }

  std::unordered_map<int64_t, int64_t> ints_;
  std::unordered_map<std::string, int64_t> strings_;
  int64_t categories_;
  bool zeros_;
};

Result<std::unique_ptr<Kernel>> create_one_hot_encoder(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::vector<int64_t> ints = attrs.get_ints("cats_int64s");
  const std::vector<std::string> strings = attrs.get_strings("cats_strings");
  const int64_t zeros = attrs.get_int("zeros", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (ints.empty() == strings.empty()) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "exactly one of cats_int64s and cats_strings must be set and non-empty");
  }
  std::unordered_map<int64_t, int64_t> int_index;
  std::unordered_map<std::string, int64_t> string_index;
  for (size_t k = 0; k < ints.size(); ++k) int_index[ints[k]] = static_cast<int64_t>(k);
  for (size_t k = 0; k < strings.size(); ++k) string_index[strings[k]] = static_cast<int64_t>(k);
  const auto categories = static_cast<int64_t>(ints.empty() ? strings.size() : ints.size());
  return std::make_unique<OneHotEncoderKernel>(std::move(int_index), std::move(string_index),
                                               categories, zeros != 0);
}

Status infer_one_hot_encoder(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  const auto categories = static_cast<int64_t>(
      std::max(attrs.get_ints("cats_int64s").size(), attrs.get_strings("cats_strings").size()));
  RECUR_RETURN_IF_ERROR(attrs.status());
  TypeInfo out{DType::kFloat32, std::nullopt};
  const TypeInfo& x = ctx.input_type(0);
  if (x.shape) {
    out.shape = *x.shape;
    out.shape->push_back(Dim{categories, ""});
  }
  ctx.set_output(0, std::move(out));
  return ok_status();
}

}  // namespace

void register_one_hot_encoder(Registrar& r) {
  r.add({.op_type = "OneHotEncoder",
         .domain = kMlDomain,
         .since = 1,
         .create = create_one_hot_encoder,
         .takes_strings = true},
        infer_one_hot_encoder);
}

}  // namespace recur::reference
