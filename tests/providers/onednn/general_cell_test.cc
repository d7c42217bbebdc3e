// The oneDNN provider's general cell path (providers/onednn/rnn/small_cell_math.cc): LSTM, GRU
// and RNN nodes with a clip or activations oneDNN's primitives do not have run on recur's
// small-cell kernels at any size (wide ones on the row team for a few rows), against the reference
// provider (whose cells the float64 oracle cases of tests/data/rnn check, on both providers); the
// vector activations against their formulas in double; and where the provider still declines such a
// node.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/small_cell.h"
#include "recur/recur.h"
#include "runtime/core/cpu_isa.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;
using Kind = RnnActivation::Kind;

// The reference provider's formula for f(clip(x)), in double, with its comparisons (a NaN
// clipped is -bound; Relu and ThresholdedRelu give 0 for it, HardSigmoid 1).
double formula(Kind k, double a, double b, std::optional<double> clip, double x) {
  if (clip) x = std::min(*clip, std::max(-*clip, x));
  switch (k) {
    case Kind::kRelu:
      return x > 0 ? x : 0;
    case Kind::kTanh:
      return std::tanh(x);
    case Kind::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case Kind::kAffine:
      return a * x + b;
    case Kind::kLeakyRelu:
      return x >= 0 ? x : a * x;
    case Kind::kThresholdedRelu:
      return x > a ? x : 0;
    case Kind::kScaledTanh:
      return a * std::tanh(b * x);
    case Kind::kHardSigmoid:
      return std::max(0.0, std::min(1.0, a * x + b));
    case Kind::kElu:
      return x >= 0 ? x : a * std::expm1(x);
    case Kind::kSoftsign:
      return x / (1 + std::fabs(x));
    case Kind::kSoftplus:
      return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return NAN;
}

TEST(OnednnGeneralCell, ActivationsMatchTheirFormulasInDouble) {
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << cpu::why_not(cpu::Feature::kAvx2);
  std::vector<float> in;
  for (int i = -40; i <= 40; ++i) in.push_back(0.37f * static_cast<float>(i));
  for (float v : {0.0f, -0.0f, 1e-30f, -90.0f, 90.0f, std::numeric_limits<float>::quiet_NaN()})
    in.push_back(v);
  for (Kind k : {Kind::kRelu, Kind::kTanh, Kind::kSigmoid, Kind::kAffine, Kind::kLeakyRelu,
                 Kind::kThresholdedRelu, Kind::kScaledTanh, Kind::kHardSigmoid, Kind::kElu,
                 Kind::kSoftsign, Kind::kSoftplus}) {
    const RnnActivation f{k, 0.3f, 0.7f};
    for (std::optional<float> clip : {std::optional<float>{}, std::optional<float>{2.5f}}) {
      std::vector<float> x = in;
      onednn::small::activate_rows(x.data(), static_cast<int64_t>(x.size()), f, clip);
      for (size_t i = 0; i < in.size(); ++i) {
        const double want = formula(k, 0.3f, 0.7f, clip, in[i]);
        const std::string what =
            std::string(f.name()) + (clip ? " clip 2.5" : "") + " of " + std::to_string(in[i]);
        if (std::isnan(in[i]) && !clip &&
            (k == Kind::kTanh || k == Kind::kSigmoid || k == Kind::kScaledTanh)) {
          continue;  // the fused cells' exp-based functions, whose NaN semantics semantics.md
                     // states
        }
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(x[i])) << what << ": " << x[i];
          continue;
        }
        EXPECT_NEAR(x[i], want, 2e-6 + 2e-6 * std::fabs(want)) << what;
      }
    }
  }
}

struct Cell {
  std::string op;
  std::vector<std::string> acts;  // per direction, in order
  std::vector<float> alpha, beta;
  float clip = 0;
  bool peepholes = false, input_forget = false, lbr = false;
  std::string direction = "forward";
  int64_t I = 5, H = 7;
};

