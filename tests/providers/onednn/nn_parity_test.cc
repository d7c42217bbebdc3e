// The oneDNN provider's ConvTranspose, LayerNormalization, BatchNormalization, two-operand
// Einsum, Resize and the activations newer than the ONNX backend data here (Gelu, Mish, Swish;
// HardSwish) against the reference provider on random cases. ConvTranspose: 1-D to 3-D, groups,
// strides, dilations, pads, output_padding, output_shape and SAME auto_pad (known shapes), bias or
// none, W constant or fed. LayerNormalization: every axis, Scale and B that cover the normalised
// shape or broadcast, the optional statistics outputs, inputs near zero and far from it.
// BatchNormalization: ranks 2 to 5, batches of 1 to 3, inputs and means far from zero. Each node
// must be claimed by oneDNN (or declined with the reason the claim gives) and agree with the
// reference, which the ONNX backend data checks in turn (onnx-node tests).
#include <gtest/gtest.h>

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

Session open(const std::string& bytes, const std::string& providers) {
  SessionOptions o;
  if (providers == "reference") {
    o.providers({"reference"});
  } else {
    o.providers({providers, "reference"});
  }
  o.threads(2);
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

// Runs `bytes` with oneDNN first and with the reference alone on `feeds`; the outputs must
// agree. Returns the provider oneDNN's session gave the node.
std::string expect_same(const std::string& bytes, const Feeds& feeds, const std::string& what,
                        tools::Tolerance tol = tools::Tolerance{1e-4, 1e-4}) {
  Session dnn = open(bytes, "onednn");
  const std::string provider = dnn.assignment().front().provider;
  const Outputs got = dnn.run(feeds);
  const Outputs want = open(bytes, "reference").run(feeds);
  EXPECT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << what;
    const auto cmp = tools::compare(got[i], want[i], tol);
    EXPECT_TRUE(cmp.match) << what << ": " << cmp.reason;
  }
  return provider;
}

// x * scale + offset, elementwise: values far from zero with a small spread.
Tensor shifted(Tensor x, float scale, float offset) {
  float* p = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = p[i] * scale + offset;
  return x;
}

