// Cast (`to` is a type name such as "FLOAT" in opset 1, a TensorProto.DataType code from
// opset 6) and CastLike (the dtype of a second input), through opset 25. Every pair of the
// numeric types, bool, float16, bfloat16, the float8 types (19, with `saturate`),
// int4/uint4 (21), float4e2m1 (23), float8e8m0 (24, with `round_mode`) and int2/uint2 (25);
// conversions are convert<>()'s (see elementwise.h) and cast_one's. To and from
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

inline constexpr auto kCastTypes =
    kAllTypes + kFloat8Types + kInt4Types + kMxFloatTypes + kInt2Types;

struct CastOptions {
  bool saturate = true;              // float8 targets (Cast-19)
  E8M0Round round = E8M0Round::kUp;  // float8e8m0 targets (Cast-24's round_mode)
  // A float beyond the range of int4/uint4/int2/uint2 wraps (keeps its low bits) from opset
  // 25 and saturates before it; see docs/semantics.md.
  bool wrap_float = false;
};

// A value for a 4- or 2-bit integer To: rounded half to even, then brought into range by
// keeping the low bits (`wrap`) or by clamping.
template <class To>
To to_narrow_int(double x, bool wrap) {
  using V = decltype(To{}.value);
  constexpr int bits = is_int4_v<To> ? 4 : 2;
  constexpr bool is_signed_type = std::is_same_v<To, Int4> || std::is_same_v<To, Int2>;
  constexpr double lo = is_signed_type ? -(1 << (bits - 1)) : 0.0;
  constexpr double hi = is_signed_type ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  To out;
  if (std::isnan(x)) return out;  // undefined by the spec: 0, as before
  if (!wrap) {
    out.value = static_cast<V>(std::nearbyint(std::clamp(x, lo, hi)));
    return out;
  }
  // Clamped first so that the conversion to an integer is defined; beyond 2^62 the value is
  // undefined by the spec anyway.
  constexpr double kBig = 4611686018427387904.0;  // 2^62
  const auto n = static_cast<int64_t>(std::nearbyint(std::clamp(x, -kBig, kBig)));
  auto low = static_cast<uint8_t>(static_cast<uint64_t>(n) & ((1u << bits) - 1));
  if (is_signed_type && (low >> (bits - 1)) != 0)
    low = static_cast<uint8_t>(low | ~((1u << bits) - 1));
  out.value = static_cast<V>(low);
  return out;
}

// One element From -> To. The float8, float4, 4-bit and 2-bit types pass through float and the
// integer they hold; to float8 follows the saturate tables of Cast-19 and 24; to float8e8m0
// rounds as `round` says; to float4e2m1 saturates; to the 4- and 2-bit integers rounds half
// to even, as ONNX's reference does, integers (which the spec says wrap) always wrapping.
template <class To, class From>
To cast_one(From v, const CastOptions& o) {
  if constexpr (is_float8_v<From> || is_float4_v<From>) {
    return cast_one<To>(static_cast<float>(v), o);
  } else if constexpr (is_int4_v<From> || is_int2_v<From>) {
    return cast_one<To>(v.value, o);
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (std::is_same_v<To, bool>) return v;
    return cast_one<To>(v ? uint8_t{1} : uint8_t{0}, o);
  } else if constexpr (std::is_same_v<To, Float8E8M0>) {
    return To::from_bits(
        float_to_float8e8m0(static_cast<float>(to_compute(v)), o.saturate, o.round));
  } else if constexpr (is_float8_v<To>) {
    return To(static_cast<float>(to_compute(v)), o.saturate);
  } else if constexpr (is_float4_v<To>) {
    return To(static_cast<float>(to_compute(v)));
  } else if constexpr (is_int4_v<To> || is_int2_v<To>) {
    if constexpr (std::is_integral_v<From>) {
      // Exact in int64 for every integer but uint64 values above 2^63, which wrap the same.
      const auto n = static_cast<int64_t>(v);
      return to_narrow_int<To>(static_cast<double>(n % 256), true);
    } else {
      return to_narrow_int<To>(static_cast<double>(to_compute(v)), o.wrap_float);
    }
  } else {
    return convert<To>(v);
  }
}

template <class T>
std::string number_to_string(T v) {
  if constexpr (is_float8_v<T> || is_float4_v<T>) {
    return number_to_string(static_cast<float>(v));
  } else if constexpr (is_int4_v<T> || is_int2_v<T>) {
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
constexpr bool kThroughFloat = is_float8_v<T> || is_int4_v<T> || is_float4_v<T> || is_int2_v<T>;

template <class T>
bool string_to_number(const std::string& text, T* out, const CastOptions& o) {
  if constexpr (kThroughFloat<T>) {
    float f = 0;
    if (!string_to_number(text, &f, o)) return false;
    *out = cast_one<T>(f, o);
    return true;
  }
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;  // from_chars takes no '+'
  if constexpr (kThroughFloat<T>) {
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
  if constexpr (!kThroughFloat<T>) *out = convert<T>(d);
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

// `saturate` (opset 19) and `round_mode` (24): only float8 targets read them.
Result<CastOptions> read_options(const Node& node) {
  AttrReader attrs(node);
  CastOptions o;
  o.saturate = attrs.get_int("saturate", 1) != 0;
  const std::string round = attrs.get_string("round_mode", "up");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (round == "up") {
    o.round = E8M0Round::kUp;
  } else if (round == "down") {
    o.round = E8M0Round::kDown;
  } else if (round == "nearest") {
    o.round = E8M0Round::kNearest;
  } else {
    return invalid_model(node.describe() + ": round_mode '" + round +
                         "' is not one of 'up', 'down' and 'nearest'");
  }
  o.wrap_float = node.opset >= 25;
  return o;
}

// `to` undefined: CastLike, whose target is input 1's dtype.
class CastKernel final : public Kernel {
 public:
  CastKernel(DType to, CastOptions options) : to_(to), options_(options) {}

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
          if (!string_to_number(px[i], &po[i], options_)) {
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
        for (int64_t i = 0; i < n; ++i) po[i] = cast_one<To>(px[i], options_);
      });
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }

 private:
  DType to_;
  CastOptions options_;
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
           RECUR_ASSIGN_OR_RETURN(CastOptions options, read_options(c.node()));
           return std::make_unique<CastKernel>(to, options);
         },
         .takes_strings = true},
        infer_cast);
  r.add({.op_type = "CastLike",
         .since = 15,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(CastOptions options, read_options(c.node()));
           return std::make_unique<CastKernel>(DType::kUndefined, options);
         },
         .takes_strings = true},
        infer_cast_like);
}

}  // namespace recur::reference
