// The oneDNN provider's own AVX-512 loops for small operations (providers/onednn/common/
// avx512.h): MatMul and Gemm with a constant B, Softmax and LogSoftmax along the last axis,
// Relu, LeakyRelu, Tanh, Sigmoid and Sqrt, each against the reference provider, NaN and infinities
// included; 1-D Conv and ConvTranspose with constant weights; 2-D Conv on recur's loops and by
// Winograd's algorithm. The ONNX backend node tests
// (nn_ops_test.cc) cover them too, but with B fed as an input, which the MatMul and Gemm loops do
// not take.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

Session open(const std::string& bytes, const std::string& providers) {
  SessionOptions o;
  o.providers({providers}).threads(2);
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

// Runs `bytes` on onednn, twice (the second run finds the plans the first made), and on the
// reference with X = x; their outputs must agree.
void expect_same(const std::string& bytes, const Tensor& x, const std::string& what) {
  Session dnn = open(bytes, "onednn");
  for (const auto& a : dnn.assignment()) ASSERT_EQ(a.provider, "onednn") << what;
  const Outputs want = open(bytes, "reference").run({{"X", x}});
  for (const char* run : {"first run", "second run"}) {
    const Outputs got = dnn.run({{"X", x}});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{});
      EXPECT_TRUE(cmp.match) << what << ", " << run << ": " << cmp.reason;
    }
  }
}

// x with some of its values replaced by NaN and infinities.
Tensor with_specials(Tensor x) {
  const float specials[] = {kNan, kInf, -kInf, 1e30f, -1e30f, 0.0f};
  float* p = x.data<float>();
  for (int64_t i = 5, k = 0; i < x.numel(); i += 37, ++k) p[i] = specials[k % 6];
  return x;
}

TEST(OnednnSmallOps, MatMulWithConstantB) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(1);
  for (const auto& [a, b] : std::vector<std::pair<Shape, Shape>>{
           {{3, 17, 64}, {64, 40}}, {{5}, {5, 33}}, {{2, 3, 4, 7}, {7, 9}}, {{1, 128}, {128, 1}}}) {
    ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, a);
    mb.initializer("B", random_tensor(b, rng));
    mb.output("Y", DType::kFloat32);
    mb.node("MatMul", {"X", "B"}, {"Y"}, "mm");
    const std::string bytes = mb.bytes();
    EXPECT_NE(open(bytes, "onednn").explain().find("recur's own loop"), std::string::npos);
    expect_same(bytes, with_specials(random_tensor(a, rng, 1.0f)), shape_to_string(a));
  }
}

// A 2-D B past the small loop's bound (4M multiply-adds) with A of batch dimensions: A runs as
// one matrix of rows, whatever its batch dimensions (a batch-first attention's [T, 1, d] at
// batch 1 was T products of one row), with and without a fused bias, and with a B that is a
// graph input; against the reference.
TEST(OnednnSmallOps, MatMulOfBatchedAByA2dBRunsAsOneMatrix) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(4);
  for (const Shape& a : {Shape{100, 1, 256}, Shape{4, 30, 256}, Shape{2, 3, 25, 256}}) {
    for (int form = 0; form < 3; ++form) {  // constant B; constant B and a bias; B an input
      ModelBuilder mb(13);
      mb.input("X", DType::kFloat32, a);
      if (form == 2) {
        mb.input("B", DType::kFloat32, {256, 768});
      } else {
        mb.initializer("B", random_tensor({256, 768}, rng));
      }
      mb.output("Y", DType::kFloat32);
      if (form == 1) {
        mb.initializer("C", random_tensor({768}, rng));
        mb.node("MatMul", {"X", "B"}, {"P"}, "mm");
        mb.node("Add", {"P", "C"}, {"Y"}, "bias");
      } else {
        mb.node("MatMul", {"X", "B"}, {"Y"}, "mm");
      }
      const std::string bytes = mb.bytes();
      Session dnn = open(bytes, "onednn");
      Feeds feeds{{"X", random_tensor(a, rng, 1.0f)}};
      if (form == 2) feeds.emplace_back("B", random_tensor({256, 768}, rng));
      const Outputs got = dnn.run(feeds);
      Shape want_shape = a;
      want_shape.back() = 768;
      EXPECT_EQ(got[0].shape(), want_shape) << shape_to_string(a);
      const auto cmp =
          tools::compare(got[0], open(bytes, "reference").run(feeds)[0], tools::Tolerance{});
      EXPECT_TRUE(cmp.match) << shape_to_string(a) << " form " << form << ": " << cmp.reason;
    }
  }
}

TEST(OnednnSmallOps, GemmWithConstantB) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(2);
  const int64_t M = 7, K = 19, N = 21;
  struct Case {
    int trans_b;
    float alpha, beta;
    Shape c;  // {} for none; {0} marks a C of one value given as shape []
    bool small;
  };
  for (const Case& k : {Case{0, 1.0f, 1.0f, {N}, true}, Case{1, 0.5f, 2.0f, {1, N}, true},
                        Case{1, 1.0f, 1.0f, {}, true}, Case{0, -1.5f, 0.25f, {0}, true},
                        Case{1, 1.0f, 1.0f, {M, N}, false}}) {
    ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, {M, K});
    mb.initializer("B", random_tensor(k.trans_b ? Shape{N, K} : Shape{K, N}, rng));
    std::vector<std::string> in = {"X", "B"};
    if (!k.c.empty()) {
      mb.initializer("C", random_tensor(k.c == Shape{0} ? Shape{} : k.c, rng));
      in.push_back("C");
    }
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("Gemm", in, {"Y"}, "gemm");
    set_attr(n, "transB", int64_t{k.trans_b});
    set_attr(n, "alpha", k.alpha);
    set_attr(n, "beta", k.beta);
    const std::string bytes = mb.bytes();
    const std::string what = "transB " + std::to_string(k.trans_b) + " C " + shape_to_string(k.c);
    EXPECT_EQ(open(bytes, "onednn").explain().find("recur's own loop") != std::string::npos,
              k.small)
        << what;
    expect_same(bytes, with_specials(random_tensor({M, K}, rng, 1.0f)), what);
  }
}

