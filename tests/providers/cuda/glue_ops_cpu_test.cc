// cuda-generic's glue kernels without a GPU: the host-side plans (ops/op_plans.h) and the
// per-element functions (ops/element_fns.h) that every CUDA kernel is a grid-stride loop around,
// run here in plain loops and compared with the reference provider on random inputs:
// broadcasting arithmetic and comparisons, unary functions, Where, Cast, Transpose, Slice,
// Expand, Flatten's shape, Concat, Split, Gather, ScatterElements, Range, the reductions and
// GlobalAveragePool, ArgMax, Softmax and LogSoftmax, LayerNormalization, TopK, and MatMul's
// batching plan.
#if RECUR_HAVE_CUDA

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <random>

#include "providers/cuda/ops/element_fns.h"
#include "providers/cuda/ops/op_plans.h"
#include "recur/recur.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/graph/conv_transpose_shape.h"
#include "runtime/graph/graph.h"
#include "tests/support/data_dirs.h"
#include "tests/support/model_builder.h"
#include "tools/common/testdir.h"

namespace recur::testing {
namespace {

using namespace recur::cuda::ops;

std::mt19937& rng() {
  static std::mt19937 r(7);
  return r;
}

Tensor rand_float(const Shape& s, float lo = -2.0f, float hi = 2.0f) {
  Tensor t = Tensor::empty(DType::kFloat32, s);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng());
  return t;
}

Tensor rand_int(const Shape& s, int64_t lo, int64_t hi) {
  Tensor t = Tensor::empty(DType::kInt64, s);
  std::uniform_int_distribution<int64_t> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = u(rng());
  return t;
}

Tensor ints(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// One node run by the reference provider; inputs are graph inputs (empty names are omitted).
std::vector<Tensor> reference(const std::string& op,
                              const std::vector<std::pair<std::string, Tensor>>& ins,
                              const std::vector<DType>& out_types,
                              const std::function<void(onnx::NodeProto&)>& attrs = nullptr,
                              int opset = 17) {
  ModelBuilder mb(opset);
  std::vector<std::string> names;
  Feeds feeds;
  for (const auto& [name, t] : ins) {
    names.push_back(name);
    if (name.empty()) continue;
    mb.input(name, t.dtype(), t.shape());
    feeds.emplace_back(name, t);
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < out_types.size(); ++i) {
    outs.push_back("out" + std::to_string(i));
    mb.output(outs.back(), out_types[i]);
  }
  onnx::NodeProto& n = mb.node(op, names, outs, "n");
  if (attrs) attrs(n);
  const std::string bytes = mb.bytes();
  Session s = Session::from_bytes(bytes.data(), bytes.size(),
                                  SessionOptions().providers({"reference"}).optimize(false));
  const Outputs o = s.run(feeds);
  return o.tensors();
}

void expect_same(const Tensor& got, const Tensor& want, const std::string& what,
                 double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const tools::Comparison c = tools::compare(got, want, tools::Tolerance{tol, tol});
  EXPECT_TRUE(c.match) << what << ": " << c.reason;
}

// --- Elementwise -----------------------------------------------------------------------------

TEST(GlueOpsCpu, BinaryBroadcasting) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}},
      {{1}, {5, 2}},          {{}, {3, 2}},     {{4, 1, 3, 1}, {1, 5, 1, 2}}};
  const std::vector<std::pair<const char*, int32_t>> ops = {
      {"Add", kAdd}, {"Sub", kSub}, {"Mul", kMul}, {"Div", kDiv},
      {"Pow", kPow}, {"Max", kMax}, {"Min", kMin}, {"PRelu", kPRelu}};
  for (const auto& [sa, sb] : shapes) {
    for (const auto& [op, code] : ops) {
      if (std::string(op) == "PRelu" && *broadcast_shape({sa, sb}) != sa) continue;
      Tensor a = std::string(op) == "Pow" ? rand_float(sa, 0.1f, 2.0f) : rand_float(sa);
      Tensor b = rand_float(sb);
      // A NaN on either side (Max and Min propagate it, as numpy's maximum does).
      if (a.numel() > 1) a.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
      if (b.numel() > 2) b.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
      const auto want = reference(op, {{"a", a}, {"b", b}}, {DType::kFloat32});
      auto out = broadcast_shape({sa, sb});
      ASSERT_TRUE(out.ok());
      BinaryArgs g;
      g.op = code;
      g.a = *broadcast_strided(sa, *out);
      g.b = *broadcast_strided(sb, *out);
      Tensor y = Tensor::empty(DType::kFloat32, *out);
      for (int64_t i = 0; i < y.numel(); ++i)
        binary_float_element<float, float>(g, a.data<float>(), b.data<float>(), y.data<float>(), i);
      expect_same(y, want[0], std::string(op) + " " + shape_to_string(sa) + shape_to_string(sb));
    }
  }
}

