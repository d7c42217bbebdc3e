// The row-team LSTM, GRU and RNN (providers/onednn/rnn/row_team.h): a few rows of a wide cell,
// the units in a slice a thread, against the reference provider: every direction, both
// layouts, initial states, peepholes and input_forget, both linear_before_reset, rows of
// different lengths short of T and of 0, hidden sizes that are not whole vectors, passes
// longer than one block of X.W + bias, RNN activations, and one to three threads; runs of more
// rows take oneDNN's primitive, and --explain says which.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/onednn_provider.h"
#include "providers/onednn/rnn/row_team.h"
#include "providers/onednn/rnn/small_cell.h"
#include "recur/recur.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/rnn/rnn_spec.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

struct Case {
  std::string direction;
  int64_t layout, I, H, T;
  int32_t len;  // sequence_lens of the one row; -1: none given
  bool peepholes = false, input_forget = false, states = true;
  std::string op = "LSTM";
  int64_t lbr = 0;         // a GRU's linear_before_reset
  std::string activation;  // an RNN's, where not the default (Tanh)
};

std::string rnn_model(const Case& c, std::mt19937& rng) {
  const bool lstm = c.op == "LSTM";
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, G = lstm ? 4 : c.op == "GRU" ? 3 : 1;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.I + c.H));
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, Shape{-1, -1, c.I},
           c.layout == 0 ? std::vector<std::string>{"T", "N", ""}
                         : std::vector<std::string>{"N", "T", ""});
  if (c.len >= 0) mb.input("sequence_lens", DType::kInt32, {-1}, {"N"});
  const Shape ss = c.layout == 0 ? Shape{D, -1, c.H} : Shape{-1, D, c.H};
  const std::vector<std::string> sn =
      c.layout == 0 ? std::vector<std::string>{"", "N", ""} : std::vector<std::string>{"N", "", ""};
  if (c.states) {
    mb.input("initial_h", DType::kFloat32, ss, sn);
    if (lstm) mb.input("initial_c", DType::kFloat32, ss, sn);
  }
  mb.initializer("W", random_tensor({D, G * c.H, c.I}, rng, scale));
  mb.initializer("R", random_tensor({D, G * c.H, c.H}, rng, scale));
  mb.initializer("B", random_tensor({D, 2 * G * c.H}, rng, 0.1f));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
  std::vector<std::string> ins = {
      "X", "W", "R", "B", c.len >= 0 ? "sequence_lens" : "", c.states ? "initial_h" : ""};
  std::vector<std::string> outs = {"Y", "Y_h"};
  if (lstm) {
    mb.initializer("P", random_tensor({D, 3 * c.H}, rng, 0.5f));
    mb.output("Y_c", DType::kFloat32);
    ins.push_back(c.states ? "initial_c" : "");
    ins.push_back(c.peepholes ? "P" : "");
    outs.push_back("Y_c");
  }
  auto& n = mb.node(c.op, ins, outs, "rnn");
  set_attr(n, "hidden_size", c.H);
  set_attr(n, "direction", c.direction);
  set_attr(n, "layout", c.layout);
  if (c.input_forget) set_attr(n, "input_forget", int64_t{1});
  if (c.op == "GRU") set_attr(n, "linear_before_reset", c.lbr);
  if (!c.activation.empty())
    set_attr(n, "activations", std::vector<std::string>(static_cast<size_t>(D), c.activation));
  return mb.bytes();
}

