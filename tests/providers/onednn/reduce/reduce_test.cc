// The oneDNN provider's ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceLogSumExp
// (AVX-512, float32, one block of axes) against the reference provider, which sums in double:
// the last axes and middle blocks, every axis, negative axes, keepdims, axes as an attribute
// (opset 11) and as a constant input (ReduceSum from 13, all from 18), rows shorter and longer
// than a vector, axes of size 1, empty reduced axes (0, NaN, -inf and +inf), NaN and infinities
// (a NaN anywhere in a maximum's or minimum's values is the result; an infinite or NaN maximum
// is log-sum-exp's); axes that are not one block or not constants, and noop_with_empty_axes,
// stay with the reference.
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

struct ReduceCase {
  const char* op;
  int opset;
  Shape shape;
  std::vector<int64_t> axes;  // empty: none given
  int64_t keepdims = 1;
  bool axes_as_graph_input = false;  // axes read at run time
  int64_t noop = 0;
};

bool axes_from_input(const ReduceCase& c) {
  return c.opset >= 18 || (std::string(c.op) == "ReduceSum" && c.opset >= 13);
}

std::string reduce_model(const ReduceCase& c) {
  ModelBuilder mb(c.opset);
  mb.input("X", DType::kFloat32, c.shape);
  mb.output("Y", DType::kFloat32);
  std::vector<std::string> ins = {"X"};
  if (axes_from_input(c) && !c.axes.empty()) {
    const Tensor axes = Tensor::from_vector<int64_t>({static_cast<int64_t>(c.axes.size())}, c.axes);
    if (c.axes_as_graph_input) {
      mb.input("axes", DType::kInt64, {static_cast<int64_t>(c.axes.size())});
    } else {
      mb.initializer("axes", axes);
    }
    ins.push_back("axes");
  }
  onnx::NodeProto& n = mb.node(c.op, ins, {"Y"}, "reduce");
  if (!axes_from_input(c) && !c.axes.empty()) set_attr(n, "axes", c.axes);
  set_attr(n, "keepdims", c.keepdims);
  if (c.noop) set_attr(n, "noop_with_empty_axes", c.noop);
  return mb.bytes();
}

Session open(const std::string& bytes, std::vector<std::string> providers) {
  return Session::from_bytes(bytes.data(), bytes.size(),
                             SessionOptions().providers(std::move(providers)));
}

// Normal values, with (where asked) a NaN and infinities of both signs in a few places.
Tensor values(const Shape& shape, std::mt19937& rng, bool specials) {
  Tensor t = testing::random_tensor(shape, rng, 1.0f);
  if (specials && t.numel() > 8) {
    float* p = t.data<float>();
    p[1] = std::numeric_limits<float>::infinity();
    p[t.numel() / 2] = -std::numeric_limits<float>::infinity();
    p[t.numel() - 2] = std::nanf("");
  }
  return t;
}