TEST(GlueOpsCpu, PowSquareAndSquareRootKeepPowsValues) {
  // The x * x and sqrt fast paths for exponents 2 and 0.5. Expected: np.square and np.sqrt of
  // these float32 values; math.pow(v, 0.5) for -0 (+0) and -inf (inf); NaN for -4.
  const float inf = std::numeric_limits<float>::infinity();
  const float xs[] = {1.5f, -2.25f, 3.1f, 0.3f};
  const float squares[] = {2.25f, 5.0625f, 9.609999656677246f, 0.09000000357627869f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(float_binary<float>(kPow, xs[i], 2.0f), squares[i]);
  const float rs[] = {2.0f, 0.3f, 7.7f, 0.0f, -0.0f, -inf, inf};
  const float roots[] = {
      1.4142135381698608f, 0.547722578048706f, 2.7748873233795166f, 0, 0, inf, inf};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(float_binary<float>(kPow, rs[i], 0.5f), roots[i]) << i;
  EXPECT_FALSE(std::signbit(float_binary<float>(kPow, -0.0f, 0.5f)));
  EXPECT_TRUE(std::isnan(float_binary<float>(kPow, -4.0f, 0.5f)));
  // Another exponent keeps pow: 2 ** 3.
  EXPECT_EQ(float_binary<float>(kPow, 2.0f, 3.0f), 8.0f);
}

TEST(GlueOpsCpu, ComparisonsAndIntegerArithmetic) {
  for (const auto& [op, code] :
       std::vector<std::pair<const char*, int32_t>>{{"Equal", kEqual},
                                                    {"Less", kLess},
                                                    {"Greater", kGreater},
                                                    {"LessOrEqual", kLessOrEqual},
                                                    {"GreaterOrEqual", kGreaterOrEqual}}) {
    Tensor a = rand_int({3, 4}, -3, 3), b = rand_int({4}, -3, 3);
    const auto want = reference(op, {{"a", a}, {"b", b}}, {DType::kBool});
    BinaryArgs g;
    g.op = code;
    g.a = *broadcast_strided({3, 4}, {3, 4});
    g.b = *broadcast_strided({4}, {3, 4});
    Tensor y = Tensor::empty(DType::kBool, {3, 4});
    for (int64_t i = 0; i < 12; ++i)
      compare_element<int64_t, int64_t>(g, a.data<int64_t>(), b.data<int64_t>(), y.data<bool>(), i);
    expect_same(y, want[0], op);
  }
  for (const auto& [op, code, fmod] :
       std::vector<std::tuple<const char*, int32_t, int>>{{"Add", kAdd, 0},
                                                          {"Mul", kMul, 0},
                                                          {"Div", kDiv, 0},
                                                          {"Mod", kMod, 0},
                                                          {"Mod", kFmod, 1}}) {
    Tensor a = rand_int({5, 6}, -50, 50), b = rand_int({6}, 1, 9);
    for (int64_t i = 0; i < 6; i += 2) b.data<int64_t>()[i] = -b.data<int64_t>()[i];
    const auto want =
        reference(op, {{"a", a}, {"b", b}}, {DType::kInt64}, [fmod = fmod](onnx::NodeProto& n) {
          if (fmod) set_attr(n, "fmod", int64_t{1});
        });
    BinaryArgs g;
    g.op = code;
    g.a = *broadcast_strided({5, 6}, {5, 6});
    g.b = *broadcast_strided({6}, {5, 6});
    Tensor y = Tensor::empty(DType::kInt64, {5, 6});
    int32_t flag = 0;
    for (int64_t i = 0; i < 30; ++i)
      binary_int_element<int64_t>(g, a.data<int64_t>(), b.data<int64_t>(), y.data<int64_t>(), i,
                                  &flag, 7);
    EXPECT_EQ(flag, 0);
    expect_same(y, want[0], std::string(op) + (fmod ? " fmod" : ""));
  }
  // Integer division by zero raises the site's error.
  BinaryArgs g;
  g.op = kDiv;
  g.a = *broadcast_strided({1}, {1});
  g.b = g.a;
  const int64_t one = 1, zero = 0;
  int64_t out = 5;
  int32_t flag = 0;
  binary_int_element<int64_t>(g, &one, &zero, &out, 0, &flag, 42);
  EXPECT_EQ(flag, 42);
  EXPECT_EQ(out, 0);
}

TEST(GlueOpsCpu, UnaryFunctions) {
  struct U {
    const char* op;
    int32_t code;
    float alpha, beta;
    std::function<void(onnx::NodeProto&)> attrs;
    float lo, hi;
  };
  const std::vector<U> cases = {
      {"Relu", kRelu, 0, 0, nullptr, -2, 2},
      {"Tanh", kTanh, 0, 0, nullptr, -3, 3},
      {"Sigmoid", kSigmoid, 0, 0, nullptr, -5, 5},
      {"Exp", kExp, 0, 0, nullptr, -3, 3},
      {"Log", kLog, 0, 0, nullptr, 0.1f, 4},
      {"Neg", kNeg, 0, 0, nullptr, -2, 2},
      {"Abs", kAbs, 0, 0, nullptr, -2, 2},
      {"Sqrt", kSqrt, 0, 0, nullptr, 0, 4},
      {"Reciprocal", kReciprocal, 0, 0, nullptr, 0.5f, 3},
      {"Floor", kFloor, 0, 0, nullptr, -3, 3},
      {"Ceil", kCeil, 0, 0, nullptr, -3, 3},
      {"Round", kRound, 0, 0, nullptr, -3, 3},
      {"Erf", kErf, 0, 0, nullptr, -2, 2},
      {"Sin", kSin, 0, 0, nullptr, -3, 3},
      {"Cos", kCos, 0, 0, nullptr, -3, 3},
      {"Softplus", kSoftplus, 0, 0, nullptr, -5, 5},
      {"Softsign", kSoftsign, 0, 0, nullptr, -5, 5},
      {"Elu", kElu, 0.7f, 0, [](onnx::NodeProto& n) { set_attr(n, "alpha", 0.7f); }, -3, 3},
      {"LeakyRelu", kLeakyRelu, 0.2f, 0, [](onnx::NodeProto& n) { set_attr(n, "alpha", 0.2f); }, -3,
       3},
      {"HardSigmoid", kHardSigmoid, 0.3f, 0.4f,
       [](onnx::NodeProto& n) {
         set_attr(n, "alpha", 0.3f);
         set_attr(n, "beta", 0.4f);
       },
       -5, 5},
      {"Selu", kSelu, 1.67326319217681884765625f, 1.05070102214813232421875f, nullptr, -3, 3},
      {"Sign", kSign, 0, 0, nullptr, -2, 2},
      {"ThresholdedRelu", kThresholdedRelu, 0.5f, 0,
       [](onnx::NodeProto& n) { set_attr(n, "alpha", 0.5f); }, -2, 2},
      {"HardSwish", kHardSwish, 0, 0, nullptr, -5, 5},
      {"Celu", kCelu, 1.3f, 0, [](onnx::NodeProto& n) { set_attr(n, "alpha", 1.3f); }, -3, 3},
  };
  for (const U& u : cases) {
    Tensor x = rand_float({3, 7}, u.lo, u.hi);
    // NaN and infinities as the reference takes them (its Relu kept a NaN, the GPU's gave 0).
    x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    x.data<float>()[1] = std::numeric_limits<float>::infinity();
    x.data<float>()[2] = -std::numeric_limits<float>::infinity();
    // Zeros of both signs: a zero in Y has the reference's sign (Abs and Sign of -0 gave -0).
    x.data<float>()[3] = -0.0f;
    x.data<float>()[4] = 0.0f;
    const auto want = reference(u.op, {{"x", x}}, {DType::kFloat32}, u.attrs);
    Tensor y = Tensor::empty(DType::kFloat32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i)
      unary_float_element<float, float>(u.code, u.alpha, u.beta, x.data<float>(), y.data<float>(),
                                        i);
    expect_same(y, want[0], u.op);
    for (int64_t i = 3; i < 5; ++i) {
      const float g = y.data<float>()[i], w = want[0].data<float>()[i];
      if (g == 0.0f && w == 0.0f)
        EXPECT_EQ(std::signbit(g), std::signbit(w)) << u.op << " of " << x.data<float>()[i];
    }
  }
  // Clip with min/max inputs.
  Tensor x = rand_float({10});
  const auto want =
      reference("Clip", {{"x", x}, {"lo", Tensor::scalar(-0.5f)}, {"hi", Tensor::scalar(0.7f)}},
                {DType::kFloat32});
  Tensor y = Tensor::empty(DType::kFloat32, {10});
  for (int64_t i = 0; i < 10; ++i)
    unary_float_element<float, float>(kClip, -0.5f, 0.7f, x.data<float>(), y.data<float>(), i);
  expect_same(y, want[0], "Clip");
}

// Clip as the GPU kernel computes it: clip_bounds, then the element function in T.
template <class T>
Tensor gpu_clip(const Node& node, const Tensor& x, std::optional<double> lo,
                std::optional<double> hi) {
  auto b = clip_bounds(node, lo, hi);
  EXPECT_TRUE(b.ok()) << b.status().message();
  if (!b.ok()) return Tensor();
  Tensor y = Tensor::empty(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    unary_float_element<T, T>(kClip, b->lo, b->hi, x.data<T>(), y.data<T>(), i);
  return y;
}

TEST(GlueOpsCpu, ClipEdgeCases) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Infinities, NaN, signed zeros, values on and near the bounds, and (in float64) values past
  // FLT_MAX and next to 0.1 and 0.3, which bounds rounded to float would move.
  const std::vector<double> xs = {-inf, -1e300, -3.5, -1.0, -0.0, 0.0,   0.1, 0.30000000000000004,
                                  0.7,  1.0,    2.0,  3e38, 1e39, 1e300, inf, nan};
  using Bound = std::optional<double>;
  auto name = [](Bound b) { return b ? std::to_string(*b) : std::string("none"); };
  auto as = [](DType t, const std::vector<double>& v) {
    Tensor x = Tensor::empty(t, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) {
      if (t == DType::kFloat32) {
        x.data<float>()[i] = static_cast<float>(v[i]);
      } else {
        x.data<double>()[i] = v[i];
      }
    }
    return x;
  };
  // A bound as the kernel reads it: the input's own type, widened to double.
  auto read = [](const Tensor& b) {
    return b.dtype() == DType::kFloat32 ? static_cast<double>(b.data<float>()[0])
                                        : b.data<double>()[0];
  };
  // Opset 13: optional min and max inputs, in x's type. min > max (every value becomes max), NaN
  // bounds (NaN everywhere), absent bounds (unbounded).
  const std::vector<std::pair<Bound, Bound>> inputs = {
      {-1.0, 2.0},         {2.0, -1.0},
      {nan, 1.0},          {-1.0, nan},
      {nan, nan},          {std::nullopt, 0.7},
      {0.1, std::nullopt}, {std::nullopt, std::nullopt},
      {-inf, inf},         {0.1, 0.30000000000000004},
      {-0.0, 0.0}};
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    const Tensor x = as(t, xs);
    for (const auto& [lo, hi] : inputs) {
      const Tensor lo_t = lo ? as(t, {*lo}).reshaped({}) : Tensor();
      const Tensor hi_t = hi ? as(t, {*hi}).reshaped({}) : Tensor();
      const auto want = reference(
          "Clip", {{"x", x}, {lo ? "lo" : "", lo_t}, {hi ? "hi" : "", hi_t}}, {t}, nullptr, 13);
      Node node;
      node.op_type = "Clip";
      node.opset = 13;
      const Bound in_lo = lo ? Bound(read(lo_t)) : std::nullopt;
      const Bound in_hi = hi ? Bound(read(hi_t)) : std::nullopt;
      const Tensor got = t == DType::kFloat32 ? gpu_clip<float>(node, x, in_lo, in_hi)
                                              : gpu_clip<double>(node, x, in_lo, in_hi);
      expect_same(got, want[0],
                  "Clip " + std::string(dtype_name(t)) + " [" + name(lo) + ", " + name(hi) + "]",
                  0.0);
    }
  }
  // Opset 6: float attributes; an absent one leaves that side unbounded.
  const std::vector<std::pair<Bound, Bound>> attrs = {{std::nullopt, std::nullopt},
                                                      {-1.0, std::nullopt},
                                                      {std::nullopt, 2.0},
                                                      {2.0, -1.0},
                                                      {-0.5, 0.7}};
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    const Tensor x = as(t, xs);
    for (const auto& [lo, hi] : attrs) {
      const auto want = reference(
          "Clip", {{"x", x}}, {t},
          [lo = lo, hi = hi](onnx::NodeProto& n) {
            if (lo) set_attr(n, "min", static_cast<float>(*lo));
            if (hi) set_attr(n, "max", static_cast<float>(*hi));
          },
          6);
      Node node;
      node.op_type = "Clip";
      node.opset = 6;
      for (const auto& [attr, v] : {std::pair{"min", lo}, std::pair{"max", hi}}) {
        if (!v) continue;
        Attribute a;
        a.type = AttrType::kFloat;
        a.f = static_cast<float>(*v);
        node.attributes[attr] = a;
      }
      const Tensor got = t == DType::kFloat32
                             ? gpu_clip<float>(node, x, std::nullopt, std::nullopt)
                             : gpu_clip<double>(node, x, std::nullopt, std::nullopt);
      expect_same(
          got, want[0],
          "Clip opset 6 " + std::string(dtype_name(t)) + " [" + name(lo) + ", " + name(hi) + "]",
          0.0);
    }
  }
}

