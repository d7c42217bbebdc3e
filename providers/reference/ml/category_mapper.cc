// CategoryMapper (ai.onnx.ml 1): cats_strings[i] and cats_int64s[i] are one pair; a string X
// maps to int64 through the pairs (default_int64, -1, where absent), an int64 X maps to string
// (default_string, "_Unused"). Y has X's shape.
//
// The specification says nothing of a key that repeats. Here it maps to the value of its last
// pair, as in ONNX Runtime, whose kernel assigns the pairs into its maps in order (each one
// overwriting the last, not an emplace that keeps the first); LabelEncoder here does the same.
// Both lists must be set and have the same length: a mapper without its pairs is a broken
// model, and ONNX Runtime refuses it too. Both empty is allowed (everything maps to the
// default). X of another dtype is refused at load by the shape rule, as the operator's type
// constraint allows only string and int64.
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

// Only the direction X's inferred dtype asks for is built: a vocabulary can be large, and
// both would hold every string twice. An unknown dtype builds both.
struct CategoryMaps {
  std::optional<std::unordered_map<std::string, int64_t>> to_int;
  std::optional<std::unordered_map<int64_t, std::string>> to_string;
  int64_t default_int = -1;
  std::string default_string;
};

class CategoryMapperKernel final : public Kernel {
 public:
  explicit CategoryMapperKernel(CategoryMaps maps) : maps_(std::move(maps)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() == DType::kString && maps_.to_int) return to_int(ctx, *x);
    if (x->dtype() == DType::kInt64 && maps_.to_string) return to_string(ctx, *x);
    return ctx.error(ErrorCode::kInvalidArgument,
                     "X must be the string or int64 tensor the model declares, not " +
                         std::string(dtype_name(x->dtype())));
  }

 private:
  Status to_int(KernelContext& ctx, const Tensor& x) const {
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, x.shape()));
    const std::string* in = x.data<std::string>();
    int64_t* out = y->data<int64_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto it = maps_.to_int->find(in[i]);
      out[i] = it == maps_.to_int->end() ? maps_.default_int : it->second;
    }
    return ok_status();
  }

  Status to_string(KernelContext& ctx, const Tensor& x) const {
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, x.shape()));
    const int64_t* in = x.data<int64_t>();
    std::string* out = y->data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto it = maps_.to_string->find(in[i]);
      out[i] = it == maps_.to_string->end() ? maps_.default_string : it->second;
    }
    return ok_status();
  }

  CategoryMaps maps_;
};

Result<std::unique_ptr<Kernel>> create_category_mapper(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const bool has_strings = attrs.has("cats_strings");
  const bool has_ints = attrs.has("cats_int64s");
  const std::vector<std::string> strings = attrs.get_strings("cats_strings");
  const std::vector<int64_t> ints = attrs.get_ints("cats_int64s");
  CategoryMaps maps;
  maps.default_int = attrs.get_int("default_int64", -1);
  maps.default_string = attrs.get_string("default_string", "_Unused");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (!has_strings || !has_ints) {
    return ctx.error(ErrorCode::kInvalidModel,
                     std::string("cats_strings and cats_int64s must both be set; ") +
                         (has_strings ? "cats_int64s" : "cats_strings") + " is missing");
  }
  if (strings.size() != ints.size()) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "cats_strings has " + std::to_string(strings.size()) +
                         " entries but cats_int64s has " + std::to_string(ints.size()));
  }
  const DType x = ctx.input_type(0).dtype;
  if (x == DType::kString || x == DType::kUndefined) {
    maps.to_int.emplace(strings.size());
    for (size_t i = 0; i < strings.size(); ++i) (*maps.to_int)[strings[i]] = ints[i];
  }
  if (x == DType::kInt64 || x == DType::kUndefined) {
    maps.to_string.emplace(ints.size());
    for (size_t i = 0; i < ints.size(); ++i) (*maps.to_string)[ints[i]] = strings[i];
  }
  return std::make_unique<CategoryMapperKernel>(std::move(maps));
}

Status infer_category_mapper(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  DType y = DType::kUndefined;
  if (x.dtype == DType::kString) {
    y = DType::kInt64;
  } else if (x.dtype == DType::kInt64) {
    y = DType::kString;
  } else if (x.dtype != DType::kUndefined) {
    return ctx.error("X must be a string or int64 tensor, not " + std::string(dtype_name(x.dtype)));
  }
  ctx.set_output(0, TypeInfo{y, x.shape});
  return ok_status();
}

}  // namespace

void register_category_mapper(Registrar& r) {
  r.add({.op_type = "CategoryMapper",
         .domain = kMlDomain,
         .since = 1,
         .create = create_category_mapper,
         .takes_strings = true},
        infer_category_mapper);
}

}  // namespace recur::reference