// Rows of 21 values, and of 6625 (an OCR head's classes: past 64K elements in all, still
// recur's loop below 4M).
TEST(OnednnSmallOps, SoftmaxAndLogSoftmaxRows) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(3);
  for (const int64_t d : {int64_t{21}, int64_t{6625}}) {
    // Rows: ordinary, one -inf, all -inf, one +inf, one NaN, values near the float limit.
    const int64_t rows = d == 21 ? 6 : 12;
    Tensor x = random_tensor({rows, d}, rng, 5.0f);
    float* p = x.data<float>();
    p[1 * d + 3] = -kInf;
    for (int64_t j = 0; j < d; ++j) p[2 * d + j] = -kInf;
    p[3 * d + 7] = kInf;
    p[4 * d + 20] = kNan;
    for (int64_t j = 0; j < d; ++j) p[5 * d + j] = j % 2 ? 3e38f : -3e38f;
    for (const std::string op : {"Softmax", "LogSoftmax"}) {
      for (int opset : {11, 13}) {
        ModelBuilder mb(opset);
        mb.input("X", DType::kFloat32, {rows, d});
        mb.output("Y", DType::kFloat32);
        mb.node(op, {"X"}, {"Y"}, "s");
        expect_same(mb.bytes(), x,
                    op + " opset " + std::to_string(opset) + " rows of " + std::to_string(d));
      }
    }
  }
}

// Along an axis before the last (opset 13): [8, 49, 1] along axis 1, an attention pooling's
// weights over time, where recur's loop takes one column at a time; [3, 21, 35] and [2, 5, 7, 20]
// in vectors of 16 columns and a masked tail; past the one-thread bound, [2, 64, 8200] split by
// its outer blocks and [1, 300, 2000] by its columns. Columns: one -inf, all -inf, one +inf, one
// NaN, values near the float limit.
TEST(OnednnSmallOps, SoftmaxAndLogSoftmaxColumns) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(5);
  struct Case {
    Shape shape;
    int64_t axis;
  };
  for (const Case& c :
       {Case{{8, 49, 1}, 1}, Case{{3, 21, 35}, 1}, Case{{2, 5, 7, 20}, 1}, Case{{2, 5, 7, 20}, 2},
        Case{{2, 5, 7, 20}, -3}, Case{{2, 64, 8200}, 1}, Case{{1, 300, 2000}, 1}}) {
    Tensor x = random_tensor(c.shape, rng, 5.0f);
    const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.shape.size()) : c.axis;
    int64_t inner = 1;
    for (size_t i = static_cast<size_t>(axis) + 1; i < c.shape.size(); ++i) inner *= c.shape[i];
    const int64_t d = c.shape[static_cast<size_t>(axis)];
    const int64_t columns = x.numel() / d;
    // Element j of column q (q = outer * inner + i).
    float* p = x.data<float>();
    auto at = [&](int64_t q, int64_t j) -> float& {
      return p[(q / inner) * d * inner + j * inner + q % inner];
    };
    at(1 % columns, 3 % d) = -kInf;
    for (int64_t j = 0; j < d; ++j) at(2 % columns, j) = -kInf;
    at(3 % columns, 4 % d) = kInf;
    at(4 % columns, d - 1) = kNan;
    for (int64_t j = 0; j < d; ++j) at(5 % columns, j) = j % 2 ? 3e38f : -3e38f;
    for (const std::string op : {"Softmax", "LogSoftmax"}) {
      ModelBuilder mb(13);
      mb.input("X", DType::kFloat32, c.shape);
      mb.output("Y", DType::kFloat32);
      set_attr(mb.node(op, {"X"}, {"Y"}, "s"), "axis", c.axis);
      expect_same(mb.bytes(), x,
                  op + " of " + shape_to_string(c.shape) + " along " + std::to_string(c.axis));
    }
  }
}

TEST(OnednnSmallOps, ElementwiseActivations) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(4);
  // [3, 50], and [3, 200001], past the size where the elements split among threads (in parts
  // that end inside a vector).
  for (const Shape& shape : {Shape{3, 50}, Shape{3, 200001}}) {
    Tensor x = with_specials(random_tensor(shape, rng, 20.0f));
    float* p = x.data<float>();
    const float edge[] = {1e-7f, -1e-7f, 0.05f, -0.07f, 88.5f, -88.5f, 1e4f, -1e4f};
    for (int i = 0; i < 8; ++i) p[100 + i] = edge[i];
    for (const std::string op : {"Relu", "Tanh", "Sigmoid", "Sqrt", "LeakyRelu", "LeakyRelu0",
                                 "Clip", "ClipMin", "Neg", "Abs"}) {
      ModelBuilder mb(13);
      mb.input("X", DType::kFloat32, shape);
      mb.output("Y", DType::kFloat32);
      // Clip between -3 and 5, and ClipMin above -3 only (no max: +inf stays +inf).
      std::vector<std::string> in = {"X"};
      if (op.rfind("Clip", 0) == 0) {
        mb.initializer("lo", Tensor::scalar(-3.0f));
        in.push_back("lo");
        if (op == "Clip") {
          mb.initializer("hi", Tensor::scalar(5.0f));
          in.push_back("hi");
        }
      }
      const std::string type = op == "LeakyRelu0" ? "LeakyRelu" : op == "ClipMin" ? "Clip" : op;
      auto& n = mb.node(type, in, {"Y"}, "e");
      if (op == "LeakyRelu") set_attr(n, "alpha", 0.3f);
      if (op == "LeakyRelu0") set_attr(n, "alpha", 0.0f);  // -inf times 0
      expect_same(mb.bytes(), x, op + " " + shape_to_string(shape));
    }
  }
}

