// Chains of convolutions, pools and activations on channel-blocked tensors (the session's
// blocking pass, runtime/graph/blocked.h; providers/onednn: BlockedConv in nn/conv.cc, the
// blocked pools in nn/small_pool.cc, tensor/to_blocked.cc): random chains against the reference
// provider running the graph as written, with NaN and infinities too, in blocks of 16 and
// channels-last; which sessions block, and which chains the rule runs channels-last.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

// Nodes of op `op` that run in a blocked chain (--explain's note), or in one channels-last.
int count_blocked(const Session& s, const std::string& op, bool channels_last = false) {
  int n = 0;
  for (const auto& a : s.assignment()) {
    if (a.op != op) continue;
    for (const std::string& note : a.notes) {
      n += note.rfind("channel-blocked", 0) == 0 ||
           (channels_last && note.rfind("channels-last", 0) == 0);
    }
  }
  return n;
}

struct Blocked {
  int convs = 0, binary = 0, global_pools = 0, pools = 0;
  int nhwc = 0;  // BlockedConvs of channels-last chains
};

// A random chain from X [2, c0, H, W]: a convolution first, then `stages` of convolutions
// (1x1 to 5x5, strides 1 and 2, asymmetric pads or auto_pad, dilations 1 and 2, bias or none,
// each followed by an activation or not), max and average pools (ceil_mode, count_include_pad,
// auto_pad), activations, residual blocks (a 3x3 convolution added to its input),
// squeeze-and-excitation (GlobalAveragePool, a 1x1 convolution, Sigmoid, and the product with the
// input) and products with a scalar; some intermediate values are graph outputs too. `plain` leaves
// the activations and products out.
std::string random_chain(std::mt19937& rng, int64_t c0, int64_t H, int64_t W, int stages,
                         bool plain) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  ModelBuilder m(17);
  m.input("X", DType::kFloat32, {2, c0, H, W});
  m.output("Y", DType::kFloat32);
  std::string cur = "X";
  int64_t C = c0;
  int id = 0;
  auto next = [&](const std::string& op, std::vector<std::string> inputs) -> onnx::NodeProto& {
    const std::string out = "v" + std::to_string(++id);
    inputs.insert(inputs.begin(), cur);
    cur = out;
    return m.node(op, inputs, {out}, op + std::to_string(id));
  };
  auto activation = [&] {
    static const char* const kActs[] = {"Relu",      "LeakyRelu", "Sigmoid",
                                        "HardSwish", "Tanh",      "Clip"};
    const char* op = kActs[pick(6)];
    if (std::string(op) == "Clip") {
      const std::string lo = "lo" + std::to_string(id), hi = "hi" + std::to_string(id);
      m.initializer(lo, Tensor::scalar(-0.7f));
      m.initializer(hi, Tensor::scalar(0.9f));
      next(op, {lo, hi});
    } else {
      next(op, {});
    }
  };
  for (int s = 0; s < stages; ++s) {
    const int kind = s == 0 ? 0 : pick(plain ? 3 : 7);
    const int64_t k = kind == 0 ? 1 + 2 * pick(3) : 2 + pick(2);
    const int64_t stride = 1 + pick(2);
    if (H < k + 1 || W < k + 1) break;
    const std::vector<int64_t> pads = {pick(static_cast<int>(k)), pick(static_cast<int>(k)),
                                       pick(static_cast<int>(k)), pick(static_cast<int>(k))};
    if (kind == 0) {
      const int64_t M = 16 * (1 + pick(4));
      const std::string w = "W" + std::to_string(id);
      m.initializer(w, random_tensor({M, C, k, k}, rng));
      std::vector<std::string> in = {w};
      if (pick(2)) {
        in.push_back("B" + std::to_string(id));
        m.initializer(in.back(), random_tensor({M}, rng));
      }
      auto& n = next("Conv", in);
      set_attr(n, "strides", std::vector<int64_t>{stride, stride});
      const int form = pick(4);
      if (form == 0) {  // auto_pad: the output ceil(in / stride)
        set_attr(n, "auto_pad", std::string(pick(2) ? "SAME_UPPER" : "SAME_LOWER"));
        H = (H + stride - 1) / stride;
        W = (W + stride - 1) / stride;
      } else {
        // Pads up to half the kernel (a pad as wide as the kernel reads only zeros); a
        // dilation of 2 now and then.
        const int64_t d = form == 1 && H > 2 * k && W > 2 * k ? 2 : 1;
        if (d > 1) set_attr(n, "dilations", std::vector<int64_t>{d, d});
        set_attr(n, "pads",
                 std::vector<int64_t>{pads[0] / 2, pads[1] / 2, pads[2] / 2, pads[3] / 2});
        const int64_t span = (k - 1) * d + 1;
        H = (H + pads[0] / 2 + pads[2] / 2 - span) / stride + 1;
        W = (W + pads[1] / 2 + pads[3] / 2 - span) / stride + 1;
      }
      C = M;
      if (!plain && pick(3)) activation();
    } else if (kind <= 2) {
      const bool max = kind == 1;
      const bool include = !max && pick(2);
      const bool ceil = !include && pick(2);
      auto& n = next(max ? "MaxPool" : "AveragePool", {});
      set_attr(n, "kernel_shape", std::vector<int64_t>{k, k});
      set_attr(n, "strides", std::vector<int64_t>{stride, stride});
      if (include) set_attr(n, "count_include_pad", int64_t{1});
      if (pick(4) == 0) {  // auto_pad: the output ceil(in / stride)
        set_attr(n, "auto_pad", std::string("SAME_UPPER"));
        H = (H + stride - 1) / stride;
        W = (W + stride - 1) / stride;
      } else {
        set_attr(n, "pads", pads);
        if (ceil) set_attr(n, "ceil_mode", int64_t{1});
        const auto out = [&](int64_t in, int64_t lo, int64_t hi) {
          const int64_t span = in + lo + hi - k;
          return (ceil ? (span + stride - 1) / stride : span / stride) + 1;
        };
        H = out(H, pads[0], pads[2]);
        W = out(W, pads[1], pads[3]);
      }
    } else if (kind == 3) {
      activation();
    } else if (kind == 4) {
      const std::string skip = cur, w = "W" + std::to_string(id);
      m.initializer(w, random_tensor({C, C, 3, 3}, rng));
      set_attr(next("Conv", {w}), "pads", std::vector<int64_t>{1, 1, 1, 1});
      if (pick(2)) activation();
      next("Add", {skip});
    } else if (kind == 5) {
      const std::string x = cur, w = "W" + std::to_string(id), b = "B" + std::to_string(id);
      m.initializer(w, random_tensor({C, C, 1, 1}, rng));
      m.initializer(b, random_tensor({C}, rng));
      next("GlobalAveragePool", {});
      next("Conv", {w, b});
      next("Sigmoid", {});
      next("Mul", {x});
    } else {
      const std::string k = "k" + std::to_string(id);
      m.initializer(k, Tensor::scalar(0.5f));
      next(pick(2) ? "Mul" : "Sub", {k});
    }
    if (s > 0 && pick(4) == 0) {
      m.output(cur, DType::kFloat32);
    }
  }
  m.node("Identity", {cur}, {"Y"}, "out");
  return m.bytes();
}