Feeds feeds(const Case& c, int64_t N, std::mt19937& rng) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  const Shape ss = c.layout == 0 ? Shape{D, N, c.H} : Shape{N, D, c.H};
  Feeds f = {
      {"X", random_tensor(c.layout == 0 ? Shape{c.T, N, c.I} : Shape{N, c.T, c.I}, rng, 1.0f)}};
  if (c.len >= 0) {
    // Row k's length len - 7k (at least 0), the longest not first: the rows run sorted.
    std::vector<int32_t> lens(static_cast<size_t>(N));
    for (int64_t k = 0; k < N; ++k)
      lens[static_cast<size_t>((k + 1) % N)] = std::max(0, c.len - 7 * static_cast<int32_t>(k));
    f.push_back({"sequence_lens", Tensor::from_vector<int32_t>({N}, lens)});
  }
  if (c.states) {
    f.push_back({"initial_h", random_tensor(ss, rng, 1.0f)});
    if (c.op == "LSTM") f.push_back({"initial_c", random_tensor(ss, rng, 2.0f)});
  }
  return f;
}

void expect_match(const Outputs& got, const Outputs& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{});
    EXPECT_TRUE(cmp.match) << what << ": " << want.name(i) << ": " << cmp.reason;
  }
}

std::string describe(const Case& c, int threads) {
  return c.op + (c.op == "GRU" ? " lbr " + std::to_string(c.lbr) + " " : " ") + c.direction +
         " layout " + std::to_string(c.layout) + " I=" + std::to_string(c.I) +
         " H=" + std::to_string(c.H) + " T=" + std::to_string(c.T) +
         " len=" + std::to_string(c.len) + (c.peepholes ? " peepholes" : "") +
         (c.input_forget ? " input_forget" : "") + (c.states ? "" : " no states") +
         (c.activation.empty() ? "" : " " + c.activation) + " threads=" + std::to_string(threads);
}

const std::string kRowTeam = "recur's row-team ";

TEST(RowTeam, FewRowsMatchTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "the row-team LSTM needs AVX2";
  const std::vector<Case> cases = {
      {"forward", 0, 48, 260, 37, -1},
      {"reverse", 0, 48, 260, 37, 30, true, false},
      {"bidirectional", 1, 32, 400, 9, 9, true, true},
      // Fewer than 384 units: on two threads the directions at once, a thread each.
      {"bidirectional", 0, 48, 256, 20, 17, true, false},
      {"bidirectional", 1, 40, 300, 11, 8, false, false, true, "GRU", 0},
      {"forward", 1, 300, 256, 300, 290, false, false, false},
      {"reverse", 0, 40, 272, 5, 0},
      {"forward", 0, 64, 512, 1, -1, true},
      {"forward", 0, 48, 260, 37, -1, false, false, true, "GRU", 1},
      {"reverse", 1, 48, 300, 20, 17, false, false, true, "GRU", 0},
      {"bidirectional", 0, 32, 400, 9, 9, false, false, false, "GRU", 1},
      {"bidirectional", 1, 32, 400, 290, 270, false, false, true, "GRU", 0},
      // A slice of R past 2 MiB (each step reads it in the reverse order of the one before):
      // the team for up to 8 rows.
      {"reverse", 0, 24, 1000, 6, 5, true},
      {"forward", 1, 40, 600, 30, 25, false, false, true, "RNN"},
      {"bidirectional", 0, 32, 400, 9, 9, false, false, false, "RNN", 0, "Relu"},
      {"reverse", 0, 16, 1024, 7, 6, false, false, true, "RNN", 0, "Sigmoid"},
  };
  SessionOptions ropts;
  ropts.providers({"reference"});
  for (const Case& c : cases) {
    for (int threads : {1, 2, 3}) {
      std::mt19937 rng(static_cast<unsigned>(c.H + c.T + threads));
      const std::string bytes = rnn_model(c, rng);
      SessionOptions dopts;
      dopts.providers({"onednn"}).threads(threads);
      Session dnn = Session::from_bytes(bytes.data(), bytes.size(), dopts);
      const std::string what = describe(c, threads);
      EXPECT_NE(dnn.explain().find(kRowTeam + c.op), std::string::npos) << what << "\n"
                                                                        << dnn.explain();
      Session ref = Session::from_bytes(bytes.data(), bytes.size(), ropts);
      // Up to 4, 8 or 16 rows on the team (row_team_rows), more on oneDNN's primitive, in the
      // same session; 17 rows only where the reference's run is short.
      for (int64_t N : {1, 3, 6, 12, 17}) {
        if (N > 6 && c.T * c.H > 40 * 1000) continue;
        const Feeds f = feeds(c, N, rng);
        expect_match(dnn.run(f), ref.run(f), what + ", " + std::to_string(N) + " rows");
      }
    }
  }
}

