// DictVectorizer (ai.onnx.ml 1): a map(K, V) becomes the [1, V] tensor Y of its values at the
// vocabulary's keys: Y[0, i] is the map's value for vocabulary[i], or 0 ("" for strings) where
// the map has no such key. Keys outside the vocabulary are dropped. The vocabulary is
// string_vocabulary for string keys or int64_vocabulary for int64 ones; a key repeated in it
// fills every one of its columns, as in ONNX Runtime. V is int64, float, double or string.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class DictVectorizerKernel final : public Kernel {
 public:
  DictVectorizerKernel(std::unordered_map<int64_t, std::vector<int64_t>> ints,
                       std::unordered_map<std::string, std::vector<int64_t>> strings, int64_t width)
      : ints_(std::move(ints)), strings_(std::move(strings)), width_(width) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (!x->is_map()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be a map, not " + std::string(dtype_name(x->dtype())));
    }
    const Tensor& keys = x->map_keys();
    const Tensor& values = x->map_values();
    const DType want_keys = strings_.empty() ? DType::kInt64 : DType::kString;
    if (keys.dtype() != want_keys) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X has " + std::string(dtype_name(keys.dtype())) +
                           " keys, but the vocabulary is " + std::string(dtype_name(want_keys)));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, values.dtype(), {1, width_}));
    bool ok =
        visit_dtype(TypeList<int64_t, float, double, std::string>{}, values.dtype(), [&](auto tag) {
          using V = typename decltype(tag)::type;
          scatter<V>(keys, values.data<V>(), y->data<V>());
        });
    if (!ok) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X's values must be int64, float, double or string, not " +
                           std::string(dtype_name(values.dtype())));
    }
    return ok_status();
  }

 private:
  template <typename V>
  void scatter(const Tensor& keys, const V* values, V* out) const {
    std::fill(out, out + width_, V());
    auto put = [&](const auto& columns, const auto& key, int64_t i) {
      const auto it = columns.find(key);
      if (it == columns.end()) return;
      for (int64_t c : it->second) out[c] = values[i];
    };
    for (int64_t i = 0; i < keys.numel(); ++i) {
      if (strings_.empty()) {
        put(ints_, keys.data<int64_t>()[i], i);
      } else {
        put(strings_, keys.data<std::string>()[i], i);
      }
    }
  }

  // Each vocabulary key to its columns in Y.
  std::unordered_map<int64_t, std::vector<int64_t>> ints_;
  std::unordered_map<std::string, std::vector<int64_t>> strings_;
  int64_t width_;
};

Result<std::unique_ptr<Kernel>> create_dict_vectorizer(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::vector<int64_t> ints = attrs.get_ints("int64_vocabulary");
  const std::vector<std::string> strings = attrs.get_strings("string_vocabulary");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (ints.empty() == strings.empty()) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "exactly one of int64_vocabulary and string_vocabulary must be set and "
                     "non-empty");
  }
  std::unordered_map<int64_t, std::vector<int64_t>> int_columns;
  std::unordered_map<std::string, std::vector<int64_t>> string_columns;
  for (size_t i = 0; i < ints.size(); ++i) int_columns[ints[i]].push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < strings.size(); ++i) {
    string_columns[strings[i]].push_back(static_cast<int64_t>(i));
  }
  const auto width = static_cast<int64_t>(std::max(ints.size(), strings.size()));
  return std::make_unique<DictVectorizerKernel>(std::move(int_columns), std::move(string_columns),
                                                width);
}

Status infer_dict_vectorizer(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  const auto width = static_cast<int64_t>(std::max(attrs.get_ints("int64_vocabulary").size(),
                                                   attrs.get_strings("string_vocabulary").size()));
  RECUR_RETURN_IF_ERROR(attrs.status());
  TypeInfo out;
  out.dtype = ctx.input_type(0).map_value_dtype;
  out.shape = std::vector<Dim>{Dim{1, ""}, Dim{width, ""}};
  ctx.set_output(0, std::move(out));
  return ok_status();
}

}  // namespace

void register_dict_vectorizer(Registrar& r) {
  r.add({.op_type = "DictVectorizer",
         .domain = kMlDomain,
         .since = 1,
         .create = create_dict_vectorizer,
         .takes_strings = true,
         .takes_maps = true},
        infer_dict_vectorizer);
}

}  // namespace recur::reference
