// The oneDNN provider's Add, Sub, Mul and Div of float32 (math/binary.cc) against the same IEEE
// operation computed here on numpy's broadcast: equal shapes, a scalar, a per-channel [1, C, 1,
// 1], [N, 1, M] against [N, T, M], an outer [N, 1] by [1, M], ranks that differ, sizes past the
// threads' bound, NaN, infinities and division by zero; shapes that do not broadcast are an
// error naming both; int64 stays with the reference provider; intermediates written over. On
// AVX-512 the loops of avx512.h run, elsewhere plain loops: both are checked where they run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;

std::string binary_model(const std::string& op, const Shape& a, const Shape& b,
                         DType dt = DType::kFloat32) {
  ModelBuilder mb(14);
  mb.input("A", dt, a);
  mb.input("B", dt, b);
  mb.output("Y", dt);
  mb.node(op, {"A", "B"}, {"Y"}, "op");
  return mb.bytes();
}

Session open(const std::string& bytes) {
  return Session::from_bytes(bytes.data(), bytes.size(),
                             SessionOptions().providers({"onednn", "reference"}).threads(2));
}

float apply(const std::string& op, float a, float b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  return a / b;
}

// The element of `t` (rank r after left-padding with ones) at output index `idx`, broadcast.
float at(const Tensor& t, const Shape& out, int64_t idx) {
  const int64_t r = static_cast<int64_t>(out.size()), tr = t.rank();
  int64_t offset = 0, stride = 1;
  for (int64_t k = 0; k < r; ++k) {
    const int64_t d = r - 1 - k;
    const int64_t c = idx % out[static_cast<size_t>(d)];
    idx /= out[static_cast<size_t>(d)];
    if (k < tr) {
      const int64_t size = t.dim(tr - 1 - k);
      offset += (size == 1 ? 0 : c) * stride;
      stride *= size;
    }
  }
  return t.data<float>()[offset];
}

TEST(OnednnBinary, BroadcastsMatchTheOperationElementByElement) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(5);
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {{{3, 37}, {3, 37}, {3, 37}},
                        {{2, 5, 7}, {}, {2, 5, 7}},
                        {{2, 6, 5, 9}, {1, 6, 1, 1}, {2, 6, 5, 9}},
                        {{4, 33, 20}, {4, 1, 20}, {4, 33, 20}},
                        {{7, 1}, {1, 19}, {7, 19}},
                        {{19}, {3, 4, 19}, {3, 4, 19}},
                        {{1}, {5, 1, 3}, {5, 1, 3}},
                        {{8, 200, 130}, {8, 1, 130}, {8, 200, 130}},  // past the bound
                        {{2, 64, 41, 50}, {1, 64, 1, 1}, {2, 64, 41, 50}}};
  for (const std::string op : {"Add", "Sub", "Mul", "Div"}) {
    for (const Case& c : cases) {
      const std::string what = op + " " + shape_to_string(c.a) + " " + shape_to_string(c.b);
      Session s = open(binary_model(op, c.a, c.b));
      for (const auto& as : s.assignment()) EXPECT_EQ(as.provider, "onednn") << what;
      Tensor a = random_tensor(c.a, rng, 2.0f), b = random_tensor(c.b, rng, 2.0f);
      // NaN, infinities and zeros (a division by zero) among the values.
      const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(), 0.0f};
      for (int64_t i = 3, k = 0; i < a.numel(); i += 29, ++k) a.data<float>()[i] = specials[k % 4];
      if (b.numel() > 2) b.data<float>()[1] = 0.0f;
      const Tensor y = s.run({{"A", a}, {"B", b}})[0];
      ASSERT_EQ(y.shape(), c.out) << what;
      for (int64_t i = 0; i < y.numel(); ++i) {
        const float want = apply(op, at(a, c.out, i), at(b, c.out, i));
        const float got = y.data<float>()[i];
        ASSERT_TRUE(std::memcmp(&got, &want, 4) == 0 || (std::isnan(got) && std::isnan(want)))
            << what << " at " << i << ": " << got << ", want " << want;
      }
    }
  }
}