TEST(GlueOpsCpu, WhereAndCast) {
  Tensor c = Tensor::empty(DType::kBool, {2, 1, 4});
  for (int64_t i = 0; i < c.numel(); ++i) c.data<bool>()[i] = (i * 7) % 3 == 0;
  Tensor x = rand_float({3, 1}), y = rand_float({1, 4});
  const auto want = reference("Where", {{"c", c}, {"x", x}, {"y", y}}, {DType::kFloat32});
  const Shape out = *broadcast_shape({{2, 1, 4}, {3, 1}, {1, 4}});
  WhereArgs g{*broadcast_strided({2, 1, 4}, out), *broadcast_strided({3, 1}, out),
              *broadcast_strided({1, 4}, out)};
  Tensor got = Tensor::empty(DType::kFloat32, out);
  for (int64_t i = 0; i < got.numel(); ++i)
    where_element<uint32_t>(g, c.data<bool>(), static_cast<const uint32_t*>(x.raw_data()),
                            static_cast<const uint32_t*>(y.raw_data()),
                            static_cast<uint32_t*>(got.raw_data()), i);
  expect_same(got, want[0], "Where");

  const std::vector<DType> types = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                                    DType::kInt8,    DType::kUInt8,   DType::kBool};
  Tensor src = rand_float({12}, 0.0f, 100.0f);
  for (DType from : types) {
    const Tensor a = reference("Cast", {{"x", src}}, {from}, [from](onnx::NodeProto& n) {
      set_attr(n, "to", static_cast<int64_t>(from));
    })[0];
    for (DType to : types) {
      const auto want = reference("Cast", {{"x", a}}, {to}, [to](onnx::NodeProto& n) {
        set_attr(n, "to", static_cast<int64_t>(to));
      });
      Tensor got2 = Tensor::empty(to, a.shape());
      for (int64_t i = 0; i < a.numel(); ++i) {
        cast_store<Float16>(got2.raw_data(), static_cast<int32_t>(to), i,
                            cast_load<Float16>(a.raw_data(), static_cast<int32_t>(from), i));
      }
      expect_same(got2, want[0],
                  std::string("Cast ") + std::string(dtype_name(from)) + " -> " +
                      std::string(dtype_name(to)));
    }
  }
}

// --- Data movement ---------------------------------------------------------------------------

Tensor run_strided(const Tensor& x, const Strided& s, const Shape& out) {
  Tensor y = Tensor::empty(x.dtype(), out);
  for (int64_t i = 0; i < y.numel(); ++i)
    strided_copy_element<uint32_t>(s, static_cast<const uint32_t*>(x.raw_data()),
                                   static_cast<uint32_t*>(y.raw_data()), i);
  return y;
}

