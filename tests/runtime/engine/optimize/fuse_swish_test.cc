// Swish fusions (runtime/engine/optimize/optimizer.h, fuse_swishes): x * HardSigmoid(x)
// with alpha 1/6 and beta 0.5, as exporters before opset 14 write HardSwish, becomes one
// HardSwish node that --explain shows, on every provider that runs here, with the outputs of
// the reference provider running the two nodes unfused and of x * min(1, max(0, x / 6 + 0.5))
// computed here in double, NaN and infinities included. Near misses stay as they are; a
// HardSigmoid left alone runs on oneDNN's loop where that provider is built. x * Sigmoid(x)
// (nn.SiLU) becomes one Swish node likewise, and after a MatMul and its bias Add the MatMul's
// activation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"

namespace recur::testing {
namespace {

struct Form {
  bool x_first = true;     // Mul(x, hs); else Mul(hs, x)
  float alpha = 1.0f / 6;  // HardSigmoid's alpha
  bool beta = false;       // beta written out (0.5, or `beta_value`)
  float beta_value = 0.5f;
  bool hs_out_too = false;  // the HardSigmoid's output is also a graph output
  bool other = false;       // the Mul's other operand is not x
};

std::string model(const TempDir& dir, const Form& f) {
  ModelBuilder m(13);
  m.input("x", DType::kFloat32, {3, 7});
  m.input("z", DType::kFloat32, {3, 7});
  m.output("y", DType::kFloat32);
  if (f.hs_out_too) m.output("h", DType::kFloat32);
  auto& hs = m.node("HardSigmoid", {"x"}, {"h"}, "hs");
  set_attr(hs, "alpha", f.alpha);
  if (f.beta) set_attr(hs, "beta", f.beta_value);
  const std::string partner = f.other ? "z" : "x";
  m.node(
      "Mul",
      f.x_first ? std::vector<std::string>{partner, "h"} : std::vector<std::string>{"h", partner},
      {"y"}, "mul");
  return m.save(dir.path());
}

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

Feeds feeds() {
  std::vector<float> v(21);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -5.0f + 0.5f * static_cast<float>(i);
  v[3] = std::numeric_limits<float>::quiet_NaN();
  v[4] = std::numeric_limits<float>::infinity();
  v[5] = -std::numeric_limits<float>::infinity();
  return {{"x", floats({3, 7}, v)}, {"z", floats({3, 7}, std::vector<float>(21, 2.0f))}};
}

void check_fused(const Form& f) {
  TempDir dir;
  const std::string path = model(dir, f);
  Session unfused(path, SessionOptions().providers({"reference"}).optimize(false));
  ASSERT_EQ(count_op(unfused, "HardSigmoid"), 1);
  const Feeds in = feeds();
  const Outputs want = unfused.run(in);
  const float* x = in[0].second.data<float>();
  for (const std::string& p : test::OpTester::runnable_providers()) {
    Session s(path, SessionOptions().providers({p}));
    EXPECT_EQ(count_op(s, "HardSwish"), 1) << p << "\n" << s.explain();
    EXPECT_EQ(s.assignment().size(), 1u) << p;
    const std::string e = s.explain();
    EXPECT_NE(e.find("fused the HardSwish written as HardSigmoid 'hs' and 'mul'"),
              std::string::npos)
        << e;
    const Tensor got = s.run(in)[0];
    ASSERT_EQ(got.shape(), want[0].shape()) << p;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const double xv = x[i];
      const double exact = xv * std::min(1.0, std::max(0.0, xv / 6 + 0.5));
      const float g = got.data<float>()[i], w = want[0].data<float>()[i];
      if (std::isnan(exact)) {
        EXPECT_TRUE(std::isnan(g) && std::isnan(w)) << p << " at " << i << ": " << g;
      } else if (std::isinf(exact)) {
        EXPECT_EQ(g, exact) << p << " at " << i;
        EXPECT_EQ(w, exact) << p << " at " << i;
      } else {
        // The fused node rounds once where the pair rounded twice: within a float32 step.
        EXPECT_NEAR(g, w, 1e-6) << p << " at " << i;
        EXPECT_NEAR(g, exact, 1e-6) << p << " at " << i;
      }
    }
  }
}

TEST(FuseHardSwish, PyTorchFormMatchesTheUnfusedReference) { check_fused(Form{}); }

TEST(FuseHardSwish, EitherOperandOrderAndAWrittenBeta) {
  check_fused(Form{.x_first = false, .beta = true});
}

// MobileNetV3 at opset 11: Conv, then x * HardSigmoid(x). The HardSwish fusion runs first, so
// the Conv then takes the HardSwish as its activation: one node where there were three.
TEST(FuseHardSwish, AConvBeforeItTakesTheHardSwish) {
  TempDir dir;
  ModelBuilder m(13);
  m.input("x", DType::kFloat32, {1, 4, 3, 9});
  m.initializer("W", floats({4, 1, 3, 3}, std::vector<float>(36, 0.25f)));
  m.output("y", DType::kFloat32);
  auto& conv = m.node("Conv", {"x", "W"}, {"c"}, "conv");
  set_attr(conv, "group", int64_t{4});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto& hs = m.node("HardSigmoid", {"c"}, {"h"}, "hs");
  set_attr(hs, "alpha", 1.0f / 6);
  m.node("Mul", {"c", "h"}, {"y"}, "mul");
  const std::string path = m.save(dir.path());
  std::vector<float> v(108);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -6.0f + 0.11f * static_cast<float>(i);
  const Feeds in = {{"x", floats({1, 4, 3, 9}, v)}};
  const Outputs want =
      Session(path, SessionOptions().providers({"reference"}).optimize(false)).run(in);
  for (const std::string& p : test::OpTester::runnable_providers()) {
    Session s(path, SessionOptions().providers({p}));
    ASSERT_EQ(s.assignment().size(), 1u) << p << "\n" << s.explain();
    EXPECT_EQ(s.assignment()[0].op, "recur::FusedConv") << p;
    const Tensor got = s.run(in)[0];
    for (int64_t i = 0; i < got.numel(); ++i)
      EXPECT_NEAR(got.data<float>()[i], want[0].data<float>()[i], 1e-5) << p << " at " << i;
  }
}

TEST(FuseHardSwish, NearMissesAreLeftAlone) {
  for (const auto& [f, why] : std::vector<std::pair<Form, std::string>>{
           {Form{.alpha = 0.2f}, "HardSigmoid's own alpha"},
           {Form{.beta = true, .beta_value = 0.25f}, "another beta"},
           {Form{.hs_out_too = true}, "the HardSigmoid's output is a graph output"},
           {Form{.other = true}, "a product with another tensor"}}) {
    TempDir dir;
    const std::string path = model(dir, f);
    const Feeds in = feeds();
    const Outputs want =
        Session(path, SessionOptions().providers({"reference"}).optimize(false)).run(in);
    for (const std::string& p : test::OpTester::runnable_providers()) {
      const std::vector<std::string> providers =
          p == "reference" ? std::vector<std::string>{p} : std::vector<std::string>{p, "reference"};
      Session s(path, SessionOptions().providers(providers));
      EXPECT_EQ(count_op(s, "HardSwish"), 0) << why << " on " << p;
      EXPECT_EQ(count_op(s, "HardSigmoid"), 1) << why << " on " << p;
      const Tensor got = s.run(in)[0];
      for (int64_t i = 0; i < got.numel(); ++i) {
        const float g = got.data<float>()[i], w = want[0].data<float>()[i];
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(g)) << why << " on " << p << " at " << i;
        } else if (std::isinf(w)) {
          EXPECT_EQ(g, w) << why << " on " << p << " at " << i;
        } else {
          EXPECT_NEAR(g, w, 1e-6) << why << " on " << p << " at " << i;
        }
      }
    }
  }
}

