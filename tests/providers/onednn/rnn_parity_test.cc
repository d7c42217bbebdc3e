// Provider parity: randomized LSTM/GRU/RNN configurations run on the oneDNN provider and on the
// reference provider (the oracle) must agree within the default tolerance
// |got - want| <= 1e-5 + 1e-3*|want|. Each configuration is one CTest; its seed is printed on
// failure and reproduces it alone (RECUR_PARITY_SEED=<seed> with --gtest_filter='*Random/0').
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#if RECUR_HAVE_ONEDNN
#include <dnnl.h>
#endif

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::set_attr;

struct Config {
  std::string op;  // LSTM, GRU, RNN
  std::string direction;
  int layout = 0;
  int64_t T = 1, N = 1, I = 1, H = 1;
  bool lbr = false;
  bool input_forget = false;
  bool peepholes = false;
  std::string rnn_act = "Tanh";  // RNN only; a second one for the reverse direction
  std::string rnn_act2 = "";
  float leaky_alpha = 0.0f;
  bool bias = true;
  bool seq_lens = false;
  std::vector<int32_t> lens;
  bool initial_h = false, initial_c = false;
  bool want_y = true, want_yh = true, want_yc = true;
  bool weights_as_inputs = false;  // W/R/B/P fed at run time rather than initializers
  std::string impl = "auto";
  std::string tune = "0";
  std::string threading = "auto";
  int threads = 1;
  int64_t time_block = 0;     // onednn.time_block: 0 is the rule's choice
  float weight_scale = 0.5f;  // W, R, B, P uniform in [-scale, scale]

  int D() const { return direction == "bidirectional" ? 2 : 1; }
  int G() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  std::string describe() const {
    std::ostringstream os;
    os << op << " " << direction << " layout=" << layout << " T=" << T << " N=" << N << " I=" << I
       << " H=" << H;
    if (op == "GRU") os << " lbr=" << lbr;
    if (op == "LSTM") os << " input_forget=" << input_forget << " peepholes=" << peepholes;
    if (op == "RNN") os << " act=" << rnn_act << (rnn_act2.empty() ? "" : "," + rnn_act2);
    os << " bias=" << bias << " lens=";
    if (!seq_lens) os << "none";
    for (size_t i = 0; i < lens.size(); ++i) os << (i ? "," : "") << lens[i];
    os << " h0=" << initial_h << " c0=" << initial_c << " outputs=" << want_y << want_yh << want_yc
       << " weights_as_inputs=" << weights_as_inputs << " impl=" << impl << " tune=" << tune
       << " threads=" << threads << " time_block=" << time_block;
    return os.str();
  }
};

Config random_config(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](auto... v) {
    std::vector<std::common_type_t<decltype(v)...>> options{v...};
    return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  Config c;
  c.op = pick(std::string("LSTM"), std::string("GRU"), std::string("RNN"));
  c.direction = pick(std::string("forward"), std::string("reverse"), std::string("bidirectional"));
  c.layout = chance(0.3) ? 1 : 0;
  c.T = pick(1, 2, 3, 5, 8);
  c.N = pick(1, 1, 7, 7, 3, 16);
  c.I = pick(1, 4, 16, 33);
  c.H = pick(1, 8, 16, 65);
  c.lbr = c.op == "GRU" && chance(0.5);
  c.input_forget = c.op == "LSTM" && chance(0.25);
  c.peepholes = c.op == "LSTM" && chance(0.4);
  if (c.op == "RNN") {
    c.rnn_act = pick(std::string("Tanh"), std::string("Relu"), std::string("Sigmoid"),
                     std::string("LeakyRelu"));
    if (c.D() == 2 && chance(0.4)) c.rnn_act2 = pick(std::string("Tanh"), std::string("LeakyRelu"));
    c.leaky_alpha = std::uniform_real_distribution<float>(0.01f, 0.5f)(rng);
  }
  c.bias = chance(0.8);
  c.seq_lens = chance(0.6);
  if (c.seq_lens) {
    const int mode = pick(0, 1, 1, 1);  // all full, or mixed with 0 and T included
    for (int64_t n = 0; n < c.N; ++n) {
      c.lens.push_back(
          mode == 0 ? static_cast<int32_t>(c.T)
                    : static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, c.T)(rng)));
    }
    if (mode == 1 && c.N >= 3) {
      c.lens[0] = 0;
      c.lens[static_cast<size_t>(c.N - 1)] = static_cast<int32_t>(c.T);
    }
  }
  c.initial_h = chance(0.5);
  c.initial_c = c.op == "LSTM" && chance(0.5);
  c.want_y = chance(0.8);
  c.want_yh = chance(0.7);
  c.want_yc = c.op == "LSTM" && chance(0.7);
  if (!c.want_y && !c.want_yh && !c.want_yc) c.want_y = true;
  c.weights_as_inputs = chance(0.15);
  c.impl = pick(std::string("auto"), std::string("any"), std::string("ldigo"));
  c.tune = chance(0.15) ? "1" : "0";
  c.threads = pick(1, 2);
  c.threading = pick(std::string("auto"), std::string("single"), std::string("omp"),
                     std::string("split"), std::string("split"));
  c.time_block = pick(0, 0, 0, 1, 2, 3);
  return c;
}

