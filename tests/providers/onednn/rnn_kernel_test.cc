// The oneDNN RNN kernel beyond single runs: one session fed many shapes (primitives and weight
// formats made and dropped as buckets are chosen), what --explain says, and the claim rules
// through the public API.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/rnn/rnn_desc.h"
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

// One RNN node with constant weights, X [T, N, I] with symbolic T and N, and sequence_lens.
std::string model(const std::string& op, int64_t I, int64_t H, const std::string& direction,
                  bool lbr, const std::vector<std::pair<std::string, int64_t>>& int_attrs = {},
                  float clip = 0.0f, float scale = 0.5f) {
  std::mt19937 rng(3);
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  const int64_t G = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {-1, -1, I}, {"T", "N"});
  mb.input("sequence_lens", DType::kInt32, {-1}, {"N"});
  mb.initializer("W", random_tensor({D, G * H, I}, rng, scale));
  mb.initializer("R", random_tensor({D, G * H, H}, rng, scale));
  mb.initializer("B", random_tensor({D, 2 * G * H}, rng));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
  auto& n = mb.node(op, {"X", "W", "R", "B", "sequence_lens"}, {"Y", "Y_h"}, "rnn_node");
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", direction);
  if (lbr) set_attr(n, "linear_before_reset", int64_t{1});
  for (const auto& [k, v] : int_attrs) set_attr(n, k, v);
  if (clip > 0) set_attr(n, "clip", clip);
  return mb.bytes();
}

Session open(const std::string& bytes, SessionOptions o) {
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

void expect_match(const Outputs& got, const Outputs& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{});
    EXPECT_TRUE(cmp.match) << what << ": " << want.name(i) << ": " << cmp.reason;
  }
}

// A primitive over one row (or one step) of layout 1 describes X and Y with layout 0's strides,
// the same bytes: oneDNN 2.6 projects the input of every step in one GEMM only for a dense tnc
// src_layer, and a strided one cost an LSTM of H=256 over one row 1.7-2.6x its layout-0 time.
TEST(OnednnRnnDescs, OneRowOrOneStepOfLayout1HasTheStridesOfLayout0) {
  RnnSpec spec;
  spec.cell = RnnCell::kLstm;
  spec.direction = RnnDirection::kBidirectional;
  spec.layout = 1;
  const auto geom = OnednnRnnGeometry::of(spec, 8, 16);
  auto descs = [&](int64_t T, int64_t N, onednn::rnn::Mode mode) {
    onednn::rnn::ShapeKey k;
    k.T = T, k.N = N, k.I = 8, k.H = 16, k.ld_n = N, k.mode = mode;
    return onednn::rnn::rnn_descs(k, spec, geom, false);
  };
  // oneDNN 2.6's C++ desc has no get_strides().
  auto strides = [](const dnnl::memory::desc& d) {
    const auto& b = d.data.format_desc.blocking;
    return std::vector<int64_t>(b.strides, b.strides + d.data.ndims);
  };
  using onednn::rnn::Mode;
  for (const auto& [T, N] : {std::pair<int64_t, int64_t>{100, 1}, {1, 5}, {1, 1}}) {
    const auto l0 = descs(T, N, Mode::kLayout0), l1 = descs(T, N, Mode::kLayout1);
    EXPECT_EQ(strides(l1.src_layer), strides(l0.src_layer)) << "T=" << T << " N=" << N;
    // Y of one step over several rows differs: layout 1 interleaves the directions per row.
    if (N == 1) {
      EXPECT_EQ(strides(l1.dst_layer), strides(l0.dst_layer)) << "T=" << T;
    }
  }
  // More rows and steps keep layout 1's own strides: X [N, T, I], Y [N, T, D, H].
  const auto many = descs(10, 3, Mode::kLayout1);
  EXPECT_EQ(strides(many.src_layer), (std::vector<int64_t>{8, 10 * 8, 1}));
  EXPECT_EQ(strides(many.dst_layer), (std::vector<int64_t>{2 * 16, 10 * 2 * 16, 1}));
}

// Layout 1 over several rows, each primitive taking the whole batch (one thread, a team, or a
// direction each), runs from a dense copy of X (RnnKernel::run_mode); a batch split and one
// row keep X in place. Every form against the reference provider, Y and Y_h.
TEST(OnednnRnnKernel, Layout1OverSeveralRowsMatchesTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  SessionOptions ropts;
  ropts.providers({"reference"});
  std::mt19937 rng(4);
  // H=200, I=48 is beyond the small-cell kernels: oneDNN's primitive runs.
  for (const auto& [op, dir] : std::vector<std::pair<std::string, std::string>>{
           {"LSTM", "forward"}, {"GRU", "bidirectional"}, {"LSTM", "reverse"}}) {
    const std::string bytes = model(op, 48, 200, dir, op == "GRU", {{"layout", 1}});
    for (const char* threading : {"single", "omp", "split"}) {
      SessionOptions dopts;
      dopts.providers({"onednn"}).threads(2).set("onednn.threading", threading);
      Session dnn = open(bytes, dopts);
      ASSERT_EQ(dnn.explain().find("small-cell"), std::string::npos) << dnn.explain();
      Session ref = open(bytes, ropts);
      for (const auto& [N, T] : {std::pair<int64_t, int64_t>{3, 7}, {1, 5}, {4, 1}}) {
        const Feeds f = {
            {"X", random_tensor({N, T, 48}, rng, 1.0f)},
            {"sequence_lens",
             Tensor::from_vector<int32_t>(
                 {N}, std::vector<int32_t>(static_cast<size_t>(N), static_cast<int32_t>(T)))}};
        expect_match(dnn.run(f), ref.run(f),
                     op + " " + dir + " " + threading + " N=" + std::to_string(N) +
                         " T=" + std::to_string(T));
      }
    }
  }
}