// The activations oneDNN's eltwise primitive runs, on NaN, infinities and subnormals: its exp
// gave +inf for a NaN and its log of 1e-40 gave -88.02 (numpy: -92.10).
TEST(OnednnSmallOps, EltwisePrimitiveOnSpecialValues) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(5);
  Tensor x = with_specials(random_tensor({4, 300}, rng, 20.0f));
  float* p = x.data<float>();
  const float edge[] = {1e-40f, 3e-39f, 1.1e-38f, -1e-40f, 88.5f, -88.5f, -104.0f, 89.5f};
  for (int i = 0; i < 8; ++i) p[100 + i] = edge[i];
  for (const std::string op : {"Exp", "Log", "Elu", "Softplus", "Round", "Mish"}) {
    ModelBuilder mb(18);
    mb.input("X", DType::kFloat32, x.shape());
    mb.output("Y", DType::kFloat32);
    mb.node(op, {"X"}, {"Y"}, "e");
    expect_same(mb.bytes(), x, op);
  }
  // Up to 256 values, Exp and Log run on the C library's functions instead: the same values
  // in, the reference's bits out.
  Tensor few = Tensor::empty(DType::kFloat32, {2, 128});
  std::copy(p, p + few.numel(), few.data<float>());
  for (const std::string op : {"Exp", "Log"}) {
    ModelBuilder mb(18);
    mb.input("X", DType::kFloat32, few.shape());
    mb.output("Y", DType::kFloat32);
    mb.node(op, {"X"}, {"Y"}, "e");
    const Tensor got = open(mb.bytes(), "onednn").run({{"X", few}})[0];
    const Tensor want = open(mb.bytes(), "reference").run({{"X", few}})[0];
    EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()), 0) << op;
  }
}

// Zeros of both signs through the activations on oneDNN's primitive and recur's loops: the sign
// of each zero in Y is the reference's (whose own test holds it to numpy's). oneDNN's linear
// form gave Neg(+0) = +0, and recur's Tanh and Sin gave +0 for -0 (an fma of +0 and -0); its
// Relu, Elu and Gelu primitives give +0 for -0 (a second pass puts the -0 back).
TEST(OnednnSmallOps, ZeroSignsAsTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "needs the oneDNN provider";
  std::mt19937 rng(6);
  Tensor x = random_tensor({2, 200}, rng, 3.0f);
  float* p = x.data<float>();
  for (int64_t i = 0; i < x.numel(); i += 3) p[i] = i % 2 ? -0.0f : 0.0f;
  for (const std::string op : {"Neg", "Abs", "Relu", "Tanh", "Sigmoid", "Sin", "Cos", "Erf",
                               "Round", "Sqrt", "Elu", "HardSwish", "Softplus", "Exp", "Gelu"}) {
    // Without AVX-512 the provider declines Sin, Cos and Erf (recur's loops): the reference's.
    if (!testing::have_onednn_avx512() && (op == "Sin" || op == "Cos" || op == "Erf")) continue;
    ModelBuilder mb(20);
    mb.input("X", DType::kFloat32, x.shape());
    mb.output("Y", DType::kFloat32);
    mb.node(op, {"X"}, {"Y"}, "e");
    expect_same(mb.bytes(), x, op);
    const Tensor got = open(mb.bytes(), "onednn").run({{"X", x}})[0];
    const Tensor want = open(mb.bytes(), "reference").run({{"X", x}})[0];
    const float* g = got.data<float>();
    const float* w = want.data<float>();
    int wrong = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (g[i] == 0.0f && w[i] == 0.0f && std::signbit(g[i]) != std::signbit(w[i]) && ++wrong < 4)
        ADD_FAILURE() << op << " of " << p[i] << " at " << i << ": " << g[i] << ", reference "
                      << w[i];
    }
  }
}