Tensor random_tensor(const Shape& shape, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : v) x = u(rng);
  return Tensor::from_vector(shape, v);
}

struct Built {
  std::string bytes;
  Feeds feeds;
  std::vector<std::string> outputs;
};

Built build(const Config& c, uint32_t seed) {
  std::mt19937 rng(seed * 7919u + 1);
  const int64_t D = c.D(), G = c.G(), H = c.H;
  ModelBuilder mb(14);
  Built b;
  const Shape x_shape = c.layout == 0 ? Shape{c.T, c.N, c.I} : Shape{c.N, c.T, c.I};
  const Shape s_shape = c.layout == 0 ? Shape{D, c.N, H} : Shape{c.N, D, H};
  mb.input("X", DType::kFloat32, x_shape);
  b.feeds.emplace_back("X", random_tensor(x_shape, rng, 1.0f));
  auto weight = [&](const std::string& name, const Shape& shape, float scale) {
    Tensor t = random_tensor(shape, rng, scale);
    if (c.weights_as_inputs) {
      mb.input(name, DType::kFloat32, shape);
      b.feeds.emplace_back(name, t);
    } else {
      mb.initializer(name, t);
    }
    return name;
  };
  std::vector<std::string> in = {"X"};
  in.push_back(weight("W", {D, G * H, c.I}, c.weight_scale));
  in.push_back(weight("R", {D, G * H, H}, c.weight_scale));
  in.push_back(c.bias ? weight("B", {D, 2 * G * H}, c.weight_scale) : "");
  if (c.seq_lens) {
    mb.input("sequence_lens", DType::kInt32, {c.N});
    b.feeds.emplace_back("sequence_lens", Tensor::from_vector<int32_t>({c.N}, c.lens));
    in.push_back("sequence_lens");
  } else {
    in.push_back("");
  }
  if (c.initial_h) {
    mb.input("initial_h", DType::kFloat32, s_shape);
    b.feeds.emplace_back("initial_h", random_tensor(s_shape, rng, 1.0f));
    in.push_back("initial_h");
  } else {
    in.push_back("");
  }
  if (c.op == "LSTM") {
    if (c.initial_c) {
      mb.input("initial_c", DType::kFloat32, s_shape);
      b.feeds.emplace_back("initial_c", random_tensor(s_shape, rng, 1.0f));
      in.push_back("initial_c");
    } else {
      in.push_back("");
    }
    in.push_back(c.peepholes ? weight("P", {D, 3 * H}, c.weight_scale) : "");
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  std::vector<std::string> out = {c.want_y ? "Y" : "", c.want_yh ? "Y_h" : ""};
  if (c.op == "LSTM") out.push_back(c.want_yc ? "Y_c" : "");
  while (!out.empty() && out.back().empty()) out.pop_back();
  for (const auto& o : out) {
    if (o.empty()) continue;
    mb.output(o, DType::kFloat32);
    b.outputs.push_back(o);
  }
  auto& node = mb.node(c.op, in, out, "rnn");
  set_attr(node, "hidden_size", H);
  set_attr(node, "direction", c.direction);
  if (c.layout) set_attr(node, "layout", int64_t{1});
  if (c.lbr) set_attr(node, "linear_before_reset", int64_t{1});
  if (c.input_forget) set_attr(node, "input_forget", int64_t{1});
  if (c.op == "RNN") {
    std::vector<std::string> acts = {c.rnn_act};
    if (D == 2) acts.push_back(c.rnn_act2.empty() ? c.rnn_act : c.rnn_act2);
    set_attr(node, "activations", acts);
    std::vector<float> alphas;
    for (const auto& a : acts)
      if (a == "LeakyRelu") alphas.push_back(c.leaky_alpha);
    if (!alphas.empty()) set_attr(node, "activation_alpha", alphas);
  }
  b.bytes = mb.bytes();
  return b;
}

class OnednnRnnParity : public ::testing::TestWithParam<int> {};

TEST_P(OnednnRnnParity, Random) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  uint32_t seed = 1000u + static_cast<uint32_t>(GetParam());
  if (const char* s = std::getenv("RECUR_PARITY_SEED")) seed = static_cast<uint32_t>(std::atoll(s));
  const Config c = random_config(seed);
  const Built b = build(c, seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + ": " + c.describe());

  SessionOptions ref_opts;
  ref_opts.providers({"reference"});
  SessionOptions dnn_opts;
  dnn_opts.providers({"onednn"})
      .threads(c.threads)
      .set("onednn.impl", c.impl)
      .set("onednn.tune", c.tune)
      .set("onednn.threading", c.threading)
      .set("onednn.time_block", std::to_string(c.time_block));
  Session ref = Session::from_bytes(b.bytes.data(), b.bytes.size(), ref_opts);
  Session dnn = Session::from_bytes(b.bytes.data(), b.bytes.size(), dnn_opts);
  ASSERT_EQ(dnn.assignment().size(), 1u);
  ASSERT_EQ(dnn.assignment()[0].provider, "onednn");

  const Outputs want = ref.run(b.feeds);
  // Twice: the second run reuses the cached primitives and must not depend on the first.
  for (int round = 0; round < 2; ++round) {
    const Outputs got = dnn.run(b.feeds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const tools::Comparison cmp = tools::compare(got[i], want[i], tools::Tolerance{});
      EXPECT_TRUE(cmp.match) << "output " << want.name(i) << " (round " << round
                             << "): " << cmp.reason << "; max abs " << cmp.max_abs << "; seed "
                             << seed;
    }
  }
}

