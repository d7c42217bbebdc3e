// Constant B packed at load for oneDNN's matmul (providers/onednn/nn/packed_b.h): Gemm with
// every transpose, alpha and beta and each form of C (folded into the bias, or added at run),
// MatMul and the fused MatMul + bias + activation with A of every rank, each against the
// reference provider for several numbers of rows in one session (one packed B serves them
// all); the ONNX copy released; a wrong A named, not read.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "providers/onednn/nn/packed_b.h"
#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

// B of 320 x 900 values: above the size that recur's own small-product loop takes, so every
// row count runs on oneDNN's matmul, but for a few rows, which recur's loop over the same packed
// B takes on AVX-512 (PackedB::loop_reads).
constexpr int64_t K = 320, N = 900;

bool runnable() {
  for (const auto& p : list_providers())
    if (p.name == "onednn") return p.available;
  return false;
}

Session open(const std::string& bytes, const std::string& providers) {
  SessionOptions o;
  o.providers({providers}).threads(2);
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

// One onednn session and one reference session run every feed; the outputs must agree.
void expect_same(const std::string& bytes, const std::vector<Feeds>& feeds,
                 const std::string& what) {
  Session dnn = open(bytes, "onednn");
  Session ref = open(bytes, "reference");
  const std::string explained = dnn.explain();
  // Without AVX-512 (isa-avx2/), B as recur's AVX2 loop reads it (avx2_panels.h).
  const bool packed = explained.find("packed at load for oneDNN's matmul") != std::string::npos ||
                      explained.find("packed at load in panels") != std::string::npos;
  EXPECT_TRUE(packed) << what << "\n" << explained;
  EXPECT_NE(explained.find("constant weights released after repacking"), std::string::npos)
      << what << "\n"
      << explained;
  for (const Feeds& f : feeds) {
    const Outputs got = dnn.run(f);
    const Outputs want = ref.run(f);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].shape(), want[i].shape()) << what;
      const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{});
      EXPECT_TRUE(cmp.match) << what << " A " << shape_to_string(f.begin()->second.shape()) << ": "
                             << cmp.reason;
    }
  }
}

TEST(OnednnPackedB, GemmEveryFormOfCAndTranspose) {
  if (!runnable()) GTEST_SKIP() << "needs the oneDNN provider";
  std::mt19937 rng(11);
  struct Case {
    int trans_a, trans_b;
    float alpha, beta;
    Shape c;       // {} for none; {0} marks a C of one value given as shape []
    bool c_input;  // C a graph input (added at run), not a constant
  };
  const std::vector<Case> cases = {
      {0, 1, 1.0f, 1.0f, {N}, false},    {0, 0, 0.5f, 2.0f, {1, N}, false},
      {1, 1, 1.0f, 1.0f, {}, false},     {0, 1, -1.5f, 0.25f, {0}, false},
      {1, 0, 2.0f, 1.0f, {3, N}, false}, {0, 1, 1.0f, 0.5f, {3, 1}, false},
      {0, 1, 1.0f, 1.0f, {N}, true},     {0, 0, 1.0f, 0.0f, {N}, false}};
  for (const Case& k : cases) {
    // C of M rows fixes M at 3; otherwise M is symbolic and runs at 1, 3, 40 and 600 rows,
    // then (past PackedPlans::kExactShapes) at 77 and 5 as chunks of rows.
    const bool fixed_m = k.c.size() == 2 && k.c[0] == 3;
    const std::vector<int64_t> ms =
        fixed_m ? std::vector<int64_t>{3} : std::vector<int64_t>{1, 3, 40, 600, 77, 5};
    ModelBuilder mb(13);
    if (k.trans_a)
      mb.input("A", DType::kFloat32, {K, fixed_m ? 3 : -1}, {"", "M"});
    else
      mb.input("A", DType::kFloat32, {fixed_m ? 3 : -1, K}, {"M", ""});
    mb.initializer("B", random_tensor(k.trans_b ? Shape{N, K} : Shape{K, N}, rng));
    std::vector<std::string> in = {"A", "B"};
    const Shape cs = k.c == Shape{0} ? Shape{} : k.c;
    if (!k.c.empty()) {
      if (k.c_input)
        mb.input("C", DType::kFloat32, cs);
      else
        mb.initializer("C", random_tensor(cs, rng));
      in.push_back("C");
    }
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("Gemm", in, {"Y"}, "gemm");
    set_attr(n, "transA", int64_t{k.trans_a});
    set_attr(n, "transB", int64_t{k.trans_b});
    set_attr(n, "alpha", k.alpha);
    set_attr(n, "beta", k.beta);
    std::vector<Feeds> feeds;
    const Tensor c = random_tensor(cs, rng);
    for (int64_t m : ms) {
      Feeds f{{"A", random_tensor(k.trans_a ? Shape{K, m} : Shape{m, K}, rng, 1.0f)}};
      if (k.c_input) f.push_back({"C", c});
      feeds.push_back(f);
    }
    expect_same(mb.bytes(), feeds,
                "transA " + std::to_string(k.trans_a) + " transB " + std::to_string(k.trans_b) +
                    " C " + shape_to_string(k.c) + (k.c_input ? " (input)" : ""));
  }
}