// Many shapes through one session: each new (N, T) bucket may choose another weights format
// (blocked, rnn_packed, ldigo), and new formats are reordered from whatever is still held.
TEST(OnednnRnnKernel, ManyShapesOneSession) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  for (const std::string op : {"GRU", "LSTM", "RNN"}) {
    for (const std::string impl : {"any", "auto"}) {
      const std::string bytes = model(op, 9, 17, "bidirectional", op == "GRU");
      SessionOptions dopts;
      dopts.providers({"onednn"})
          .threads(2)
          .set("onednn.impl", impl)
          .set("onednn.tune", impl == "auto" ? "1" : "0");
      SessionOptions ropts;
      ropts.providers({"reference"});
      Session dnn = open(bytes, dopts);
      Session ref = open(bytes, ropts);
      std::mt19937 rng(5);
      struct Shape2 {
        int64_t T, N;
        std::vector<int32_t> lens;
      };
      const std::vector<Shape2> shapes = {{2, 2, {2, 2}},
                                          {1, 1, {1}},
                                          {4, 32, {}},
                                          {3, 2, {3, 1}},
                                          {5, 7, {5, 0, 3, 1, 5, 2, 4}},
                                          {1, 1, {0}},
                                          {2, 2, {2, 2}},
                                          {6, 16, {}}};
      for (const auto& s : shapes) {
        std::vector<int32_t> lens = s.lens;
        if (lens.empty()) lens.assign(static_cast<size_t>(s.N), static_cast<int32_t>(s.T));
        Feeds f = {{"X", random_tensor({s.T, s.N, 9}, rng, 1.0f)},
                   {"sequence_lens", Tensor::from_vector<int32_t>({s.N}, lens)}};
        expect_match(
            dnn.run(f), ref.run(f),
            op + " impl=" + impl + " T=" + std::to_string(s.T) + " N=" + std::to_string(s.N));
      }
    }
  }
}

TEST(OnednnRnnKernel, ExplainShowsRepackAndChoice) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  // Static X: the implementation is chosen at load, and --explain says which.
  std::mt19937 rng(1);
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {5, 4, 8});
  mb.initializer("W", random_tensor({1, 16, 8}, rng));
  mb.initializer("R", random_tensor({1, 16, 4}, rng));
  mb.initializer("B", random_tensor({1, 32}, rng));
  mb.initializer("P", random_tensor({1, 12}, rng));
  mb.output("Y", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R", "B", "", "", "", "P"}, {"Y"}, "lstm");
  set_attr(n, "hidden_size", int64_t{4});
  SessionOptions o;
  o.providers({"onednn"}).threads(1).set("onednn.impl", "primitive");
  const std::string bytes = mb.bytes();
  Session s = open(bytes, o);
  const std::string e = s.explain();
  EXPECT_NE(e.find("W, R, B, P repacked at load"), std::string::npos) << e;
  EXPECT_NE(e.find("note: oneDNN "), std::string::npos) << e;
  EXPECT_NE(e.find("constant weights released after repacking: 944 B"), std::string::npos) << e;
  ASSERT_EQ(s.assignment().size(), 1u);
  EXPECT_EQ(s.assignment()[0].provider, "onednn");
}

// An LSTM of H units over X [T, N, I] (random weights from `rng`), on oneDNN's primitives at
// `threads` threads, built at load: --explain shows `want` (the untimed rule's choice), and the
// outputs match the reference's.
void expect_rule_choice(int64_t H, const std::string& direction, int64_t T, int64_t N, int64_t I,
                        const std::string& want, std::mt19937& rng, int threads = 2) {
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {T, N, I});
  mb.initializer("W", random_tensor({D, 4 * H, I}, rng, 0.1f));
  mb.initializer("R", random_tensor({D, 4 * H, H}, rng, 0.1f));
  mb.output("Y", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R"}, {"Y"}, "lstm");
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", direction);
  const std::string bytes = mb.bytes();
  SessionOptions o;
  o.providers({"onednn"})
      .threads(threads)
      .set("onednn.impl", "primitive")
      .set("onednn.prepare", "load");
  Session dnn = open(bytes, o);
  const std::string what = "H=" + std::to_string(H) + " " + direction + " T=" + std::to_string(T) +
                           " N=" + std::to_string(N) + " threads=" + std::to_string(threads);
  EXPECT_NE(dnn.explain().find(want), std::string::npos) << what << "\n" << dnn.explain();
  SessionOptions r;
  r.providers({"reference"});
  const Feeds f = {{"X", random_tensor({T, N, I}, rng, 1.0f)}};
  expect_match(dnn.run(f), open(bytes, r).run(f), what);
}

// One row (N = 1) of a few hundred units: the untimed rule gives the step's product a team of
// threads (or, two directions on two threads, a direction each), as measured in
// docs/semantics.md ("The fixed rule"); a small cell stays on one thread. The team's outputs
// match the reference's.
TEST(OnednnRnnKernel, OneRowOfManyUnitsTakesATeam) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  struct Case {
    int64_t H;
    std::string direction, want;
    int64_t T = 100, N = 1;
  };
  for (const Case& k :
       {Case{192, "forward", "2 threads (OpenMP) (untimed rule)"},
        Case{96, "forward", "1 thread (untimed rule)"},
        Case{192, "bidirectional", "2 threads (directions in parallel) (untimed"},
        Case{400, "bidirectional", "2 threads (OpenMP) (untimed rule)"},
        // A pass past 256 steps too (in blocks that each lease the team).
        Case{192, "forward", "2 threads (OpenMP) (untimed rule)", 300},
        Case{192, "bidirectional", "2 threads (directions in parallel) (untimed", 300},
        Case{400, "bidirectional", "2 threads (OpenMP) (untimed rule)", 300},
        // One step of a few rows (streams or beams) likewise; six rows a
        // thread do not.
        Case{256, "forward", "2 threads (OpenMP) (untimed rule)", 1, 4},
        Case{256, "forward", "1 thread (untimed rule)", 1, 12}}) {
    std::mt19937 rng(7);
    expect_rule_choice(k.H, k.direction, k.T, k.N, 256, k.want, rng);
  }
}