TEST(OnednnBinary, ShapesThatDoNotBroadcastAreAnErrorNamingBoth) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  // Dynamic shapes, so that the load cannot tell.
  ModelBuilder mb(14);
  mb.input("A", DType::kFloat32, {-1, 3}, {"n"});
  mb.input("B", DType::kFloat32, {-1, 3}, {"m"});
  mb.output("Y", DType::kFloat32);
  mb.node("Mul", {"A", "B"}, {"Y"}, "op");
  const std::string bytes = mb.bytes();
  Session s = open(bytes);
  std::mt19937 rng(1);
  testing::expect_error(
      [&] {
        s.run({{"A", random_tensor({4, 3}, rng)}, {"B", random_tensor({2, 3}, rng)}});
      },
      ErrorCode::kInvalidArgument, {"op", "[4,3]", "[2,3]"});
}

// Intermediates, which a node may write over where it reads them last
// (Kernel::overwritable_inputs): T1 = A + A2; T2 = C * T1 (over T1's memory would corrupt the
// final Add, which reads T1 again); T3 = T2 - C (over T2: its A); T4 = C / T3 (over T3: its B,
// C broadcast); Y = T4 + T1 (over either). With static and with symbolic shapes (the arena, or
// the run's cached blocks), at sizes under and past the threads' bound, twice each.
TEST(OnednnBinary, IntermediatesWrittenOverMatchTheOperationsElementByElement) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(9);
  for (const Shape& shape : {Shape{2, 6, 5, 9}, Shape{4, 64, 41, 50}}) {
    for (bool symbolic : {false, true}) {
      ModelBuilder mb(14);
      const std::vector<int64_t> dims(shape.begin(), shape.end());
      const std::vector<std::string> names{"n", "c", "h", "w"};
      mb.input("A", DType::kFloat32, symbolic ? std::vector<int64_t>(4, -1) : dims,
               symbolic ? names : std::vector<std::string>{});
      mb.input("A2", DType::kFloat32, symbolic ? std::vector<int64_t>(4, -1) : dims,
               symbolic ? names : std::vector<std::string>{});
      mb.input("C", DType::kFloat32, {1, shape[1], 1, 1});
      mb.output("Y", DType::kFloat32);
      mb.node("Add", {"A", "A2"}, {"T1"});
      mb.node("Mul", {"C", "T1"}, {"T2"});
      mb.node("Sub", {"T2", "C"}, {"T3"});
      mb.node("Div", {"C", "T3"}, {"T4"});
      mb.node("Add", {"T4", "T1"}, {"Y"});
      Session s = open(mb.bytes());
      for (const auto& as : s.assignment()) EXPECT_EQ(as.provider, "onednn");
      const Tensor c = random_tensor({1, shape[1], 1, 1}, rng, 2.0f);
      for (int run = 0; run < 2; ++run) {
        const Tensor a = random_tensor(shape, rng, 2.0f), a2 = random_tensor(shape, rng, 2.0f);
        const Tensor y = s.run({{"A", a}, {"A2", a2}, {"C", c}})[0];
        ASSERT_EQ(y.shape(), shape);
        for (int64_t i = 0; i < y.numel(); ++i) {
          const float ci = at(c, shape, i);
          const float t1 = a.data<float>()[i] + a2.data<float>()[i];
          const float want = ci / (ci * t1 - ci) + t1;
          const float got = y.data<float>()[i];
          ASSERT_TRUE(std::memcmp(&got, &want, 4) == 0 || (std::isnan(got) && std::isnan(want)))
              << shape_to_string(shape) << (symbolic ? " symbolic" : " static") << " run " << run
              << " at " << i << ": " << got << ", want " << want;
        }
      }
    }
  }
}

TEST(OnednnBinary, Int64StaysWithTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  Session s = open(binary_model("Add", {4}, {4}, DType::kInt64));
  for (const auto& as : s.assignment()) EXPECT_EQ(as.provider, "reference");
}

}  // namespace
}  // namespace recur