Outputs run(const std::string& bytes, const Tensor& x, const std::string& providers,
            const char* blocked, Blocked* seen = nullptr) {
  SessionOptions o;
  // The reference provider takes the graph's last node, an Identity.
  if (providers == "onednn") {
    o.providers({"onednn", "reference"});
  } else {
    o.providers({providers});
  }
  o.threads(2).set("onednn.blocked", blocked);
  Session s = Session::from_bytes(bytes.data(), bytes.size(), o);
  if (seen) {
    seen->convs = count_op(s, "recur::BlockedConv");
    seen->binary = count_blocked(s, "Add", true) + count_blocked(s, "Mul", true) +
                   count_blocked(s, "Sub", true);
    // A GlobalAveragePool's blocked form.
    seen->global_pools = count_blocked(s, "ReduceMean", true);
    seen->pools = count_blocked(s, "MaxPool") + count_blocked(s, "AveragePool");
    seen->nhwc = count_blocked(s, "recur::BlockedConv", true) -
                 count_blocked(s, "recur::BlockedConv", false);
  }
  return s.run({{"X", x}});
}

// The providers sum each convolution's terms in other orders, so an output differs by a few
// float32 steps of the magnitudes summed into it, not of its own: after a few unnormalized
// convolutions the values reach hundreds, and a residual sum or a difference with a constant
// can leave an element near 0 with that absolute error. So the absolute tolerance scales with
// the output's largest finite magnitude (1e-5 of it, at least 1e-4); the unblocked oneDNN path
// differs from the reference as much, at the same elements.
void expect_match(const Outputs& got, const Outputs& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    double scale = 0.0;
    for (int64_t k = 0; k < want[i].numel(); ++k) {
      const double v = std::fabs(static_cast<double>(want[i].data<float>()[k]));
      if (std::isfinite(v)) scale = std::max(scale, v);
    }
    const auto cmp =
        tools::compare(got[i], want[i], tools::Tolerance{1e-3, std::max(1e-4, 1e-5 * scale)});
    EXPECT_TRUE(cmp.match) << what << ", output " << i << ": " << cmp.reason;
  }
}