// Random configurations: cell, direction, layout, 200 (RNN 400) to 520 units over 1 to 600 inputs,
// 1 to 12 rows of random lengths (on the team or the primitive by row_team_rows), peepholes,
// input_forget, linear_before_reset, states or none, 2 or 3 threads, against the reference.
TEST(RowTeam, RandomConfigurationsMatchTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "the row-team kernel needs AVX2";
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  SessionOptions ropts;
  ropts.providers({"reference"});
  for (int k = 0; k < 16; ++k) {
    Case c;
    c.op = std::vector<std::string>{"LSTM", "GRU", "RNN"}[pick(0, 2)];
    c.direction = std::vector<std::string>{"forward", "reverse", "bidirectional"}[pick(0, 2)];
    c.layout = pick(0, 1);
    c.I = pick(1, 600);
    // A vanilla RNN of fewer than about 360 units is a small cell (G H (I + H) multiply-adds).
    c.H = pick(c.op == "RNN" ? 400 : 200, 520);
    c.T = pick(1, 24);
    c.len = pick(0, 3) ? pick(0, static_cast<int>(c.T)) : -1;
    c.peepholes = c.op == "LSTM" && pick(0, 1);
    c.input_forget = c.op == "LSTM" && pick(0, 1);
    c.states = pick(0, 1);
    c.lbr = pick(0, 1);
    const int threads = pick(2, 3);
    const int64_t N = pick(1, 12);
    const std::string bytes = rnn_model(c, rng);
    SessionOptions dopts;
    dopts.providers({"onednn"}).threads(threads);
    Session dnn = Session::from_bytes(bytes.data(), bytes.size(), dopts);
    const std::string what = describe(c, threads) + ", " + std::to_string(N) + " rows";
    ASSERT_NE(dnn.explain().find(kRowTeam + c.op), std::string::npos) << what;
    Session ref = Session::from_bytes(bytes.data(), bytes.size(), ropts);
    const Feeds f = feeds(c, N, rng);
    expect_match(dnn.run(f), ref.run(f), what);
  }
}

