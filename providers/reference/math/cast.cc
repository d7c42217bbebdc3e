// Cast (`to` is a type name such as "FLOAT" in opset 1, a TensorProto.DataType code from
// opset 6) and CastLike (the dtype of a second input), through opset 21. Every pair of the
// numeric types, bool, float16, bfloat16, the float8 types (19, with `saturate`) and
// int4/uint4 (21); conversions are convert<>()'s (see elementwise.h) and cast_one's. To and from
// strings: numbers are written as the shortest text that reads back to the same value (what
// numpy prints: 0.9767611 for a float32, "nan", "inf", "-inf"), integers in decimal, bool as
// "1"/"0"; text is read as a decimal number with an optional leading '+', or one of the
// case-insensitive words NaN, INF and Infinity ("+INF" and "-INF" too).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

std::optional<DType> dtype_from_onnx_name(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  static constexpr std::pair<const char*, DType> kNames[] = {
      {"FLOAT", DType::kFloat32},   {"UINT8", DType::kUInt8},       {"INT8", DType::kInt8},
      {"UINT16", DType::kUInt16},   {"INT16", DType::kInt16},       {"INT32", DType::kInt32},
      {"INT64", DType::kInt64},     {"STRING", DType::kString},     {"BOOL", DType::kBool},
      {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64},    {"UINT32", DType::kUInt32},
      {"UINT64", DType::kUInt64},   {"BFLOAT16", DType::kBFloat16},
  };
  for (const auto& [n, t] : kNames)
    if (name == n) return t;
  return std::nullopt;
}

bool is_supported(DType t) { return t != DType::kSequence && dtype_size(t) != 0; }

inline constexpr auto kCastTypes = kAllTypes + kFloat8Types + kInt4Types;

// One element From -> To. float8 and int4 pass through float and the integer they hold;
// to float8 follows the saturate tables of Cast-19; to int4 rounds half to even and clamps to
// the 4-bit range, as ONNX's reference does.
template <class To, class From>
To cast_one(From v, bool saturate) {
  if constexpr (is_float8_v<From>) {
    return cast_one<To>(static_cast<float>(v), saturate);
  } else if constexpr (is_int4_v<From>) {
    return cast_one<To>(v.value, saturate);
  } else if constexpr (is_float8_v<To>) {
    if constexpr (std::is_same_v<From, bool>) return To(v ? 1.0f : 0.0f, saturate);
    return To(static_cast<float>(to_compute(v)), saturate);
  } else if constexpr (is_int4_v<To>) {
    using V = decltype(To{}.value);
    constexpr double lo = std::is_same_v<To, Int4> ? -8.0 : 0.0;
    constexpr double hi = std::is_same_v<To, Int4> ? 7.0 : 15.0;
    double x;
    if constexpr (std::is_same_v<From, bool>) {
      x = v ? 1.0 : 0.0;
    } else {
      x = static_cast<double>(to_compute(v));
    }
    To out;
    out.value = std::isnan(x) ? V{0} : static_cast<V>(std::nearbyint(std::clamp(x, lo, hi)));
    return out;
  } else {
    return convert<To>(v);
  }
}

template <class T>
std::string number_to_string(T v) {
  if constexpr (is_float8_v<T>) {
    return number_to_string(static_cast<float>(v));
  } else if constexpr (is_int4_v<T>) {
    return std::to_string(static_cast<int>(v.value));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    // The 16-bit floats are written as the float they widen to exactly.
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const F x = static_cast<F>(v);
    if (std::isnan(x)) return "nan";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
  }
}

// Parses a whole string as a number of type T; false if it is not one.
template <class T>
bool string_to_number(const std::string& text, T* out, bool saturate) {
  if constexpr (is_float8_v<T> || is_int4_v<T>) {
    float f = 0;
    if (!string_to_number(text, &f, saturate)) return false;
    *out = cast_one<T>(f, saturate);
    return true;
  }
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;  // from_chars takes no '+'
  if constexpr (is_float8_v<T> || is_int4_v<T>) {
    return false;
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    Wide w{};
    const auto r = std::from_chars(b, e, w);
    if (r.ec == std::errc{} && r.ptr == e) {
      *out = static_cast<T>(w);  // wraps like the integer conversions
      return true;
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    float f = 0;  // parsed as a float, not through a double, so it rounds once
    const auto r = std::from_chars(b, e, f);
    if (r.ec == std::errc{} && r.ptr == e) {
      *out = f;
      return true;
    }
  }
  double d = 0;
  const auto r = std::from_chars(b, e, d);
  if (r.ptr != e) return false;
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars leaves d unset beyond a double's range; strtod gives the infinity or the zero
    // that numpy's float() gives ("1e400" -> inf).
    const std::string copy(b, e);
    d = std::strtod(copy.c_str(), nullptr);
  } else if (r.ec != std::errc{}) {
    return false;
  }
  if constexpr (!is_float8_v<T> && !is_int4_v<T>) *out = convert<T>(d);
  return true;
}