TEST(OnednnPackedB, MatMulOfEveryRankOfA) {
  if (!runnable()) GTEST_SKIP() << "needs the oneDNN provider";
  std::mt19937 rng(12);
  ModelBuilder mb(13);
  mb.input("A", DType::kFloat32, {-1, -1, K}, {"S", "M", ""});
  mb.input("V", DType::kFloat32, {K});
  mb.initializer("B", random_tensor({K, N}, rng));
  mb.output("Y", DType::kFloat32);
  mb.output("W", DType::kFloat32);
  mb.node("MatMul", {"A", "B"}, {"Y"}, "mm");
  // A second reader of B: the graph keeps its copy, the packed one still serves this node.
  mb.node("MatMul", {"V", "B"}, {"W"}, "mv");
  std::vector<Feeds> feeds;
  for (const auto& [s, m] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {2, 5}, {4, 30}, {0, 3}, {3, 41}, {1, 600}, {7, 9}})  // chunks from 123 rows
    feeds.push_back({{"A", random_tensor({s, m, K}, rng, 1.0f)}, {"V", random_tensor({K}, rng)}});
  expect_same(mb.bytes(), feeds, "MatMul");
}

TEST(OnednnPackedB, FusedBiasAndActivation) {
  if (!runnable()) GTEST_SKIP() << "needs the oneDNN provider";
  std::mt19937 rng(13);
  ModelBuilder mb(13);
  mb.input("A", DType::kFloat32, {-1, -1, K}, {"S", "M", ""});
  mb.initializer("B", random_tensor({K, N}, rng));
  mb.initializer("bias", random_tensor({N}, rng));
  mb.output("Y", DType::kFloat32);
  mb.node("MatMul", {"A", "B"}, {"p"}, "mm");
  mb.node("Add", {"p", "bias"}, {"q"}, "add");
  mb.node("Relu", {"q"}, {"Y"}, "relu");
  const std::string bytes = mb.bytes();
  EXPECT_NE(open(bytes, "onednn").explain().find("fused MatMul"), std::string::npos);
  std::vector<Feeds> feeds;
  for (int64_t m : {1, 7, 50}) feeds.push_back({{"A", random_tensor({2, m, K}, rng, 1.0f)}});
  expect_same(bytes, feeds, "MatMul + Add + Relu");
}

