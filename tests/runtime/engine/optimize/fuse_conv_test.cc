// Conv + Relu / LeakyRelu / Sigmoid / HardSwish fusion (runtime/engine/optimize/optimizer.h,
// fuse_conv_activations): the pair becomes one recur::FusedConv node that --explain shows, on every
// provider that runs here, with the outputs of the reference provider running the two nodes
// unfused; a Conv whose output something else also reads is left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"

namespace recur::testing {
namespace {

Tensor pattern(const Shape& shape, float phase) { return sine_wave(shape, phase, 0.9f); }

// y = act(Conv(x, W, B)); with `also_output`, the Conv's output is a graph output too; a
// non-negative `alpha` is set as the activation's alpha attribute.
std::string conv_then(const TempDir& dir, const std::string& act, bool also_output = false,
                      float alpha = -1.0f) {
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {1, 2, 8});
  m.initializer("W", pattern({3, 2, 3}, 0.2f));
  m.initializer("B", pattern({3}, 1.0f));
  m.output("y", DType::kFloat32);
  if (also_output) m.output("c", DType::kFloat32);
  auto& conv = m.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  set_attr(conv, "pads", std::vector<int64_t>{1, 1});
  auto& a = m.node(act, {"c"}, {"y"}, "act");
  if (alpha >= 0) set_attr(a, "alpha", alpha);
  return m.save(dir.path());
}

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

void check_fused(const std::string& act, float alpha = -1.0f) {
  TempDir dir;
  const std::string path = conv_then(dir, act, false, alpha);
  const Feeds feeds = {{"x", pattern({1, 2, 8}, 0.0f)}};
  Session unfused(path, SessionOptions().providers({"reference"}).optimize(false));
  ASSERT_EQ(count_op(unfused, act), 1);
  const Outputs want = unfused.run(feeds);
  for (const std::string& p : test::OpTester::runnable_providers()) {
    Session s(path, SessionOptions().providers({p}));
    EXPECT_EQ(count_op(s, "recur::FusedConv"), 1) << p << "\n" << s.explain();
    EXPECT_EQ(count_op(s, act), 0) << p;
    EXPECT_EQ(count_op(s, "Conv"), 0) << p;
    const std::string e = s.explain();
    EXPECT_NE(e.find("fused Conv 'conv' and " + act + " 'act'"), std::string::npos) << e;
    const Tensor got = s.run(feeds)[0];
    ASSERT_EQ(got.shape(), want[0].shape()) << p;
    for (int64_t i = 0; i < got.numel(); ++i) {
      EXPECT_NEAR(got.data<float>()[i], want[0].data<float>()[i], 1e-5) << p << " at " << i;
    }
  }
}

TEST(FuseConv, ConvReluMatchesTheUnfusedReference) { check_fused("Relu"); }

TEST(FuseConv, ConvSigmoidMatchesTheUnfusedReference) { check_fused("Sigmoid"); }

TEST(FuseConv, ConvHardSwishMatchesTheUnfusedReference) { check_fused("HardSwish"); }

// HiFi-GAN-style vocoders follow most convolutions with a LeakyRelu (alpha 0.1): its alpha
// travels with the fused node, and the default (0.01) where the attribute is absent.
TEST(FuseConv, ConvLeakyReluMatchesTheUnfusedReference) {
  check_fused("LeakyRelu", 0.1f);
  check_fused("LeakyRelu");
}

TEST(FuseConv, AConvReadByOthersIsNotFused) {
  TempDir dir;
  const std::string path = conv_then(dir, "Relu", /*also_output=*/true);
  for (const std::string& p : test::OpTester::runnable_providers()) {
    Session s(path, SessionOptions().providers({p}));
    EXPECT_EQ(count_op(s, "recur::FusedConv"), 0) << p;
    EXPECT_EQ(count_op(s, "Conv"), 1) << p;
  }
}

TEST(FuseConv, OtherActivationsAndNoOptimisationAreNotFused) {
  TempDir dir;
  Session tanh(conv_then(dir, "Tanh"), SessionOptions().providers({"reference"}));
  EXPECT_EQ(count_op(tanh, "recur::FusedConv"), 0);
  TempDir dir2;
  Session raw(conv_then(dir2, "Relu"), SessionOptions().providers({"reference"}).optimize(false));
  EXPECT_EQ(count_op(raw, "recur::FusedConv"), 0);
}

TEST(FuseConv, ConstantWeightsWithChangingInputShapes) {
  // oneDNN runs a Conv with constant W in its own layouts, planned per input shape: each
  // length, and a length seen again, must give the reference provider's values.
  TempDir dir;
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {1, 2, -1}, {"", "", "t"});
  m.initializer("W", pattern({4, 2, 3}, 0.4f));
  m.output("y", DType::kFloat32);
  auto& conv = m.node("Conv", {"x", "W"}, {"c"}, "conv");
  set_attr(conv, "strides", std::vector<int64_t>{2});
  m.node("Sigmoid", {"c"}, {"y"}, "act");
  const std::string path = m.save(dir.path());
  Session want(path, SessionOptions().providers({"reference"}).optimize(false));
  for (const std::string& p : test::OpTester::runnable_providers()) {
    Session s(path, SessionOptions().providers({p}));
    for (int64_t t : {9, 5, 16, 9}) {
      const Feeds feeds = {{"x", pattern({1, 2, t}, 0.3f * static_cast<float>(t))}};
      const Tensor got = s.run(feeds)[0], ref = want.run(feeds)[0];
      ASSERT_EQ(got.shape(), ref.shape()) << p << " t=" << t;
      for (int64_t i = 0; i < got.numel(); ++i)
        EXPECT_NEAR(got.data<float>()[i], ref.data<float>()[i], 1e-5) << p << " t=" << t;
    }
  }
}

TEST(FuseConv, FusesInsideAnIfBranch) {
  // VAD's convolutions are inside an If: the pass reaches subgraphs.
  const std::string vad = std::string(RECUR_SOURCE_DIR) + "/models/vad_streaming/model.onnx";
  Session s(vad, SessionOptions().providers({"reference"}));
  const std::string e = s.explain();
  EXPECT_NE(e.find("fused Conv '/b16/front/encoder/0/Conv' and Relu"), std::string::npos) << e;
  EXPECT_NE(e.find("fused Conv '/b16/decoder/head/Conv' and Sigmoid"), std::string::npos) << e;
}

}  // namespace
}  // namespace recur::testing