// x * Sigmoid(x) in either order: one Swish node (alpha 1) on every provider, against the
// unfused reference and x / (1 + e^-x) in double; a Sigmoid whose output is read elsewhere, or
// a product with another tensor, stays as it is.
TEST(FuseSwish, SiluBecomesOneSwish) {
  for (const bool x_first : {true, false}) {
    for (const int miss : {0, 1, 2}) {  // 0: fused; 1: sigmoid also an output; 2: other operand
      TempDir dir;
      ModelBuilder m(13);
      m.input("x", DType::kFloat32, {3, 7});
      m.input("z", DType::kFloat32, {3, 7});
      m.output("y", DType::kFloat32);
      if (miss == 1) m.output("s", DType::kFloat32);
      m.node("Sigmoid", {"x"}, {"s"}, "sig");
      const std::string partner = miss == 2 ? "z" : "x";
      m.node(
          "Mul",
          x_first ? std::vector<std::string>{partner, "s"} : std::vector<std::string>{"s", partner},
          {"y"}, "mul");
      const std::string path = m.save(dir.path());
      const Feeds in = feeds();
      const Outputs want =
          Session(path, SessionOptions().providers({"reference"}).optimize(false)).run(in);
      const float* x = in[0].second.data<float>();
      for (const std::string& p : test::OpTester::runnable_providers()) {
        const std::vector<std::string> providers = p == "reference"
                                                       ? std::vector<std::string>{p}
                                                       : std::vector<std::string>{p, "reference"};
        Session s(path, SessionOptions().providers(providers));
        const std::string what = p + (miss ? " (near miss " + std::to_string(miss) + ")" : "");
        EXPECT_EQ(count_op(s, "Swish"), miss ? 0 : 1) << what << "\n" << s.explain();
        EXPECT_EQ(count_op(s, "Sigmoid"), miss ? 1 : 0) << what;
        if (!miss) {
          EXPECT_NE(s.explain().find("fused the Swish written as Sigmoid 'sig' and 'mul'"),
                    std::string::npos)
              << s.explain();
        }
        const Tensor got = s.run(in)[0];
        for (int64_t i = 0; i < got.numel(); ++i) {
          const float g = got.data<float>()[i], w = want[0].data<float>()[i];
          const double xv = x[i];
          const double exact = miss == 2 ? 2.0 / (1.0 + std::exp(-xv)) : xv / (1.0 + std::exp(-xv));
          if (std::isnan(w)) {
            EXPECT_TRUE(std::isnan(g)) << what << " at " << i << ": " << g;
          } else if (std::isinf(w)) {
            EXPECT_EQ(g, w) << what << " at " << i;
          } else {
            EXPECT_NEAR(g, w, 1e-6) << what << " at " << i;
            EXPECT_NEAR(g, exact, 1e-6) << what << " at " << i;
          }
        }
      }
    }
  }
}