// The rows the team takes follow the core's L2 (row_team.h): a 2 MiB one (a Xeon's) or one the
// system does not give keeps the primitive for more than 4 rows of slices under 1 MiB, a
// 1 MiB one (a Zen 5's) takes 8 rows of slices to twice its L2 (a GRU's or an RNN's 16, and
// of one thread 8 to four times); both take 32 rows of the widest LSTMs.
TEST(RowTeam, TheRowsFollowTheCoresL2) {
  using onednn::row_team_rows;
  constexpr int64_t kMiB = int64_t{1} << 20;
  const RnnCell lstm = RnnCell::kLstm, gru = RnnCell::kGru, rnn = RnnCell::kRnn;
  for (int64_t l2 : {2 * kMiB, int64_t{0}}) {
    EXPECT_EQ(row_team_rows(lstm, 256, 2, l2), 4) << l2;   // 0.5 MiB a slice
    EXPECT_EQ(row_team_rows(lstm, 512, 2, l2), 16) << l2;  // 2 MiB
    EXPECT_EQ(row_team_rows(lstm, 640, 2, l2), 8) << l2;
    EXPECT_EQ(row_team_rows(gru, 1024, 2, l2), 4) << l2;  // 6 MiB
    EXPECT_EQ(row_team_rows(lstm, 384, 1, l2), 8) << l2;  // R 2.25 MiB
    EXPECT_EQ(row_team_rows(lstm, 256, 1, l2), 4) << l2;
    EXPECT_EQ(row_team_rows(gru, 512, 1, l2), 8) << l2;  // R 3 MiB
  }
  const int64_t zen4 = kMiB;
  EXPECT_EQ(row_team_rows(lstm, 256, 2, zen4), 8);
  EXPECT_EQ(row_team_rows(gru, 320, 2, zen4), 16);  // a GRU's or an RNN's slice: 16
  EXPECT_EQ(row_team_rows(rnn, 512, 2, zen4), 16);
  EXPECT_EQ(row_team_rows(rnn, 1024, 2, zen4), 16);  // 2 MiB a slice
  EXPECT_EQ(row_team_rows(gru, 640, 2, zen4), 8);    // 2.3 MiB
  EXPECT_EQ(row_team_rows(lstm, 512, 2, zen4), 8);   // 2 MiB: twice L2
  EXPECT_EQ(row_team_rows(lstm, 640, 2, zen4), 8);   // past it, as on the Xeon
  EXPECT_EQ(row_team_rows(gru, 1024, 2, zen4), 4);
  EXPECT_EQ(row_team_rows(lstm, 256, 1, zen4), 8);  // R 1 MiB
  EXPECT_EQ(row_team_rows(lstm, 384, 1, zen4), 4);  // R 2.25 MiB
  EXPECT_EQ(row_team_rows(gru, 320, 1, zen4), 8);   // a GRU's or an RNN's to 4 times L2
  EXPECT_EQ(row_team_rows(gru, 512, 1, zen4), 8);   // R 3 MiB
  EXPECT_EQ(row_team_rows(gru, 640, 1, zen4), 4);   // R 4.7 MiB
  EXPECT_EQ(row_team_rows(rnn, 1024, 1, zen4), 8);  // R 4 MiB
  EXPECT_EQ(row_team_rows(rnn, 1280, 1, zen4), 4);
  for (int64_t l2 : {zen4, 2 * kMiB, int64_t{0}}) {
    EXPECT_EQ(row_team_rows(lstm, 2048, 2, l2), onednn::kRowTeamMaxRows) << l2;
    EXPECT_EQ(row_team_rows(lstm, 2048, 1, l2), onednn::kRowTeamMaxRows) << l2;
  }
}

// Two threads run the two directions apart under 384 units, and on a core of less than 2 MiB
// of L2 while a direction's R is at most 8 times L2 (row_team.h).
TEST(RowTeam, TheDirectionsRunApartByTheCoresL2) {
  using onednn::directions_apart;
  constexpr int64_t kMiB = int64_t{1} << 20;
  RnnSpec both, one;
  both.direction = RnnDirection::kBidirectional;
  for (int64_t l2 : {kMiB, 2 * kMiB, int64_t{0}}) {
    EXPECT_TRUE(directions_apart(both, 320, 2, l2)) << l2;
    EXPECT_FALSE(directions_apart(both, 320, 1, l2)) << l2;
    EXPECT_FALSE(directions_apart(both, 320, 3, l2)) << l2;
    EXPECT_FALSE(directions_apart(one, 320, 2, l2)) << l2;
    EXPECT_FALSE(directions_apart(both, 768, 2, l2)) << l2;  // LSTM R 9 MiB
  }
  EXPECT_FALSE(directions_apart(both, 384, 2, 2 * kMiB));
  EXPECT_FALSE(directions_apart(both, 384, 2, 0));
  EXPECT_TRUE(directions_apart(both, 384, 2, kMiB));
  EXPECT_TRUE(directions_apart(both, 640, 2, kMiB));  // 6.25 MiB
  both.cell = RnnCell::kRnn;
  EXPECT_TRUE(directions_apart(both, 1024, 2, kMiB));
  EXPECT_FALSE(directions_apart(both, 1536, 2, kMiB));
}