// MatMul, Add and Relu (a recur::MatMulBias with its Relu) and a chain of 3x3 convolutions with
// Relus and a pool (recur::BlockedConv) on X holding NaN and infinities: oneDNN's Relu post-op
// is max(x, 0), which gave 0 where the reference (and ONNX Runtime) give NaN. Products of each
// path: recur's loop (small B), B packed for oneDNN, and rows past the loop's bound.
TEST(OnednnSmallOps, FusedReluKeepsNaN) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(31);
  const Shape forms[][2] = {
      {{16, 64}, {64, 32}}, {{64, 1024}, {1024, 512}}, {{4096, 128}, {128, 64}}};
  for (const auto& [xs, ws] : forms) {
    ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, xs);
    mb.initializer("W", random_tensor(ws, rng, 0.1f));
    mb.initializer("B", random_tensor({ws[1]}, rng, 0.1f));
    mb.output("Y", DType::kFloat32);
    mb.node("MatMul", {"X", "W"}, {"P"}, "mm");
    mb.node("Add", {"P", "B"}, {"Q"}, "add");
    mb.node("Relu", {"Q"}, {"Y"}, "relu");
    const std::string what = "MatMulBias " + shape_to_string(xs) + " x " + shape_to_string(ws);
    expect_same(mb.bytes(), with_specials(random_tensor(xs, rng, 1.0f)), what);
    expect_same(mb.bytes(), random_tensor(xs, rng, 1.0f), what + ", finite");
  }
  ModelBuilder mb(13);
  mb.input("X", DType::kFloat32, {2, 32, 16, 16});
  mb.initializer("W1", random_tensor({32, 32, 3, 3}, rng, 0.1f));
  mb.initializer("W2", random_tensor({64, 32, 3, 3}, rng, 0.1f));
  mb.output("Y", DType::kFloat32);
  set_attr(mb.node("Conv", {"X", "W1"}, {"C1"}, "c1"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("Relu", {"C1"}, {"R1"}, "r1");
  auto& pool = mb.node("MaxPool", {"R1"}, {"P1"}, "p1");
  set_attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(pool, "strides", std::vector<int64_t>{2, 2});
  set_attr(mb.node("Conv", {"P1", "W2"}, {"C2"}, "c2"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("Relu", {"C2"}, {"Y"}, "r2");
  expect_same(mb.bytes(), with_specials(random_tensor({2, 32, 16, 16}, rng, 1.0f)), "conv chain");
  // In one session: a finite X first makes the plans with the Relu fused, and a later X with
  // NaN must still not take them as they are.
  const Session dnn = open(mb.bytes(), "onednn");
  const Tensor finite = random_tensor({2, 32, 16, 16}, rng, 1.0f);
  const Tensor specials = with_specials(random_tensor({2, 32, 16, 16}, rng, 1.0f));
  const Session ref = open(mb.bytes(), "reference");
  for (const Tensor* x : {&finite, &specials, &finite}) {
    const auto cmp =
        tools::compare(dnn.run({{"X", *x}})[0], ref.run({{"X", *x}})[0], tools::Tolerance{});
    EXPECT_TRUE(cmp.match) << "conv chain, finite X then NaN: " << cmp.reason;
  }
}

// 1-D convolutions with constant weights (and, with a following Relu or Sigmoid, the fused
// recur::FusedConv): strides, dilations, asymmetric pads, bias or none, batch 2.
TEST(OnednnSmallOps, Conv1dWithConstantWeights) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(5);
  struct Case {
    int64_t stride, dilation, pad_l, pad_r;
    bool bias;
    std::string act;
  };
  for (const Case& k : {Case{1, 1, 1, 1, true, ""}, Case{2, 1, 0, 2, false, "Relu"},
                        Case{3, 2, 2, 0, true, "Sigmoid"}, Case{1, 3, 0, 0, true, "Relu"},
                        Case{1, 2, 3, 3, true, "LeakyRelu"}}) {
    const int64_t C = 5, M = 19, T = 23, kw = 3;
    ModelBuilder mb(k.act == "HardSwish" ? 14 : 13);
    mb.input("X", DType::kFloat32, {2, C, T});
    mb.initializer("W", random_tensor({M, C, kw}, rng));
    std::vector<std::string> in = {"X", "W"};
    if (k.bias) {
      mb.initializer("B", random_tensor({M}, rng));
      in.push_back("B");
    }
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("Conv", in, {k.act.empty() ? "Y" : "Z"}, "conv");
    set_attr(n, "strides", std::vector<int64_t>{k.stride});
    set_attr(n, "dilations", std::vector<int64_t>{k.dilation});
    set_attr(n, "pads", std::vector<int64_t>{k.pad_l, k.pad_r});
    if (!k.act.empty()) {
      auto& a = mb.node(k.act, {"Z"}, {"Y"}, "act");
      if (k.act == "LeakyRelu") set_attr(a, "alpha", 0.1f);
    }
    expect_same(mb.bytes(), with_specials(random_tensor({2, C, T}, rng, 1.0f)),
                "stride " + std::to_string(k.stride) + " dilation " + std::to_string(k.dilation) +
                    " " + k.act);
  }
}

// The geometries that take each of the 1-D loops (providers/onednn/nn/small_conv1d.h over time,
// the patch loop over output channels) and oneDNN: a vocoder's and a voice detector's stacks,
// an STFT as a convolution (one input channel, long kernel, stride), grouped and depthwise
// convolutions, outputs of 1 to 70 steps, channel counts that leave every tail of the 4 x 4
// blocks.
TEST(OnednnSmallOps, Conv1dGeometriesOfEachLoop) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(7);
  struct Case {
    int64_t C, M, G, T, k, stride, dilation, pad;
    std::string act;
  };
  const Case cases[] = {{16, 16, 1, 68, 7, 1, 3, 9, "LeakyRelu"},
                        {8, 8, 1, 272, 3, 1, 1, 1, ""},
                        {1, 40, 1, 64, 16, 8, 1, 0, ""},
                        {65, 32, 1, 4, 3, 1, 1, 1, "Relu"},
                        {32, 32, 1, 9, 3, 2, 1, 1, "Relu"},
                        {12, 12, 12, 50, 5, 1, 2, 4, ""},
                        {8, 6, 2, 33, 3, 3, 1, 2, "Sigmoid"},
                        {6, 9, 3, 3, 3, 1, 1, 1, "Relu"},
                        {3, 5, 1, 1, 1, 1, 1, 0, ""},
                        {7, 13, 1, 70, 2, 2, 2, 0, "Relu"},
                        {20, 32, 1, 17, 7, 1, 1, 3, "LeakyRelu"},
                        // Depthwise past the small bound (a Conformer's k=31): still over time.
                        {256, 256, 256, 400, 31, 1, 1, 15, "Relu"},
                        {128, 256, 128, 150, 15, 2, 1, 7, ""},
                        {16, 24, 1, 40, 3, 1, 1, 1, "HardSwish"},
                        {20, 7, 1, 9, 3, 1, 1, 1, "HardSwish"}};
  for (const Case& k : cases) {
    ModelBuilder mb(k.act == "HardSwish" ? 14 : 13);
    mb.input("X", DType::kFloat32, {2, k.C, k.T});
    mb.initializer("W", random_tensor({k.M, k.C / k.G, k.k}, rng));
    mb.initializer("B", random_tensor({k.M}, rng));
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("Conv", {"X", "W", "B"}, {k.act.empty() ? "Y" : "Z"}, "conv");
    set_attr(n, "group", k.G);
    set_attr(n, "strides", std::vector<int64_t>{k.stride});
    set_attr(n, "dilations", std::vector<int64_t>{k.dilation});
    set_attr(n, "pads", std::vector<int64_t>{k.pad, k.pad});
    if (!k.act.empty()) {
      auto& a = mb.node(k.act, {"Z"}, {"Y"}, "act");
      if (k.act == "LeakyRelu") set_attr(a, "alpha", 0.2f);
    }
    expect_same(mb.bytes(), random_tensor({2, k.C, k.T}, rng, 1.0f),
                "C " + std::to_string(k.C) + " M " + std::to_string(k.M) + " G " +
                    std::to_string(k.G) + " T " + std::to_string(k.T) + " " + k.act);
  }
}

// 2-D convolutions of few input channels (an image's or a spectrogram's first layer), on the
// rows loop (conv.cc, SmallConv2d: one 1-D convolution per output row over the rows its
// kernel rows read): strides, dilations, asymmetric pads that put whole kernel rows in the
// padding, batch 2, bias or none, fused activations, NaN and infinities in X; and the shapes
// beside the bounds, which oneDNN takes.
// A 2-D Conv of X [2, C, H, W] by a random W [M, C / group, kh, kw] (and bias), with the
// activation `act` after it where one is named.
struct Conv2dForm {
  int64_t C, M, group, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  bool bias;
  std::string act;
};

std::string conv2d_model(const Conv2dForm& k, std::mt19937& rng) {
  ModelBuilder mb(k.act == "HardSwish" ? 14 : 13);
  mb.input("X", DType::kFloat32, {2, k.C, k.H, k.W});
  mb.initializer("W", random_tensor({k.M, k.C / k.group, k.kh, k.kw}, rng));
  std::vector<std::string> in = {"X", "W"};
  if (k.bias) {
    mb.initializer("B", random_tensor({k.M}, rng));
    in.push_back("B");
  }
  mb.output("Y", DType::kFloat32);
  auto& n = mb.node("Conv", in, {k.act.empty() ? "Y" : "Z"}, "conv");
  if (k.group > 1) set_attr(n, "group", k.group);
  set_attr(n, "strides", std::vector<int64_t>{k.sh, k.sw});
  set_attr(n, "dilations", std::vector<int64_t>{k.dh, k.dw});
  set_attr(n, "pads", std::vector<int64_t>{k.pt, k.pl, k.pb, k.pr});
  if (!k.act.empty()) {
    auto& a = mb.node(k.act, {"Z"}, {"Y"}, "act");
    if (k.act == "LeakyRelu") set_attr(a, "alpha", 0.1f);
  }
  return mb.bytes();
}

TEST(OnednnSmallOps, Conv2dOfFewInputChannels) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(9);
  struct Case {
    int64_t C, M, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    bool bias;
    std::string act;
  };
  const Case cases[] = {{1, 32, 16, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, "Relu"},
                        {1, 8, 20, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, ""},
                        {3, 16, 12, 24, 7, 5, 2, 3, 1, 1, 3, 2, 3, 2, true, "Sigmoid"},
                        {2, 5, 9, 17, 3, 3, 1, 1, 2, 2, 2, 2, 0, 2, true, "LeakyRelu"},
                        {1, 64, 6, 16, 2, 4, 1, 1, 1, 1, 3, 0, 0, 3, true, ""},
                        {3, 65, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, "Relu"},
                        {4, 8, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, ""},
                        {1, 4, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, ""},
                        {3, 16, 12, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, "HardSwish"},
                        // Past 4M multiply-adds: the output rows split between two threads.
                        {1, 32, 64, 161, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, "Relu"}};
  for (const Case& k : cases) {
    const std::string bytes = conv2d_model({k.C, k.M, 1, k.H, k.W, k.kh, k.kw, k.sh, k.sw, k.dh,
                                            k.dw, k.pt, k.pl, k.pb, k.pr, k.bias, k.act},
                                           rng);
    // NaN and infinities on the rows loop and on oneDNN's primitive alike (its fused Relu
    // gave 0 for a NaN before the kernel learnt to run it unfused).
    const Tensor x = with_specials(random_tensor({2, k.C, k.H, k.W}, rng, 1.0f));
    expect_same(bytes, x,
                "C " + std::to_string(k.C) + " M " + std::to_string(k.M) + " " +
                    std::to_string(k.kh) + "x" + std::to_string(k.kw) + " stride " +
                    std::to_string(k.sh) + "x" + std::to_string(k.sw) + " " + k.act);
  }
}

