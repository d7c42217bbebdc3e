// Shape buckets (providers/onednn/common/shape_bucket.h): the rounding, the padded copies, and
// convolutions of every form run through a bucket's primitive at sizes off the buckets,
// against the reference provider, with the runs counted so that a test whose bucket did not
// run fails; which sizes get primitives of their own (ExactPlans).
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <string>
#include <vector>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/common/shape_bucket.h"
#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur::onednn {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

TEST(ShapeBucket, SizesRoundUpByLessThanASixteenth) {
  EXPECT_EQ(bucket_size(0), 0);
  EXPECT_EQ(bucket_size(31), 31);
  EXPECT_EQ(bucket_size(37), 38);
  EXPECT_EQ(bucket_size(100), 100);
  EXPECT_EQ(bucket_size(101), 104);
  EXPECT_EQ(bucket_size(300), 304);
  EXPECT_EQ(bucket_size(1000), 1024);
  for (int64_t n = 32; n < 5000; ++n) {
    const int64_t b = bucket_size(n);
    const int64_t step = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(n))) / 16;
    ASSERT_GE(b, n);
    ASSERT_LT(b - n, step) << n;
    ASSERT_EQ(b % step, 0) << n;
    ASSERT_EQ(bucket_size(b), b) << n;  // a bucket is its own
  }
}

// copy_window against an element-by-element copy: padding (to larger dims) and cutting back
// (to smaller), plain and with 16 floats a position.
TEST(ShapeBucket, CopyWindowKeepsTheSharedRegionAndZerosTheRest) {
  std::mt19937 rng(3);
  struct Case {
    std::vector<int64_t> from, to;
    int64_t inner;
  };
  const Case cases[] = {{{2, 3, 5}, {2, 3, 8}, 1},
                        {{2, 3, 8}, {2, 3, 5}, 1},
                        {{1, 2, 3, 7}, {1, 2, 4, 9}, 16},
                        {{1, 2, 4, 9}, {1, 2, 3, 7}, 16},
                        {{2, 1, 3, 2, 5}, {2, 1, 4, 2, 6}, 1}};
  for (const Case& c : cases) {
    auto count = [&](const std::vector<int64_t>& d) {
      int64_t n = c.inner;
      for (int64_t v : d) n *= v;
      return n;
    };
    std::vector<float> from(static_cast<size_t>(count(c.from)));
    for (float& v : from) v = std::uniform_real_distribution<float>(1.0f, 2.0f)(rng);
    std::vector<float> to(static_cast<size_t>(count(c.to)), -7.0f);
    copy_window(from.data(), c.from, to.data(), c.to, c.inner);
    const size_t rank = c.to.size();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < count(c.to) / c.inner; ++i) {
      bool inside = true;
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) {
        inside = inside && idx[d] < c.from[d];
        src = src * c.from[d] + idx[d];
      }
      for (int64_t k = 0; k < c.inner; ++k) {
        const float want = inside ? from[static_cast<size_t>(src * c.inner + k)] : 0.0f;
        ASSERT_EQ(to[static_cast<size_t>(i * c.inner + k)], want) << "element " << i;
      }
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < c.to[d]) break;
        idx[d] = 0;
      }
    }
  }
}