// A B small enough for recur's own loop is packed once, in oneDNN's layout, and the ONNX copy
// goes: few rows run on the loop, many on oneDNN's matmul over the same copy; K and N are not
// whole blocks of 16 and 64, and a second reader of B keeps the graph's copy for itself. For
// MatMul (with a bias and an activation fused) and for Gemm (B transposed, alpha and beta * C
// folded in). A B of 5 columns, which that layout would pad to 64, keeps the loop's own
// layout and its ONNX copy for oneDNN.
TEST(OnednnPackedB, SmallBOneCopyForTheLoopAndOneDnn) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  std::mt19937 rng(15);
  struct Case {
    int64_t k, n;
    bool one_copy;
  };
  // 4M multiply-adds from 140 rows on, and from 420.
  for (const Case& c : {Case{200, 150, true}, Case{2000, 5, false}}) {
    for (const bool gemm : {false, true}) {
      const std::string what =
          std::string(gemm ? "Gemm " : "MatMul ") + std::to_string(c.k) + "x" + std::to_string(c.n);
      ModelBuilder mb(13);
      mb.input("A", DType::kFloat32, {-1, -1}, {"M", "K"});
      mb.input("V", DType::kFloat32, {1, c.k});
      mb.initializer("B", random_tensor(gemm ? Shape{c.n, c.k} : Shape{c.k, c.n}, rng));
      mb.initializer("bias", random_tensor({c.n}, rng));
      mb.output("Y", DType::kFloat32);
      mb.output("W", DType::kFloat32);
      if (gemm) {
        auto& g = mb.node("Gemm", {"A", "B", "bias"}, {"Y"}, "mm");
        set_attr(g, "transB", int64_t{1});
        set_attr(g, "alpha", 0.7f);
        set_attr(g, "beta", 1.3f);
        set_attr(mb.node("Gemm", {"V", "B"}, {"W"}, "mv"), "transB", int64_t{1});
      } else {
        mb.node("MatMul", {"A", "B"}, {"p"}, "mm");
        mb.node("Add", {"p", "bias"}, {"q"}, "add");
        mb.node("Relu", {"q"}, {"Y"}, "relu");
        mb.node("MatMul", {"V", "B"}, {"W"}, "mv");
      }
      const std::string bytes = mb.bytes();
      Session dnn = open(bytes, "onednn");
      Session ref = open(bytes, "reference");
      const std::string explained = dnn.explain();
      EXPECT_EQ(explained.find("in oneDNN's layout for recur's own loop") != std::string::npos,
                c.one_copy)
          << what << "\n"
          << explained;
      for (int64_t m : {1, 3, 139, 140, 600, 7, 1000}) {
        const Feeds f = {{"A", random_tensor({m, c.k}, rng, 1.0f)},
                         {"V", random_tensor({1, c.k}, rng)}};
        const Outputs got = dnn.run(f), want = ref.run(f);
        for (size_t i = 0; i < want.size(); ++i) {
          const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{});
          EXPECT_TRUE(cmp.match) << what << ", " << m << " rows, output " << i << ": "
                                 << cmp.reason;
        }
      }
      try {
        dnn.run({{"A", random_tensor({2, c.k + 1}, rng)}, {"V", random_tensor({1, c.k}, rng)}});
        ADD_FAILURE() << what << ": a wrong K ran";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("mm"), std::string::npos) << e.what();
      }
    }
  }
}

// A constant B of K x N values, stored N x K where `trans`, each times `scale`.
struct BCase {
  int64_t K, N;
  bool trans;
  float scale;
  std::string what() const {
    return std::to_string(K) + "x" + std::to_string(N) + (trans ? " trans" : "") + " scale " +
           std::to_string(scale);
  }
};

