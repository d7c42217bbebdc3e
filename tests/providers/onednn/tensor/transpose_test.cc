// The oneDNN provider's Transpose (tensor/transpose.cc: float32 permutations that swap two groups
// of axes) against the expected element positions computed here and against the reference
// provider: NCHW <-> NHWC, a spectrogram to time-major, batch-first <-> time-major with rows of
// several values, a bidirectional Y to [T, B, 2, H], the default (reversed) permutation,
// negative axes, tiles that end inside a vector, sizes past the threads' bound, axes of size 1
// moving (a view); permutations of another kind, and other dtypes, stay with the reference.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

std::string transpose_model(const Shape& shape, const std::vector<int64_t>& perm,
                            DType dt = DType::kFloat32) {
  ModelBuilder mb(13);
  mb.input("X", dt, shape);
  mb.output("Y", dt);
  onnx::NodeProto& n = mb.node("Transpose", {"X"}, {"Y"}, "t");
  if (!perm.empty()) set_attr(n, "perm", perm);
  return mb.bytes();
}

std::string perm_string(const std::vector<int64_t>& perm) {
  std::string s = "[";
  for (int64_t a : perm) s += (s.size() > 1 ? "," : "") + std::to_string(a);
  return s + "]";
}

Session open(const std::string& bytes, const std::string& provider) {
  return Session::from_bytes(bytes.data(), bytes.size(),
                             SessionOptions().providers({provider, "reference"}).threads(2));
}

std::string provider_of(const Session& s) {
  for (const auto& a : s.assignment())
    if (a.op == "Transpose") return a.provider;
  return "";
}

// y[i] = x[j] where output index i has, along output axis k, the coordinate input axis perm[k]
// has at j.
Tensor expected(const Tensor& x, const std::vector<int64_t>& perm) {
  const int64_t r = x.rank();
  Shape out(static_cast<size_t>(r));
  for (int64_t k = 0; k < r; ++k) out[static_cast<size_t>(k)] = x.dim(perm[static_cast<size_t>(k)]);
  Tensor y = Tensor::empty(DType::kFloat32, out);
  std::vector<int64_t> stride(static_cast<size_t>(r), 1);
  for (int64_t a = r - 2; a >= 0; --a)
    stride[static_cast<size_t>(a)] = stride[static_cast<size_t>(a + 1)] * x.dim(a + 1);
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rest = i, j = 0;
    for (int64_t k = r - 1; k >= 0; --k) {
      const int64_t c = rest % out[static_cast<size_t>(k)];
      rest /= out[static_cast<size_t>(k)];
      j += c * stride[static_cast<size_t>(perm[static_cast<size_t>(k)])];
    }
    y.data<float>()[i] = x.data<float>()[j];
  }
  return y;
}

TEST(OnednnTranspose, SwapsOfTwoGroupsMatchTheElementPositions) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "needs the oneDNN provider";
  std::mt19937 rng(21);
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;  // empty: the default, reversed
  };
  const Case cases[] = {
      {{2, 32, 7, 9}, {0, 2, 3, 1}},    // NCHW -> NHWC
      {{2, 7, 9, 33}, {0, 3, 1, 2}},    // NHWC -> NCHW
      {{3, 5, 7, 21}, {3, 0, 1, 2}},    // spectrogram to time-major
      {{4, 17, 40}, {1, 0, 2}},         // batch-first -> time-major, rows of 40
      {{9, 2, 3, 20}, {0, 2, 1, 3}},    // bidirectional Y [T, 2, B, H] -> [T, B, 2, H]
      {{19, 37}, {}},                   // reversed
      {{5, 6, 7}, {-1, 0, 1}},          // negative axes
      {{2, 3, 4, 5}, {2, 0, 1, 3}},     // [0, 1] and [2] swap, [3] trails
      {{1, 30, 1, 50}, {0, 3, 2, 1}},   // size-1 axes among the moved ones
      {{5, 1, 8}, {1, 0, 2}},           // only a size-1 axis moves: a view
      {{2, 96, 64, 90}, {0, 2, 3, 1}},  // past the threads' bound
      {{64, 90, 2, 50}, {1, 0, 2, 3}},  // rows, past the threads' bound
      // Short rows in tiles of 16 values of the moved axis: r off the tiles, rows of a vector,
      // of one lane past two, at and past the vector path's bound.
      {{2, 37, 11, 19}, {0, 2, 1, 3}},
      {{3, 20, 5, 16}, {0, 2, 1, 3}},
      {{2, 18, 3, 33}, {0, 2, 1, 3}},
      {{2, 5, 3, 127}, {0, 2, 1, 3}},
      {{2, 5, 3, 128}, {0, 2, 1, 3}},
      {{2, 256, 99, 19}, {0, 2, 1, 3}}};  // a Conformer's [B, C, T, F] -> [B, T, C, F], threads
  for (const Case& c : cases) {
    std::vector<int64_t> perm = c.perm;
    const int64_t r = static_cast<int64_t>(c.shape.size());
    if (perm.empty()) {
      for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
    }
    for (int64_t& a : perm) a = a < 0 ? a + r : a;
    const std::string what = shape_to_string(c.shape) + " perm " + perm_string(c.perm);
    const std::string bytes = transpose_model(c.shape, c.perm);
    Session s = open(bytes, "onednn");
    EXPECT_EQ(provider_of(s), "onednn") << what;
    const Tensor x = random_tensor(c.shape, rng, 1.0f);
    const Tensor got = s.run({{"X", x}})[0];
    const Tensor want = expected(x, perm);
    ASSERT_EQ(got.shape(), want.shape()) << what;
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << what << " at " << i;
  }
}

TEST(OnednnTranspose, OtherPermutationsAndDtypesStayWithTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "needs the oneDNN provider";
  // Four groups all moving, and a swap with a group between.
  for (const std::vector<int64_t>& perm :
       {std::vector<int64_t>{1, 3, 0, 2}, std::vector<int64_t>{2, 1, 0}}) {
    const Shape shape = perm.size() == 4 ? Shape{2, 3, 4, 5} : Shape{2, 3, 4};
    Session s = open(transpose_model(shape, perm), "onednn");
    EXPECT_EQ(provider_of(s), "reference") << perm_string(perm);
    std::mt19937 rng(3);
    const Tensor x = random_tensor(shape, rng, 1.0f);
    const Tensor got = s.run({{"X", x}})[0];
    const Tensor want = expected(x, perm);
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << i;
  }
  Session ints = open(transpose_model({4, 5}, {1, 0}, DType::kInt64), "onednn");
  EXPECT_EQ(provider_of(ints), "reference");
}

}  // namespace
}  // namespace recur