TEST(OnednnNnParity, ConvTransposeRandomGeometries) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int on_onednn = 0, declined = 0;
  for (int iter = 0; iter < 120; ++iter) {
    const int64_t r = pick(1, 3), g = pick(1, 3), n = pick(1, 2);
    const int64_t c = g * pick(1, 3), m = g * pick(1, 3);
    Shape x{n, c}, w{c, m / g};
    std::vector<int64_t> strides, dilations, pads(2 * static_cast<size_t>(r)), out_pad;
    for (int64_t i = 0; i < r; ++i) {
      x.push_back(pick(1, r == 3 ? 4 : 7));
      w.push_back(pick(1, 4));
      strides.push_back(pick(1, 3));
      dilations.push_back(pick(1, 2));
      pads[static_cast<size_t>(i)] = pick(0, 2);
      pads[static_cast<size_t>(i + r)] = pick(0, 2);
      // Up to stride + end pad, one past what oneDNN takes: such nodes must be declined.
      out_pad.push_back(pick(0, strides.back() + pads[static_cast<size_t>(i + r)]));
    }
    const int mode = static_cast<int>(pick(0, 3));  // pads, SAME_UPPER, SAME_LOWER, output_shape
    const bool bias = pick(0, 1) == 1, w_input = pick(0, 4) == 0;
    ModelBuilder mb(11);
    mb.input("X", DType::kFloat32, x);
    if (w_input) {
      mb.input("W", DType::kFloat32, w);
    } else {
      mb.initializer("W", random_tensor(w, rng));
    }
    std::vector<std::string> ins{"X", "W"};
    if (bias) {
      mb.initializer("B", random_tensor({m}, rng));
      ins.push_back("B");
    }
    mb.output("Y", DType::kFloat32);
    onnx::NodeProto& node = mb.node("ConvTranspose", ins, {"Y"}, "deconv");
    set_attr(node, "group", g);
    set_attr(node, "strides", strides);
    set_attr(node, "dilations", dilations);
    if (mode == 0) {
      set_attr(node, "pads", pads);
      set_attr(node, "output_padding", out_pad);
    } else if (mode == 1 || mode == 2) {
      set_attr(node, "auto_pad", std::string(mode == 1 ? "SAME_UPPER" : "SAME_LOWER"));
    } else {
      std::vector<int64_t> os;
      for (int64_t i = 0; i < r; ++i) os.push_back(x[static_cast<size_t>(i + 2)] * 2 + pick(-1, 2));
      set_attr(node, "output_shape", os);
    }
    Feeds feeds{{"X", random_tensor(x, rng, 1.0f)}};
    if (w_input) feeds.push_back({"W", random_tensor(w, rng)});
    const std::string what = "iter " + std::to_string(iter) + ": X " + shape_to_string(x) + " W " +
                             shape_to_string(w) + " group " + std::to_string(g) + " mode " +
                             std::to_string(mode);
    const std::string bytes = mb.bytes();
    // A geometry the reference refuses (pads leaving no output) is refused by both.
    bool reference_runs = true;
    try {
      open(bytes, "reference").run(feeds);
    } catch (const Error&) {
      reference_runs = false;
    }
    if (!reference_runs) continue;
    const std::string provider = expect_same(bytes, feeds, what);
    if (provider == "onednn") {
      ++on_onednn;
    } else {
      ++declined;
      const Session s = open(bytes, "onednn");
      ASSERT_FALSE(s.assignment().front().declined.empty()) << what;
    }
  }
  // Most geometries fit oneDNN; some (a large output_padding, output_shape past the full
  // output) must not.
  EXPECT_GE(on_onednn, 60);
  EXPECT_GE(declined, 3);
}

// One session fed many numbers of rows, as an encoder fed utterances of varying length is, a
// primitive each (in chunks of rows, as the packed-B products run new row counts, the 20
// normalisations of a Conformer took 0.67 ms a run against 0.39: oneDNN makes this primitive
// in a few microseconds), the statistics outputs included; each run agrees with the reference.
TEST(OnednnNnParity, LayerNormalizationOverManyRowCounts) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(17);
  for (const bool bias : {true, false}) {
    ModelBuilder mb(17);
    mb.input("X", DType::kFloat32, {1, -1, 48}, {"", "T"});
    mb.initializer("S", random_tensor({48}, rng, 1.0f));
    std::vector<std::string> ins{"X", "S"};
    if (bias) {
      mb.initializer("B", random_tensor({48}, rng, 1.0f));
      ins.push_back("B");
    }
    mb.output("Y", DType::kFloat32).output("Mean", DType::kFloat32);
    mb.output("InvStdDev", DType::kFloat32);
    set_attr(mb.node("LayerNormalization", ins, {"Y", "Mean", "InvStdDev"}, "ln"), "axis",
             int64_t{-1});
    const std::string bytes = mb.bytes();
    Session dnn = open(bytes, "onednn");
    ASSERT_EQ(dnn.assignment().front().provider, "onednn");
    Session ref = open(bytes, "reference");
    for (const int64_t T : {40, 7, 100, 3, 77, 1, 600, 129, 40, 1000}) {
      const Feeds f = {{"X", random_tensor({1, T, 48}, rng, 2.0f)}};
      const Outputs got = dnn.run(f), want = ref.run(f);
      for (size_t i = 0; i < want.size(); ++i) {
        const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{1e-4, 1e-4});
        EXPECT_TRUE(cmp.match) << "T " << T << " output " << i << ": " << cmp.reason;
      }
    }
  }
}