// Cores that other processes take, as the test says, for the object's lifetime.
struct CoresTaken {
  explicit CoresTaken(int cores) { onednn::override_cores_taken(cores); }
  ~CoresTaken() { onednn::override_cores_taken(-1); }
  CoresTaken(const CoresTaken&) = delete;
  CoresTaken& operator=(const CoresTaken&) = delete;
};

// A team's pass past 256 steps (one row of a cell too large for one thread) runs in blocks of
// at most 128 steps on plans every long length shares, each block leasing the team again, so
// that a core another process takes mid-pass costs at most one block's barriers (rnn_run.cc,
// run_uniform). Against the reference, with the cores free and with them taken.
TEST(OnednnRnnKernel, ALongPassOfATeamRunsInBlocksThatEachLeaseTheTeam) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  // Weights of scale 1/sqrt(I + H): larger ones make 300 steps amplify rounding.
  const std::string bytes = model("GRU", 48, 256, "forward", true, {}, 0.0f, 0.06f);
  SessionOptions dopts, ropts;
  dopts.providers({"onednn"}).threads(2).set("onednn.impl", "primitive");
  ropts.providers({"reference"});
  Session dnn = open(bytes, dopts);
  std::mt19937 rng(12);
  for (const int32_t T : {300, 256}) {
    const Feeds f = {{"X", random_tensor({T, 1, 48}, rng, 1.0f)},
                     {"sequence_lens", Tensor::from_vector<int32_t>({1}, {T})}};
    const Outputs want = open(bytes, ropts).run(f);
    const std::string what = "T=" + std::to_string(T);
    {
      // Nothing declared busy, the team stays whole. A real process on the other core (a test
      // beside this one under ctest -j2) can still make a block wait for its team, and the
      // stall guard then rightly runs the rest of the pass, and the node's passes for a
      // second, on one thread: up to three sessions of their own, one of which ran whole.
      CoresTaken quiet(0);
      bool whole = false;
      for (int k = 0; k < 3 && !whole; ++k) {
        Session fresh = open(bytes, dopts);
        const int64_t before = onednn::shared_plan_runs();
        const uint64_t smaller = onednn::smaller_team_runs();
        expect_match(fresh.run(f), want, what + ", cores free");
        whole = onednn::smaller_team_runs() == smaller;
        if (whole) {
          EXPECT_EQ(onednn::shared_plan_runs() - before, T > 256 ? 1 : 0) << what;
        }
      }
      EXPECT_TRUE(whole) << what << ": the team shrank with no core taken, three times";
    }
    CoresTaken busy(1 << 16);
    const uint64_t smaller = onednn::smaller_team_runs();
    expect_match(dnn.run(f), want, what + ", cores taken");
    EXPECT_GT(onednn::smaller_team_runs(), smaller) << what << ": the team did not shrink";
  }
}

// Rows of a cell whose R outgrows a core's share of the cache: a batch split makes each thread
// stream all of R every step, a team shares its columns. From 512 KiB of R a team takes up to
// 4 rows a thread, from 1 MiB any number of rows (docs/semantics.md, "The fixed rule"); the
// team's outputs match the reference's.
TEST(OnednnRnnKernel, RowsOfALargeRTakeATeam) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  struct Case {
    int64_t H, N;
    std::string want;
  };
  for (const Case& k : {Case{256, 16, "2 threads (OpenMP) (untimed rule)"},
                        Case{256, 24, "2 threads (OpenMP) (untimed rule)"},
                        Case{192, 6, "2 threads (OpenMP) (untimed rule)"},
                        Case{192, 16, "2 threads (batch split) (untimed rule)"}}) {
    std::mt19937 rng(13);
    expect_rule_choice(k.H, "forward", 40, k.N, 256, k.want, rng);
  }
}

// In a team of two threads (a few rows of a large R) an LSTM of 256 units and 4 rows takes gemm
// over a long pass only; a short one keeps brgemm (docs/semantics.md, "The fixed rule").
TEST(OnednnRnnKernel, ATeamKeepsGemmForLongPassesOnly) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(10);
  expect_rule_choice(256, "forward", 40, 4, 256, "weights ldigo, 2 threads (OpenMP) (untimed rule)",
                     rng);
  expect_rule_choice(256, "forward", 8, 4, 256, "weights any, 2 threads (OpenMP) (untimed rule)",
                     rng);
}

// Two directions on two threads, a direction each, of a few rows: an LSTM of 256 units takes
// oneDNN's gemm implementation (ldigo) at any number of rows, a smaller one brgemm below 16
// rows (docs/semantics.md, "The fixed rule"); the outputs match the reference's.
TEST(OnednnRnnKernel, TwoDirectionsOfAWideLstmTakeGemm) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  struct Case {
    int64_t H, N;
    std::string want;
  };
  for (const Case& k : {Case{256, 8, "weights ldigo, 2 threads (directions in parallel)"},
                        Case{256, 6, "weights ldigo, 2 threads (directions in parallel)"},
                        Case{128, 8, "weights any, 2 threads (directions in parallel)"}}) {
    std::mt19937 rng(8);
    expect_rule_choice(k.H, "bidirectional", 40, k.N, 128, k.want, rng);
  }
}