// A Linear and nn.SiLU, as a Conformer's feed-forward layer exports them: MatMul by a constant,
// Add of the bias, x * Sigmoid(x). The Swish fusion runs first, and the MatMul fusion then takes
// it as its activation: one recur::MatMulBias node, on recur's own loop (few rows) and on the
// oneDNN primitive (many), against the unfused reference.
TEST(FuseSwish, AMatMulBeforeItTakesTheSilu) {
  std::mt19937 rng(3);
  for (const int64_t rows : {3, 300}) {
    TempDir dir;
    ModelBuilder m(13);
    m.input("x", DType::kFloat32, {rows, 64});
    m.initializer("W", random_tensor({64, 96}, rng));
    m.initializer("B", random_tensor({96}, rng));
    m.output("y", DType::kFloat32);
    m.node("MatMul", {"x", "W"}, {"p"}, "mm");
    m.node("Add", {"p", "B"}, {"a"}, "bias");
    m.node("Sigmoid", {"a"}, {"s"}, "sig");
    m.node("Mul", {"s", "a"}, {"y"}, "mul");
    const std::string path = m.save(dir.path());
    const Feeds in = {{"x", random_tensor({rows, 64}, rng, 2.0f)}};
    const Outputs want =
        Session(path, SessionOptions().providers({"reference"}).optimize(false)).run(in);
    for (const std::string& p : test::OpTester::runnable_providers()) {
      if (p != "onednn" && p != "reference") continue;  // the providers that run MatMulBias
      Session s(path, SessionOptions().providers({p}));
      ASSERT_EQ(s.assignment().size(), 1u) << p << "\n" << s.explain();
      EXPECT_EQ(s.assignment()[0].op, "recur::MatMulBias") << p;
      EXPECT_NE(s.explain().find("and Silu into one node"), std::string::npos) << s.explain();
      const Tensor got = s.run(in)[0];
      for (int64_t i = 0; i < got.numel(); ++i)
        EXPECT_NEAR(got.data<float>()[i], want[0].data<float>()[i], 2e-5) << p << " at " << i;
    }
  }
}

}  // namespace
}  // namespace recur::testing