// 3x3 convolutions of 32 channels or more, which run by Winograd's algorithm where X is tame
// (conv.cc): against the reference within the usual tolerance, and not bit for bit what the
// direct convolution (onednn.winograd=off) gives, which shows that Winograd's ran; with an
// outlier, a NaN or an infinity in X, or an infinite weight, the direct convolution runs
// instead, bit for bit.
TEST(OnednnSmallOps, Conv3x3ByWinograd) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(12);
  struct Case {
    int64_t C, M, H, W, pad;
    bool bias;
    std::string act;
  };
  const Case cases[] = {{32, 32, 12, 20, 1, true, "Relu"},
                        {64, 48, 7, 9, 1, false, ""},
                        {48, 64, 5, 33, 1, true, ""},
                        {32, 96, 16, 16, 1, true, "Relu"}};
  auto run = [](const std::string& bytes, const Tensor& x, const char* winograd) {
    SessionOptions o;
    o.providers({"onednn"}).threads(2).deterministic(true).set("onednn.winograd", winograd);
    return Session::from_bytes(bytes.data(), bytes.size(), o).run({{"X", x}})[0];
  };
  auto same_bits = [](const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() &&
           std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.numel()) * 4) == 0;
  };
  for (const Case& k : cases) {
    const std::string what = "C " + std::to_string(k.C) + " M " + std::to_string(k.M) + " " +
                             std::to_string(k.H) + "x" + std::to_string(k.W) + " " + k.act;
    const std::string bytes = conv2d_model(
        {k.C, k.M, 1, k.H, k.W, 3, 3, 1, 1, 1, 1, k.pad, k.pad, k.pad, k.pad, k.bias, k.act}, rng);
    const Tensor x = random_tensor({2, k.C, k.H, k.W}, rng, 1.0f);
    expect_same(bytes, x, what);
    EXPECT_FALSE(same_bits(run(bytes, x, "auto"), run(bytes, x, "off"))) << what;
    // Not tame: one value 10^6 times the others, or one NaN and one infinity.
    Tensor outlier = x, specials = x;
    outlier.data<float>()[x.numel() / 3] = 1e6f;
    specials.data<float>()[7] = kNan;
    specials.data<float>()[x.numel() - 9] = -kInf;
    for (const Tensor* t : {&outlier, &specials}) {
      EXPECT_TRUE(same_bits(run(bytes, *t, "auto"), run(bytes, *t, "off"))) << what;
    }
    // With a fused Relu too: oneDNN's Relu post-op gave 0 for a NaN, the reference NaN.
    expect_same(bytes, specials, what + " with NaN and -inf");
    // In one session: the direct primitive is made at the first X that Winograd does not
    // take, after Winograd's runs of the same shape, and both keep their results.
    SessionOptions o;
    o.providers({"onednn"}).threads(2).deterministic(true);
    const Session one = Session::from_bytes(bytes.data(), bytes.size(), o);
    const Tensor by_winograd = one.run({{"X", x}})[0];
    EXPECT_TRUE(same_bits(one.run({{"X", outlier}})[0], run(bytes, outlier, "off"))) << what;
    EXPECT_TRUE(same_bits(one.run({{"X", x}})[0], by_winograd)) << what;
  }
  // An infinite weight: the direct convolution for every X.
  ModelBuilder mb(13);
  mb.input("X", DType::kFloat32, {1, 32, 6, 6});
  Tensor w = random_tensor({32, 32, 3, 3}, rng);
  w.data<float>()[40] = kInf;
  mb.initializer("W", w);
  mb.output("Y", DType::kFloat32);
  auto& n = mb.node("Conv", {"X", "W"}, {"Y"}, "conv");
  set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  const Tensor x = random_tensor({1, 32, 6, 6}, rng, 1.0f);
  EXPECT_TRUE(same_bits(run(mb.bytes(), x, "auto"), run(mb.bytes(), x, "off")));
  expect_same(mb.bytes(), x, "an infinite weight");
}