// Each random chain in blocks of 16 and channels-last (onednn.blocked=nhwc makes every chain
// without a pool so).
TEST(OnednnBlockedChains, RandomChainsMatchTheReference) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(21);
  int chains = 0, binary = 0, global_pools = 0, nhwc_chains = 0, binary_nhwc = 0;
  for (int seed = 0; seed < 24; ++seed) {
    const int64_t c0 = std::vector<int64_t>{1, 3, 16, 32}[static_cast<size_t>(seed % 4)];
    const int64_t H = 12 + static_cast<int64_t>(rng() % 20),
                  W = 12 + static_cast<int64_t>(rng() % 40);
    const std::string bytes = random_chain(rng, c0, H, W, 3 + seed % 4, false);
    const Tensor x = random_tensor({2, c0, H, W}, rng, 1.0f);
    const std::string what = "seed " + std::to_string(seed);
    const Outputs want = run(bytes, x, "reference", "auto");
    Blocked seen, nhwc;
    expect_match(run(bytes, x, "onednn", "nchw16c", &seen), want, what);
    expect_match(run(bytes, x, "onednn", "nhwc", &nhwc), want, what + ", channels-last");
    chains += seen.convs > 0;
    binary += seen.binary > 0;
    global_pools += seen.global_pools > 0;
    EXPECT_EQ(seen.nhwc, 0) << what;
    const bool pools = seen.pools + seen.global_pools > 0;
    EXPECT_EQ(nhwc.nhwc, pools ? 0 : seen.convs) << what;
    nhwc_chains += nhwc.nhwc > 0;
    binary_nhwc += nhwc.nhwc > 0 && nhwc.binary > 0;
  }
  EXPECT_GE(chains, 12) << "too few of the random chains were blocked to test anything";
  EXPECT_GE(binary, 3) << "too few blocked Add, Sub or Mul nodes";
  EXPECT_GE(global_pools, 2) << "too few blocked GlobalAveragePool nodes";
  EXPECT_GE(nhwc_chains, 4) << "too few chains channels-last";
  EXPECT_GE(binary_nhwc, 1) << "no channels-last Add, Sub or Mul";
}

// A Conformer's subsampling (ESPnet's and WeNet's Conv2dSubsampling: X [N, T, F] unsqueezed to
// one channel, two 3x3 convolutions of stride 2 with Relu) over 128 channels: the rule runs it
// channels-last, at lengths that share shape buckets, against the reference; the same chain at
// stride 1 (Winograd's, nChw16c) and at 32 channels stays in blocks of 16.
TEST(OnednnBlockedChains, StridedChainsOfManyChannelsRunChannelsLast) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(25);
  const auto subsampling = [&rng](int64_t C, int64_t stride) {
    ModelBuilder mb(17);
    mb.input("X", DType::kFloat32, {-1, -1, 20}, {"N", "T", ""});
    mb.initializer("axes", Tensor::from_vector<int64_t>({1}, {1}));
    mb.initializer("W1", random_tensor({C, 1, 3, 3}, rng, 0.3f));
    mb.initializer("B1", random_tensor({C}, rng));
    mb.initializer("W2", random_tensor({C, C, 3, 3}, rng, 0.05f));
    mb.initializer("B2", random_tensor({C}, rng));
    mb.output("Y", DType::kFloat32);
    mb.node("Unsqueeze", {"X", "axes"}, {"x4"}, "unsqueeze");
    set_attr(mb.node("Conv", {"x4", "W1", "B1"}, {"c1"}, "conv1"), "strides",
             std::vector<int64_t>{stride, stride});
    mb.node("Relu", {"c1"}, {"r1"}, "relu1");
    set_attr(mb.node("Conv", {"r1", "W2", "B2"}, {"c2"}, "conv2"), "strides",
             std::vector<int64_t>{stride, stride});
    mb.node("Relu", {"c2"}, {"Y"}, "relu2");
    return mb.bytes();
  };
  const std::string bytes = subsampling(128, 2);
  for (const int64_t T : {40, 57, 61, 100}) {
    const Tensor x = random_tensor({3, T, 20}, rng, 1.0f);
    Blocked seen;
    const Outputs got = run(bytes, x, "onednn", "auto", &seen);
    EXPECT_EQ(seen.nhwc, 2) << "T " << T;
    expect_match(got, run(bytes, x, "reference", "auto"), "T " + std::to_string(T));
  }
  for (const auto& [C, stride] : {std::pair<int64_t, int64_t>{128, 1}, {32, 2}}) {
    Blocked seen;
    const std::string other = subsampling(C, stride);
    const Tensor x = random_tensor({2, 30, 20}, rng, 1.0f);
    const Outputs got = run(other, x, "onednn", "auto", &seen);
    EXPECT_EQ(seen.convs, 2) << C << " channels, stride " << stride;
    EXPECT_EQ(seen.nhwc, 0) << C << " channels, stride " << stride;
    expect_match(got, run(other, x, "reference", "auto"), "stride " + std::to_string(stride));
  }
}

