// CastMap (ai.onnx.ml 1): a map(int64, string or float) becomes a [1, W] tensor of float, int64
// or string (cast_to TO_FLOAT, TO_INT64, TO_STRING). map_form DENSE writes the map's values in
// ascending key order (W the map's size); SPARSE writes the value of key k at column k, for
// k in [0, max_map), and a pad elsewhere, ignoring keys at or beyond max_map (W = max_map).
//
// The conversions and the pads are ONNX Runtime's: a string becomes a number as std::stof or
// std::stoll read it (leading spaces and trailing text allowed), a float becomes a string as
// std::to_string writes it ("0.500000"), and the pad is 0, or the string "0.f". Where ONNX
// Runtime would throw or be undefined, recur refuses the run naming the key: a string that is no
// number or is out of range, a float with no int64 value (NaN, infinite, beyond 2^63), and a
// negative key in a SPARSE map.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

enum class CastTo { kFloat, kInt64, kString };

// One map value as `To`, or the reason it has none.
class Converter {
 public:
  Status operator()(float v, float* out) const {
    *out = v;
    return ok_status();
  }
  Status operator()(float v, int64_t* out) const {
    if (!(std::abs(v) < 9223372036854775808.0f)) return invalid_argument("has no int64 value");
    *out = static_cast<int64_t>(v);
    return ok_status();
  }
  Status operator()(float v, std::string* out) const {
    *out = std::to_string(v);
    return ok_status();
  }
  Status operator()(const std::string& v, std::string* out) const {
    *out = v;
    return ok_status();
  }
  Status operator()(const std::string& v, float* out) const {
    return parse(v, out, [](const char* s, char** end) { return std::strtof(s, end); });
  }
  Status operator()(const std::string& v, int64_t* out) const {
    return parse(v, out, [](const char* s, char** end) { return std::strtoll(s, end, 10); });
  }

 private:
  template <typename T, typename Parse>
  static Status parse(const std::string& v, T* out, Parse p) {
    char* end = nullptr;
    errno = 0;
    const auto r = p(v.c_str(), &end);
    if (end == v.c_str()) return invalid_argument("'" + v + "' is not a number");
    if (errno == ERANGE) return invalid_argument("'" + v + "' is out of range");
    *out = static_cast<T>(r);
    return ok_status();
  }
};

class CastMapKernel final : public Kernel {
 public:
  CastMapKernel(CastTo to, bool sparse, int64_t max_map)
      : to_(to), sparse_(sparse), max_map_(max_map) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (!x->is_map() || x->map_keys().dtype() != DType::kInt64 ||
        (x->element_dtype() != DType::kString && x->element_dtype() != DType::kFloat32)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be a map(int64, string) or map(int64, float32)");
    }
    if (x->element_dtype() == DType::kString) return cast_from<std::string>(ctx, *x);
    return cast_from<float>(ctx, *x);
  }

 private:
  template <typename From>
  Status cast_from(KernelContext& ctx, const Tensor& x) const {
    switch (to_) {
      case CastTo::kFloat:
        return cast<From, float>(ctx, x, 0.0f);
      case CastTo::kInt64:
        return cast<From, int64_t>(ctx, x, 0);
      case CastTo::kString:
        return cast<From, std::string>(ctx, x, "0.f");
    }
    return ctx.error(ErrorCode::kInternal, "unknown cast_to");
  }

  template <typename From, typename To>
  Status cast(KernelContext& ctx, const Tensor& x, const To& pad) const {
    const int64_t* keys = x.map_keys().data<int64_t>();
    const From* values = x.map_values().data<From>();
    const int64_t n = x.map_keys().numel();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
    if (sparse_ && n > 0 && keys[order.front()] < 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "key " + std::to_string(keys[order.front()]) +
                           " is negative, and a SPARSE map's keys are column indices");
    }
    const int64_t width = sparse_ ? max_map_ : n;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_of_v<To>, {1, width}));
    To* out = y->data<To>();
    std::fill(out, out + width, pad);
    const Converter convert;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = order[static_cast<size_t>(j)];
      const int64_t column = sparse_ ? keys[i] : j;
      if (column >= width) break;  // SPARSE: the keys from here on are beyond max_map
      Status st = convert(values[i], &out[column]);
      if (!st.ok()) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "the value at key " + std::to_string(keys[i]) + " " + st.message());
      }
    }
    return ok_status();
  }

  CastTo to_;
  bool sparse_;
  int64_t max_map_;
};

Result<CastTo> read_cast_to(const std::string& s) {
  if (s == "TO_FLOAT") return CastTo::kFloat;
  if (s == "TO_INT64") return CastTo::kInt64;
  if (s == "TO_STRING") return CastTo::kString;
  return invalid_model("cast_to '" + s + "' is not TO_FLOAT, TO_INT64 or TO_STRING");
}

Result<std::unique_ptr<Kernel>> create_cast_map(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::string cast_to = attrs.get_string("cast_to", "TO_FLOAT");
  const std::string form = attrs.get_string("map_form", "DENSE");
  const int64_t max_map = attrs.get_int("max_map", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  Result<CastTo> to = read_cast_to(cast_to);
  if (!to.ok()) return ctx.error(ErrorCode::kInvalidModel, to.status().message());
  if (form != "DENSE" && form != "SPARSE") {
    return ctx.error(ErrorCode::kInvalidModel, "map_form '" + form + "' is not DENSE or SPARSE");
  }
  // The output's width is max_map: bounded, so that an attribute cannot ask for a tensor of
  // 2^60 strings at every run.
  constexpr int64_t kMostColumns = int64_t{1} << 31;
  if (form == "SPARSE" && (max_map <= 0 || max_map > kMostColumns)) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "max_map = " + std::to_string(max_map) + " must be in [1, 2^31] for SPARSE");
  }
  return std::make_unique<CastMapKernel>(*to, form == "SPARSE", max_map);
}

Status infer_cast_map(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::string cast_to = attrs.get_string("cast_to", "TO_FLOAT");
  const bool sparse = attrs.get_string("map_form", "DENSE") == "SPARSE";
  const int64_t max_map = attrs.get_int("max_map", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  TypeInfo out;
  out.dtype = cast_to == "TO_STRING"  ? DType::kString
              : cast_to == "TO_INT64" ? DType::kInt64
                                      : DType::kFloat32;
  out.shape = std::vector<Dim>{Dim{1, ""}, sparse ? Dim{max_map, ""} : Dim{}};
  ctx.set_output(0, std::move(out));
  return ok_status();
}

}  // namespace

void register_cast_map(Registrar& r) {
  r.add({.op_type = "CastMap",
         .domain = kMlDomain,
         .since = 1,
         .create = create_cast_map,
         .takes_strings = true,
         .takes_maps = true},
        infer_cast_map);
}

}  // namespace recur::reference