// A constant B with no rows or no columns: the loop's copy is empty, Y is C alone or empty
// (the sanitizer build caught the loop copying out of a null scratch for a Gemm of 0 columns).
// B packed by recur as it reads it, giving the source's pages back (the ONNX copy dies when
// released): the same bytes as oneDNN's reorder into the same layout, B stored either way,
// scaled or not, with sizes on and off the 16 x 64 tiles; and the source's pages are gone.
TEST(OnednnPackedB, StreamedPackingGivesTheReordersBytes) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  int streamed = 0;
  for (const BCase& c :
       {BCase{100, 200, false, 1.0f}, BCase{100, 200, true, 1.0f}, BCase{33, 650, false, 0.37f},
        BCase{33, 650, true, 1.7f}, BCase{256, 1000, false, 1.0f}, BCase{256, 1000, true, 0.5f},
        BCase{17, 128, true, 1.0f}, BCase{640, 513, false, 1.0f}}) {
    const std::string what = c.what();
    std::vector<float> b(static_cast<size_t>(c.K * c.N));
    for (float& v : b) v = dist(rng);
    std::vector<float> dying = b;
    auto want = onednn::PackedB::make(b.data(), c.K, c.N, c.trans, c.scale, what);
    auto got = onednn::PackedB::make(dying.data(), c.K, c.N, c.trans, c.scale, what, true);
    ASSERT_TRUE(want.ok() && got.ok()) << what;
    ASSERT_EQ(*want == nullptr, *got == nullptr) << what;
    if (!*want) continue;  // no layout that pays for this B
    const dnnl::memory::desc panels({c.K, c.N}, dnnl::memory::data_type::f32,
                                    dnnl::memory::format_tag::BA16a64b);
    streamed += (*got)->desc() == panels;
    ASSERT_TRUE((*want)->desc() == (*got)->desc()) << what;
    ASSERT_EQ((*want)->packed().bytes, (*got)->packed().bytes) << what;
    EXPECT_EQ(std::memcmp((*want)->packed().data, (*got)->packed().data, (*got)->packed().bytes), 0)
        << what;
    // A page in the middle of the source, read for the last time, went back to the kernel.
    if ((*got)->desc() == panels && dying.size() * sizeof(float) >= (size_t{256} << 10)) {
      const size_t mid = dying.size() / 2;
      EXPECT_EQ(dying[mid], 0.0f) << what << ": the source's pages were kept";
    }
  }
  EXPECT_GE(streamed, 4) << "recur's packing took too few of the cases";
}

// recur's own loop over a B packed for oneDNN (PackedB::multiply, a few rows of A): each output
// against its sum in double, with and without a bias, B stored either way and scaled, K and N
// on and off the 16 x 64 tiles; nothing written past the rows' N columns; the same bits on one
// thread as on two (the column blocks split).
TEST(OnednnPackedB, LoopOverThePackedBMatchesSumsInDouble) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  int looped = 0;
  for (const BCase& c : {BCase{320, 900, false, 1.0f}, BCase{17, 1000, true, 0.75f},
                         BCase{1000, 200, false, 1.0f}, BCase{700, 2100, true, 1.0f},
                         BCase{40, 4100, false, -1.5f}, BCase{1536, 130, false, 1.0f}}) {
    const std::string what = c.what();
    std::vector<float> b(static_cast<size_t>(c.K * c.N)), bias(static_cast<size_t>(c.N));
    for (float& v : b) v = dist(rng);
    for (float& v : bias) v = dist(rng);
    auto packed = onednn::PackedB::make(b.data(), c.K, c.N, c.trans, c.scale, what);
    ASSERT_TRUE(packed.ok()) << what;
    if (!*packed || !(*packed)->loop_reads()) continue;
    ++looped;
    const auto B = [&](int64_t k, int64_t n) {
      return static_cast<double>(b[static_cast<size_t>(c.trans ? n * c.K + k : k * c.N + n)]) *
             c.scale;
    };
    for (const int64_t rows : {1, 2, 3, 4, 5, 8, 9}) {
      std::vector<float> a(static_cast<size_t>(rows * c.K));
      for (float& v : a) v = dist(rng);
      for (const bool with_bias : {false, true}) {
        const float* bp = with_bias ? bias.data() : nullptr;
        constexpr float kGuard = 12345.0f;
        const size_t n_out = static_cast<size_t>(rows * c.N);
        std::vector<float> one(n_out + 16, kGuard), two(n_out + 16, kGuard);
        (*packed)->multiply(a.data(), rows, bp, one.data(), onednn::Threads{1, false});
        (*packed)->multiply(a.data(), rows, bp, two.data(), onednn::Threads{2, false});
        const std::string at =
            what + ", " + std::to_string(rows) + " rows" + (with_bias ? ", bias" : "");
        EXPECT_EQ(std::memcmp(one.data(), two.data(), (n_out + 16) * sizeof(float)), 0) << at;
        for (size_t i = n_out; i < one.size(); ++i)
          ASSERT_EQ(one[i], kGuard) << at << ": written past the last row";
        int bad = 0;
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t n = 0; n < c.N; ++n) {
            double want = with_bias ? bias[static_cast<size_t>(n)] : 0.0, mag = std::abs(want);
            for (int64_t k = 0; k < c.K; ++k) {
              const double t = a[static_cast<size_t>(r * c.K + k)] * B(k, n);
              want += t;
              mag += std::abs(t);
            }
            const double got = one[static_cast<size_t>(r * c.N + n)];
            if (!(std::abs(got - want) <= 1e-5 * mag + 1e-6) && ++bad <= 3)
              ADD_FAILURE() << at << ": Y[" << r << "][" << n << "] " << got << ", want " << want;
          }
        }
      }
    }
  }
  EXPECT_EQ(looped, 6) << "oneDNN took a layout the loop does not read";
}