TEST(OnednnReduce, MatchesTheReference) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  std::mt19937 rng(47);
  const std::vector<ReduceCase> cases = {
      {"ReduceMean", 11, {1, 512, 300}, {-1}},
      {"ReduceMean", 11, {3, 7}, {1}, 0},
      {"ReduceSum", 11, {4, 5, 6}, {1, 2}, 0},
      {"ReduceSum", 13, {8, 33, 20}, {1}},
      {"ReduceSum", 13, {2, 3, 17}, {}},  // every axis
      {"ReduceMean", 11, {2, 3, 17}, {}, 0},
      {"ReduceMean", 18, {6, 40, 3, 5}, {1, 2}},
      {"ReduceSum", 18, {5, 1000}, {-1}, 0},
      {"ReduceMean", 18, {9, 4, 100}, {0}},
      {"ReduceSum", 13, {2, 0, 5}, {1}},   // empty sums: 0
      {"ReduceMean", 11, {2, 0, 5}, {1}},  // empty means: NaN
      {"ReduceSum", 13, {3, 16}, {-2, -1}, 0},
      // Rows of at most one vector: the short-row loop (an OCR line's height of 2, 16 exactly).
      {"ReduceMean", 13, {1, 32, 256, 2}, {3}, 0},
      {"ReduceSum", 13, {40, 16}, {-1}},
      {"ReduceSum", 13, {5, 1}, {1}},
      // Axes of size 1: each value itself (a CRNN's height of 1; a middle axis).
      {"ReduceMean", 13, {8, 50, 256, 1}, {3}, 0},
      {"ReduceMean", 11, {4, 3, 1, 20}, {2}},
      // Maxima and minima (a max pool over time, [N, T, C] along T; a row's largest score).
      {"ReduceMax", 11, {1, 512, 300}, {-1}},
      {"ReduceMin", 18, {5, 1000}, {-1}, 0},
      {"ReduceMax", 18, {8, 100, 256}, {1}},
      {"ReduceMin", 11, {6, 40, 3, 5}, {1, 2}},
      {"ReduceMax", 13, {2, 3, 17}, {}, 0},  // every axis
      {"ReduceMax", 18, {40, 16}, {-1}},     // rows of one vector
      {"ReduceMin", 13, {1, 32, 256, 2}, {3}, 0},
      {"ReduceMax", 18, {8, 50, 256, 1}, {3}, 0},  // an axis of size 1
      {"ReduceMax", 18, {2, 0, 5}, {1}},           // empty: -inf
      {"ReduceMin", 11, {2, 0, 5}, {1}},           // empty: +inf
      // Log-sum-exp: rows longer and shorter than a vector, a middle block past the 256 columns
      // the stack buffer takes, every axis, an axis of size 1, empty axes (-inf).
      {"ReduceLogSumExp", 18, {5, 1000}, {-1}, 0},
      {"ReduceLogSumExp", 11, {40, 7}, {1}},
      {"ReduceLogSumExp", 18, {8, 100, 64}, {1}},
      {"ReduceLogSumExp", 13, {2, 30, 300}, {1}, 0},
      {"ReduceLogSumExp", 11, {3, 4, 5}, {}},
      {"ReduceLogSumExp", 18, {6, 1, 9}, {1}},
      {"ReduceLogSumExp", 18, {2, 0, 5}, {1}},
  };
  for (const ReduceCase& c : cases) {
    const std::string bytes = reduce_model(c);
    Session dnn = open(bytes, {"onednn", "reference"});
    Session ref = open(bytes, {"reference"});
    const std::string what = std::string(c.op) + "-" + std::to_string(c.opset) + " " +
                             shape_to_string(c.shape) + " keepdims " + std::to_string(c.keepdims);
    EXPECT_EQ(dnn.assignment().front().provider, "onednn") << what;
    for (bool specials : {false, true}) {
      const Feeds feeds = {{"X", values(c.shape, rng, specials)}};
      const Tensor got = dnn.run(feeds)[0], want = ref.run(feeds)[0];
      ASSERT_EQ(got.shape(), want.shape()) << what;
      // float32 sums against double ones: within a few roundings per term.
      const std::string diff = test::compare_tensors(got, want, 1e-4);
      EXPECT_TRUE(diff.empty()) << what << (specials ? " with NaN and infinities" : "") << ": "
                                << diff;
    }
  }
}

// A NaN at a row's start, inside the loop of four vectors, in its tail, and in a middle block's
// first, inner and last rows: the maximum and minimum are NaN there, as in the reference.
TEST(OnednnReduce, MaxAndMinTakeANaNWhereverItIs) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  std::mt19937 rng(9);
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{-1}, std::vector<int64_t>{1}}) {
      const ReduceCase c{op, 18, {4, 100, 20}, axes};
      const std::string bytes = reduce_model(c);
      Session dnn = open(bytes, {"onednn", "reference"});
      ASSERT_EQ(dnn.assignment().front().provider, "onednn");
      Tensor x = values(c.shape, rng, false);
      float* p = x.data<float>();
      const float nan = std::nanf("");
      if (axes[0] == -1) {  // rows of 20: at 0, 7 and 19 of three rows
        p[0] = nan;
        p[20 + 7] = nan;
        p[40 + 19] = nan;
      } else {  // along 100 rows of 20 columns: in rows 0, 50 and 99
        p[3] = nan;
        p[2000 + 50 * 20 + 11] = nan;
        p[4000 + 99 * 20 + 19] = nan;
      }
      const Tensor got = dnn.run({{"X", x}})[0],
                   want = open(bytes, {"reference"}).run({{"X", x}})[0];
      const std::string diff = test::compare_tensors(got, want, 0);
      EXPECT_TRUE(diff.empty()) << op << " along " << axes[0] << ": " << diff;
    }
  }
}

TEST(OnednnReduce, WhatItDeclinesStaysWithTheReference) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  struct Declined {
    ReduceCase c;
    const char* why;
  };
  const std::vector<Declined> cases = {
      {{"ReduceSum", 11, {2, 3, 4}, {0, 2}}, "one block"},
      {{"ReduceSum", 13, {2, 3, 4}, {1}, 1, true}, "not a constant"},
      {{"ReduceMean", 18, {2, 3, 4}, {}, 1, false, 1}, "noop_with_empty_axes"},
  };
  std::mt19937 rng(5);
  for (const Declined& d : cases) {
    const std::string bytes = reduce_model(d.c);
    Session dnn = open(bytes, {"onednn", "reference"});
    EXPECT_EQ(dnn.assignment().front().provider, "reference") << d.why;
    EXPECT_NE(dnn.explain().find(d.why), std::string::npos) << dnn.explain();
    Feeds feeds = {{"X", values(d.c.shape, rng, false)}};
    if (d.c.axes_as_graph_input) {
      feeds.push_back({"axes", Tensor::from_vector<int64_t>({1}, d.c.axes)});
    }
    Session ref = open(bytes, {"reference"});
    EXPECT_TRUE(test::compare_tensors(dnn.run(feeds)[0], ref.run(feeds)[0], 0).empty());
  }
}

}  // namespace
}  // namespace recur