// One session fed inputs of many lengths, as a server of OCR lines or utterances is: every
// plan (one per input shape) shares the node's weights, repacked once per layout
// (WeightPacks), and each run matches the reference's. A 1-D convolution, a 3x3 one (Winograd's
// layout beside the direct one's, and a non-tame X that makes the direct primitive of a plan at
// its first need) and a 1-D transposed one, at widths that come back.
TEST(OnednnSmallOps, ConvolutionsOverManyLengthsInOneSession) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(21);
  struct Form {
    std::string op;
    std::vector<int64_t> x, w;  // X's dims: -1 for N and the length L
  };
  const Form forms[] = {{"Conv", {-1, 256, -1}, {256, 256, 3}},
                        {"Conv", {-1, 32, 8, -1}, {48, 32, 3, 3}},
                        {"ConvTranspose", {-1, 16, -1}, {16, 24, 4}}};
  for (const Form& f : forms) {
    ModelBuilder mb(13);
    std::vector<std::string> symbols(f.x.size());
    symbols.front() = "N";
    symbols.back() = "L";
    mb.input("X", DType::kFloat32, f.x, symbols);
    mb.initializer("W", random_tensor(Shape(f.w.begin(), f.w.end()), rng, 0.2f));
    const int64_t m = f.op == "Conv" ? f.w[0] : f.w[1];
    mb.initializer("B", random_tensor({m}, rng));
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node(f.op, {"X", "W", "B"}, {"Y"}, "conv");
    set_attr(n, "pads", std::vector<int64_t>(2 * (f.x.size() - 2), 1));
    if (f.op == "ConvTranspose") set_attr(n, "strides", std::vector<int64_t>{2});
    const std::string bytes = mb.bytes();
    Session dnn = open(bytes, "onednn");
    ASSERT_EQ(dnn.assignment()[0].provider, "onednn") << f.op;
    const Session ref = open(bytes, "reference");
    int k = 0;
    for (const int64_t L : {40, 24, 57, 24, 40, 33, 57}) {
      Shape shape(f.x.begin(), f.x.end());
      shape.front() = 1 + k % 2;
      shape.back() = L;
      Tensor x = random_tensor(shape, rng, 1.0f);
      if (k++ == 3) x.data<float>()[x.numel() / 2] = 1e7f;  // not tame: the direct primitive
      const std::string what = f.op + " " + shape_to_string(shape);
      const auto cmp =
          tools::compare(dnn.run({{"X", x}})[0], ref.run({{"X", x}})[0], tools::Tolerance{});
      EXPECT_TRUE(cmp.match) << what << ": " << cmp.reason;
    }
  }
}