// On one thread an LSTM of 192 to 384 units with an input of at least half as many, over two
// steps or more, takes oneDNN's gemm implementation up to 8 rows, or 16 where H <= 256 and the
// input is as wide, and brgemm beyond, for a smaller input, from H=512 past 4 rows, and for
// one step (docs/semantics.md, "The fixed rule"); the outputs match the reference's.
TEST(OnednnRnnKernel, OneThreadKeepsGemmForMidSizedLstms) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  struct Case {
    int64_t H, N, T, I;
    std::string want;
  };
  const std::string gemm = "weights ldigo, 1 thread (untimed rule)";
  const std::string brgemm = "weights any, 1 thread (untimed rule)";
  for (const Case& k :
       {Case{256, 8, 20, 128, gemm}, Case{256, 16, 20, 256, gemm}, Case{256, 24, 20, 256, brgemm},
        Case{256, 8, 20, 64, brgemm}, Case{384, 8, 20, 192, gemm}, Case{384, 12, 20, 384, brgemm},
        Case{512, 8, 20, 512, brgemm}, Case{128, 8, 20, 128, brgemm}, Case{256, 8, 2, 256, gemm},
        Case{256, 8, 1, 256, brgemm}, Case{512, 4, 8, 512, gemm}, Case{256, 4, 8, 64, brgemm},
        Case{256, 16, 20, 128, brgemm}}) {
    std::mt19937 rng(9);
    expect_rule_choice(k.H, "forward", k.T, k.N, k.I, k.want, rng, 1);
  }
}

// A static X shape: the primitive waits for the first run by default, and onednn.prepare=load
// builds it at load (explain names oneDNN's implementation then); both give the same bits.
TEST(OnednnRnnKernel, PrimitivesOfAStaticShapeAreBuiltAtTheFirstRunUnlessAskedAtLoad) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(7);
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {5, 4, 8});
  mb.initializer("W", random_tensor({1, 4 * 96, 8}, rng));
  mb.initializer("R", random_tensor({1, 4 * 96, 96}, rng));
  mb.output("Y", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R"}, {"Y"}, "lstm");
  set_attr(n, "hidden_size", int64_t{96});
  const std::string bytes = mb.bytes();
  const Feeds f = {{"X", random_tensor({5, 4, 8}, rng, 1.0f)}};
  std::vector<Outputs> outs;
  for (const std::string prepare : {"run", "load"}) {
    SessionOptions o;
    o.providers({"onednn"})
        .threads(1)
        .set("onednn.impl", "primitive")
        .set("onednn.prepare", prepare);
    Session s = open(bytes, o);
    const std::string e = s.explain();
    EXPECT_EQ(e.find("built at the first run") != std::string::npos, prepare == "run") << e;
    outs.push_back(s.run(f));
  }
  ASSERT_EQ(outs[0].size(), 1u);
  EXPECT_EQ(std::memcmp(outs[0][0].raw_data(), outs[1][0].raw_data(), outs[0][0].nbytes()), 0);
}

// The small-cell kernels run with AVX-512, or AVX2 and FMA (avx2_rows.h).
bool have_small_cells() { return cpu::has(cpu::Feature::kAvx2); }

// Random X with every third value one that pushes the vector exp, sigmoid and tanh: saturating
// (|x| up to 1e4), tiny, zero.
Tensor edge_input(const Shape& shape, std::mt19937& rng) {
  Tensor x = random_tensor(shape, rng, 1.0f);
  float* xp = x.data<float>();
  const float edge[] = {1e4f, -1e4f, 50.0f, -50.0f, 1e-6f, -1e-7f, 0.0f, 9.0f, -9.0f};
  for (int64_t i = 0; i < x.numel(); i += 3) xp[i] = edge[(i / 3) % 9];
  return x;
}

// Small LSTM, GRU and RNN cells run on recur's own loops (providers/onednn/rnn/small_cell.h) and
// --explain says so; larger cells and onednn.impl=primitive get oneDNN's primitive.
TEST(OnednnRnnKernel, SmallCellsRunOnTheSmallKernelsAndSaySo) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!have_small_cells()) GTEST_SKIP() << "the small-cell LSTM needs AVX2, which this CPU lacks";
  const std::string small = "recur's small-cell LSTM";
  auto explain = [](const std::string& bytes, const std::string& impl) {
    SessionOptions o;
    o.providers({"onednn"}).threads(1).set("onednn.impl", impl);
    return open(bytes, o).explain();
  };
  EXPECT_NE(explain(model("LSTM", 9, 17, "bidirectional", false), "auto").find(small),
            std::string::npos);
  EXPECT_EQ(explain(model("LSTM", 9, 17, "bidirectional", false), "primitive").find(small),
            std::string::npos);
  EXPECT_EQ(explain(model("LSTM", 200, 200, "forward", false), "auto").find(small),
            std::string::npos);
  for (bool lbr : {false, true}) {
    const std::string gru = model("GRU", 9, 17, "forward", lbr);
    EXPECT_NE(explain(gru, "auto").find("recur's small-cell GRU"), std::string::npos);
    EXPECT_EQ(explain(gru, "primitive").find("recur's small-cell GRU"), std::string::npos);
  }
  const std::string rnn = model("RNN", 9, 17, "forward", false);
  EXPECT_NE(explain(rnn, "auto").find("recur's small-cell RNN"), std::string::npos);
  EXPECT_EQ(explain(rnn, "primitive").find("recur's small-cell RNN"), std::string::npos);
}