TEST(OnednnNnParity, LayerNormalizationRandomCases) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int on_onednn = 0, declined = 0;
  for (int iter = 0; iter < 60; ++iter) {
    const int64_t rank = pick(1, 4);
    Shape x;
    for (int64_t i = 0; i < rank; ++i) x.push_back(pick(1, 9));
    const int64_t axis = pick(-rank, rank - 1);
    const int64_t a = axis < 0 ? axis + rank : axis;
    // Scale: the normalised shape, or (cases for the reference) one that broadcasts: its first
    // dimension left out, or 1.
    Shape sshape(x.begin() + a, x.end());
    const int form = static_cast<int>(pick(0, 3));
    bool broadcasts = false;
    if (form == 1 && sshape.size() > 1) {
      broadcasts = sshape.front() > 1;
      sshape.erase(sshape.begin());
    } else if (form == 3) {
      broadcasts = sshape.front() > 1;
      sshape.front() = 1;
    }
    const bool bias = pick(0, 1) == 1, stats = pick(0, 2) == 0;
    ModelBuilder mb(17);
    mb.input("X", DType::kFloat32, x);
    mb.initializer("S", random_tensor(sshape, rng, 1.0f));
    std::vector<std::string> ins{"X", "S"};
    if (bias) {
      mb.initializer("B", random_tensor(sshape, rng, 1.0f));
      ins.push_back("B");
    }
    std::vector<std::string> outs{"Y"};
    mb.output("Y", DType::kFloat32);
    if (stats) {
      outs.insert(outs.end(), {"Mean", "InvStdDev"});
      mb.output("Mean", DType::kFloat32);
      mb.output("InvStdDev", DType::kFloat32);
    }
    onnx::NodeProto& node = mb.node("LayerNormalization", ins, outs, "ln");
    set_attr(node, "axis", axis);
    set_attr(node, "epsilon", 1e-3f);
    const std::string what = "iter " + std::to_string(iter) + ": X " + shape_to_string(x) +
                             " axis " + std::to_string(axis) + " Scale " + shape_to_string(sshape);
    // Every third case far from zero, with a small spread: 100 +- 0.1. A float32 value near
    // 100 is rounded by up to 3.8e-6, 3.8e-5 of the spread, and oneDNN's float32 mean is off by
    // a few such steps (the reference's is in double): the tolerance is ten of them.
    const bool far = iter % 3 == 0;
    const std::string provider = expect_same(
        mb.bytes(),
        {{"X", shifted(random_tensor(x, rng, 1.0f), far ? 0.1f : 2.0f, far ? 100.0f : 0.0f)}}, what,
        far ? tools::Tolerance{1e-3, 4e-4} : tools::Tolerance{1e-4, 1e-4});
    if (broadcasts) {
      EXPECT_EQ(provider, "reference") << what;
      ++declined;
    } else {
      EXPECT_EQ(provider, "onednn") << what;
      ++on_onednn;
    }
  }
  EXPECT_GE(on_onednn, 30);
  EXPECT_GE(declined, 3);
}

TEST(OnednnNnParity, BatchNormalizationRandomCases) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(13);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int iter = 0; iter < 30; ++iter) {
    const int64_t rank = pick(2, 5);
    Shape x{pick(1, 3), pick(1, 6)};
    while (static_cast<int64_t>(x.size()) < rank) x.push_back(pick(1, 40));
    const int64_t c = x[1];
    ModelBuilder mb(15);
    mb.input("X", DType::kFloat32, x);
    mb.output("Y", DType::kFloat32);
    // Statistics as constants (folded at load) and, every third case, as graph inputs.
    const bool fed = iter % 3 == 0;
    const std::vector<std::pair<std::string, Tensor>> stats = {
        {"S", random_tensor({c}, rng, 1.0f)},
        {"B", random_tensor({c}, rng, 1.0f)},
        {"M", shifted(random_tensor({c}, rng, 1.0f), 1.0f, 50.0f)},
        {"V", shifted(random_tensor({c}, rng, 0.5f), 1.0f, 1.0f)}};
    for (const auto& [name, t] : stats) {
      if (fed) {
        mb.input(name, DType::kFloat32, {c});
      } else {
        mb.initializer(name, t);
      }
    }
    onnx::NodeProto& node = mb.node("BatchNormalization", {"X", "S", "B", "M", "V"}, {"Y"}, "norm");
    set_attr(node, "epsilon", 1e-4f);
    const float offset = static_cast<float>(pick(-1, 1)) * 100.0f;
    const std::string what = "iter " + std::to_string(iter) + ": X " + shape_to_string(x);
    std::vector<std::pair<std::string, Tensor>> feeds = {
        {"X", shifted(random_tensor(x, rng, 1.0f), 0.1f, offset)}};
    if (fed) feeds.insert(feeds.end(), stats.begin(), stats.end());
    const std::string provider = expect_same(mb.bytes(), feeds, what);
    EXPECT_EQ(provider, "onednn") << what;
  }
}