// 2-D depthwise convolutions (MobileNet's k x k layers) on the depthwise loop in NCHW, and
// the oneDNN primitive where the loop declines (short strided rows): strides, dilations,
// asymmetric pads, kernels up to 7 wide, bias or none, the fused activations, NaN and
// infinities in X on both.
TEST(OnednnSmallOps, Conv2dDepthwise) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(10);
  struct Case {
    int64_t C, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    bool bias;
    std::string act;
  };
  const Case cases[] = {{24, 4, 40, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, true, ""},
                        {16, 9, 33, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, false, "Relu"},
                        {8, 12, 70, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, true, "LeakyRelu"},
                        {5, 7, 100, 1, 7, 1, 3, 1, 2, 0, 6, 0, 2, true, "Sigmoid"},
                        {6, 8, 20, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, true, "Relu"},
                        {12, 10, 30, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, ""},
                        {10, 6, 25, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, true, "HardSwish"},
                        // Past 4M multiply-adds: the channels split between two threads.
                        {67, 24, 128, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, true, "Relu"},
                        {4, 3, 9, 2, 4, 1, 1, 1, 1, 0, 3, 1, 0, false, ""}};
  for (const Case& k : cases) {
    const std::string bytes = conv2d_model({k.C, k.C, k.C, k.H, k.W, k.kh, k.kw, k.sh, k.sw, k.dh,
                                            k.dw, k.pt, k.pl, k.pb, k.pr, k.bias, k.act},
                                           rng);
    // NaN and infinities where the loop runs and where oneDNN's primitive does.
    const Tensor x = with_specials(random_tensor({2, k.C, k.H, k.W}, rng, 1.0f));
    expect_same(bytes, x,
                "C " + std::to_string(k.C) + " " + std::to_string(k.kh) + "x" +
                    std::to_string(k.kw) + " stride " + std::to_string(k.sh) + "x" +
                    std::to_string(k.sw) + " " + k.act);
  }
}

// 1x1 convolutions (stride 1, no padding, one group) as one matmul in NCHW: 1-D to 3-D, a
// batch of two, bias or none, a fused activation.
TEST(OnednnSmallOps, Conv1x1AsAProduct) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(11);
  struct Case {
    Shape x;
    int64_t M;
    bool bias;
    std::string act;
  };
  const Case cases[] = {
      {{2, 40, 4, 160}, 240, true, "Relu"},    {{1, 96, 1, 80}, 576, false, ""},
      {{2, 64, 3, 5, 7}, 33, true, "Sigmoid"}, {{2, 300, 700}, 40, true, ""},
      {{1, 7, 9, 11}, 13, false, "LeakyRelu"}, {{1, 40, 4, 160}, 240, true, "HardSwish"}};
  for (const Case& k : cases) {
    ModelBuilder mb(k.act == "HardSwish" ? 14 : 13);
    mb.input("X", DType::kFloat32, k.x);
    Shape ws = {k.M, k.x[1]};
    ws.resize(k.x.size(), 1);
    mb.initializer("W", random_tensor(ws, rng));
    std::vector<std::string> in = {"X", "W"};
    if (k.bias) {
      mb.initializer("B", random_tensor({k.M}, rng));
      in.push_back("B");
    }
    mb.output("Y", DType::kFloat32);
    mb.node("Conv", in, {k.act.empty() ? "Y" : "Z"}, "conv");
    if (!k.act.empty()) {
      auto& a = mb.node(k.act, {"Z"}, {"Y"}, "act");
      if (k.act == "LeakyRelu") set_attr(a, "alpha", 0.1f);
    }
    expect_same(mb.bytes(), random_tensor(k.x, rng, 1.0f),
                "X " + shape_to_string(k.x) + " M " + std::to_string(k.M) + " " + k.act);
  }
}