std::string model(const Cell& c, std::mt19937& rng) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  const int64_t G = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1;
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {-1, -1, c.I}, {"T", "N"});
  mb.input("sequence_lens", DType::kInt32, {-1}, {"N"});
  // Weights of 1/sqrt(fan-in), so that the recurrence is not chaotic: two float32 sums in
  // different orders then stay close.
  mb.initializer("W", random_tensor({D, G * c.H, c.I}, rng, 1.0f / std::sqrt(float(c.I))));
  mb.initializer("R", random_tensor({D, G * c.H, c.H}, rng, 1.0f / std::sqrt(float(c.H))));
  mb.initializer("B", random_tensor({D, 2 * G * c.H}, rng));
  std::vector<std::string> ins = {"X", "W", "R", "B", "sequence_lens"};
  if (c.peepholes) {
    mb.initializer("P", random_tensor({D, 3 * c.H}, rng));
    ins.insert(ins.end(), {"", "", "P"});
  }
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
  if (c.op == "LSTM") mb.output("Y_c", DType::kFloat32);
  std::vector<std::string> outs = {"Y", "Y_h"};
  if (c.op == "LSTM") outs.push_back("Y_c");
  auto& n = mb.node(c.op, ins, outs, "rnn_node");
  set_attr(n, "hidden_size", c.H);
  set_attr(n, "direction", c.direction);
  if (!c.acts.empty()) set_attr(n, "activations", c.acts);
  if (!c.alpha.empty()) set_attr(n, "activation_alpha", c.alpha);
  if (!c.beta.empty()) set_attr(n, "activation_beta", c.beta);
  if (c.clip > 0) set_attr(n, "clip", c.clip);
  if (c.input_forget) set_attr(n, "input_forget", int64_t{1});
  if (c.lbr) set_attr(n, "linear_before_reset", int64_t{1});
  return mb.bytes();
}