// 2-D MaxPool and AveragePool of kernels 1 to 4, strides 1 to 3, pads below the window,
// ceil_mode and count_include_pad, and the global pools, which run on recur's AVX-512 loops
// (nn/small_pool.h) where the CPU has AVX-512: small tensors, and a fifth of the cases past
// 512K elements, whose planes split among threads. Max pools see NaNs and
// infinities too (a NaN is never the largest; a window of NaNs only gives -inf).
TEST(OnednnNnParity, PoolRandomCases) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(29);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int on_onednn = 0;
  for (int iter = 0; iter < 80; ++iter) {
    const bool max = iter % 2 == 0;
    const bool global = iter % 10 >= 8;  // GlobalMaxPool at 8, GlobalAveragePool at 9
    // Every fifth case past 512K elements, where the planes split among threads.
    const bool large = iter % 20 <= 1 || iter % 20 >= 8;
    const Shape x = large ? Shape{2, pick(6, 9), pick(60, 96), pick(300, 400)}
                          : Shape{pick(1, 2), pick(1, 5), pick(1, 24), pick(1, 40)};
    ModelBuilder mb(19);
    mb.input("X", DType::kFloat32, x);
    mb.output("Y", DType::kFloat32);
    std::string what = "iter " + std::to_string(iter) + ": X " + shape_to_string(x);
    if (global) {
      mb.node(max ? "GlobalMaxPool" : "GlobalAveragePool", {"X"}, {"Y"}, "pool");
      what += max ? " global max" : " global average";
    } else {
      const int64_t kh = std::min<int64_t>(pick(1, 4), x[2]),
                    kw = std::min<int64_t>(pick(1, 4), x[3]);
      const std::vector<int64_t> strides = {pick(1, 3), pick(1, 3)};
      const std::vector<int64_t> pads = {pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1),
                                         pick(0, kw - 1)};
      const bool ceil = pick(0, 1) == 1;
      const bool include = !max && !ceil && pick(0, 1) == 1;
      onnx::NodeProto& node = mb.node(max ? "MaxPool" : "AveragePool", {"X"}, {"Y"}, "pool");
      set_attr(node, "kernel_shape", std::vector<int64_t>{kh, kw});
      set_attr(node, "strides", strides);
      set_attr(node, "pads", pads);
      if (ceil) set_attr(node, "ceil_mode", int64_t{1});
      if (include) set_attr(node, "count_include_pad", int64_t{1});
      what += std::string(max ? " max" : " average") + " k" + std::to_string(kh) + "x" +
              std::to_string(kw) + " s" + std::to_string(strides[0]) + "x" +
              std::to_string(strides[1]) + (ceil ? " ceil" : "") + (include ? " include" : "");
    }
    Tensor in = random_tensor(x, rng, 4.0f);
    if (max) {
      float* p = in.data<float>();
      for (int64_t i = 0; i < in.numel(); i += 7) p[i] = std::numeric_limits<float>::quiet_NaN();
      if (in.numel() > 3) p[3] = std::numeric_limits<float>::infinity();
      if (in.numel() > 5) p[5] = -std::numeric_limits<float>::infinity();
    }
    const std::string provider = expect_same(mb.bytes(), {{"X", in}}, what);
    on_onednn += provider == "onednn";
  }
  EXPECT_GE(on_onednn, 70);
}

