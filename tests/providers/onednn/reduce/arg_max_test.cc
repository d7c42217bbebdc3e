// The oneDNN provider's ArgMax and ArgMin (AVX-512, last axis) against the reference provider:
// rows shorter and longer than a vector, ties (first and, with select_last_index, last),
// infinities, signed zeros, NaN anywhere in a row, keepdims, ranks 1 to 3; another axis stays
// with the reference, and says why.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::set_attr;

std::string arg_model(const char* op, const Shape& shape, int64_t axis, int64_t keepdims,
                      int64_t last) {
  ModelBuilder mb(13);
  mb.input("X", DType::kFloat32, shape);
  mb.output("Y", DType::kInt64);
  onnx::NodeProto& n = mb.node(op, {"X"}, {"Y"}, "arg");
  set_attr(n, "axis", axis);
  set_attr(n, "keepdims", keepdims);
  set_attr(n, "select_last_index", last);
  return mb.bytes();
}

Session open(const std::string& bytes, std::vector<std::string> providers) {
  return Session::from_bytes(bytes.data(), bytes.size(),
                             SessionOptions().providers(std::move(providers)));
}

TEST(OnednnArgMax, MatchesTheReference) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  std::mt19937 rng(31);
  bool claimed = false;
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (const Shape& shape : {Shape{1}, Shape{7}, Shape{16}, Shape{33}, Shape{6, 17},
                               Shape{4, 3, 100}, Shape{2, 1000}}) {
      for (int64_t keepdims : {0, 1}) {
        for (int64_t last : {0, 1}) {
          const auto axis = static_cast<int64_t>(shape.size()) - 1;
          for (int64_t a : {axis, int64_t{-1}}) {
            const std::string bytes = arg_model(op, shape, a, keepdims, last);
            const std::string what = std::string(op) + " " + shape_to_string(shape) + " axis " +
                                     std::to_string(a) + " keepdims " + std::to_string(keepdims) +
                                     " last " + std::to_string(last);
            Session dnn = open(bytes, {"onednn", "reference"});
            claimed |= dnn.assignment().front().provider == "onednn";
            Session ref = open(bytes, {"reference"});
            for (int rep = 0; rep < 3; ++rep) {
              const Feeds feeds = {{"X", testing::tricky_floats(shape, rng)}};
              const Tensor got = dnn.run(feeds)[0], want = ref.run(feeds)[0];
              ASSERT_EQ(got.shape(), want.shape()) << what;
              for (int64_t i = 0; i < got.numel(); ++i) {
                ASSERT_EQ(got.data<int64_t>()[i], want.data<int64_t>()[i]) << what << " at " << i;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_TRUE(claimed) << "no case ran on oneDNN (no AVX-512 here?)";
}

TEST(OnednnArgMax, OtherAxesStayWithTheReference) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string bytes = arg_model("ArgMax", {4, 5}, 0, 1, 0);
  Session s = open(bytes, {"onednn", "reference"});
  EXPECT_EQ(s.assignment().front().provider, "reference");
  const std::string e = s.explain();
  EXPECT_TRUE(e.find("the last axis only") != std::string::npos ||
              e.find("AVX-512") != std::string::npos)
      << e;
}

}  // namespace
}  // namespace recur