Session open(const std::string& bytes, SessionOptions o) {
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

std::vector<Cell> cells() {
  std::vector<Cell> v;
  // Keras's LSTM and GRU before 2.3: a hard sigmoid for the gates.
  v.push_back({"LSTM", {"HardSigmoid", "Tanh", "Tanh"}, {0.2f}, {0.5f}});
  v.push_back({"GRU", {"HardSigmoid", "Tanh"}, {0.2f}, {0.5f}});
  v.push_back({"GRU", {"HardSigmoid", "Tanh"}, {0.2f}, {0.5f}, 0, false, false, true});
  // A clip with the default activations, with peepholes, with input_forget.
  v.push_back({"LSTM", {}, {}, {}, 0.4f, true});
  v.push_back({"LSTM", {}, {}, {}, 0.6f, false, true, false, "reverse"});
  v.push_back({"GRU", {}, {}, {}, 0.5f, false, false, false, "bidirectional"});
  v.push_back({"GRU", {}, {}, {}, 0.5f, false, false, true, "bidirectional"});
  v.push_back({"RNN", {"Tanh", "Relu"}, {}, {}, 0.8f, false, false, false, "bidirectional"});
  // Every other activation somewhere, directions with sets of their own.
  v.push_back({"LSTM",
               {"Sigmoid", "Softsign", "ScaledTanh", "HardSigmoid", "Elu", "Softplus"},
               {0.9f, 0.3f, 1.1f},
               {1.2f, 0.4f},
               0,
               true,
               false,
               false,
               "bidirectional"});
  v.push_back({"GRU", {"Sigmoid", "Affine"}, {0.7f}, {0.1f}});
  v.push_back({"RNN", {"ThresholdedRelu"}, {0.1f}});
  v.push_back({"RNN", {"LeakyRelu"}, {0.2f}, {1.0f}});  // a beta oneDNN's RNN does not take
  v.push_back({"RNN", {"Softplus"}, {}, {}, 1.5f});
  // Cells above the small-cell size (kSmallCellMaxMacs), which take the general path too, on
  // the row team (row_team.h) for a few rows.
  Cell big{"LSTM", {"HardSigmoid", "Tanh", "Tanh"}, {0.2f}, {0.5f}};
  big.I = 300;
  big.H = 200;
  v.push_back(big);
  big.op = "GRU";
  big.acts = {"HardSigmoid", "Tanh"};
  big.direction = "bidirectional";
  big.clip = 1.5f;
  v.push_back(big);
  return v;
}

TEST(OnednnGeneralCell, CellsRunOnRecursKernelsAndMatchTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << cpu::why_not(cpu::Feature::kAvx2);
  std::mt19937 rng(11);
  for (const Cell& c : cells()) {
    const std::string bytes = model(c, rng);
    SessionOptions ref_options;
    ref_options.providers({"reference"});
    const Session ref = open(bytes, ref_options);
    for (int threads : {1, 2}) {
      SessionOptions o;
      o.providers({"onednn"}).threads(threads);
      const Session s = open(bytes, o);
      const std::string what = c.op + " " + std::to_string(c.H) + " units, " + c.direction +
                               (c.clip > 0 ? ", clip" : "") + ", " + std::to_string(threads) +
                               " threads";
      ASSERT_EQ(s.assignment()[0].provider, "onednn") << what;
      EXPECT_NE(s.explain().find("every run"), std::string::npos) << what << s.explain();
      // A wide cell runs on the row team up to its rows (at most kRowTeamMaxRows, 32) and on
      // the small-cell kernel past them.
      if (c.H >= 192) {
        EXPECT_NE(s.explain().find("row-team"), std::string::npos) << what << s.explain();
      }
      for (int64_t N : {1, 3, 9, 40}) {
        const int64_t T = 6;
        std::vector<int32_t> lens;
        for (int64_t n = 0; n < N; ++n) lens.push_back(static_cast<int32_t>(T - n % 4));
        const Feeds f = {{"X", random_tensor({T, N, c.I}, rng, 1.0f)},
                         {"sequence_lens", Tensor::from_vector<int32_t>({N}, lens)}};
        const Outputs got = s.run(f), want = ref.run(f);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{1e-4, 1e-5});
          EXPECT_TRUE(cmp.match) << what << ", " << N << " rows: " << want.name(i) << ": "
                                 << cmp.reason;
        }
      }
    }
  }
}