TEST(GlueOpsCpu, TransposeSliceExpand) {
  for (int k = 0; k < 20; ++k) {
    const int rank = 1 + k % 5;
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(1 + (k * 7 + d * 3) % 4);
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
    std::shuffle(perm.begin(), perm.end(), rng());
    Tensor x = rand_float(s);
    const auto want = reference("Transpose", {{"x", x}}, {DType::kFloat32},
                                [perm](onnx::NodeProto& n) { set_attr(n, "perm", perm); });
    Shape out;
    auto st = transpose_strided(s, perm, &out);
    ASSERT_TRUE(st.ok());
    expect_same(run_strided(x, *st, out), want[0], "Transpose " + shape_to_string(perm));
  }
  struct S {
    Shape in;
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<S> slices = {
      {{6, 5}, {1}, {4}, {0}, {1}},
      {{6, 5}, {-1, 0}, {-100, 5}, {0, 1}, {-2, 2}},
      {{4, 3, 5}, {0, 1}, {INT64_MAX, -1}, {2, 1}, {3, 1}},
      {{7}, {5}, {1}, {0}, {-1}},
      {{3, 4}, {10}, {20}, {1}, {1}},
      {{2, 6, 2}, {-4}, {6}, {-2}, {1}},
      // A zero-length axis has nothing to take, whatever the step's sign.
      {{2, 0, 3}, {-1}, {-10}, {1}, {-1}},
      {{0}, {INT64_MAX}, {INT64_MIN}, {0}, {-2}},
      {{3, 0}, {0}, {5}, {1}, {1}},
  };
  for (const S& c : slices) {
    Tensor x = rand_float(c.in);
    const auto want = reference("Slice",
                                {{"x", x},
                                 {"s", ints(c.starts)},
                                 {"e", ints(c.ends)},
                                 {"a", ints(c.axes)},
                                 {"t", ints(c.steps)}},
                                {DType::kFloat32});
    Shape out;
    auto st = slice_strided(c.in, c.starts, c.ends, c.axes, c.steps, &out);
    ASSERT_TRUE(st.ok()) << st.status().message();
    // Before copying: a wrong shape would read outside x.
    ASSERT_EQ(out, want[0].shape()) << "Slice " + shape_to_string(c.in);
    expect_same(run_strided(x, *st, out), want[0], "Slice " + shape_to_string(c.in));
  }
  for (const auto& [in, shape] : std::vector<std::pair<Shape, Shape>>{
           {{3, 1}, {2, 3, 4}}, {{1}, {5}}, {{2, 1, 3}, {1, 4, 1}}, {{4}, {1}}}) {
    Tensor x = rand_float(in);
    const auto want = reference("Expand", {{"x", x}, {"s", ints(shape)}}, {DType::kFloat32});
    const Shape out = *broadcast_shape({in, shape});
    expect_same(run_strided(x, *broadcast_strided(in, out), out), want[0],
                "Expand " + shape_to_string(in));
  }
}

// Pad by pad_plan and the kernel's element function, against the reference provider: every
// mode, pads that crop, reflect wider than the dimension, axes (opset 18), a fill value, 1 and
// 8-byte elements, and the errors the reference gives.
TEST(GlueOpsCpu, Pad) {
  struct P {
    Shape in;
    std::vector<int64_t> pads;
    std::vector<int64_t> axes;  // empty: every axis
  };
  const std::vector<P> cases = {
      {{2, 5}, {0, 3, 0, 2}, {}},
      {{3, 4, 5}, {1, 0, 2, 0, 3, 1}, {}},
      {{1, 1, 16}, {0, 0, 7, 0, 0, 7}, {}},  // a 1-D STFT front end's reflect pad
      {{2, 3}, {0, 7, 0, 8}, {}},            // wider than the dimension
      {{4, 6}, {-1, 2, 0, -3}, {}},          // crops, then pads what remains
      {{3, 4, 2}, {2, -1, 1, 3}, {-1, 1}},   // axes, one negative
      {{2, 1, 3}, {2, 2}, {1}},              // a dimension of one
      {{5}, {0, 0}, {}},                     // nothing to do
      {{2, 0, 3}, {0, 1, 0, 0, 1, 0}, {}},   // an empty input padded with the constant
  };
  const char* modes[] = {"constant", "reflect", "edge", "wrap"};
  int compared = 0;
  for (const P& c : cases) {
    for (int32_t mode = kPadConstant; mode <= kPadWrap; ++mode) {
      const std::string what = std::string("Pad ") + modes[mode] + " " + shape_to_string(c.in) +
                               " pads " + shape_to_string(c.pads);
      Tensor x = rand_float(c.in);
      const Tensor value = Tensor::from_vector<float>({}, {2.5f});
      std::vector<std::pair<std::string, Tensor>> ins = {
          {"x", x}, {"p", ints(c.pads)}, {"c", value}};
      if (!c.axes.empty()) ins.push_back({"a", ints(c.axes)});
      auto set_mode = [&](onnx::NodeProto& n) { set_attr(n, "mode", std::string(modes[mode])); };
      Shape out;
      std::optional<std::vector<int64_t>> axes;
      if (!c.axes.empty()) axes = c.axes;
      auto g = pad_plan(c.in, c.pads, axes, mode, &out);
      std::vector<Tensor> want;
      std::string ref_error;
      try {
        want = reference("Pad", ins, {DType::kFloat32}, set_mode, 19);
      } catch (const Error& e) {
        ref_error = e.what();
      }
      if (!ref_error.empty()) {
        EXPECT_FALSE(g.ok()) << what << ": the reference refused (" << ref_error << ")";
        continue;
      }
      ASSERT_TRUE(g.ok()) << what << ": " << g.status().message();
      ASSERT_EQ(out, want[0].shape()) << what;
      Tensor y = Tensor::empty(DType::kFloat32, out);
      uint32_t fill = 0;
      std::memcpy(&fill, value.raw_data(), 4);
      for (int64_t i = 0; i < y.numel(); ++i)
        pad_element<uint32_t>(*g, static_cast<const uint32_t*>(x.raw_data()),
                              static_cast<uint32_t*>(y.raw_data()), fill, i);
      expect_same(y, want[0], what, 0.0);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 33);  // 9 cases in 4 modes, less the empty input's 3 repeating modes
  // 8-byte and 1-byte elements move as words.
  Tensor big = rand_int({3, 4}, -1000, 1000);
  const auto want =
      reference("Pad", {{"x", big}, {"p", ints({1, 2, 0, 1})}}, {DType::kInt64},
                [](onnx::NodeProto& n) { set_attr(n, "mode", std::string("reflect")); });
  Shape out;
  auto g = pad_plan(big.shape(), {1, 2, 0, 1}, std::nullopt, kPadReflect, &out);
  ASSERT_TRUE(g.ok());
  Tensor y = Tensor::empty(DType::kInt64, out);
  for (int64_t i = 0; i < y.numel(); ++i)
    pad_element<uint64_t>(*g, static_cast<const uint64_t*>(big.raw_data()),
                          static_cast<uint64_t*>(y.raw_data()), 0, i);
  expect_same(y, want[0], "Pad int64 reflect", 0.0);
  Tensor flags = Tensor::from_vector<bool>({4}, {true, false, false, true});
  const auto want_b =
      reference("Pad", {{"x", flags}, {"p", ints({2, 1})}}, {DType::kBool},
                [](onnx::NodeProto& n) { set_attr(n, "mode", std::string("edge")); });
  auto gb = pad_plan(flags.shape(), {2, 1}, std::nullopt, kPadEdge, &out);
  ASSERT_TRUE(gb.ok());
  Tensor yb = Tensor::empty(DType::kBool, out);
  for (int64_t i = 0; i < yb.numel(); ++i)
    pad_element<uint8_t>(*gb, static_cast<const uint8_t*>(flags.raw_data()),
                         static_cast<uint8_t*>(yb.raw_data()), 0, i);
  EXPECT_EQ(std::memcmp(yb.raw_data(), want_b[0].raw_data(), 7), 0);
  // What neither runs: a wrong count of pads, a crop beyond the dimension, a rank past kMaxRank.
  EXPECT_FALSE(pad_plan({2, 3}, {1, 1}, std::nullopt, kPadConstant, &out).ok());
  EXPECT_FALSE(pad_plan({2, 3}, {0, -4, 0, 0}, std::nullopt, kPadConstant, &out).ok());
  EXPECT_FALSE(
      pad_plan(Shape(9, 1), std::vector<int64_t>(18, 0), std::nullopt, kPadConstant, &out).ok());
}

// Einsum as the GPU runs it (einsum_gpu_plan): each operand read dense through its view, a
// batched GEMM in double on the host, the output read from the product through `y`, against
// numpy's outputs for every two-operand float32 case of tests/data/einsum.
TEST(GlueOpsCpu, EinsumAsOneBatchedGemm) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(test_data_dir()) / "einsum";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    auto model = load_model((e.path() / "model.onnx").string());
    ASSERT_TRUE(model.ok()) << model.status().message();
    const Node& node = model->graph->node(0);
    auto sets = tools::read_data_sets(e.path().string());
    ASSERT_TRUE(sets.ok());
    const auto& ins = sets->front().inputs;
    if (node.op_type != "Einsum" || ins.size() != 2 || ins[0].second.dtype() != DType::kFloat32)
      continue;
    const std::string what = e.path().filename().string() + " '" + node.attr("equation")->s + "'";
    auto parsed = einsum::parse_equation(node.attr("equation")->s);
    ASSERT_TRUE(parsed.ok()) << what;
    const Tensor &a = ins[0].second, &b = ins[1].second;
    auto g = einsum_gpu_plan(*parsed, a.shape(), b.shape());
    ASSERT_TRUE(g.ok()) << what << ": " << g.status().message();
    const Tensor& want = sets->front().outputs.at(0).second;
    ASSERT_EQ(g->out, want.shape()) << what;
    Tensor y = Tensor::empty(DType::kFloat32, g->out);
    std::memset(y.raw_data(), 0, y.nbytes());
    if (y.numel() > 0 && g->kt > 0) {
      const int64_t bt = g->bt, mt = g->mt, nt = g->nt, kt = g->kt;
      std::vector<uint32_t> da(static_cast<size_t>(bt * mt * kt)),
          db(static_cast<size_t>(bt * kt * nt));
      for (size_t i = 0; i < da.size(); ++i)
        strided_copy_element<uint32_t>(g->a, static_cast<const uint32_t*>(a.raw_data()), da.data(),
                                       static_cast<int64_t>(i));
      for (size_t i = 0; i < db.size(); ++i)
        strided_copy_element<uint32_t>(g->b, static_cast<const uint32_t*>(b.raw_data()), db.data(),
                                       static_cast<int64_t>(i));
      auto f = [](uint32_t bits) {
        float v;
        std::memcpy(&v, &bits, 4);
        return static_cast<double>(v);
      };
      std::vector<float> d(static_cast<size_t>(bt * mt * nt));
      for (int64_t q = 0; q < bt; ++q)
        for (int64_t m = 0; m < mt; ++m)
          for (int64_t n = 0; n < nt; ++n) {
            double acc = 0;
            for (int64_t k = 0; k < kt; ++k)
              acc += f(da[static_cast<size_t>((q * mt + m) * kt + k)]) *
                     f(db[static_cast<size_t>((q * kt + k) * nt + n)]);
            d[static_cast<size_t>((q * mt + m) * nt + n)] = static_cast<float>(acc);
          }
      for (int64_t i = 0; i < y.numel(); ++i)
        strided_copy_element<float>(g->y, d.data(), y.data<float>(), i);
    }
    expect_same(y, want, what, 1e-5);
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

// ConvTranspose as the GPU runs it: W^T X per batch and group into columns [n, m, taps, x...]
// (on the host, in double), then col2im_element over Y, against the reference provider: 1-D
// (HiFi-GAN's upsampling), 2-D with groups, dilation, output_padding, output_shape (negative
// pads), auto_pad, depthwise, and 3-D.
TEST(GlueOpsCpu, ConvTransposeAsGemmAndCol2Im) {
  struct C {
    std::string what;
    Shape x, w;
    bool bias;
    std::function<void(onnx::NodeProto&)> attrs;
    int64_t group = 1;  // as `attrs` sets it
  };
  using V = std::vector<int64_t>;
  const std::vector<C> cases = {
      {"1-D stride 2",
       {2, 4, 7},
       {4, 3, 4},
       true,
       [](onnx::NodeProto& n) {
         set_attr(n, "strides", V{2});
         set_attr(n, "pads", V{1, 1});
       }},
      {"2-D groups, dilation, output_padding",
       {1, 4, 3, 5},
       {4, 3, 3, 2},
       true,
       [](onnx::NodeProto& n) {
         set_attr(n, "group", int64_t{2});
         set_attr(n, "strides", V{2, 3});
         set_attr(n, "dilations", V{2, 1});
         set_attr(n, "output_padding", V{1, 2});
         set_attr(n, "pads", V{0, 1, 1, 0});
       },
       2},
      {"output_shape beyond the full output",
       {1, 2, 3, 3},
       {2, 2, 2, 2},
       false,
       [](onnx::NodeProto& n) {
         set_attr(n, "strides", V{2, 2});
         set_attr(n, "output_shape", V{9, 8});
       }},
      {"SAME_UPPER",
       {2, 3, 4, 4},
       {3, 2, 3, 3},
       true,
       [](onnx::NodeProto& n) {
         set_attr(n, "strides", V{2, 2});
         set_attr(n, "auto_pad", std::string("SAME_UPPER"));
       }},
      {"depthwise",
       {1, 6, 9},
       {6, 1, 5},
       true,
       [](onnx::NodeProto& n) {
         set_attr(n, "group", int64_t{6});
         set_attr(n, "strides", V{3});
         set_attr(n, "pads", V{2, 1});
       },
       6},
      {"3-D",
       {1, 2, 3, 2, 3},
       {2, 2, 2, 3, 2},
       true,
       [](onnx::NodeProto& n) {
         set_attr(n, "strides", V{2, 1, 2});
       }},
  };
  for (const C& c : cases) {
    Tensor x = rand_float(c.x), w = rand_float(c.w);
    const int64_t group = c.group;
    std::vector<std::pair<std::string, Tensor>> ins = {{"x", x}, {"w", w}};
    if (c.bias) ins.push_back({"b", rand_float({c.w[1] * group})});  // one per output channel
    const auto want = reference("ConvTranspose", ins, {DType::kFloat32}, c.attrs);
    // The plan from the node as the loader reads it.
    ModelBuilder mb;
    mb.input("x", DType::kFloat32, c.x).input("w", DType::kFloat32, c.w);
    mb.output("y", DType::kFloat32);
    c.attrs(mb.node("ConvTranspose", {"x", "w"}, {"y"}, "ct"));
    const std::string bytes = mb.bytes();
    auto model = load_model_from_bytes(bytes.data(), bytes.size(), "", c.what);
    ASSERT_TRUE(model.ok()) << c.what << ": " << model.status().message();
    auto attrs = ConvTransposeAttrs::read(model->graph->node(0));
    ASSERT_TRUE(attrs.ok()) << c.what;
    auto s = resolve_conv_transpose(*attrs, c.x, c.w);
    ASSERT_TRUE(s.ok()) << c.what << ": " << s.status().message();
    auto g = col2im_plan(*s, c.bias);
    ASSERT_TRUE(g.ok()) << c.what << ": " << g.status().message();
    ASSERT_EQ(s->y, want[0].shape()) << c.what;
    const int64_t cg = s->c / group, mg = s->m / group;
    std::vector<float> cols(static_cast<size_t>(s->n * s->m * g->taps * g->p_in));
    for (int64_t n = 0; n < s->n; ++n)
      for (int64_t gi = 0; gi < group; ++gi)
        for (int64_t r = 0; r < mg * g->taps; ++r)  // row of W_g^T: output channel, tap
          for (int64_t p = 0; p < g->p_in; ++p) {
            double acc = 0;
            for (int64_t ci = 0; ci < cg; ++ci)
              acc += static_cast<double>(w.data<float>()[(gi * cg + ci) * mg * g->taps + r]) *
                     x.data<float>()[(n * s->c + gi * cg + ci) * g->p_in + p];
            cols[static_cast<size_t>(((n * group + gi) * mg * g->taps + r) * g->p_in + p)] =
                static_cast<float>(acc);
          }
    Tensor y = Tensor::empty(DType::kFloat32, s->y);
    const float* bias = c.bias ? ins.back().second.data<float>() : nullptr;
    for (int64_t i = 0; i < y.numel(); ++i)
      col2im_element<float, float>(*g, cols.data(), bias, y.data<float>(), i);
    expect_same(y, want[0], "ConvTranspose " + c.what, 1e-5);
  }
}

TEST(GlueOpsCpu, FlattenShape) {
  // Every axis in [-rank, rank], empty tensors included: a zero outer product must not zero
  // the inner one.
  for (const Shape& in : std::vector<Shape>{{2, 3, 4}, {0, 3, 4}, {3, 0}, {2, 0, 5}, {5}, {}}) {
    const int64_t rank = static_cast<int64_t>(in.size());
    const Tensor x = rand_float(in);
    for (int64_t axis = -rank; axis <= rank; ++axis) {
      const auto want = reference(
          "Flatten", {{"x", x}}, {DType::kFloat32},
          [axis](onnx::NodeProto& n) { set_attr(n, "axis", axis); }, 13);
      auto got = flatten_shape(in, axis);
      ASSERT_TRUE(got.ok()) << got.status().message();
      EXPECT_EQ(*got, want[0].shape()) << shape_to_string(in) << " axis " << axis;
    }
    EXPECT_FALSE(flatten_shape(in, rank + 1).ok()) << shape_to_string(in);
    EXPECT_FALSE(flatten_shape(in, -rank - 1).ok()) << shape_to_string(in);
  }
  // Empty, yet 2^40 * 2^40 elements on the inner side: no int64 shape holds it.
  EXPECT_FALSE(flatten_shape({0, int64_t{1} << 40, int64_t{1} << 40}, 1).ok());
}

void apply_blocks(const std::vector<BlockCopy>& blocks, size_t k, const float* src, float* dst) {
  const BlockCopy& b = blocks[k];
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t w = 0; w < b.width; ++w)
      dst[b.dst_offset + o * b.dst_pitch + w] = src[b.src_offset + o * b.src_pitch + w];
}

TEST(GlueOpsCpu, ConcatAndSplit) {
  for (int64_t axis : {0, 1, 2, -1}) {
    Shape a = {2, 3, 4}, b = {2, 3, 4}, c = {2, 3, 4};
    const int64_t ax = axis < 0 ? axis + 3 : axis;
    b[static_cast<size_t>(ax)] = 1;
    c[static_cast<size_t>(ax)] = 0;
    Tensor ta = rand_float(a), tb = rand_float(b), tc = rand_float(c);
    const auto want = reference("Concat", {{"a", ta}, {"b", tb}, {"c", tc}}, {DType::kFloat32},
                                [axis](onnx::NodeProto& n) { set_attr(n, "axis", axis); });
    Shape out;
    auto blocks = concat_blocks({a, b, c}, axis, &out);
    ASSERT_TRUE(blocks.ok());
    Tensor y = Tensor::empty(DType::kFloat32, out);
    const Tensor* ins[] = {&ta, &tb, &tc};
    for (size_t k = 0; k < 3; ++k) apply_blocks(*blocks, k, ins[k]->data<float>(), y.data<float>());
    expect_same(y, want[0], "Concat axis " + std::to_string(axis));

    Tensor x = rand_float({4, 6, 5});
    const std::vector<int64_t> sizes = ax == 0   ? std::vector<int64_t>{1, 3}
                                       : ax == 1 ? std::vector<int64_t>{2, 0, 4}
                                                 : std::vector<int64_t>{5};
    const auto want2 = reference("Split", {{"x", x}, {"s", ints(sizes)}},
                                 std::vector<DType>(sizes.size(), DType::kFloat32),
                                 [axis](onnx::NodeProto& n) { set_attr(n, "axis", axis); });
    std::vector<Shape> outs;
    auto sb = split_blocks({4, 6, 5}, axis, sizes, &outs);
    ASSERT_TRUE(sb.ok()) << sb.status().message();
    for (size_t k = 0; k < outs.size(); ++k) {
      Tensor yk = Tensor::empty(DType::kFloat32, outs[k]);
      apply_blocks(*sb, k, x.data<float>(), yk.data<float>());
      expect_same(yk, want2[k], "Split output " + std::to_string(k));
    }
  }
}

TEST(GlueOpsCpu, GatherScatterRange) {
  for (int64_t axis : {0, 1, -1}) {
    Tensor data = rand_float({4, 5, 3});
    const int64_t dim = data.dim(axis < 0 ? axis + 3 : axis);
    Tensor idx = rand_int({2, 3}, -dim, dim - 1);
    const auto want = reference("Gather", {{"d", data}, {"i", idx}}, {DType::kFloat32},
                                [axis](onnx::NodeProto& n) { set_attr(n, "axis", axis); });
    Shape out;
    int64_t outer = 0;
    auto g = gather_plan(data.shape(), idx.shape(), axis, &out, &outer);
    ASSERT_TRUE(g.ok());
    Tensor y = Tensor::empty(DType::kFloat32, out);
    int32_t flag = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      gather_element<uint32_t, int64_t>(*g, static_cast<const uint32_t*>(data.raw_data()),
                                        idx.data<int64_t>(), static_cast<uint32_t*>(y.raw_data()),
                                        i, &flag, 3);
    EXPECT_EQ(flag, 0);
    expect_same(y, want[0], "Gather axis " + std::to_string(axis));
  }
  {
    // Out of range: clamped, and the site raised.
    GatherIndex g{1, 1, 4};
    const float data[4] = {1, 2, 3, 4};
    const int64_t bad = 9;
    float out = 0;
    int32_t flag = 0;
    gather_element<uint32_t, int64_t>(g, reinterpret_cast<const uint32_t*>(data), &bad,
                                      reinterpret_cast<uint32_t*>(&out), 0, &flag, 11);
    EXPECT_EQ(flag, 11);
    EXPECT_EQ(out, 4.0f);
  }
  {
    Tensor data = rand_float({4, 3});
    Tensor idx = Tensor::from_vector<int64_t>({2, 3}, {3, 0, 2, -1, 1, 0});
    Tensor upd = rand_float({2, 3});
    const auto want =
        reference("ScatterElements", {{"d", data}, {"i", idx}, {"u", upd}}, {DType::kFloat32},
                  [](onnx::NodeProto& n) { set_attr(n, "axis", int64_t{0}); });
    ScatterArgs g;
    g.rank = 2;
    g.axis = 0;
    g.axis_dim = 4;
    g.idx_dims[0] = 2;
    g.idx_dims[1] = 3;
    g.data_strides[0] = 3;
    g.data_strides[1] = 1;
    Tensor y = data.clone();
    int32_t flag = 0;
    for (int64_t i = 0; i < idx.numel(); ++i)
      scatter_element<uint32_t, int64_t>(g, idx.data<int64_t>(),
                                         static_cast<const uint32_t*>(upd.raw_data()),
                                         static_cast<uint32_t*>(y.raw_data()), i, &flag, 1);
    EXPECT_EQ(flag, 0);
    expect_same(y, want[0], "ScatterElements");
  }
  {
    const auto want = reference("Range",
                                {{"a", Tensor::scalar(int64_t{2})},
                                 {"b", Tensor::scalar(int64_t{11})},
                                 {"c", Tensor::scalar(int64_t{3})}},
                                {DType::kInt64});
    Tensor y = Tensor::empty(DType::kInt64, {3});
    for (int64_t i = 0; i < 3; ++i) range_element<int64_t>(2, 3, y.data<int64_t>(), i);
    expect_same(y, want[0], "Range");
  }
}

// --- Reductions and rows ---------------------------------------------------------------------

TEST(GlueOpsCpu, Reductions) {
  const std::vector<std::pair<const char*, int32_t>> ops = {
      {"ReduceSum", kReduceSum},       {"ReduceMean", kReduceMean},
      {"ReduceMax", kReduceMax},       {"ReduceMin", kReduceMin},
      {"ReduceProd", kReduceProd},     {"ReduceSumSquare", kReduceSumSquare},
      {"ReduceL1", kReduceL1},         {"ReduceL2", kReduceL2},
      {"ReduceLogSum", kReduceLogSum}, {"ReduceLogSumExp", kReduceLogSumExp}};
  const std::vector<std::vector<int64_t>> axes_list = {{1}, {0, 2}, {-1}, {}, {0, 1, 2}, {2, 0}};
  for (const auto& [op, code] : ops) {
    for (const auto& axes : axes_list) {
      for (bool keep : {true, false}) {
        Tensor x = rand_float({3, 4, 5}, 0.2f, 1.5f);
        // ReduceSum takes axes as an input from opset 13; the others as an attribute
        // until opset 18 (past this build's 17).
        const bool sum = std::string(op) == "ReduceSum";
        // Built by emplace_back: GCC 12 misreads an initializer-list start plus a later
        // emplace_back as out of bounds (-Warray-bounds).
        std::vector<std::pair<std::string, Tensor>> ins;
        ins.reserve(2);
        ins.emplace_back("x", x);
        if (sum && !axes.empty()) ins.emplace_back("a", ints(axes));
        const auto want =
            reference(op, ins, {DType::kFloat32}, [keep, sum, axes](onnx::NodeProto& n) {
              set_attr(n, "keepdims", int64_t{keep});
              if (!sum && !axes.empty()) set_attr(n, "axes", axes);
            });
        auto plan = reduce_plan(x.shape(), axes, keep, false);
        ASSERT_TRUE(plan.ok());
        Tensor src = x;
        if (!plan->perm.empty()) {
          Shape ts;
          auto st = transpose_strided(x.shape(), plan->perm, &ts);
          src = run_strided(x, *st, ts);
        }
        Tensor y = Tensor::empty(DType::kFloat32, plan->out);
        for (int64_t i = 0; i < y.numel(); ++i)
          reduce_element<float, float>(code, plan->index, src.data<float>(), y.data<float>(), i);
        expect_same(y, want[0],
                    std::string(op) + " axes " + shape_to_string(axes) + (keep ? " keepdims" : ""),
                    1e-4);
      }
    }
  }
  // Integers.
  Tensor xi = rand_int({4, 3}, -9, 9);
  const auto want = reference("ReduceSum", {{"x", xi}, {"a", ints({0})}}, {DType::kInt64});
  auto plan = reduce_plan({4, 3}, {0}, true, false);
  Tensor y = Tensor::empty(DType::kInt64, plan->out);
  for (int64_t i = 0; i < y.numel(); ++i)
    reduce_int_element<int64_t>(kReduceSum, plan->index, xi.data<int64_t>(), y.data<int64_t>(), i);
  expect_same(y, want[0], "ReduceSum int64");
}

// GlobalAveragePool: ReduceMean's element function over global_pool_axes, in one pass (the
// spatial axes are the last ones: no transpose), against the reference provider's pool.
TEST(GlueOpsCpu, GlobalAveragePool) {
  for (const Shape& s :
       {Shape{2, 3, 4, 5}, Shape{2, 3, 7}, Shape{1, 4, 1, 1}, Shape{2, 3, 2, 3, 2}, Shape{3, 5}}) {
    Tensor x = rand_float(s);
    const auto want = reference("GlobalAveragePool", {{"x", x}}, {DType::kFloat32});
    auto plan = reduce_plan(s, global_pool_axes(static_cast<int64_t>(s.size())), true, true);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(plan->perm.empty()) << shape_to_string(s);
    Tensor y = x;  // a rank-2 X has no spatial axis: the kernel hands X on unchanged
    if (!plan->identity) {
      y = Tensor::empty(DType::kFloat32, plan->out);
      for (int64_t i = 0; i < y.numel(); ++i)
        reduce_element<float, float>(kReduceMean, plan->index, x.data<float>(), y.data<float>(), i);
    }
    expect_same(y, want[0], "GlobalAveragePool of " + shape_to_string(s), 1e-5);
  }
}

// TopK of `x` along `axis` by the kernel's element function on the host, against the
// reference. The outputs start as a sentinel: every slot must be written exactly once.
template <class T>
void expect_top_k_matches(const Tensor& x, int64_t axis, bool largest, int64_t K) {
  const auto want = reference("TopK", {{"x", x}, {"k", ints({K})}}, {x.dtype(), DType::kInt64},
                              [axis, largest](onnx::NodeProto& n) {
                                set_attr(n, "axis", axis);
                                set_attr(n, "largest", int64_t{largest});
                              });
  const ReduceIndex r = around_axis(x.shape(), axis);
  Shape out = x.shape();
  out[static_cast<size_t>(axis)] = K;
  Tensor v = Tensor::empty(x.dtype(), out), ix = Tensor::empty(DType::kInt64, out);
  for (int64_t e = 0; e < v.numel(); ++e) {
    v.data<T>()[e] = T(12345);
    ix.data<int64_t>()[e] = -1;
  }
  for (int64_t e = 0; e < x.numel(); ++e)
    top_k_element<T, T>(r, K, largest, x.data<T>(), v.data<T>(), ix.data<int64_t>(), e);
  const std::string what = "TopK axis " + std::to_string(axis) + " K " + std::to_string(K) +
                           (largest ? " largest" : " smallest");
  expect_same(v, want[0], what + " values", 0.0);
  expect_same(ix, want[1], what + " indices");
}

TEST(GlueOpsCpu, ArgMaxSoftmaxLayerNormTopK) {
  for (int64_t axis : {0, 1, 2}) {
    Tensor x = rand_float({3, 4, 5});
    for (bool is_max : {true, false}) {
      const auto want = reference(is_max ? "ArgMax" : "ArgMin", {{"x", x}}, {DType::kInt64},
                                  [axis](onnx::NodeProto& n) { set_attr(n, "axis", axis); });
      const ReduceIndex r = around_axis(x.shape(), axis);
      Shape out = x.shape();
      out[static_cast<size_t>(axis)] = 1;
      Tensor y = Tensor::empty(DType::kInt64, out);
      for (int64_t i = 0; i < y.numel(); ++i)
        arg_element<float, float>(is_max, false, r, x.data<float>(), y.data<int64_t>(), i);
      expect_same(y, want[0], "Arg axis " + std::to_string(axis));
    }
    for (bool log : {false, true}) {
      for (int opset : {11, 13}) {
        const auto want = reference(
            log ? "LogSoftmax" : "Softmax", {{"x", x}}, {DType::kFloat32},
            [axis](onnx::NodeProto& n) { set_attr(n, "axis", axis); }, opset);
        ReduceIndex r;
        if (opset < 13) {
          for (int64_t d = 0; d < 3; ++d) (d < axis ? r.outer : r.reduced) *= x.dim(d);
        } else {
          r = around_axis(x.shape(), axis);
        }
        Tensor y = Tensor::empty(DType::kFloat32, x.shape());
        for (int64_t i = 0; i < r.outer * r.inner; ++i)
          softmax_row<float, float>(log, r, x.data<float>(), y.data<float>(), i);
        expect_same(y, want[0],
                    std::string(log ? "LogSoftmax" : "Softmax") + " opset " +
                        std::to_string(opset) + " axis " + std::to_string(axis));
      }
    }
  }
  {
    Tensor x = rand_float({2, 3, 4}), scale = rand_float({4}), bias = rand_float({3, 4});
    const auto want =
        reference("LayerNormalization", {{"x", x}, {"s", scale}, {"b", bias}}, {DType::kFloat32},
                  [](onnx::NodeProto& n) { set_attr(n, "axis", int64_t{1}); });
    LayerNormArgs g;
    g.outer = 2;
    g.reduced = 12;
    g.scale = *broadcast_strided({4}, {3, 4});
    g.bias = *broadcast_strided({3, 4}, {3, 4});
    g.has_bias = 1;
    Tensor y = Tensor::empty(DType::kFloat32, x.shape());
    for (int64_t i = 0; i < 2; ++i)
      layer_norm_row<float, float>(g, x.data<float>(), scale.data<float>(), bias.data<float>(),
                                   y.data<float>(), static_cast<float*>(nullptr),
                                   static_cast<float*>(nullptr), i);
    expect_same(y, want[0], "LayerNormalization", 1e-4);
  }
  for (int64_t axis : {0, 1}) {
    for (bool largest : {true, false}) {
      const Tensor x = rand_int({6, 5}, 0, 3);  // ties: order by index
      expect_top_k_matches<int64_t>(x, axis, largest, 3);
    }
  }
}

// Rows of NaN, infinities and ties, for the row operations' edge cases.
Tensor edge_rows() {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return Tensor::from_vector<float>({8, 5}, {1,    nan,  3,    nan,  2,     // NaN inside
                                             nan,  1,    nan,  5,    5,     // NaN first, ties
                                             3,    3,    1,    1,    2,     // ties only
                                             -inf, inf,  nan,  inf,  -inf,  // both infinities
                                             nan,  nan,  nan,  nan,  nan,   // NaN only
                                             -inf, -inf, -inf, -inf, -inf,  // -inf only
                                             inf,  1,    2,    nan,  -inf,  // NaN last
                                             inf,  -2,   inf,  0,    -0.0f});
}

TEST(GlueOpsCpu, ArgMaxArgMinWithNaN) {
  // The reference's (numpy's) rule: the first NaN is the extreme; with select_last_index, the
  // last NaN.
  const Tensor x = edge_rows();
  for (int64_t axis : {0, 1}) {
    for (bool is_max : {true, false}) {
      for (bool last : {false, true}) {
        const auto want = reference(is_max ? "ArgMax" : "ArgMin", {{"x", x}}, {DType::kInt64},
                                    [axis, last](onnx::NodeProto& n) {
                                      set_attr(n, "axis", axis);
                                      set_attr(n, "select_last_index", int64_t{last});
                                    });
        const ReduceIndex r = around_axis(x.shape(), axis);
        Shape out = x.shape();
        out[static_cast<size_t>(axis)] = 1;
        Tensor y = Tensor::empty(DType::kInt64, out);
        for (int64_t i = 0; i < y.numel(); ++i)
          arg_element<float, float>(is_max, last, r, x.data<float>(), y.data<int64_t>(), i);
        expect_same(y, want[0],
                    std::string(is_max ? "ArgMax" : "ArgMin") + " axis " + std::to_string(axis) +
                        (last ? " select_last_index" : ""));
      }
    }
  }
}

TEST(GlueOpsCpu, ReductionsOfInfinitiesAndNaN) {
  // LogSumExp subtracts the row's maximum: an infinite one must not turn into inf - inf.
  const std::vector<std::pair<const char*, int32_t>> ops = {
      {"ReduceLogSumExp", kReduceLogSumExp}, {"ReduceMax", kReduceMax}, {"ReduceMin", kReduceMin}};
  for (const auto& [op, code] : ops) {
    for (const Tensor& x : {edge_rows(), Tensor::empty(DType::kFloat32, {3, 0})}) {
      for (int64_t axis : {0, 1}) {
        const std::vector<int64_t> axes = {axis};
        const auto want = reference(op, {{"x", x}}, {DType::kFloat32},
                                    [axes](onnx::NodeProto& n) { set_attr(n, "axes", axes); });
        auto plan = reduce_plan(x.shape(), axes, true, false);
        ASSERT_TRUE(plan.ok());
        Tensor y = Tensor::empty(DType::kFloat32, plan->out);
        for (int64_t i = 0; i < y.numel(); ++i)
          reduce_element<float, float>(code, plan->index, x.data<float>(), y.data<float>(), i);
        expect_same(
            y, want[0],
            std::string(op) + " " + shape_to_string(x.shape()) + " axis " + std::to_string(axis));
      }
    }
  }
}

TEST(GlueOpsCpu, TopKWithNaN) {
  // NaN sorts above every number (the reference's, and numpy's, order), equal values and NaNs
  // by index. Every output slot must be written exactly once: the outputs start as a sentinel.
  const Tensor x = edge_rows();
  for (int64_t axis : {0, 1}) {
    for (bool largest : {true, false}) {
      for (int64_t K : {int64_t{1}, int64_t{3}, x.dim(axis)})
        expect_top_k_matches<float>(x, axis, largest, K);
    }
  }
}

TEST(GlueOpsCpu, MatMulPlan) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4, 5}},          {{2, 3, 4}, {4, 5}},    {{4}, {2, 4, 3}}, {{2, 3, 4}, {4}},
      {{2, 1, 3, 4}, {5, 4, 2}}, {{1, 3, 4}, {2, 4, 5}}, {{4}, {4}}};
  for (const auto& [sa, sb] : cases) {
    Tensor a = rand_float(sa), b = rand_float(sb);
    const auto want = reference("MatMul", {{"a", a}, {"b", b}}, {DType::kFloat32});
    auto p = matmul_plan(sa, sb);
    ASSERT_TRUE(p.ok()) << p.status().message();
    Tensor y = Tensor::empty(DType::kFloat32, p->out);
    for (int64_t q = 0; q < p->batch; ++q) {
      const int64_t ao = p->strided ? q * p->a_stride : p->a_offsets[static_cast<size_t>(q)];
      const int64_t bo = p->strided ? q * p->b_stride : p->b_offsets[static_cast<size_t>(q)];
      for (int64_t m = 0; m < p->M; ++m)
        for (int64_t n = 0; n < p->N; ++n) {
          float acc = 0;
          for (int64_t k = 0; k < p->K; ++k)
            acc += a.data<float>()[ao + m * p->K + k] * b.data<float>()[bo + k * p->N + n];
          y.data<float>()[q * p->M * p->N + m * p->N + n] = acc;
        }
    }
    expect_same(y, want[0], "MatMul " + shape_to_string(sa) + shape_to_string(sb), 1e-4);
  }
}

}  // namespace
}  // namespace recur::testing

#endif  // RECUR_HAVE_CUDA