// An LSTM whose slice of R passes 16 MiB (1448 units and more) takes up to 32 rows on the team
// (kAvx2FewRows without AVX-512); one more take the primitive, which makes its copy from the
// team's.
TEST(RowTeam, TheWidestLstmsTakeUpTo32Rows) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "the row-team kernel needs AVX2";
  const Case c{"reverse", 1, 8, 1500, 2, 2, true, false};
  std::mt19937 rng(41);
  const std::string bytes = rnn_model(c, rng);
  SessionOptions dopts, ropts;
  dopts.providers({"onednn"}).threads(2);
  ropts.providers({"reference"});
  Session dnn = Session::from_bytes(bytes.data(), bytes.size(), dopts);
  const int64_t rows = onednn::few_rows_here(32);
  EXPECT_NE(
      dnn.explain().find(kRowTeam + "LSTM for runs of up to " + std::to_string(rows) + " rows"),
      std::string::npos)
      << dnn.explain();
  Session ref = Session::from_bytes(bytes.data(), bytes.size(), ropts);
  for (int64_t N : {rows, rows + 1}) {
    const Feeds f = feeds(c, N, rng);
    expect_match(dnn.run(f), ref.run(f), describe(c, 2) + ", " + std::to_string(N) + " rows");
  }
}

// Each unit's arithmetic is the same whichever slice holds it and whichever thread runs it, so
// sessions of 1, 2, 3 and 4 threads give the same bits (docs/semantics.md, "A few rows of a wide
// cell").
TEST(RowTeam, TheBitsDoNotDependOnTheThreads) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "the row-team kernel needs AVX2";
  for (const Case& c : {Case{"forward", 0, 40, 300, 12, 10, true},
                        Case{"bidirectional", 1, 40, 400, 12, 11, false, false, true, "GRU", 0},
                        Case{"bidirectional", 0, 40, 256, 12, 11, true}}) {
    std::mt19937 rng(77);
    const std::string bytes = rnn_model(c, rng);
    const Feeds f = feeds(c, 3, rng);
    std::vector<Outputs> got;
    for (int threads : {1, 2, 3, 4}) {
      SessionOptions o;
      o.providers({"onednn"}).threads(threads);
      got.push_back(Session::from_bytes(bytes.data(), bytes.size(), o).run(f));
    }
    for (size_t k = 1; k < got.size(); ++k) {
      for (size_t i = 0; i < got[0].size(); ++i) {
        ASSERT_EQ(got[k][i].numel(), got[0][i].numel());
        EXPECT_EQ(std::memcmp(got[k][i].data<float>(), got[0][i].data<float>(),
                              static_cast<size_t>(got[0][i].numel()) * sizeof(float)),
                  0)
            << describe(c, static_cast<int>(k) + 1) << ": output " << i;
      }
    }
  }
}

// A node whose runs all take the team holds W and R once, as the team's slices; oneDNN's
// primitive makes its layout from them at the first run it takes (docs/semantics.md, "A few
// rows of a wide cell"), and its outputs still match the reference's.
TEST(RowTeam, TheTeamsRunsHoldTheWeightsOnce) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "the row-team kernel needs AVX2";
  // LSTM of 512 units over 512 inputs, input_forget (a block oneDNN derives) and peepholes: W
  // and R 8 MiB. Two threads take the team for 1 to 16 rows.
  const Case c{"forward", 0, 512, 512, 6, -1, true, true};
  const double weights = 4.0 * 2 * 4 * 512 * 512;
  std::mt19937 rng(3);
  const std::string bytes = rnn_model(c, rng);
  SessionOptions dopts, ropts;
  dopts.providers({"onednn"}).threads(2);
  ropts.providers({"reference"});
  Session ref = Session::from_bytes(bytes.data(), bytes.size(), ropts);
  const auto before = static_cast<double>(onednn::aligned_bytes_in_use());
  Session dnn = Session::from_bytes(bytes.data(), bytes.size(), dopts);
  const Feeds one = feeds(c, 1, rng), many = feeds(c, 20, rng);
  expect_match(dnn.run(one), ref.run(one), "1 row");
  const double team = static_cast<double>(onednn::aligned_bytes_in_use()) - before;
  EXPECT_GT(team, 0.9 * weights);
  EXPECT_LT(team, 1.3 * weights) << "more than one copy of the weights after the team's run";
  // 20 rows take the primitive, which makes its own copy now.
  expect_match(dnn.run(many), ref.run(many), "20 rows");
  EXPECT_GT(static_cast<double>(onednn::aligned_bytes_in_use()) - before, team + 0.9 * weights);
}