// A wide general cell's runs of few rows take the row team alone, and hold W and R once, as
// the team's slices: its small-cell kernel packs its own copy from them at the first run with
// more rows (docs/semantics.md, "Clip and other activations"), and matches the reference then.
TEST(OnednnGeneralCell, AWideCellHoldsItsWeightsOnceUntilARunNeedsMoreRows) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << cpu::why_not(cpu::Feature::kAvx2);
  // An LSTM of 512 units over 512 inputs with a clip: W and R 8 MiB. The team takes at most
  // kRowTeamMaxRows (32) rows, and one row on any machine.
  Cell c{"LSTM", {}, {}, {}, 3.0f, true};
  c.I = c.H = 512;
  const double weights = 4.0 * 2 * 4 * 512 * 512;
  std::mt19937 rng(13);
  const std::string bytes = model(c, rng);
  SessionOptions ref_options, o;
  ref_options.providers({"reference"});
  o.providers({"onednn"}).threads(2);
  const Session ref = open(bytes, ref_options);
  const auto before = static_cast<double>(onednn::aligned_bytes_in_use());
  const Session s = open(bytes, o);
  ASSERT_NE(s.explain().find("row-team"), std::string::npos) << s.explain();
  auto feeds = [&](int64_t N) {
    return Feeds{{"X", random_tensor({5, N, c.I}, rng, 1.0f)},
                 {"sequence_lens", Tensor::from_vector<int32_t>(
                                       {N}, std::vector<int32_t>(static_cast<size_t>(N), 5))}};
  };
  auto expect_match = [&](const Outputs& got, const Outputs& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{1e-4, 1e-5});
      EXPECT_TRUE(cmp.match) << what << ": " << want.name(i) << ": " << cmp.reason;
    }
  };
  const Feeds one = feeds(1), many = feeds(40);
  expect_match(s.run(one), ref.run(one), "1 row");
  const double team = static_cast<double>(onednn::aligned_bytes_in_use()) - before;
  EXPECT_GT(team, 0.9 * weights);
  EXPECT_LT(team, 1.3 * weights) << "more than one copy of the weights after the team's run";
  // Neither a run of no rows nor one the kernel rejects (40 rows, 39 lengths) builds it.
  const Feeds none = feeds(0);
  expect_match(s.run(none), ref.run(none), "0 rows");
  Feeds wrong = many;
  wrong[1].second = Tensor::from_vector<int32_t>({39}, std::vector<int32_t>(39, 5));
  testing::expect_error([&] { s.run(wrong); }, ErrorCode::kInvalidArgument,
                        {"rnn_node", "sequence_lens"});
  EXPECT_LT(static_cast<double>(onednn::aligned_bytes_in_use()) - before, 1.3 * weights);
  const Outputs want = s.run(many);
  expect_match(want, ref.run(many), "40 rows");
  EXPECT_GT(static_cast<double>(onednn::aligned_bytes_in_use()) - before, team + 0.9 * weights);
  // Three first runs of 40 rows at once on another session: one builds the kernel, the others
  // wait for it, and all give the first session's bits.
  const Session s2 = open(bytes, o);
  std::vector<Outputs> got(3);
  std::vector<std::thread> threads;
  for (Outputs& g : got) threads.emplace_back([&] { g = s2.run(many); });
  for (std::thread& t : threads) t.join();
  for (const Outputs& g : got) {
    ASSERT_EQ(g.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(std::memcmp(g[i].raw_data(), want[i].raw_data(), want[i].nbytes()), 0)
          << "concurrent first runs: " << want.name(i);
  }
}

TEST(OnednnGeneralCell, BelowTheCapsTheProviderStillDeclinesWithBothReasons) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << cpu::why_not(cpu::Feature::kAvx2);
  std::mt19937 rng(12);
  const Cell hard{"LSTM", {"HardSigmoid", "Tanh", "Tanh"}, {0.2f}, {0.5f}};
  const std::string bytes = model(hard, rng);
  // Asked for oneDNN's primitives alone, the node goes to the reference, named.
  SessionOptions primitive;
  primitive.providers({"onednn", "reference"}).set("onednn.impl", "primitive");
  const Session p = open(bytes, primitive);
  EXPECT_EQ(p.assignment()[0].provider, "reference");
  EXPECT_NE(p.explain().find("non-default LSTM activations (HardSigmoid,Tanh,Tanh)"),
            std::string::npos)
      << p.explain();
  EXPECT_NE(p.explain().find("onednn.impl asks for oneDNN's primitive"), std::string::npos)
      << p.explain();
  // Weights fed at run time: the small-cell kernels pack them at load.
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {2, 1, 3}).input("W", DType::kFloat32, {1, 16, 3});
  mb.initializer("R", random_tensor({1, 16, 4}, rng));
  mb.output("Y", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R"}, {"Y"}, "rnn_node");
  set_attr(n, "hidden_size", int64_t{4});
  set_attr(n, "clip", 1.0f);
  SessionOptions only;
  only.providers({"onednn"});
  testing::expect_error([&] { open(mb.bytes(), only); }, ErrorCode::kNotImplemented,
                        {"rnn_node", "clip=1", "weights are graph inputs"});
  // bf16 asked for: the cell runs on recur's float32 kernels, and says so.
  SessionOptions bf16;
  bf16.providers({"onednn"}).set("onednn.precision", "bf16");
  const Session b = open(bytes, bf16);
  EXPECT_EQ(b.assignment()[0].provider, "onednn");
  EXPECT_NE(b.explain().find("precision fp32 (bf16 asked for)"), std::string::npos) << b.explain();
}

}  // namespace
}  // namespace recur

#endif  // RECUR_HAVE_ONEDNN
