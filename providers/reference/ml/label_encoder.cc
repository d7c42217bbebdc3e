// LabelEncoder (ai.onnx.ml 2 and 4): maps each element of X through keys_* -> values_*, or
// to the default where X is not a key. Opset 2 takes the lists keys/values_{strings,int64s,
// floats} with default_{string,int64,float}; opset 4 adds keys_tensor, values_tensor and
// default_tensor (string, int64, int32, int16, float or double). A repeated key maps to its
// last value; a NaN key matches every NaN. Opset 1 (classes_strings) is a different operator
// and is not registered.
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

constexpr TypeList<std::string, int64_t, int32_t, int16_t, float, double> kLabelTypes;

// One of keys_*/values_* as a 1-D tensor; `prefix` is "keys" or "values".
Result<Tensor> list_attr(const Node& node, const std::string& prefix) {
  AttrReader attrs(node);
  std::vector<Tensor> found;
  if (attrs.has(prefix + "_strings")) {
    auto v = attrs.get_strings(prefix + "_strings");
    found.push_back(Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v));
  }
  if (attrs.has(prefix + "_int64s")) {
    auto v = attrs.get_ints(prefix + "_int64s");
    found.push_back(Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  }
  if (attrs.has(prefix + "_floats")) {
    auto v = attrs.get_floats(prefix + "_floats");
    found.push_back(Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v));
  }
  if (node.opset >= 4 && attrs.has(prefix + "_tensor")) {
    const Tensor* t = attrs.get_tensor(prefix + "_tensor");
    if (t) found.push_back(t->reshaped({t->numel()}));
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (found.size() != 1) {
    return invalid_model(node.describe() + ": exactly one " + prefix + "_* attribute must be " +
                         "set, found " + std::to_string(found.size()));
  }
  bool supported = false;
  visit_dtype(kLabelTypes, found[0].dtype(), [&](auto) { supported = true; });
  if (!supported) {
    return not_implemented(node.describe() + ": " + prefix + " of dtype " +
                           std::string(dtype_name(found[0].dtype())) + " are not supported");
  }
  return found[0];
}

// The one-element default for values of `values.dtype()`.
Result<Tensor> default_attr(const Node& node, const Tensor& values, bool values_from_tensor) {
  AttrReader attrs(node);
  const DType dt = values.dtype();
  if (values_from_tensor && attrs.has("default_tensor")) {
    const Tensor* t = attrs.get_tensor("default_tensor");
    RECUR_RETURN_IF_ERROR(attrs.status());
    if (!t || t->numel() != 1 || t->dtype() != dt) {
      return invalid_model(node.describe() + ": default_tensor must hold one " +
                           std::string(dtype_name(dt)) + " value");
    }
    return t->reshaped({1});
  }
  Tensor out = Tensor::empty(dt, {1});
  if (dt == DType::kString) {
    out.data<std::string>()[0] =
        values_from_tensor ? "_Unused" : attrs.get_string("default_string", "_Unused");
  } else if (dt == DType::kFloat32 || dt == DType::kFloat64) {
    const float f = values_from_tensor ? -0.0f : attrs.get_float("default_float", -0.0f);
    if (dt == DType::kFloat32) out.data<float>()[0] = f;
    if (dt == DType::kFloat64) out.data<double>()[0] = f;
  } else {
    const int64_t v = values_from_tensor ? -1 : attrs.get_int("default_int64", -1);
    visit_dtype(kLabelTypes, dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, std::string>) out.data<T>()[0] = static_cast<T>(v);
    });
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  return out;
}

class KeyIndex {
 public:
  virtual ~KeyIndex() = default;
  // idx[i]: the position of x[i] among the keys, or -1.
  virtual void lookup(const Tensor& x, int64_t* idx) const = 0;
};

template <class K>
class TypedKeyIndex final : public KeyIndex {
 public:
  explicit TypedKeyIndex(const Tensor& keys) {
    const K* k = keys.data<K>();
    for (int64_t i = 0; i < keys.numel(); ++i) {
      if constexpr (std::is_floating_point_v<K>) {
        if (std::isnan(k[i])) {
          nan_ = i;
          continue;
        }
      }
      map_[k[i]] = i;
    }
  }

  void lookup(const Tensor& x, int64_t* idx) const override {
    const K* in = x.data<K>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if constexpr (std::is_floating_point_v<K>) {
        if (std::isnan(in[i])) {
          idx[i] = nan_;
          continue;
        }
      }
      auto it = map_.find(in[i]);
      idx[i] = it == map_.end() ? -1 : it->second;
    }
  }

 private:
  std::unordered_map<K, int64_t> map_;
  int64_t nan_ = -1;
};

class LabelEncoderKernel final : public Kernel {
 public:
  LabelEncoderKernel(DType key_dtype, std::unique_ptr<KeyIndex> index, Tensor values,
                     Tensor fallback)
      : key_dtype_(key_dtype),
        index_(std::move(index)),
        values_(std::move(values)),
        default_(std::move(fallback)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() != key_dtype_) {
      return ctx.error(ErrorCode::kInvalidArgument, "X is " + std::string(dtype_name(x->dtype())) +
                                                        " but the keys are " +
                                                        std::string(dtype_name(key_dtype_)));
    }
    std::vector<int64_t> idx(static_cast<size_t>(x->numel()));
    index_->lookup(*x, idx.data());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, values_.dtype(), x->shape()));
    for (int64_t i = 0; i < x->numel(); ++i) {
      const int64_t k = idx[static_cast<size_t>(i)];
      if (k >= 0) {
        copy_elements(values_, k, *y, i, 1);
      } else {
        copy_elements(default_, 0, *y, i, 1);
      }
    }
    return ok_status();
  }

 private:
  DType key_dtype_;
  std::unique_ptr<KeyIndex> index_;
  Tensor values_;
  Tensor default_;
};

Result<std::unique_ptr<Kernel>> create_label_encoder(CompileContext& ctx) {
  const Node& node = ctx.node();
  RECUR_ASSIGN_OR_RETURN(Tensor keys, list_attr(node, "keys"));
  RECUR_ASSIGN_OR_RETURN(Tensor values, list_attr(node, "values"));
  if (keys.numel() != values.numel()) {
    return ctx.error(ErrorCode::kInvalidModel, std::to_string(keys.numel()) + " keys but " +
                                                   std::to_string(values.numel()) + " values");
  }
  const bool from_tensor = node.opset >= 4 && AttrReader(node).has("values_tensor");
  RECUR_ASSIGN_OR_RETURN(Tensor fallback, default_attr(node, values, from_tensor));
  std::unique_ptr<KeyIndex> index;
  visit_dtype(kLabelTypes, keys.dtype(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    index = std::make_unique<TypedKeyIndex<K>>(keys);
  });
  return std::make_unique<LabelEncoderKernel>(keys.dtype(), std::move(index), std::move(values),
                                              std::move(fallback));
}

Status infer_label_encoder(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(Tensor values, list_attr(ctx.node(), "values"));
  ctx.set_output(0, TypeInfo{values.dtype(), ctx.input_type(0).shape});
  return ok_status();
}

}  // namespace

void register_label_encoder(Registrar& r) {
  r.add({.op_type = "LabelEncoder",
         .domain = kMlDomain,
         .since = 2,
         .create = create_label_encoder,
         .takes_strings = true},
        infer_label_encoder);
}

}  // namespace recur::reference