Session open(const std::string& bytes, const std::string& providers, bool deterministic = false) {
  SessionOptions o;
  o.providers({providers}).threads(2).deterministic(deterministic);
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

struct Form {
  std::string what;
  std::vector<int64_t> x, w;  // X's dims (N and the sizes that vary are symbolic) and W's
  std::vector<int64_t> strides, dilations, pads;
  int64_t group = 1;
  std::string auto_pad;  // empty: NOTSET
  std::string act;       // an activation after the Conv, which fuses into it
  bool pool = false;     // a Conv, Relu, MaxPool, Conv chain: channel-blocked
};

std::string model_of(const Form& f, std::mt19937& rng) {
  ModelBuilder mb(13);
  std::vector<std::string> symbols(f.x.size());
  symbols[0] = "N";
  for (size_t i = 2; i < f.x.size(); ++i) symbols[i] = "S" + std::to_string(i);
  mb.input("X", DType::kFloat32, f.x, symbols);
  mb.initializer("W", random_tensor(Shape(f.w.begin(), f.w.end()), rng, 0.2f));
  mb.initializer("B", random_tensor({f.w[0]}, rng));
  mb.output("Y", DType::kFloat32);
  const std::string conv_out = f.act.empty() && !f.pool ? "Y" : "C";
  auto& n = mb.node("Conv", {"X", "W", "B"}, {conv_out}, "conv");
  if (!f.strides.empty()) set_attr(n, "strides", f.strides);
  if (!f.dilations.empty()) set_attr(n, "dilations", f.dilations);
  if (!f.pads.empty()) set_attr(n, "pads", f.pads);
  if (f.group != 1) set_attr(n, "group", f.group);
  if (!f.auto_pad.empty()) set_attr(n, "auto_pad", f.auto_pad);
  if (f.pool) {
    mb.node("Relu", {"C"}, {"R"});
    auto& p = mb.node("MaxPool", {"R"}, {"P"});
    set_attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
    set_attr(p, "strides", std::vector<int64_t>{2, 2});
    mb.initializer("W2", random_tensor({16, f.w[0], 3, 3}, rng, 0.2f));
    auto& c2 = mb.node("Conv", {"P", "W2"}, {"Y"}, "conv2");
    set_attr(c2, "pads", std::vector<int64_t>{1, 1, 1, 1});
  } else if (!f.act.empty()) {
    mb.node(f.act, {"C"}, {"Y"});
  }
  return mb.bytes();
}

// Every form at sizes off their buckets, batch 1 and 2: past the first sizes (ExactPlans,
// prim_cache.h, which have primitives of their own) onednn runs through the buckets and
// matches the reference.
TEST(ShapeBucket, ConvolutionsOffTheBucketsMatchTheReference) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(29);
  const Form forms[] = {
      // 1-D ones above recur's own loops' size (4M multiply-adds).
      {"1-D", {-1, 256, -1}, {192, 256, 5}, {}, {}, {2, 2}},
      {"1-D strided, dilated", {-1, 384, -1}, {384, 384, 3}, {2}, {2}, {1, 3}},
      {"1-D grouped", {-1, 512, -1}, {512, 128, 3}, {}, {}, {1, 1}, 4},
      {"2-D", {-1, 32, -1, -1}, {48, 32, 3, 3}, {}, {}, {1, 1, 1, 1}, 1, "", "Relu"},
      {"2-D asymmetric pads", {-1, 16, 9, -1}, {32, 16, 3, 5}, {1, 2}, {}, {0, 2, 1, 1}},
      {"2-D Winograd", {-1, 64, 8, -1}, {64, 64, 3, 3}, {}, {}, {1, 1, 1, 1}},
      {"2-D valid", {-1, 16, 6, -1}, {32, 16, 3, 3}, {}, {}, {}, 1, "VALID", "Sigmoid"},
      {"2-D SAME (exact plans)", {-1, 16, 6, -1}, {32, 16, 3, 3}, {2, 2}, {}, {}, 1, "SAME_UPPER"},
      {"3-D", {-1, 8, 4, 5, -1}, {16, 8, 3, 3, 3}, {}, {}, {1, 1, 1, 1, 1, 1}},
      {"blocked chain", {-1, 3, 16, -1}, {32, 3, 3, 3}, {}, {}, {1, 1, 1, 1}, 1, "", "", true},
  };
  // Five sizes of their own (37 and 41 come back), then seven through buckets.
  const int64_t lengths[] = {37, 51, 41, 45, 57, 37, 41, 75, 133, 99, 67, 37, 203};
  for (const Form& f : forms) {
    const std::string bytes = model_of(f, rng);
    Session dnn = open(bytes, "onednn");
    for (const auto& a : dnn.assignment()) ASSERT_EQ(a.provider, "onednn") << f.what;
    const Session ref = open(bytes, "reference");
    const int64_t before = shared_plan_runs();
    int k = 0;
    for (const int64_t L : lengths) {
      Shape shape(f.x.begin(), f.x.end());
      shape[0] = 1 + k++ % 2;
      for (size_t i = 2; i < shape.size(); ++i) {
        if (shape[i] < 0) shape[i] = i + 1 == shape.size() ? L : L / 2;
      }
      const Tensor x = random_tensor(shape, rng, 1.0f);
      const auto cmp =
          tools::compare(dnn.run({{"X", x}})[0], ref.run({{"X", x}})[0], tools::Tolerance{});
      EXPECT_TRUE(cmp.match) << f.what << " " << shape_to_string(shape) << ": " << cmp.reason;
    }
    if (f.auto_pad.rfind("SAME", 0) == 0) {
      EXPECT_EQ(shared_plan_runs(), before) << f.what;
    } else {
      EXPECT_GE(shared_plan_runs() - before, 3) << f.what << ": the sizes off a bucket ran in one";
    }
  }
}

// The first ExactPlans::kExactShapes sizes get primitives of their own; a later one runs in
// its bucket until it has come kPromoteRuns times, then on its own. Deterministic sessions and
// an input whose shape is static never share a bucket.
TEST(ShapeBucket, ASizeThatComesBackGetsItsOwnPlan) {
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
  std::mt19937 rng(31);
  const Form dynamic{"1-D", {-1, 256, -1}, {256, 256, 3}, {}, {}, {1, 1}};
  Form fixed = dynamic;
  fixed.x = {1, 256, 45};
  const std::string dyn_bytes = model_of(dynamic, rng), fixed_bytes = model_of(fixed, rng);
  constexpr int64_t kFirst = ExactPlans<int>::kExactShapes,
                    kPromote = ExactPlans<int>::kPromoteRuns;
  struct Case {
    const std::string* bytes;
    bool deterministic;
    int64_t want;  // of the runs at 45 after the first sizes, those in the bucket
  };
  for (const Case& c : {Case{&dyn_bytes, false, kPromote - 1}, Case{&dyn_bytes, true, 0},
                        Case{&fixed_bytes, false, 0}}) {
    Session dnn = open(*c.bytes, "onednn", c.deterministic);
    const Session ref = open(*c.bytes, "reference");
    if (c.bytes == &dyn_bytes) {
      for (int64_t i = 0; i < kFirst; ++i)  // 33, 35, 37, 39: sizes off their buckets
        dnn.run({{"X", random_tensor({1, 256, 33 + 2 * i}, rng, 1.0f)}});
    }
    const Tensor x = random_tensor({1, 256, 45}, rng, 1.0f);
    const Tensor want = ref.run({{"X", x}})[0];
    const int64_t before = shared_plan_runs();
    for (int64_t i = 0; i < kPromote + 3; ++i) {
      const auto cmp = tools::compare(dnn.run({{"X", x}})[0], want, tools::Tolerance{});
      EXPECT_TRUE(cmp.match) << "run " << i << ": " << cmp.reason;
    }
    EXPECT_EQ(shared_plan_runs() - before, c.want) << (c.deterministic ? "deterministic" : "");
  }
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
