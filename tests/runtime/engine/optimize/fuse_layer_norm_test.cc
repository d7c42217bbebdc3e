// LayerNormalization fusion (runtime/engine/optimize/optimizer.h, fuse_layer_norms): the
// nine-node layer normalization of pre-17 exports becomes one LayerNormalization node that
// --explain shows, on every provider that runs here, with the outputs of the reference provider
// running the nine nodes unfused and of the normalization computed here in double; axes as an
// attribute (opset 13) and as an input (opset 18), one or two trailing axes. Near misses stay
// as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"

namespace recur::testing {
namespace {

struct Form {
  int opset = 13;
  std::vector<int64_t> axes{-1};
  Shape x_shape{2, 3, 8};
  float exponent = 2.0f;
  bool d_out_too = false;        // Sub's output is also a graph output
  bool weight_is_input = false;  // the weight is an initializer that is also a graph input
};

Shape trailing(const Form& f) {
  return Shape(f.x_shape.end() - static_cast<std::ptrdiff_t>(f.axes.size()), f.x_shape.end());
}

Tensor wave(const Shape& shape, float scale, float phase) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = scale * std::sin(0.7f * static_cast<float>(i) + phase) + 0.3f * phase;
  return floats(shape, v);
}

std::string ln_model(const TempDir& dir, const Form& f) {
  ModelBuilder m(f.opset);
  m.input("x", DType::kFloat32, f.x_shape);
  m.initializer("two", floats({}, {f.exponent}));
  m.initializer("eps", floats({}, {1e-3f}));
  m.initializer("w", wave(trailing(f), 1.0f, 0.5f));
  m.initializer("b", wave(trailing(f), 0.5f, 1.5f));
  if (f.weight_is_input) m.input("w", DType::kFloat32, trailing(f));
  m.output("y", DType::kFloat32);
  if (f.d_out_too) m.output("d", DType::kFloat32);
  auto mean = [&](const std::string& in, const std::string& out, const std::string& name) {
    if (f.opset >= 18) {
      m.node("ReduceMean", {in, "axes"}, {out}, name);
    } else {
      set_attr(m.node("ReduceMean", {in}, {out}, name), "axes", f.axes);
    }
  };
  if (f.opset >= 18)
    m.initializer("axes", Tensor::from_vector({static_cast<int64_t>(f.axes.size())}, f.axes));
  mean("x", "m", "mean");
  m.node("Sub", {"x", "m"}, {"d"}, "sub");
  m.node("Pow", {"d", "two"}, {"p"}, "pow");
  mean("p", "v", "var");
  m.node("Add", {"v", "eps"}, {"e"}, "add_eps");
  m.node("Sqrt", {"e"}, {"s"}, "sqrt");
  m.node("Div", {"d", "s"}, {"n"}, "div");
  m.node("Mul", {"w", "n"}, {"o"}, "mul");
  m.node("Add", {"o", "b"}, {"y"}, "add_b");
  return m.save(dir.path());
}

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

void check_fused(const Form& f) {
  TempDir dir;
  const std::string path = ln_model(dir, f);
  const Tensor x = wave(f.x_shape, 2.0f, 0.0f);
  const Feeds feeds = {{"x", x}};
  Session unfused(path, SessionOptions().providers({"reference"}).optimize(false));
  ASSERT_EQ(count_op(unfused, "ReduceMean"), 2);
  const Outputs want = unfused.run(feeds);
  // The normalization in double over the trailing axes.
  int64_t size = 1;
  for (int64_t d : trailing(f)) size *= d;
  const Tensor w = wave(trailing(f), 1.0f, 0.5f), b = wave(trailing(f), 0.5f, 1.5f);
  std::vector<double> exact(static_cast<size_t>(x.numel()));
  for (int64_t r = 0; r < x.numel() / size; ++r) {
    const float* row = x.data<float>() + r * size;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < size; ++j) mean += row[j];
    mean /= static_cast<double>(size);
    for (int64_t j = 0; j < size; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(size);
    for (int64_t j = 0; j < size; ++j)
      exact[static_cast<size_t>(r * size + j)] =
          (row[j] - mean) / std::sqrt(var + 1e-3) * w.data<float>()[j] + b.data<float>()[j];
  }
  for (const std::string& p : test::OpTester::runnable_providers()) {
    Session s(path, SessionOptions().providers({p}));
    EXPECT_EQ(count_op(s, "LayerNormalization"), 1) << p << "\n" << s.explain();
    EXPECT_EQ(s.assignment().size(), 1u) << p;
    const std::string e = s.explain();
    EXPECT_NE(e.find("fused the layer normalization written as ReduceMean 'mean'"),
              std::string::npos)
        << e;
    const Tensor got = s.run(feeds)[0];
    ASSERT_EQ(got.shape(), want[0].shape()) << p;
    for (int64_t i = 0; i < got.numel(); ++i) {
      EXPECT_NEAR(got.data<float>()[i], want[0].data<float>()[i], 1e-5) << p << " at " << i;
      EXPECT_NEAR(got.data<float>()[i], exact[static_cast<size_t>(i)], 1e-5) << p << " at " << i;
    }
  }
}

TEST(FuseLayerNorm, AxesAttributeMatchesTheUnfusedReference) { check_fused(Form{}); }

TEST(FuseLayerNorm, AxesInputMatchesTheUnfusedReference) { check_fused(Form{.opset = 18}); }

TEST(FuseLayerNorm, TwoTrailingAxesGivenPositive) { check_fused(Form{.axes = {2, 1}}); }

void check_not_fused(const Form& f, const std::string& why) {
  TempDir dir;
  const std::string path = ln_model(dir, f);
  for (const std::string& p : test::OpTester::runnable_providers()) {
    const std::vector<std::string> providers =
        p == "reference" ? std::vector<std::string>{p} : std::vector<std::string>{p, "reference"};
    Session s(path, SessionOptions().providers(providers));
    EXPECT_EQ(count_op(s, "LayerNormalization"), 0) << why << " on " << p;
    EXPECT_EQ(count_op(s, "ReduceMean"), 2) << why << " on " << p;
  }
}

TEST(FuseLayerNorm, NearMissesAreLeftAlone) {
  check_not_fused(Form{.axes = {1}}, "a middle axis");
  check_not_fused(Form{.exponent = 3.0f}, "a cube");
  check_not_fused(Form{.d_out_too = true}, "x - mean is a graph output");
  check_not_fused(Form{.weight_is_input = true}, "the weight can be fed at run time");
}

}  // namespace
}  // namespace recur::testing