// The small kernel against the reference where its vector exp, sigmoid and tanh are pushed:
// saturating inputs (|x| up to 1e4), tiny ones, zeros; 9 rows (blocks of 4, 4 and 1), H = 21
// (a masked tail), peepholes, input_forget, initial states, both layouts, unequal lengths
// with 0 and T. A NaN in one row's X stays in that row.
TEST(OnednnRnnKernel, SmallLstmMatchesTheReferenceAtTheEdges) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!have_small_cells()) GTEST_SKIP() << "the small-cell LSTM needs AVX2, which this CPU lacks";
  const int64_t T = 6, N = 9, I = 5, H = 21;
  for (int layout : {0, 1}) {
    for (int input_forget : {0, 1}) {
      std::mt19937 rng(11 + layout * 2 + input_forget);
      ModelBuilder mb(14);
      const Shape xs = layout == 0 ? Shape{T, N, I} : Shape{N, T, I};
      const Shape ss = layout == 0 ? Shape{2, N, H} : Shape{N, 2, H};
      mb.input("X", DType::kFloat32, xs);
      mb.input("sequence_lens", DType::kInt32, {N});
      mb.input("initial_h", DType::kFloat32, ss);
      mb.input("initial_c", DType::kFloat32, ss);
      mb.initializer("W", random_tensor({2, 4 * H, I}, rng, 2.0f));
      mb.initializer("R", random_tensor({2, 4 * H, H}, rng, 2.0f));
      mb.initializer("B", random_tensor({2, 8 * H}, rng));
      mb.initializer("P", random_tensor({2, 3 * H}, rng));
      mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32).output("Y_c", DType::kFloat32);
      auto& n =
          mb.node("LSTM", {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"},
                  {"Y", "Y_h", "Y_c"}, "lstm");
      set_attr(n, "hidden_size", H);
      set_attr(n, "direction", std::string("bidirectional"));
      set_attr(n, "layout", int64_t{layout});
      set_attr(n, "input_forget", int64_t{input_forget});
      const Tensor x = edge_input(xs, rng);
      const Feeds f = {
          {"X", x},
          {"sequence_lens", Tensor::from_vector<int32_t>({N}, {6, 0, 3, 6, 1, 5, 2, 6, 4})},
          {"initial_h", random_tensor(ss, rng, 1.0f)},
          {"initial_c", random_tensor(ss, rng, 3.0f)}};
      SessionOptions dopts, ropts;
      dopts.providers({"onednn"}).threads(1);
      ropts.providers({"reference"});
      const std::string bytes = mb.bytes();
      Session dnn = open(bytes, dopts);
      ASSERT_NE(dnn.explain().find("recur's small-cell LSTM"), std::string::npos);
      expect_match(
          dnn.run(f), open(bytes, ropts).run(f),
          "layout " + std::to_string(layout) + " input_forget " + std::to_string(input_forget));

      // A NaN at row 3's first step: its Y and final states are NaN, every other row's are not.
      Feeds fn = f;
      Tensor xn = x.clone();
      xn.data<float>()[layout == 0 ? 3 * I : 3 * T * I] = std::nanf("");
      fn[0].second = xn;
      const Outputs got = dnn.run(fn);
      const float* y_h = got[1].data<float>();
      for (int64_t d = 0; d < 2; ++d) {
        for (int64_t row = 0; row < N; ++row) {
          const float v = y_h[(layout == 0 ? d * N + row : row * 2 + d) * H];
          EXPECT_EQ(std::isnan(v), row == 3) << "direction " << d << " row " << row;
        }
      }
    }
  }
}

// The small GRU the same way: saturating and tiny inputs, 9 rows, H = 21, both
// linear_before_reset, both layouts, unequal lengths with 0 and T, an initial state.
TEST(OnednnRnnKernel, SmallGruMatchesTheReferenceAtTheEdges) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!have_small_cells()) GTEST_SKIP() << "the small-cell GRU needs AVX2, which this CPU lacks";
  const int64_t T = 6, N = 9, I = 5, H = 21;
  for (int layout : {0, 1}) {
    for (int lbr : {0, 1}) {
      std::mt19937 rng(21 + layout * 2 + lbr);
      ModelBuilder mb(14);
      const Shape xs = layout == 0 ? Shape{T, N, I} : Shape{N, T, I};
      const Shape ss = layout == 0 ? Shape{2, N, H} : Shape{N, 2, H};
      mb.input("X", DType::kFloat32, xs);
      mb.input("sequence_lens", DType::kInt32, {N});
      mb.input("initial_h", DType::kFloat32, ss);
      mb.initializer("W", random_tensor({2, 3 * H, I}, rng, 2.0f));
      mb.initializer("R", random_tensor({2, 3 * H, H}, rng, 2.0f));
      mb.initializer("B", random_tensor({2, 6 * H}, rng));
      mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
      auto& n =
          mb.node("GRU", {"X", "W", "R", "B", "sequence_lens", "initial_h"}, {"Y", "Y_h"}, "gru");
      set_attr(n, "hidden_size", H);
      set_attr(n, "direction", std::string("bidirectional"));
      set_attr(n, "layout", int64_t{layout});
      set_attr(n, "linear_before_reset", int64_t{lbr});
      const Tensor x = edge_input(xs, rng);
      const Feeds f = {
          {"X", x},
          {"sequence_lens", Tensor::from_vector<int32_t>({N}, {6, 0, 3, 6, 1, 5, 2, 6, 4})},
          {"initial_h", random_tensor(ss, rng, 1.0f)}};
      SessionOptions dopts, ropts;
      dopts.providers({"onednn"}).threads(1);
      ropts.providers({"reference"});
      const std::string bytes = mb.bytes();
      Session dnn = open(bytes, dopts);
      ASSERT_NE(dnn.explain().find("recur's small-cell GRU"), std::string::npos);
      expect_match(dnn.run(f), open(bytes, ropts).run(f),
                   "layout " + std::to_string(layout) + " lbr " + std::to_string(lbr));
    }
  }
}