// NaN and infinities in X, through convolutions without an activation (oneDNN's fused Relu
// takes NaN to 0) and pools: a NaN is never the largest of a max pool's window, as in the
// reference.
TEST(OnednnBlockedChains, SpecialValuesMatchTheReference) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(22);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 1e30f};
  for (int seed = 0; seed < 6; ++seed) {
    const int64_t c0 = seed % 2 ? 16 : 2;
    const std::string bytes = random_chain(rng, c0, 20, 30, 4, true);
    Tensor x = random_tensor({2, c0, 20, 30}, rng, 1.0f);
    for (int64_t i = 11; i < x.numel(); i += 211) x.data<float>()[i] = specials[i % 4];
    const Outputs want = run(bytes, x, "reference", "auto");
    expect_match(run(bytes, x, "onednn", "nchw16c"), want, "seed " + std::to_string(seed));
    expect_match(run(bytes, x, "onednn", "nhwc"), want, "seed " + std::to_string(seed) + ", nhwc");
  }
}

// onednn.blocked=off, and a session of the reference provider alone, keep the graph as written.
TEST(OnednnBlockedChains, OffAndTheReferenceKeepTheGraph) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(23);
  ModelBuilder mb(17);
  mb.input("X", DType::kFloat32, {2, 16, 24, 24});
  mb.initializer("W", random_tensor({32, 16, 3, 3}, rng));
  mb.output("Y", DType::kFloat32);
  mb.node("Conv", {"X", "W"}, {"c"}, "conv");
  set_attr(mb.node("MaxPool", {"c"}, {"Y"}, "pool"), "kernel_shape", std::vector<int64_t>{2, 2});
  const std::string bytes = mb.bytes();
  const Tensor x = random_tensor({2, 16, 24, 24}, rng, 1.0f);
  Blocked on, off, ref;
  const Outputs a = run(bytes, x, "onednn", "auto", &on);
  const Outputs b = run(bytes, x, "onednn", "off", &off);
  run(bytes, x, "reference", "auto", &ref);
  EXPECT_EQ(on.convs, 1);
  EXPECT_EQ(off.convs, 0);
  EXPECT_EQ(ref.convs, 0);
  expect_match(a, b, "blocked against not");
}

// An empty batch: each blocked node writes an empty tensor of its blocked shape, and the chain
// hands out what the reference gives.
TEST(OnednnBlockedChains, AnEmptyBatch) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(24);
  ModelBuilder mb(17);
  mb.input("X", DType::kFloat32, {-1, 16, 8, 8}, {"N", "", "", ""});
  mb.initializer("W", random_tensor({32, 16, 3, 3}, rng));
  mb.initializer("W2", random_tensor({32, 32, 3, 3}, rng));
  mb.output("Y", DType::kFloat32);
  set_attr(mb.node("Conv", {"X", "W"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(mb.node("MaxPool", {"c"}, {"p"}, "pool"), "kernel_shape", std::vector<int64_t>{2, 2});
  mb.node("Conv", {"p", "W2"}, {"Y"}, "conv2");
  const std::string bytes = mb.bytes();
  Blocked seen;
  const Tensor x = Tensor::zeros(DType::kFloat32, {0, 16, 8, 8});
  const Outputs got = run(bytes, x, "onednn", "auto", &seen);
  EXPECT_EQ(seen.convs, 2);
  const Outputs want = run(bytes, x, "reference", "auto");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape(), want[0].shape());
  EXPECT_EQ(got[0].shape(), (Shape{0, 32, 5, 5}));
}

}  // namespace
}  // namespace recur