// The target dtype from `to`.
Result<DType> cast_target(const Node& node) {
  AttrReader attrs(node);
  DType to = DType::kUndefined;
  if (node.opset < 6) {
    const std::string name = attrs.get_string("to", "");
    RECUR_RETURN_IF_ERROR(attrs.status());
    auto t = dtype_from_onnx_name(name);
    if (!t) return invalid_model(node.describe() + ": unknown type name '" + name + "' in 'to'");
    to = *t;
  } else {
    const int64_t code = attrs.require_int("to");
    RECUR_RETURN_IF_ERROR(attrs.status());
    to = static_cast<DType>(code);
    if (dtype_name(to) == "undefined") {
      return not_implemented(node.describe() + ": unsupported 'to' type code " +
                             std::to_string(code));
    }
  }
  if (!is_supported(to)) {
    return not_implemented(node.describe() + ": casting to " + std::string(dtype_name(to)) +
                           " is not supported");
  }
  return to;
}

// `saturate` (opset 19): only float8 targets read it.
Result<bool> read_saturate(const Node& node) {
  AttrReader attrs(node);
  const int64_t saturate = attrs.get_int("saturate", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return saturate != 0;
}

// `to` undefined: CastLike, whose target is input 1's dtype.
class CastKernel final : public Kernel {
 public:
  CastKernel(DType to, bool saturate) : to_(to), saturate_(saturate) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    DType to = to_;
    if (to == DType::kUndefined) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* like, required_input(ctx, 1));
      to = like->dtype();
    }
    if (!is_supported(to)) return unsupported_dtype(ctx, to);
    if (!is_supported(x->dtype())) return unsupported_dtype(ctx, x->dtype());
    if (to == x->dtype()) return ctx.set_output(0, *x);
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, to, x->shape()));
    const int64_t n = x->numel();
    if (to == DType::kString) {
      std::string* po = out->data<std::string>();
      const bool ok = visit_dtype(kCastTypes, x->dtype(), [&](auto tag) {
        using From = typename decltype(tag)::type;
        const From* px = x->data<From>();
        for (int64_t i = 0; i < n; ++i) po[i] = number_to_string(px[i]);
      });
      return ok ? ok_status() : unsupported_dtype(ctx, x->dtype());
    }
    if (x->dtype() == DType::kString) {
      const std::string* px = x->data<std::string>();
      Status st = ok_status();
      const bool ok = visit_dtype(kCastTypes, to, [&](auto tag) {
        using To = typename decltype(tag)::type;
        To* po = out->data<To>();
        for (int64_t i = 0; i < n && st.ok(); ++i) {
          if (!string_to_number(px[i], &po[i], saturate_)) {
            st = ctx.error(ErrorCode::kInvalidArgument,
                           "element " + std::to_string(i) + " '" + px[i].substr(0, 40) +
                               "' is not a number of type " + std::string(dtype_name(to)));
          }
        }
      });
      if (!ok) return unsupported_dtype(ctx, to);
      return st;
    }
    const bool handled = visit_dtype(kCastTypes, x->dtype(), [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      visit_dtype(kCastTypes, to, [&](auto to_tag) {
        using To = typename decltype(to_tag)::type;
        const From* px = x->data<From>();
        To* po = out->data<To>();
        for (int64_t i = 0; i < n; ++i) po[i] = cast_one<To>(px[i], saturate_);
      });
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }

 private:
  DType to_;
  bool saturate_;
};

Status infer_cast(InferContext& ctx) {
  TypeInfo t = ctx.input_type(0);
  auto to = cast_target(ctx.node());
  t.dtype = to.ok() ? *to : DType::kUndefined;
  ctx.set_output(0, t);
  return ok_status();
}

Status infer_cast_like(InferContext& ctx) {
  TypeInfo t = ctx.input_type(0);
  t.dtype = ctx.input_type(1).dtype;
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_cast(Registrar& r) {
  r.add({.op_type = "Cast",
         .since = 1,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(DType to, cast_target(c.node()));
           RECUR_ASSIGN_OR_RETURN(bool saturate, read_saturate(c.node()));
           return std::make_unique<CastKernel>(to, saturate);
         },
         .takes_strings = true},
        infer_cast);
  r.add({.op_type = "CastLike",
         .since = 15,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(bool saturate, read_saturate(c.node()));
           return std::make_unique<CastKernel>(DType::kUndefined, saturate);
         },
         .takes_strings = true},
        infer_cast_like);
}

}  // namespace recur::reference
