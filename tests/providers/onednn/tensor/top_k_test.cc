// The oneDNN provider's TopK (AVX-512, float32, last axis) against the reference provider:
// values and indices for k from 0 to the whole row, rows shorter and longer than a vector,
// largest and smallest, ties (equal values by index), infinities, zeros of both signs, NaN in
// a row (above every number), k as an attribute (opset 1) and as an input (10, 11); another
// axis stays with the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"
#include "tests/support/providers.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::set_attr;

std::string top_k_model(int opset, const Shape& shape, int64_t k, int64_t axis, int64_t largest) {
  ModelBuilder mb(opset);
  mb.input("X", DType::kFloat32, shape);
  mb.output("V", DType::kFloat32);
  mb.output("I", DType::kInt64);
  std::vector<std::string> ins = {"X"};
  if (opset >= 10) {
    mb.initializer("K", Tensor::from_vector<int64_t>({1}, {k}));
    ins.push_back("K");
  }
  onnx::NodeProto& n = mb.node("TopK", ins, {"V", "I"}, "topk");
  if (opset < 10) set_attr(n, "k", k);
  set_attr(n, "axis", axis);
  if (opset >= 11) set_attr(n, "largest", largest);
  return mb.bytes();
}

Session open(const std::string& bytes, std::vector<std::string> providers) {
  return Session::from_bytes(bytes.data(), bytes.size(),
                             SessionOptions().providers(std::move(providers)));
}

TEST(OnednnTopK, MatchesTheReference) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  std::mt19937 rng(61);
  for (int opset : {1, 10, 11}) {
    for (const Shape& shape : {Shape{1}, Shape{7}, Shape{16}, Shape{40}, Shape{5, 37},
                               Shape{2, 3, 300}, Shape{3, 2000}}) {
      const int64_t n = shape.back();
      for (int64_t k :
           {int64_t{0}, int64_t{1}, std::min<int64_t>(n, 3), std::min<int64_t>(n, 17), n}) {
        for (int64_t largest : {1, 0}) {
          if (opset < 11 && largest == 0) continue;
          const std::string bytes = top_k_model(opset, shape, k, -1, largest);
          const std::string what = "opset " + std::to_string(opset) + " " + shape_to_string(shape) +
                                   " k " + std::to_string(k) + " largest " +
                                   std::to_string(largest);
          Session dnn = open(bytes, {"onednn", "reference"});
          ASSERT_EQ(dnn.assignment().front().provider, "onednn") << what;
          Session ref = open(bytes, {"reference"});
          for (int rep = 0; rep < 2; ++rep) {
            const Feeds feeds = {{"X", testing::tricky_floats(shape, rng)}};
            const Outputs got = dnn.run(feeds), want = ref.run(feeds);
            // Exactly the same elements in the same order: indices equal, values bit for bit
            // (NaN equal to NaN).
            EXPECT_TRUE(test::compare_tensors(got[1], want[1], 0).empty()) << what;
            EXPECT_TRUE(test::compare_tensors(got[0], want[0], 0).empty())
                << what << ": " << test::compare_tensors(got[0], want[0], 0);
          }
        }
      }
    }
  }
}

TEST(OnednnTopK, AnotherAxisStaysWithTheReference) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  Session s = open(top_k_model(11, {4, 6}, 2, 0, 1), {"onednn", "reference"});
  EXPECT_EQ(s.assignment().front().provider, "reference");
  EXPECT_NE(s.explain().find("last axis only"), std::string::npos) << s.explain();
}

TEST(OnednnTopK, KBeyondTheAxisIsAnError) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  ModelBuilder mb(11);
  mb.input("X", DType::kFloat32, {2, 5});
  mb.input("K", DType::kInt64, {1});
  mb.output("V", DType::kFloat32);
  mb.output("I", DType::kInt64);
  mb.node("TopK", {"X", "K"}, {"V", "I"}, "topk");
  const std::string bytes = mb.bytes();
  Session s = open(bytes, {"onednn", "reference"});
  ASSERT_EQ(s.assignment().front().provider, "onednn");
  std::mt19937 rng(3);
  const Feeds feeds = {{"X", testing::tricky_floats({2, 5}, rng)},
                       {"K", Tensor::from_vector<int64_t>({1}, {6})}};
  try {
    s.run(feeds);
    FAIL() << "k = 6 on an axis of 5 ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("topk"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace recur
