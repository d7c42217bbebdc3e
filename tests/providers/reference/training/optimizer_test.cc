// The ai.onnx.preview.training optimizers beyond the ONNX tests (which all run step T = 0):
// Adam's bias correction at T = 2 with both norm coefficients, and a missing Momentum mode.
// Expected values come from the ONNX test generator's numpy formula (apply_adam), in float64.
#include <gtest/gtest.h>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::set_attr;

constexpr const char* kDomain = "ai.onnx.preview.training";

Session session_of(const ModelBuilder& mb) {
  const std::string bytes = mb.bytes();
  return Session::from_bytes(bytes.data(), bytes.size(), SessionOptions{}.providers({"reference"}));
}

TEST(Adam, BiasCorrectionAfterTheFirstStep) {
  ModelBuilder mb(17);
  mb.opset(kDomain, 1);
  for (const char* name : {"x", "g", "v", "h"}) mb.input(name, DType::kFloat64, {1});
  mb.initializer("r", Tensor::scalar<double>(0.1));
  mb.initializer("t", Tensor::scalar<int64_t>(2));
  auto& n = mb.node("Adam", {"r", "t", "x", "g", "v", "h"}, {"x2", "v2", "h2"}, "adam", kDomain);
  set_attr(n, "norm_coefficient", 0.01f);
  set_attr(n, "norm_coefficient_post", 0.1f);
  for (const char* name : {"x2", "v2", "h2"}) mb.graph().add_output()->set_name(name);
  // gr = 0.01 * 1.5 - 0.5; v2 = 0.9 * 0.2 + 0.1 * gr; h2 = 0.999 * 0.3 + 0.001 * gr**2;
  // r2 = 0.1 * sqrt(1 - 0.999**2) / (1 - 0.9**2); x2 = 0.9 * (1.5 - r2 * v2 / (sqrt(h2) + 1e-6))
  Outputs out = session_of(mb).run({{"x", Tensor::from_vector<double>({1}, {1.5})},
                                    {"g", Tensor::from_vector<double>({1}, {-0.5})},
                                    {"v", Tensor::from_vector<double>({1}, {0.2})},
                                    {"h", Tensor::from_vector<double>({1}, {0.3})}});
  // The attributes are float32 (0.9f, 0.01f...): agreement to 1e-6, not to double precision.
  EXPECT_NEAR(out[0].data<double>()[0], 1.344914817675222, 1e-6);
  EXPECT_NEAR(out[1].data<double>()[0], 0.13150000000000003, 1e-6);
  EXPECT_NEAR(out[2].data<double>()[0], 0.29993522499999997, 1e-6);
}

TEST(Momentum, ModeIsRequired) {
  ModelBuilder mb(17);
  mb.opset(kDomain, 1);
  for (const char* name : {"x", "g", "v"}) mb.input(name, DType::kFloat32, {1});
  mb.initializer("r", Tensor::scalar<float>(0.1f));
  mb.initializer("t", Tensor::scalar<int64_t>(0));
  auto& n = mb.node("Momentum", {"r", "t", "x", "g", "v"}, {"x2", "v2"}, "m", kDomain);
  set_attr(n, "alpha", 0.9f);
  set_attr(n, "beta", 0.1f);
  set_attr(n, "norm_coefficient", 0.0f);
  for (const char* name : {"x2", "v2"}) mb.graph().add_output()->set_name(name);
  testing::expect_error([&] { session_of(mb); }, ErrorCode::kInvalidModel,
                        {"node 'm' (ai.onnx.preview.training::Momentum)", "mode"});
}

}  // namespace
}  // namespace recur