// Loading a node the team takes releases the ONNX R once the slices hold it, before W is packed,
// and W once it is: the peak of loading holds one of the two twice, not both (rnnt_step's LSTM
// of 640 units: 3.3 MB less). Compiled directly, with a session's drop of the constants
// recorded: the bytes of packed weights alive at each release.
TEST(RowTeam, LoadingReleasesRBeforePackingW) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "the row-team kernel needs AVX2";
  for (const char* op : {"LSTM", "GRU"}) {
    // 512 units over 256 inputs: R twice W, 4 MiB and 2 for the LSTM. Two threads: two slices.
    Case c{"forward", 0, 256, 512, 4, -1};
    c.op = op;
    c.lbr = 1;
    const double G = c.op == "LSTM" ? 4 : 3;
    const double w_bytes = 4.0 * G * 512 * 256, r_bytes = 4.0 * G * 512 * 512;
    std::mt19937 rng(5);
    const std::string bytes = rnn_model(c, rng);
    auto model = load_model_from_bytes(bytes.data(), bytes.size(), ".", "case");
    ASSERT_TRUE(model.ok()) << model.status().message();
    const Graph& g = *model->graph;
    const Node* node = nullptr;
    for (const Node& n : g.nodes())
      if (n.op_type == c.op) node = &n;
    ASSERT_NE(node, nullptr);
    std::unique_ptr<ExecutionProvider> provider = make_onednn_provider();
    ProviderConfig config;
    config.threads = 2;
    config.listed = {provider.get()};
    ASSERT_TRUE(provider->configure(config).ok());
    SessionOptions so;
    const auto before = static_cast<double>(onednn::aligned_bytes_in_use());
    std::map<size_t, double> at_release;
    CompileContext ctx(*node, g, *provider, so, {}, [&](size_t i, bool check_only) {
      if (!check_only && !at_release.count(i))
        at_release[i] = static_cast<double>(onednn::aligned_bytes_in_use()) - before;
      return false;  // the test's graph keeps its constants
    });
    auto kernel = provider->compile(ctx);
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    bool team = false;
    for (const std::string& n : ctx.notes()) team |= n.find("row-team") != std::string::npos;
    ASSERT_TRUE(team) << op << ": not on the row team";
    ASSERT_TRUE(at_release.count(kRnnR) && at_release.count(kRnnW)) << op;
    EXPECT_GT(at_release[kRnnR], 0.9 * r_bytes) << op;
    EXPECT_LT(at_release[kRnnR], 0.9 * (r_bytes + w_bytes)) << op << ": W packed before R went";
    EXPECT_GT(at_release[kRnnW], 0.9 * (r_bytes + w_bytes)) << op;
  }
}