// Dilated 2-D MaxPools (dilations 1 to 3 on each axis, kernels 1 to 4, strides 1 to 3, pads
// below the dilated window, ceil_mode), which oneDNN 2.6 pools on its reference implementation
// and recur's loop (nn/small_pool.h) takes, NaNs and infinities included; every fourth case
// past 512K elements, whose planes split among threads.
TEST(OnednnNnParity, DilatedMaxPoolRandomCases) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(31);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int iter = 0; iter < 40; ++iter) {
    const Shape x = iter % 4 == 3 ? Shape{2, pick(6, 9), pick(60, 96), pick(300, 400)}
                                  : Shape{pick(1, 2), pick(1, 5), pick(4, 24), pick(4, 40)};
    const std::vector<int64_t> k = {pick(1, 4), pick(1, 4)}, d = {pick(1, 3), pick(1, 3)};
    const int64_t span_h = (k[0] - 1) * d[0] + 1, span_w = (k[1] - 1) * d[1] + 1;
    if (span_h > x[2] || span_w > x[3]) continue;
    const std::vector<int64_t> strides = {pick(1, 3), pick(1, 3)};
    const std::vector<int64_t> pads = {pick(0, span_h - 1), pick(0, span_w - 1),
                                       pick(0, span_h - 1), pick(0, span_w - 1)};
    const bool ceil = pick(0, 1) == 1;
    ModelBuilder mb(12);
    mb.input("X", DType::kFloat32, x);
    mb.output("Y", DType::kFloat32);
    onnx::NodeProto& node = mb.node("MaxPool", {"X"}, {"Y"}, "pool");
    set_attr(node, "kernel_shape", k);
    set_attr(node, "dilations", d);
    set_attr(node, "strides", strides);
    set_attr(node, "pads", pads);
    if (ceil) set_attr(node, "ceil_mode", int64_t{1});
    const std::string what = "iter " + std::to_string(iter) + ": X " + shape_to_string(x) + " k" +
                             std::to_string(k[0]) + "x" + std::to_string(k[1]) + " d" +
                             std::to_string(d[0]) + "x" + std::to_string(d[1]) + " s" +
                             std::to_string(strides[0]) + "x" + std::to_string(strides[1]) +
                             (ceil ? " ceil" : "");
    Tensor in = random_tensor(x, rng, 4.0f);
    float* p = in.data<float>();
    for (int64_t i = 0; i < in.numel(); i += 7) p[i] = std::numeric_limits<float>::quiet_NaN();
    p[3] = std::numeric_limits<float>::infinity();
    p[5] = -std::numeric_limits<float>::infinity();
    EXPECT_EQ(expect_same(mb.bytes(), {{"X", in}}, what), "onednn") << what;
  }
}

TEST(OnednnNnParity, NewerActivations) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(17);
  struct Case {
    const char* op;
    int opset;
    const char* attr;  // a string attribute "name=value", or null
    float alpha;       // Swish's alpha, or 0
  };
  const Case cases[] = {{"Gelu", 20, nullptr, 0.0f},  {"Gelu", 20, "approximate=tanh", 0.0f},
                        {"Mish", 18, nullptr, 0.0f},  {"HardSwish", 14, nullptr, 0.0f},
                        {"Swish", 24, nullptr, 0.0f}, {"Swish", 24, nullptr, 1.702f}};
  for (const Case& c : cases) {
    ModelBuilder mb(c.opset, 10);
    mb.input("X", DType::kFloat32, {3, 1000});
    mb.output("Y", DType::kFloat32);
    onnx::NodeProto& node = mb.node(c.op, {"X"}, {"Y"}, "act");
    if (c.attr) set_attr(node, "approximate", std::string("tanh"));
    if (c.alpha != 0.0f) set_attr(node, "alpha", c.alpha);
    const std::string what =
        std::string(c.op) + (c.attr ? " tanh" : "") + (c.alpha != 0.0f ? " alpha" : "");
    // Values in [-8, 8] and a few beyond, where the functions saturate.
    Tensor x = random_tensor({3, 1000}, rng, 8.0f);
    x.data<float>()[0] = 40.0f;
    x.data<float>()[1] = -40.0f;
    const std::string provider =
        expect_same(mb.bytes(), {{"X", x}}, what, tools::Tolerance{1e-4, 1e-5});
    EXPECT_EQ(provider, "onednn") << what;
  }
}