// An RNN's Relu on a NaN: 0, as the reference's cell, ONNX Runtime and oneDNN's vanilla RNN
// primitive give; the small-cell kernel kept the NaN. Tanh keeps it everywhere.
TEST(OnednnRnnKernel, RnnReluOfANaNIsZeroOnEveryPath) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!have_small_cells()) GTEST_SKIP() << "the small-cell RNN needs AVX2, which this CPU lacks";
  const int64_t T = 5, N = 3, I = 4, H = 8;
  for (const std::string act : {"Relu", "Tanh"}) {
    std::mt19937 rng(41);
    ModelBuilder mb(14);
    mb.input("X", DType::kFloat32, {T, N, I});
    mb.initializer("W", random_tensor({1, H, I}, rng, 0.5f));
    mb.initializer("R", random_tensor({1, H, H}, rng, 0.5f));
    mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
    auto& n = mb.node("RNN", {"X", "W", "R"}, {"Y", "Y_h"}, "rnn");
    set_attr(n, "hidden_size", H);
    set_attr(n, "activations", std::vector<std::string>{act});
    Tensor x = random_tensor({T, N, I}, rng, 1.0f);
    x.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();  // step 0, row 0
    const Feeds f = {{"X", x}};
    SessionOptions ropts;
    ropts.providers({"reference"});
    const std::string bytes = mb.bytes();
    const Outputs want = open(bytes, ropts).run(f);
    for (const std::string impl : {"auto", "primitive"}) {
      SessionOptions dopts;
      dopts.providers({"onednn"}).threads(1).set("onednn.impl", impl);
      expect_match(open(bytes, dopts).run(f), want, act + " impl " + impl);
    }
  }
}

// Mid-sized cells (small_cell.h, kMidCellMaxMacs): runs of up to mid_cell_rows rows (4, or 16
// on a core of small L2) with a direction or a slice of rows for each thread take the
// small-cell kernel, the others oneDNN's primitive.
// Both match the reference (unequal lengths, initial states, both layouts); the primitive's
// runs give its bits exactly (a session with onednn.impl=primitive), the small kernel's other
// bits.
TEST(OnednnRnnKernel, MidSizedCellsTakeTheSmallKernelForFewRows) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!have_small_cells()) GTEST_SKIP() << "the small-cell kernels need AVX2, which this CPU lacks";
  struct Case {
    std::string op, direction;
    int64_t I, H, layout;
  };
  // The last is mid-sized only on a core of small L2 (mid_cell_max_macs): 4 * 128 * 1152 =
  // 589,824 multiply-adds a row-step.
  const Case cases[] = {{"LSTM", "bidirectional", 256, 128, 0},
                        {"LSTM", "forward", 64, 192, 1},
                        {"GRU", "bidirectional", 160, 192, 1},
                        {"GRU", "reverse", 512, 128, 0},
                        {"LSTM", "forward", 1024, 128, 0}};
  const bool small_l2 = onednn::small_l2(onednn::core_l2_bytes());
  for (const Case& c : cases) {
    const bool wide = c.I + c.H > 1000;
    // Weights of about 1/sqrt(I + H), as trained ones are: the states stay well conditioned
    // over the 30 steps.
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.I + c.H));
    const std::string bytes =
        model(c.op, c.I, c.H, c.direction, c.op == "GRU", {{"layout", c.layout}}, 0.0f, scale);
    const int64_t D = c.direction == "bidirectional" ? 2 : 1, T = 30;
    SessionOptions ropts;
    ropts.providers({"reference"});
    Session ref = open(bytes, ropts);
    for (int threads : {1, 2}) {
      SessionOptions dopts, popts;
      dopts.providers({"onednn"}).threads(threads).deterministic(true);
      popts = dopts;
      popts.set("onednn.impl", "primitive");
      Session dnn = open(bytes, dopts), prim = open(bytes, popts);
      const bool mid = !wide || small_l2;
      const int64_t rows =
          mid ? onednn::few_rows_here(onednn::mid_cell_rows(onednn::core_l2_bytes())) : 0;
      ASSERT_EQ(dnn.explain().find("small-cell " + c.op + " for runs of up to " +
                                   std::to_string(rows) + " rows") != std::string::npos,
                mid)
          << dnn.explain();
      std::mt19937 rng(13);
      std::set<int64_t> counts{1, 2, 5};
      if (mid) counts.insert({rows, rows + 1});
      for (const int64_t N : counts) {
        std::vector<int32_t> lens(static_cast<size_t>(N), static_cast<int32_t>(T));
        if (N > 1) lens[1] = 3;
        const Shape xs = c.layout == 0 ? Shape{T, N, c.I} : Shape{N, T, c.I};
        const Feeds f = {{"X", random_tensor(xs, rng, 1.0f)},
                         {"sequence_lens", Tensor::from_vector<int32_t>({N}, lens)}};
        const std::string what = c.op + " " + c.direction + " H=" + std::to_string(c.H) +
                                 " threads=" + std::to_string(threads) + " N=" + std::to_string(N);
        const Outputs got = dnn.run(f);
        expect_match(got, ref.run(f), what);
        // The threads the run takes: one below 4M multiply-adds (threads_for).
        const int64_t G = c.op == "LSTM" ? 4 : 3;
        const int64_t macs = D * T * N * G * c.H * (c.I + c.H);
        const bool small = mid && N <= rows && D * N >= (macs < 4194304 ? 1 : threads);
        const Tensor& y = got[0];
        const Tensor y_prim = prim.run(f)[0];
        const bool same =
            std::memcmp(y.raw_data(), y_prim.raw_data(), static_cast<size_t>(y.numel()) * 4) == 0;
        EXPECT_EQ(same, !small) << what
                                << (small ? ": the small kernel's bits are oneDNN's"
                                          : ": not oneDNN's primitive");
      }
    }
  }
}