// Where the primitive serves better or the team cannot apply: too few or too many units and
// onednn.impl=primitive; and the rows each size takes the team for.
TEST(RowTeam, OtherCellsAndSessionsTakeThePrimitive) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "the row-team LSTM needs AVX2";
  auto explain = [](const Case& c, int threads, const std::string& impl) {
    std::mt19937 rng(5);
    const std::string bytes = rnn_model(c, rng);
    SessionOptions o;
    o.providers({"onednn"}).threads(threads).set("onednn.impl", impl);
    return Session::from_bytes(bytes.data(), bytes.size(), o).explain();
  };
  // The rows row_team_rows gives for this machine's L2 (TheRowsFollowTheCoresL2 has the rule
  // for each); `threads` is a thread's share of R: 1 where the directions run apart.
  auto team = [](const char* op, RnnCell cell, int64_t H, int threads) {
    return kRowTeam + op + " for runs of up to " +
           std::to_string(onednn::few_rows_here(
               onednn::row_team_rows(cell, H, threads, onednn::core_l2_bytes()))) +
           " rows,";
  };
  const RnnCell lstm = RnnCell::kLstm, gru = RnnCell::kGru, rnn = RnnCell::kRnn;
  const Case wide{"forward", 0, 64, 512, 10, -1};
  EXPECT_NE(explain(wide, 2, "auto").find(team("LSTM", lstm, 512, 2)), std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 320, 10, -1}, 2, "auto").find(team("LSTM", lstm, 320, 2)),
            std::string::npos);
  const Case lstm640{"forward", 0, 64, 640, 10, -1};
  EXPECT_NE(explain(lstm640, 2, "auto").find(team("LSTM", lstm, 640, 2)), std::string::npos);
  EXPECT_NE(explain(lstm640, 4, "auto").find(team("LSTM", lstm, 640, 4)), std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 768, 10, -1, false, false, true, "GRU", 1}, 2, "auto")
                .find(team("GRU", gru, 768, 2)),
            std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 1024, 10, -1, false, false, true, "GRU", 0}, 2, "auto")
                .find(team("GRU", gru, 1024, 2)),
            std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 512, 10, -1, false, false, true, "RNN"}, 2, "auto")
                .find(team("RNN", rnn, 512, 2)),
            std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 1024, 10, -1, false, false, true, "RNN"}, 2, "auto")
                .find(team("RNN", rnn, 1024, 2)),
            std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 640, 10, -1, false, false, true, "GRU", 1}, 2, "auto")
                .find(team("GRU", gru, 640, 2)),
            std::string::npos);
  // One thread: the team (of one slice) whatever the size and directions.
  EXPECT_NE(explain(wide, 1, "auto").find(team("LSTM", lstm, 512, 1)), std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 256, 10, -1}, 1, "auto").find(team("LSTM", lstm, 256, 1)),
            std::string::npos);
  EXPECT_NE(explain({"bidirectional", 0, 64, 320, 10, -1}, 1, "auto").find(kRowTeam),
            std::string::npos);
  EXPECT_EQ(explain(wide, 2, "primitive").find(kRowTeam), std::string::npos);
  EXPECT_EQ(explain({"forward", 0, 600, 176, 10, -1}, 2, "auto").find(kRowTeam), std::string::npos);
  EXPECT_NE(explain({"forward", 0, 600, 192, 10, -1}, 2, "auto").find(kRowTeam), std::string::npos);
  EXPECT_NE(explain({"forward", 0, 64, 2048, 10, -1}, 2, "auto").find(kRowTeam), std::string::npos);
  EXPECT_EQ(explain({"forward", 0, 64, 2064, 10, -1}, 2, "auto").find(kRowTeam), std::string::npos);
  // Two directions of fewer than 384 units on two threads (more on a core of a small L2:
  // TheDirectionsRunApartByTheCoresL2): a direction a thread, with the rows of one thread's;
  // on four threads the slices.
  EXPECT_NE(explain({"bidirectional", 0, 64, 320, 10, -1}, 2, "auto")
                .find(team("LSTM", lstm, 320, 1) + " the two directions at once"),
            std::string::npos);
  RnnSpec both;
  both.direction = RnnDirection::kBidirectional;
  const bool apart384 = onednn::directions_apart(both, 384, 2, onednn::core_l2_bytes());
  EXPECT_NE(explain({"bidirectional", 0, 64, 384, 10, -1}, 2, "auto")
                .find(apart384 ? team("LSTM", lstm, 384, 1) + " the two directions at once"
                               : team("LSTM", lstm, 384, 2) + " each thread a slice"),
            std::string::npos);
  EXPECT_NE(explain({"bidirectional", 0, 64, 320, 10, -1}, 4, "auto")
                .find(team("LSTM", lstm, 320, 4) + " each thread a slice"),
            std::string::npos);
}

}  // namespace
}  // namespace recur