// Two-operand Einsum on oneDNN's matmul: operands read in place (attention's products, a
// transposed output, a plain product, ellipsis batches) and operands gathered first (a
// diagonal, a label summed in one operand only, broadcasting along a kept label); a
// three-operand equation is declined with the reason.
TEST(OnednnNnParity, EinsumTwoOperands) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(23);
  struct Case {
    const char* eq;
    Shape a, b;
    bool onednn = true;  // false: a label summed in one operand, left to the reference
  };
  const Case cases[] = {
      {"bhid,bhjd->bhij", {2, 3, 17, 8}, {2, 3, 13, 8}},
      {"bhij,bhjd->bhid", {2, 3, 17, 13}, {2, 3, 13, 8}},
      {"ij,jk->ki", {9, 31}, {31, 5}},
      {"ij,jk", {9, 31}, {31, 5}},
      {"...ij,...jk->...ik", {4, 1, 6, 7}, {3, 7, 2}},
      {"bii,bij->bj", {3, 5, 5}, {3, 5, 4}},
      {"bi,j->bij", {4, 6}, {5}},
      {"ij,ij->i", {6, 40}, {6, 40}},
      {"ij,ij->", {6, 40}, {6, 40}},
      {"bnc,cm->bnm", {2, 0, 4}, {4, 3}},
      {"bnc,cm->bnm", {2, 3, 0}, {0, 3}},
      {"ij,jk->k", {4, 5}, {5, 3}, false},
      {"ij,kj->", {3, 4}, {5, 4}, false},
      {"...ij,...jk->ik", {2, 6, 7}, {2, 7, 3}, false},
  };
  for (const Case& c : cases) {
    ModelBuilder mb(12);
    mb.input("A", DType::kFloat32, c.a);
    mb.input("B", DType::kFloat32, c.b);
    mb.output("Y", DType::kFloat32);
    set_attr(mb.node("Einsum", {"A", "B"}, {"Y"}, "einsum"), "equation", std::string(c.eq));
    const std::string provider =
        expect_same(mb.bytes(), {{"A", random_tensor(c.a, rng)}, {"B", random_tensor(c.b, rng)}},
                    c.eq, tools::Tolerance{1e-5, 1e-5});
    EXPECT_EQ(provider, c.onednn ? "onednn" : "reference") << c.eq;
  }
  ModelBuilder mb(12);
  for (const char* n : {"A", "B", "C"}) mb.input(n, DType::kFloat32, {3, 3});
  mb.output("Y", DType::kFloat32);
  set_attr(mb.node("Einsum", {"A", "B", "C"}, {"Y"}, "einsum"), "equation",
           std::string("ij,jk,kl->il"));
  Session s = open(mb.bytes(), "onednn");
  EXPECT_EQ(s.assignment().front().provider, "reference");
  EXPECT_NE(s.explain().find("oneDNN's Einsum takes two operands"), std::string::npos)
      << s.explain();
}