// One session fed many sequence lengths, as a server of utterances is: the first lengths get
// primitives of their own, later ones run in blocks of steps (1, 2, 3, 4, 6, 8, ...) on plans every
// length shares (rnn_run.cc, run_shared_blocks), the states chained from block to block, the
// reverse direction from the last block back. Against the reference, with initial states and both
// final states, layout 0 and layout 1 over one row; counted, so that blocks that did not run fail.
TEST(OnednnRnnKernel, NewSequenceLengthsRunInSharedBlocks) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  struct Case {
    std::string op, direction;
    int64_t layout, N, H;
  };
  // H of 200 (400 for the RNN) over I = 48, on oneDNN's primitive.
  const int64_t I = 48;
  const int64_t lengths[] = {9, 3, 12, 5, 7, 1, 70, 16, 37, 600, 13};
  for (const Case& c : {Case{"LSTM", "bidirectional", 0, 3, 200}, Case{"GRU", "reverse", 0, 2, 200},
                        Case{"RNN", "forward", 1, 1, 400}, Case{"LSTM", "forward", 1, 1, 200}}) {
    const int64_t H = c.H;
    const int64_t D = c.direction == "bidirectional" ? 2 : 1;
    const int64_t G = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1;
    std::mt19937 rng(41);
    const float scale = 1.0f / std::sqrt(static_cast<float>(I + H));
    ModelBuilder mb(14);
    const Shape xs = c.layout == 0 ? Shape{-1, c.N, I} : Shape{c.N, -1, I};
    const Shape ss = c.layout == 0 ? Shape{D, c.N, H} : Shape{c.N, D, H};
    mb.input("X", DType::kFloat32, xs,
             c.layout == 0 ? std::vector<std::string>{"T", "", ""}
                           : std::vector<std::string>{"", "T", ""});
    mb.input("initial_h", DType::kFloat32, ss);
    mb.initializer("W", random_tensor({D, G * H, I}, rng, scale));
    mb.initializer("R", random_tensor({D, G * H, H}, rng, scale));
    mb.initializer("B", random_tensor({D, 2 * G * H}, rng, scale));
    std::vector<std::string> ins = {"X", "W", "R", "B", "", "initial_h"};
    std::vector<std::string> outs = {"Y", "Y_h"};
    mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
    if (c.op == "LSTM") {
      mb.input("initial_c", DType::kFloat32, ss);
      ins.push_back("initial_c");
      outs.push_back("Y_c");
      mb.output("Y_c", DType::kFloat32);
    }
    auto& n = mb.node(c.op, ins, outs, "rnn");
    set_attr(n, "hidden_size", H);
    set_attr(n, "direction", c.direction);
    set_attr(n, "layout", c.layout);
    if (c.op == "GRU") set_attr(n, "linear_before_reset", int64_t{1});
    const std::string bytes = mb.bytes();
    SessionOptions dopts, ropts;
    // oneDNN's primitive, not recur's kernels for small cells and a few rows of wide ones.
    dopts.providers({"onednn"}).threads(2).set("onednn.impl", "primitive");
    ropts.providers({"reference"});
    Session dnn = open(bytes, dopts), ref = open(bytes, ropts);
    ASSERT_EQ(dnn.explain().find("small-cell"), std::string::npos) << dnn.explain();
    ASSERT_EQ(dnn.explain().find("row-team"), std::string::npos) << dnn.explain();
    const int64_t before = onednn::shared_plan_runs();
    for (const int64_t T : lengths) {
      Feeds f = {
          {"X", random_tensor(c.layout == 0 ? Shape{T, c.N, I} : Shape{c.N, T, I}, rng, 1.0f)},
          {"initial_h", random_tensor(ss, rng, 1.0f)}};
      if (c.op == "LSTM") f.push_back({"initial_c", random_tensor(ss, rng, 1.0f)});
      expect_match(dnn.run(f), ref.run(f),
                   c.op + " " + c.direction + " layout " + std::to_string(c.layout) +
                       " T=" + std::to_string(T));
    }
    // Past the first four lengths, 7 runs in shared blocks.
    EXPECT_EQ(onednn::shared_plan_runs() - before, 7) << c.op << " " << c.direction;
  }
}

// A batch large enough that the input projection is done fewer than 16 steps at a time
// (small_cell.h, time_block) and that two threads take interleaved slices of the rows.
TEST(OnednnRnnKernel, SmallCellLargeBatchMatchesTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  if (!have_small_cells()) GTEST_SKIP() << "the small-cell LSTM needs AVX2, which this CPU lacks";
  const std::string bytes = model("LSTM", 8, 128, "forward", false);
  SessionOptions dopts, ropts;
  dopts.providers({"onednn"}).threads(2);
  ropts.providers({"reference"});
  Session dnn = open(bytes, dopts);
  ASSERT_NE(dnn.explain().find("recur's small-cell LSTM"), std::string::npos);
  std::mt19937 rng(9);
  const int64_t T = 20, N = 300;
  std::vector<int32_t> lens(static_cast<size_t>(N));
  for (auto& l : lens) l = static_cast<int32_t>(std::uniform_int_distribution<int>(0, T)(rng));
  const Feeds f = {{"X", random_tensor({T, N, 8}, rng, 1.0f)},
                   {"sequence_lens", Tensor::from_vector<int32_t>({N}, lens)}};
  expect_match(dnn.run(f), open(bytes, ropts).run(f), "N=300");
}

