// BatchNormalization folded into the MatMul before it (runtime/engine/optimize/optimizer.h,
// fold_batchnorm_into_matmul): on every provider here the BatchNormalization leaves the plan,
// B's columns take its scale and the MatMul's fused bias its shift, and the outputs match the
// product and the normalization computed in double by the test itself; what the fold cannot
// take (an output of rank 3, a product read twice, a B that is an input, training mode) is left
// alone and matches the unoptimized reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"

namespace recur::testing {
namespace {

constexpr int64_t kK = 6, kC = 4;

struct Form {
  Shape a = {5, kK};  // A; [2, kC, kK] gives a product of rank 3
  bool b_is_input = false;
  bool product_read_twice = false;
  bool training = false;
};

Tensor scale() { return sine_wave({kC}, 0.2f, 0.9f, 0.8f); }
Tensor shift() { return sine_wave({kC}, 1.3f); }
Tensor mean() { return sine_wave({kC}, 0.5f, 1.1f, 0.3f); }
Tensor var() {
  Tensor v = sine_wave({kC}, 2.0f);
  for (int64_t i = 0; i < kC; ++i)
    v.data<float>()[i] = 0.5f + v.data<float>()[i] * v.data<float>()[i];
  return v;
}
Tensor b_value() { return sine_wave({kK, kC}, 0.3f); }

std::string model(const TempDir& dir, const Form& f) {
  ModelBuilder m(15);
  m.input("a", DType::kFloat32, f.a);
  if (f.b_is_input) {
    m.input("B", DType::kFloat32, {kK, kC});
  } else {
    m.initializer("B", b_value());
  }
  m.initializer("scale", scale());
  m.initializer("shift", shift());
  m.initializer("mean", mean());
  m.initializer("var", var());
  m.output("y", DType::kFloat32);
  if (f.product_read_twice) m.output("p2", DType::kFloat32);
  m.node("MatMul", {"a", "B"}, {"p"}, "mm");
  if (f.product_read_twice) m.node("Neg", {"p"}, {"p2"}, "neg");
  auto& bn = m.node("BatchNormalization", {"p", "scale", "shift", "mean", "var"}, {"y"}, "bn");
  set_attr(bn, "epsilon", 1e-3f);
  if (f.training) set_attr(bn, "training_mode", int64_t{1});
  return m.save(dir.path());
}

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

Feeds feeds_for(const Form& f) {
  Feeds feeds = {{"a", sine_wave(f.a, 0.0f)}};
  if (f.b_is_input) feeds.push_back({"B", b_value()});
  return feeds;
}

TEST(FoldBatchNormIntoMatMul, FoldedOnEveryProviderAndMatchesDouble) {
  TempDir dir;
  const Form f;
  const std::string path = model(dir, f);
  const Tensor a = sine_wave(f.a, 0.0f), b = b_value(), s = scale(), sh = shift(), mu = mean(),
               v = var();
  std::vector<double> want;
  for (int64_t r = 0; r < f.a[0]; ++r) {
    for (int64_t c = 0; c < kC; ++c) {
      double p = 0.0;
      for (int64_t k = 0; k < kK; ++k)
        p += static_cast<double>(a.data<float>()[r * kK + k]) * b.data<float>()[k * kC + c];
      want.push_back((p - mu.data<float>()[c]) / std::sqrt(v.data<float>()[c] + 1e-3) *
                         s.data<float>()[c] +
                     sh.data<float>()[c]);
    }
  }
  for (const std::string& p : test::OpTester::runnable_providers()) {
    const std::vector<std::string> providers =
        p == "reference" ? std::vector<std::string>{p} : std::vector<std::string>{p, "reference"};
    Session session(path, SessionOptions().providers(providers));
    EXPECT_EQ(count_op(session, "BatchNormalization"), 0) << p << "\n" << session.explain();
    EXPECT_EQ(count_op(session, "recur::MatMulBias"), 1) << p << "\n" << session.explain();
    EXPECT_NE(session.explain().find("BatchNormalization 'bn' folded into B"), std::string::npos)
        << p;
    const Outputs got = session.run(feeds_for(f));
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), (Shape{f.a[0], kC})) << p;
    for (int64_t i = 0; i < got[0].numel(); ++i)
      EXPECT_NEAR(got[0].data<float>()[i], want[static_cast<size_t>(i)], 1e-5) << p << " at " << i;
  }
}

TEST(FoldBatchNormIntoMatMul, WhatTheFoldCannotTakeIsLeftAlone) {
  const Form forms[] = {{.a = {2, kC, kK}},  // rank 3: the channels are not B's columns
                        {.b_is_input = true},
                        {.product_read_twice = true},
                        {.training = true}};
  for (const Form& f : forms) {
    TempDir dir;
    const std::string path = model(dir, f);
    const std::string what = "A " + shape_to_string(f.a) + (f.b_is_input ? " B input" : "") +
                             (f.product_read_twice ? " read twice" : "") +
                             (f.training ? " training" : "");
    Session unfolded(path, SessionOptions().providers({"reference"}).optimize(false));
    Session s(path, SessionOptions().providers({"reference"}));
    EXPECT_EQ(count_op(s, "BatchNormalization"), 1) << what << "\n" << s.explain();
    if (f.training) continue;  // training mode's extra statistics: the run itself is not ours
    const Outputs want = unfolded.run(feeds_for(f));
    const Outputs got = s.run(feeds_for(f));
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].shape(), want[o].shape()) << what;
      for (int64_t i = 0; i < got[o].numel(); ++i)
        EXPECT_EQ(got[o].data<float>()[i], want[o].data<float>()[i]) << what << " at " << i;
    }
  }
}

}  // namespace
}  // namespace recur::testing