// 1-D transposed convolutions with constant weights (a vocoder's upsampling), on recur's own
// loop: strides, dilations, pads, output_padding, steps that reach past either end, bias or
// none, batch 2, channel counts that leave tails of the 4-step blocks and of the vectors.
TEST(OnednnSmallOps, ConvTranspose1dWithConstantWeights) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(8);
  struct Case {
    int64_t C, M, T, k, stride, dilation, pad_l, pad_r, out_pad;
    bool bias;
  };
  for (const Case& k :
       {Case{32, 16, 17, 8, 4, 1, 2, 2, 0, true}, Case{16, 8, 68, 8, 4, 1, 2, 2, 0, true},
        Case{5, 7, 9, 3, 2, 2, 1, 0, 1, false}, Case{3, 19, 6, 5, 3, 1, 0, 3, 2, true},
        Case{7, 3, 1, 4, 1, 3, 0, 0, 0, true}, Case{9, 5, 11, 2, 1, 1, 1, 1, 0, false}}) {
    ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, {2, k.C, k.T});
    mb.initializer("W", random_tensor({k.C, k.M, k.k}, rng));
    std::vector<std::string> in = {"X", "W"};
    if (k.bias) {
      mb.initializer("B", random_tensor({k.M}, rng));
      in.push_back("B");
    }
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("ConvTranspose", in, {"Y"}, "deconv");
    set_attr(n, "strides", std::vector<int64_t>{k.stride});
    set_attr(n, "dilations", std::vector<int64_t>{k.dilation});
    set_attr(n, "pads", std::vector<int64_t>{k.pad_l, k.pad_r});
    set_attr(n, "output_padding", std::vector<int64_t>{k.out_pad});
    expect_same(mb.bytes(), with_specials(random_tensor({2, k.C, k.T}, rng, 1.0f)),
                "C " + std::to_string(k.C) + " M " + std::to_string(k.M) + " stride " +
                    std::to_string(k.stride) + " dilation " + std::to_string(k.dilation));
  }
}

// 1-D depthwise ConvTranspose (one channel in and out a group) on the phase loop, of any size:
// strides, dilations, pads, output_padding, rows shorter than a vector, NaN and infinities in X,
// and an infinite weight whose taps fall outside X (skipped, as the reference skips them).
TEST(OnednnSmallOps, ConvTranspose1dDepthwise) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(9);
  struct Case {
    int64_t C, T, k, stride, dilation, pad_l, pad_r, out_pad;
    bool bias, inf_weight;
  };
  for (const Case& k :
       {Case{256, 40, 3, 2, 1, 1, 1, 1, true, false}, Case{8, 17, 4, 4, 1, 0, 0, 0, false, false},
        Case{5, 1, 5, 3, 2, 2, 3, 2, true, false}, Case{3, 33, 7, 1, 1, 3, 3, 0, true, false},
        Case{4, 2, 3, 5, 3, 0, 1, 4, false, false}, Case{6, 70, 2, 2, 1, 0, 0, 1, true, true},
        Case{2, 9, 16, 4, 1, 6, 6, 0, false, true}}) {
    ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, {2, k.C, k.T});
    Tensor w = random_tensor({k.C, 1, k.k}, rng);
    if (k.inf_weight) w.data<float>()[k.k - 1] = kInf;  // the last tap of channel 0
    mb.initializer("W", w);
    std::vector<std::string> in = {"X", "W"};
    if (k.bias) {
      mb.initializer("B", random_tensor({k.C}, rng));
      in.push_back("B");
    }
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("ConvTranspose", in, {"Y"}, "deconv");
    set_attr(n, "group", k.C);
    set_attr(n, "strides", std::vector<int64_t>{k.stride});
    set_attr(n, "dilations", std::vector<int64_t>{k.dilation});
    set_attr(n, "pads", std::vector<int64_t>{k.pad_l, k.pad_r});
    set_attr(n, "output_padding", std::vector<int64_t>{k.out_pad});
    const Tensor x = random_tensor({2, k.C, k.T}, rng, 1.0f);
    const std::string what = "C " + std::to_string(k.C) + " T " + std::to_string(k.T) + " k " +
                             std::to_string(k.k) + " stride " + std::to_string(k.stride) +
                             " dilation " + std::to_string(k.dilation);
    expect_same(mb.bytes(), k.inf_weight ? x : with_specials(x), what);
  }
}

// 1-D max pooling of small tensors (a plain loop): pads, strides, dilations, ceil_mode; NaN is
// never the maximum, as in the reference.
TEST(OnednnSmallOps, MaxPool1d) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(6);
  struct Case {
    int64_t k, stride, dilation, pad_l, pad_r, ceil;
  };
  for (const Case& c : {Case{2, 2, 1, 0, 0, 0}, Case{3, 1, 1, 1, 1, 0}, Case{3, 2, 2, 2, 1, 1},
                        Case{4, 3, 1, 0, 2, 1}}) {
    ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, {2, 3, 17});
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("MaxPool", {"X"}, {"Y"}, "pool");
    set_attr(n, "kernel_shape", std::vector<int64_t>{c.k});
    set_attr(n, "strides", std::vector<int64_t>{c.stride});
    set_attr(n, "dilations", std::vector<int64_t>{c.dilation});
    set_attr(n, "pads", std::vector<int64_t>{c.pad_l, c.pad_r});
    set_attr(n, "ceil_mode", c.ceil);
    expect_same(mb.bytes(), with_specials(random_tensor({2, 3, 17}, rng, 1.0f)),
                "k " + std::to_string(c.k) + " stride " + std::to_string(c.stride));
  }
}

}  // namespace
}  // namespace recur