// Two directions side by side over a long sequence: their scratchpads together would pass one
// direction's, so each runs in blocks of steps that chain their states (rnn_run.cc,
// time_block). Also with blocks set by hand, down to one step, and a short last block.
TEST(OnednnRnnKernel, LongSequencesSideBySideRunInTimeBlocks) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string bytes = model("LSTM", 32, 128, "bidirectional", false);
  SessionOptions ropts;
  ropts.providers({"reference"});
  Session ref = open(bytes, ropts);
  std::mt19937 rng(11);
  const int64_t T = 150, N = 16;
  const Feeds f = {{"X", random_tensor({T, N, 32}, rng, 1.0f)},
                   {"sequence_lens", Tensor::from_vector<int32_t>(
                                         {N}, std::vector<int32_t>(N, static_cast<int32_t>(T)))}};
  const Outputs want = ref.run(f);
  for (const std::string block : {"0", "1", "7", "150"}) {
    SessionOptions dopts;
    dopts.providers({"onednn"})
        .threads(2)
        .set("onednn.impl", "ldigo")
        .set("onednn.threading", "split")
        .set("onednn.time_block", block);
    Session dnn = open(bytes, dopts);
    expect_match(dnn.run(f), want, "time_block=" + block);
    expect_match(dnn.run(f), want, "time_block=" + block + ", second run");
  }
}

TEST(OnednnRnnKernel, GraphInputWeightsAreRepackedPerRun) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {3, 2, 5});
  mb.input("W", DType::kFloat32, {1, 18, 5});
  mb.input("R", DType::kFloat32, {1, 18, 6});
  mb.output("Y_h", DType::kFloat32);
  auto& n = mb.node("GRU", {"X", "W", "R"}, {"", "Y_h"}, "gru");
  set_attr(n, "hidden_size", int64_t{6});
  const std::string bytes = mb.bytes();
  SessionOptions o;
  o.providers({"onednn"});
  Session s = open(bytes, o);
  EXPECT_NE(s.explain().find("W, R are graph inputs: weights repacked per run"), std::string::npos)
      << s.explain();
  SessionOptions r;
  r.providers({"reference"});
  Session ref = open(bytes, r);
  std::mt19937 rng(9);
  for (int i = 0; i < 3; ++i) {  // new weights every run
    Feeds f = {{"X", random_tensor({3, 2, 5}, rng)},
               {"W", random_tensor({1, 18, 5}, rng)},
               {"R", random_tensor({1, 18, 6}, rng)}};
    expect_match(s.run(f), ref.run(f), "run " + std::to_string(i));
  }
}

TEST(OnednnRnnKernel, DeclinedNodesNameTheReason) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  // A clip runs on recur's own kernels (general_cell_test.cc); where onednn.impl asks for
  // oneDNN's primitives, the provider has no kernel for it, and says both why.
  const std::string clip = model("LSTM", 3, 4, "forward", false, {}, 0.5f);
  SessionOptions only;
  only.providers({"onednn"}).set("onednn.impl", "primitive");
  testing::expect_error(
      [&] { open(clip, only); }, ErrorCode::kNotImplemented,
      {"rnn_node", "onednn", "clip=0.5", "onednn.impl asks for oneDNN's primitive"});
  // With the reference behind it, the node falls back, and --explain says why.
  SessionOptions both;
  both.providers({"onednn", "reference"}).set("onednn.impl", "primitive");
  Session s = open(clip, both);
  EXPECT_EQ(s.assignment()[0].provider, "reference");
  EXPECT_NE(s.explain().find("onednn: clip=0.5"), std::string::npos) << s.explain();
  // input_forget alone runs on oneDNN's primitive (a negated input gate).
  const std::string forget = model("LSTM", 3, 4, "forward", false, {{"input_forget", 1}});
  EXPECT_EQ(open(forget, only).assignment()[0].provider, "onednn");
}

// Shapes oneDNN's RNN primitives cannot take. A declared batch of 2^40 made primitive creation
// at load divide by zero inside oneDNN (SIGFPE; found by mutating models): the session now
// loads, and a run reports the shape mismatch. An input size of 0 is valid ONNX: the node goes
// to the reference provider, with the reason.
TEST(OnednnRnnKernel, ShapesOnednnCannotTakeAreRefusedNotCrashed) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(9);
  for (const std::string op : {"LSTM", "GRU", "RNN"}) {
    const int64_t G = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1, H = 4, I = 3;
    ModelBuilder mb(14);
    mb.input("X", DType::kFloat32, {3, int64_t{1} << 40, I});
    mb.initializer("W", random_tensor({1, G * H, I}, rng));
    mb.initializer("R", random_tensor({1, G * H, H}, rng));
    mb.output("Y", DType::kFloat32);
    set_attr(mb.node(op, {"X", "W", "R"}, {"Y"}, "rnn_node"), "hidden_size", H);
    const std::string bytes = mb.bytes();
    SessionOptions o;
    o.providers({"onednn"});
    Session s = open(bytes, o);
    EXPECT_EQ(s.assignment()[0].provider, "onednn");
    testing::expect_error(
        [&] {
          s.run({{"X", random_tensor({3, 2, I}, rng)}});
        },
        ErrorCode::kInvalidArgument, {"'X'", "1099511627776"});
  }
  const std::string empty_input = model("LSTM", 0, 4, "forward", false);
  SessionOptions both;
  both.providers({"onednn", "reference"});
  Session s = open(empty_input, both);
  EXPECT_EQ(s.assignment()[0].provider, "reference");
  EXPECT_NE(s.explain().find("onednn: input size 0"), std::string::npos) << s.explain();
  Feeds f = {{"X", Tensor::empty(DType::kFloat32, {2, 3, 0})},
             {"sequence_lens", Tensor::from_vector<int32_t>({3}, {2, 1, 0})}};
  EXPECT_EQ(s.run(f).size(), 2u);
}

}  // namespace
}  // namespace recur