// 240 random configurations, one CTest each.
INSTANTIATE_TEST_SUITE_P(Configs, OnednnRnnParity, ::testing::Range(0, 240));

// Why oneDNN would refuse bf16 on this CPU, from its effective ISA (which ONEDNN_MAX_CPU_ISA
// can lower); empty when it runs bf16 natively. Written apart from the provider's own check so
// that the two cannot agree by sharing a bug.
std::string cpu_lacks_bf16() {
#if !RECUR_HAVE_ONEDNN
  return "this build has no oneDNN";
#else
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const unsigned bf16 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
  return (isa & bf16) == bf16 ? "" : "the CPU (or ONEDNN_MAX_CPU_ISA) has no native bf16";
#endif
}

std::string notes_of(const Session& s) {
  std::string all;
  for (const auto& a : s.assignment())
    for (const auto& n : a.notes) all += n + "\n";
  return all;
}

// bf16 (SessionOptions::cpu_precision): the same random configurations within rtol 2e-2, atol
// 2e-2 of the reference provider (stricter than the agreed atol of 5e-2, which the standard
// suite's H=1024 needs; docs/precision.md), and the node says which precision it took. The weights
// are PyTorch's default initialisation, uniform in +-1/sqrt(H), as trained models have them: at
// +-0.5 a vanilla RNN with H=65 amplifies each step's rounding about twofold (fp32 errors grow the
// same way, from 1e-7), which no bf16 tolerance can bound. Weights fed as graph inputs cannot be
// converted at load: those nodes stay fp32, say why, and keep the fp32 tolerance.
class OnednnRnnParityBf16 : public ::testing::TestWithParam<int> {};