// Resize on oneDNN's resampling where its coordinates are ONNX's: linear from sizes (up, down,
// non-integer ratios) and from integer scales, half_pixel and pytorch_half_pixel, 1-D to 3-D;
// nearest upsampling by integer scales with half_pixel and either round_prefer mode, and with
// asymmetric and floor (PyTorch's nn.Upsample). Cases oneDNN must leave alone are declined.
TEST(OnednnNnParity, ResizeWhereOneDnnMapsAsOnnx) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(29);
  struct Case {
    const char* mode;
    const char* coord;
    const char* nearest;
    Shape x;
    std::vector<float> scales;  // empty: sizes
    std::vector<int64_t> sizes;
    bool onednn;  // whether oneDNN must take it
  };
  const Case cases[] = {
      {"linear", "half_pixel", nullptr, {1, 3, 16, 16}, {1, 1, 2, 2}, {}, true},
      {"linear", "pytorch_half_pixel", nullptr, {2, 4, 9, 7}, {1, 1, 3, 2}, {}, true},
      {"linear", "half_pixel", nullptr, {1, 2, 10, 12}, {}, {1, 2, 7, 29}, true},
      {"linear", "half_pixel", nullptr, {1, 2, 33}, {}, {1, 2, 100}, true},
      {"linear", "half_pixel", nullptr, {1, 2, 4, 5, 6}, {}, {1, 2, 7, 3, 11}, true},
      {"linear", "pytorch_half_pixel", nullptr, {1, 2, 8, 8}, {}, {1, 2, 5, 3}, true},
      {"nearest", "half_pixel", "round_prefer_floor", {1, 3, 5, 6}, {1, 1, 2, 3}, {}, true},
      {"nearest", "half_pixel", "round_prefer_ceil", {2, 2, 7}, {1, 1, 4}, {}, true},
      {"nearest", "asymmetric", "floor", {1, 4, 6, 5}, {1, 1, 2, 2}, {}, true},
      {"nearest", "asymmetric", "floor", {1, 1, 3, 4}, {}, {1, 1, 9, 8}, true},
      // Left to the reference:
      {"linear", "half_pixel", nullptr, {1, 2, 10, 10}, {1, 1, 1.5f, 1.5f}, {}, false},
      {"linear", "align_corners", nullptr, {1, 2, 6, 6}, {1, 1, 2, 2}, {}, false},
      {"linear", "asymmetric", nullptr, {1, 2, 6, 6}, {1, 1, 2, 2}, {}, false},
      {"linear", "pytorch_half_pixel", nullptr, {1, 2, 6, 6}, {}, {1, 2, 1, 3}, false},
      {"nearest", "half_pixel", "floor", {1, 2, 6, 6}, {1, 1, 2, 2}, {}, false},
      {"nearest", "half_pixel", "round_prefer_floor", {1, 2, 6, 6}, {1, 1, 0.5f, 0.5f}, {}, false},
      {"cubic", "half_pixel", nullptr, {1, 2, 6, 6}, {1, 1, 2, 2}, {}, false},
      {"linear", "half_pixel", nullptr, {1, 2, 6, 6}, {2, 1, 2, 2}, {}, false},
  };
  for (const Case& c : cases) {
    ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, c.x);
    mb.output("Y", DType::kFloat32);
    const int64_t r = static_cast<int64_t>(c.x.size());
    if (!c.scales.empty()) {
      mb.initializer("scales", testing::floats({r}, c.scales));
    } else {
      mb.initializer("sizes", Tensor::from_vector<int64_t>({r}, c.sizes));
    }
    onnx::NodeProto& n = mb.node(
        "Resize", {"X", "", c.scales.empty() ? "" : "scales", c.scales.empty() ? "sizes" : ""},
        {"Y"}, "resize");
    set_attr(n, "mode", std::string(c.mode));
    set_attr(n, "coordinate_transformation_mode", std::string(c.coord));
    if (c.nearest) set_attr(n, "nearest_mode", std::string(c.nearest));
    const std::string what = std::string(c.mode) + " " + c.coord + " " +
                             (c.nearest ? c.nearest : "") + " " + shape_to_string(c.x);
    const std::string provider = expect_same(mb.bytes(), {{"X", random_tensor(c.x, rng)}}, what,
                                             tools::Tolerance{1e-5, 1e-5});
    EXPECT_EQ(provider, c.onednn ? "onednn" : "reference") << what;
  }
}

}  // namespace
}  // namespace recur
