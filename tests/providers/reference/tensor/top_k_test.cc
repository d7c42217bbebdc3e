// TopK: ties keep index order, smallest, the opset-1 attribute form, and k out of range.
// Expected values from numpy's stable argsort, and on random rows from a stable sort in the test.
#include <algorithm>
#include <cmath>
#include <random>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

const Tensor kX = Tensor::from_vector<int32_t>({5}, {1, 3, 2, 3, 1});

Outputs top_k(const Tensor& x, int64_t k, int64_t largest, int64_t axis = -1) {
  return OpTester("TopK", 11)
      .input("x", x)
      .input("k", DType::kInt64, {1})
      .attr("largest", largest)
      .attr("axis", axis)
      .output("v")
      .output("i")
      .run({{"x", x}, {"k", Tensor::from_vector<int64_t>({1}, {k})}});
}

TEST(TopK, TiesKeepIndexOrder) {
  // numpy: o = np.argsort(-x, kind='stable')[:3]
  Outputs o = top_k(kX, 3, 1);
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{3, 3, 2}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{1, 3, 2}));
  // numpy: o = np.argsort(x, kind='stable')[:2]
  Outputs s = top_k(kX, 2, 0);
  EXPECT_EQ(values<int32_t>(s[0]), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(values<int64_t>(s[1]), (std::vector<int64_t>{0, 4}));
}

TEST(TopK, AlongTheFirstAxis) {
  const Tensor x = Tensor::from_vector<float>({3, 2}, {4, 1, 2, 5, 4, 0});
  // numpy: o = np.argsort(-x, axis=0, kind='stable')[:2]
  Outputs o = top_k(x, 2, 1, 0);
  EXPECT_EQ(values<float>(o[0]), (std::vector<float>{4, 5, 4, 1}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{0, 1, 2, 0}));
}

TEST(TopK, Opset1AttributeK) {
  Outputs o = OpTester("TopK", 1)
                  .input("x", kX)
                  .attr("k", int64_t{1})
                  .output("v")
                  .output("i")
                  .run({{"x", kX}});
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{3}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{1}));
}

// Random rows with many ties, and a NaN in some, along the last axis and the first: the kernel
// against a stable sort of each row (NaN after every number ascending, before every number
// descending, as numpy orders them), for k from 0 to the whole row.
TEST(TopK, RandomRowsMatchAStableSort) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(0, 9), pick(0, 99);
  for (int64_t axis : {1, 0}) {
    for (int64_t largest : {1, 0}) {
      for (int64_t k : {0, 1, 3, 10, 37, 64}) {
        const int64_t rows = 5, n = 64;
        std::vector<float> v(static_cast<size_t>(rows * n));
        for (size_t i = 0; i < v.size(); ++i) {
          v[i] = static_cast<float>(level(rng)) - 4.5f;
          if (i / n == 3 && pick(rng) < 5) v[i] = std::nanf("");
        }
        // Row r is v[r * n ...]; along axis 0 the tensor is its transpose.
        Tensor x = axis == 1 ? Tensor::from_vector<float>({rows, n}, v)
                             : Tensor::from_vector<float>({n, rows}, [&] {
                                 std::vector<float> t(v.size());
                                 for (int64_t r = 0; r < rows; ++r)
                                   for (int64_t c = 0; c < n; ++c)
                                     t[static_cast<size_t>(c * rows + r)] =
                                         v[static_cast<size_t>(r * n + c)];
                                 return t;
                               }());
        const Outputs o = top_k(x, k, largest, axis);
        const std::vector<float> got_v = values<float>(o[0]);
        const std::vector<int64_t> got_i = values<int64_t>(o[1]);
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<int64_t> order(static_cast<size_t>(n));
          for (int64_t c = 0; c < n; ++c) order[static_cast<size_t>(c)] = c;
          const float* row = v.data() + r * n;
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
            const float x = row[a], y = row[b];
            if (std::isnan(x) || std::isnan(y))
              return largest ? std::isnan(x) && !std::isnan(y) : !std::isnan(x) && std::isnan(y);
            return largest ? x > y : x < y;
          });
          for (int64_t j = 0; j < k; ++j) {
            const auto at = static_cast<size_t>(axis == 1 ? r * k + j : j * rows + r);
            const int64_t want = order[static_cast<size_t>(j)];
            EXPECT_EQ(got_i[at], want) << "axis " << axis << " largest " << largest << " k " << k
                                       << " row " << r << " position " << j;
            const float wv = row[want];
            EXPECT_TRUE(got_v[at] == wv || (std::isnan(got_v[at]) && std::isnan(wv)));
          }
        }
      }
    }
  }
}

TEST(TopK, KOutOfRangeIsAnError) {
  for (int64_t k : {6, -1}) {
    const std::string msg = error_of([&] { top_k(kX, k, 1); });
    EXPECT_NE(msg.find("node 'node' (TopK)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace recur::test