TEST_P(OnednnRnnParityBf16, Random) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (const std::string why = cpu_lacks_bf16(); !why.empty()) GTEST_SKIP() << why;
  const uint32_t seed = 1000u + static_cast<uint32_t>(GetParam());
  Config c = random_config(seed);
  c.weight_scale = 1.0f / std::sqrt(static_cast<float>(c.H));
  const Built b = build(c, seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + ": " + c.describe());
  SessionOptions ref_opts;
  ref_opts.providers({"reference"});
  SessionOptions dnn_opts;
  dnn_opts.providers({"onednn"})
      .threads(c.threads)
      .set("onednn.impl", c.impl)
      .set("onednn.threading", c.threading)
      .cpu_precision(SessionOptions::Precision::kBf16);
  Session ref = Session::from_bytes(b.bytes.data(), b.bytes.size(), ref_opts);
  Session dnn = Session::from_bytes(b.bytes.data(), b.bytes.size(), dnn_opts);
  ASSERT_EQ(dnn.assignment().size(), 1u);
  ASSERT_EQ(dnn.assignment()[0].provider, "onednn");
  const std::string notes = notes_of(dnn);
  tools::Tolerance tol;
  if (c.weights_as_inputs) {
    EXPECT_NE(notes.find("precision fp32 (bf16 asked for): W, R or B is a graph input"),
              std::string::npos)
        << notes;
  } else {
    EXPECT_NE(notes.find("precision bf16"), std::string::npos) << notes;
    tol = tools::Tolerance{2e-2, 2e-2};
  }
  const Outputs want = ref.run(b.feeds);
  for (int round = 0; round < 2; ++round) {
    const Outputs got = dnn.run(b.feeds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const tools::Comparison cmp = tools::compare(got[i], want[i], tol);
      EXPECT_TRUE(cmp.match) << "output " << want.name(i) << " (round " << round
                             << "): " << cmp.reason << "; max abs " << cmp.max_abs;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, OnednnRnnParityBf16, ::testing::Range(0, 80));

// Regression: a GRU's weights in oneDNN's packed GEMM format were reordered on the session's 2
// threads and run by a 1-thread primitive (a batch split): in bf16 the packing depends on the
// thread count, and the run corrupted the heap (glibc abort) or gave wrong values.
TEST(OnednnRnnBf16, PackedWeightsFollowThePrimitivesThreads) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (const std::string why = cpu_lacks_bf16(); !why.empty()) GTEST_SKIP() << why;
  Config c;
  c.op = "GRU";
  c.direction = "forward";
  c.lbr = true;
  c.T = 3;
  c.N = 32;
  c.I = 256;
  c.H = 512;
  c.weight_scale = 1.0f / std::sqrt(512.0f);
  c.impl = "any";
  c.threads = 2;
  const Built b = build(c, 7);
  Session ref = Session::from_bytes(b.bytes.data(), b.bytes.size(),
                                    SessionOptions{}.providers({"reference"}));
  const Outputs want = ref.run(b.feeds);
  for (const char* threading : {"split", "single"}) {
    SCOPED_TRACE(threading);
    SessionOptions o;
    o.providers({"onednn"})
        .threads(2)
        .set("onednn.impl", "any")
        .set("onednn.threading", threading)
        .cpu_precision(SessionOptions::Precision::kBf16);
    Session dnn = Session::from_bytes(b.bytes.data(), b.bytes.size(), o);
    ASSERT_NE(notes_of(dnn).find("precision bf16"), std::string::npos) << notes_of(dnn);
    const Outputs got = dnn.run(b.feeds);
    for (size_t i = 0; i < want.size(); ++i) {
      const tools::Comparison cmp = tools::compare(got[i], want[i], tools::Tolerance{2e-2, 2e-2});
      EXPECT_TRUE(cmp.match) << want.name(i) << ": " << cmp.reason;
    }
  }
}

}  // namespace
}  // namespace recur