TEST(OnednnPackedB, EmptySmallB) {
  if (!runnable()) GTEST_SKIP() << "needs the oneDNN provider";
  std::mt19937 rng(16);
  for (const auto& [k, n] : {std::pair<int64_t, int64_t>{0, 3}, {3, 0}}) {
    for (const bool gemm : {false, true}) {
      ModelBuilder mb(13);
      mb.input("A", DType::kFloat32, {-1, k}, {"M", ""});
      mb.initializer("B", random_tensor({k, n}, rng));
      mb.output("Y", DType::kFloat32);
      if (gemm) {
        mb.initializer("C", random_tensor({n}, rng));
        mb.node("Gemm", {"A", "B", "C"}, {"Y"}, "prod");
      } else {
        mb.node("MatMul", {"A", "B"}, {"Y"}, "prod");
      }
      std::vector<Feeds> feeds;
      for (int64_t m : {1, 5, 600}) feeds.push_back({{"A", random_tensor({m, k}, rng, 1.0f)}});
      const std::string bytes = mb.bytes();
      Session dnn = open(bytes, "onednn");
      Session ref = open(bytes, "reference");
      for (const Feeds& f : feeds) {
        const Outputs got = dnn.run(f), want = ref.run(f);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].shape(), want[0].shape()) << (gemm ? "Gemm" : "MatMul") << k << "x" << n;
        const auto cmp = tools::compare(got[0], want[0], tools::Tolerance{});
        EXPECT_TRUE(cmp.match) << (gemm ? "Gemm " : "MatMul ") << k << "x" << n << ": "
                               << cmp.reason;
      }
    }
  }
}

TEST(OnednnPackedB, AWithTheWrongInnerSizeIsNamed) {
  if (!runnable()) GTEST_SKIP() << "needs the oneDNN provider";
  std::mt19937 rng(14);
  for (const std::string op : {"MatMul", "Gemm"}) {
    ModelBuilder mb(13);
    mb.input("A", DType::kFloat32, {-1, -1}, {"M", "K"});
    mb.initializer("B", random_tensor({K, N}, rng));
    mb.output("Y", DType::kFloat32);
    mb.node(op, {"A", "B"}, {"Y"}, "prod");
    Session s = open(mb.bytes(), "onednn");
    try {
      s.run({{"A", random_tensor({2, K + 1}, rng)}});
      ADD_FAILURE() << op << ": a wrong K ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("prod"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace recur
