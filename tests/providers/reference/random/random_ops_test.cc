// The random operators (RandomNormal(Like), RandomUniform(Like), Bernoulli, Multinomial,
// Dropout in training mode) and the seeds behind them (SessionOptions::random_seed).
//
// The distributions are checked against their analytic laws (the normal CDF through erfc, the
// uniform CDF, the softmax of the logits), with bounds far out in the tails: every check uses a
// fixed seed, so it either always passes or always fails, and a failing one means a wrong law.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

using testing::ModelBuilder;

Session session_of(const ModelBuilder& m, const SessionOptions& o = SessionOptions()) {
  const std::string bytes = m.bytes();
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  switch (t.dtype()) {
    case DType::kFloat32:
      for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<float>()[i];
      break;
    case DType::kFloat64:
      for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<double>()[i];
      break;
    case DType::kFloat16:
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t.data<Float16>()[i]);
      break;
    case DType::kBFloat16:
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t.data<BFloat16>()[i]);
      break;
    default:
      ADD_FAILURE() << "unexpected dtype " << dtype_name(t.dtype());
  }
  return v;
}

// The Kolmogorov-Smirnov distance between the sample and the law `cdf`.
double ks_distance(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const auto n = static_cast<double>(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}

// KS distance beyond which the sample is rejected at a level of about 1e-6.
double ks_bound(size_t n) { return 2.7 / std::sqrt(static_cast<double>(n)); }

double normal_cdf(double x, double mean, double sd) {
  return 0.5 * std::erfc(-(x - mean) / (sd * std::sqrt(2.0)));
}

// A model of one node with no inputs (RandomNormal, RandomUniform) and one float output.
ModelBuilder source_model(const std::string& op, const std::function<void(onnx::NodeProto&)>& a,
                          DType out = DType::kFloat32) {
  ModelBuilder m;
  m.output("y", out);
  a(m.node(op, {}, {"y"}, "draw"));
  return m;
}

TEST(RandomNormal, FollowsTheNormalLawOfItsMeanAndScale) {
  const ModelBuilder m = source_model("RandomNormal", [](onnx::NodeProto& n) {
    set_attr(n, "shape", std::vector<int64_t>{200, 100});
    set_attr(n, "mean", 1.5f);
    set_attr(n, "scale", 0.25f);
  });
  const std::vector<double> x =
      as_doubles(session_of(m, SessionOptions().random_seed(11)).run({})[0]);
  ASSERT_EQ(x.size(), 20000u);
  EXPECT_LT(ks_distance(x, [](double v) { return normal_cdf(v, 1.5, 0.25); }), ks_bound(x.size()));
}

TEST(RandomUniform, FollowsTheUniformLawOnLowHigh) {
  const ModelBuilder m = source_model(
      "RandomUniform",
      [](onnx::NodeProto& n) {
        set_attr(n, "shape", std::vector<int64_t>{20000});
        set_attr(n, "low", -2.0f);
        set_attr(n, "high", 6.0f);
        set_attr(n, "dtype", int64_t{11});  // float64
      },
      DType::kFloat64);
  const Tensor y = session_of(m, SessionOptions().random_seed(12)).run({})[0];
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  const std::vector<double> x = as_doubles(y);
  for (double v : x) ASSERT_TRUE(v >= -2.0 && v < 6.0) << v;
  EXPECT_LT(ks_distance(x, [](double v) { return (v + 2.0) / 8.0; }), ks_bound(x.size()));
}

TEST(RandomNormal, DrawsEachFloatDtypeAndRefusesOthers) {
  for (const auto& [code_, dt] : std::vector<std::pair<int64_t, DType>>{{1, DType::kFloat32},
                                                                        {10, DType::kFloat16},
                                                                        {11, DType::kFloat64},
                                                                        {16, DType::kBFloat16}}) {
    const int64_t code = code_;  // clang 14 cannot capture a structured binding in a lambda
    const ModelBuilder m = source_model(
        "RandomNormal",
        [&](onnx::NodeProto& n) {
          set_attr(n, "shape", std::vector<int64_t>{4000});
          set_attr(n, "dtype", code);
        },
        dt);
    const Tensor y = session_of(m, SessionOptions().random_seed(3)).run({})[0];
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(y.shape(), (Shape{4000}));
    // Coarse for the 16-bit types, which round each value.
    EXPECT_LT(ks_distance(as_doubles(y), [](double v) { return normal_cdf(v, 0, 1); }), 0.05)
        << dtype_name(dt);
  }
  const ModelBuilder ints = source_model(
      "RandomNormal",
      [](onnx::NodeProto& n) {
        set_attr(n, "shape", std::vector<int64_t>{2});
        set_attr(n, "dtype", int64_t{7});  // int64
      },
      DType::kInt64);
  const std::string msg = error_of([&] { session_of(ints); });
  EXPECT_NE(msg.find("node 'draw' (RandomNormal)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dtype 7"), std::string::npos) << msg;
}

TEST(RandomNormal, ShapeIsRequiredAndNonNegative) {
  const ModelBuilder none = source_model("RandomNormal", [](onnx::NodeProto&) {});
  std::string msg = error_of([&] { session_of(none); });
  EXPECT_NE(msg.find("shape"), std::string::npos) << msg;
  const ModelBuilder negative = source_model("RandomNormal", [](onnx::NodeProto& n) {
    set_attr(n, "shape", std::vector<int64_t>{2, -1});
  });
  msg = error_of([&] { session_of(negative); });
  EXPECT_NE(msg.find("node 'draw' (RandomNormal)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("negative"), std::string::npos) << msg;
  const ModelBuilder empty = source_model("RandomUniform", [](onnx::NodeProto& n) {
    set_attr(n, "shape", std::vector<int64_t>{3, 0});
  });
  EXPECT_EQ(session_of(empty).run({})[0].shape(), (Shape{3, 0}));
}

TEST(RandomLike, TakesTheInputsShapeAndDtypeOrItsDtypeAttribute) {
  Outputs o = OpTester("RandomUniformLike", 17)
                  .input("x", tensor<double>({2, 3}, {9, 9, 9, 9, 9, 9}))
                  .attr("low", 10.0f)
                  .attr("high", 11.0f)
                  .run();
  ASSERT_EQ(o[0].dtype(), DType::kFloat64);
  EXPECT_EQ(o[0].shape(), (Shape{2, 3}));
  for (double v : values<double>(o[0])) EXPECT_TRUE(v >= 10 && v < 11) << v;

  // Any input dtype, strings included, once the dtype is given: only its shape is read.
  Tensor words = Tensor::from_vector<std::string>({4}, {"a", "b", "c", "d"});
  o = OpTester("RandomNormalLike", 17).input("x", words).attr("dtype", int64_t{10}).run();
  EXPECT_EQ(o[0].dtype(), DType::kFloat16);
  EXPECT_EQ(o[0].shape(), (Shape{4}));

  expect_error(OpTester("RandomNormalLike", 17).input("x", tensor<int64_t>({2}, {1, 2})),
               ErrorCode::kInvalidModel, "int64 is not float16");
}

// Two draws of a session: the node `op` with `attrs` over no input, run twice.
std::pair<std::vector<double>, std::vector<double>> two_runs(const Session& s) {
  return {as_doubles(s.run({})[0]), as_doubles(s.run({})[0])};
}

ModelBuilder normal_model(std::optional<float> seed) {
  return source_model("RandomNormal", [&](onnx::NodeProto& n) {
    set_attr(n, "shape", std::vector<int64_t>{64});
    if (seed) set_attr(n, "seed", *seed);
  });
}

TEST(RandomSeeds, UnseededRunsDrawAnewAndSessionsDiffer) {
  const Session a = session_of(normal_model(std::nullopt));
  const Session b = session_of(normal_model(std::nullopt));
  const auto [a1, a2] = two_runs(a);
  EXPECT_NE(a1, a2);
  EXPECT_NE(a1, two_runs(b).first);
}

TEST(RandomSeeds, ASessionSeedRepeatsEveryRunAndEverySession) {
  const SessionOptions seeded = SessionOptions().random_seed(42);
  const auto [a1, a2] = two_runs(session_of(normal_model(std::nullopt), seeded));
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(a1, two_runs(session_of(normal_model(std::nullopt), seeded)).first);
  EXPECT_NE(
      a1, two_runs(session_of(normal_model(std::nullopt), SessionOptions().random_seed(43))).first);
  // deterministic() seeds with 0.
  const SessionOptions det = SessionOptions().deterministic(true);
  const auto [d1, d2] = two_runs(session_of(normal_model(std::nullopt), det));
  EXPECT_EQ(d1, d2);
  EXPECT_EQ(
      d1, two_runs(session_of(normal_model(std::nullopt), SessionOptions().random_seed(0))).first);
}

TEST(RandomSeeds, ANodeSeedWinsOverTheSessions) {
  const auto [s1, s2] = two_runs(session_of(normal_model(5.0f)));
  EXPECT_EQ(s1, s2);
  EXPECT_EQ(s1, two_runs(session_of(normal_model(5.0f), SessionOptions().random_seed(9))).first);
  EXPECT_NE(s1, two_runs(session_of(normal_model(6.0f))).first);
  EXPECT_NE(s1, two_runs(session_of(normal_model(5.5f))).first);
}

TEST(RandomSeeds, TwoNodesOfOneRunDrawDifferentValues) {
  ModelBuilder m;
  m.output("a", DType::kFloat32).output("b", DType::kFloat32);
  for (const char* out : {"a", "b"}) {
    auto& n = m.node("RandomUniform", {}, {out});
    set_attr(n, "shape", std::vector<int64_t>{16});
  }
  const Outputs o = session_of(m, SessionOptions().random_seed(1)).run({});
  EXPECT_NE(values<float>(o[0]), values<float>(o[1]));
}

// A body graph input or output of the given ONNX element type.
void body_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const char* name,
                int elem_type) {
  auto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

// A Loop of 3 iterations whose body draws 8 uniforms (seeded or not) as a scan output.
ModelBuilder loop_model(bool seeded) {
  ModelBuilder m;
  m.initializer("trips", Tensor::from_vector<int64_t>({}, {3}));
  m.output("draws", DType::kFloat32);
  onnx::GraphProto body;
  body.set_name("body");
  body_value(body.mutable_input(), "iter", 7);
  body_value(body.mutable_input(), "cond_in", 9);
  auto* draw = body.add_node();
  draw->set_op_type("RandomUniform");
  draw->add_output("u");
  set_attr(*draw, "shape", std::vector<int64_t>{8});
  if (seeded) set_attr(*draw, "seed", 1.0f);
  auto* keep = body.add_node();
  keep->set_op_type("Identity");
  keep->add_input("cond_in");
  keep->add_output("cond_out");
  body_value(body.mutable_output(), "cond_out", 9);
  body_value(body.mutable_output(), "u", 1);
  set_attr(m.node("Loop", {"trips", ""}, {"draws"}, "loop"), "body", body);
  return m;
}

TEST(RandomSeeds, EachLoopIterationDrawsAnewAndSeededRunsRepeat) {
  for (const bool seeded : {false, true}) {
    const Session s = session_of(loop_model(seeded));
    const Tensor a = s.run({})[0];
    ASSERT_EQ(a.shape(), (Shape{3, 8}));
    const std::vector<float> v = values<float>(a);
    const std::vector<float> it0(v.begin(), v.begin() + 8), it1(v.begin() + 8, v.begin() + 16);
    EXPECT_NE(it0, it1) << "seeded=" << seeded;
    EXPECT_EQ(v == values<float>(s.run({})[0]), seeded) << "seeded=" << seeded;
  }
}

TEST(RandomSeeds, ADrawOverConstantsIsNotFoldedAtLoad) {
  ModelBuilder m;
  m.initializer("c", Tensor::from_vector<float>({32}, std::vector<float>(32, 0.0f)));
  m.output("y", DType::kFloat32);
  m.node("RandomNormalLike", {"c"}, {"y"});
  const Session s = session_of(m);
  EXPECT_NE(values<float>(s.run({})[0]), values<float>(s.run({})[0]));
}

TEST(Bernoulli, DrawsOnesWithTheInputsProbability) {
  std::vector<float> p(30000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : 0.3f;
  const Outputs o = OpTester("Bernoulli", 15)
                        .input("p", tensor<float>({30000}, p))
                        .attr("seed", 2.0f)
                        .attr("dtype", int64_t{9})  // bool
                        .run();
  ASSERT_EQ(o[0].dtype(), DType::kBool);
  const bool* y = o[0].data<bool>();
  int64_t ones = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (i % 3 == 0) {
      ASSERT_FALSE(y[i]) << i;
    }
    if (i % 3 == 1) {
      ASSERT_TRUE(y[i]) << i;
    }
    if (i % 3 == 2) ones += y[i];
  }
  // 10000 draws of p = 0.3: the standard deviation of the count is about 46.
  EXPECT_NEAR(static_cast<double>(ones), 3000.0, 5 * 46.0);
}

TEST(Bernoulli, OutputTakesTheInputsDtypeOrItsDtypeAttribute) {
  Outputs o = OpTester("Bernoulli", 15).input("p", tensor<double>({3}, {0, 1, 1})).run();
  EXPECT_EQ(o[0].dtype(), DType::kFloat64);
  EXPECT_EQ(values<double>(o[0]), (std::vector<double>{0, 1, 1}));
  o = OpTester("Bernoulli", 15)
          .input("p", tensor<float>({2, 2}, {1, 0, 0, 1}))
          .attr("dtype", int64_t{6})
          .run();
  EXPECT_EQ(o[0].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{1, 0, 0, 1}));
  expect_error(OpTester("Bernoulli", 15).input("p", tensor<int32_t>({1}, {1})),
               ErrorCode::kInvalidModel, "probabilities");
  expect_error(
      OpTester("Bernoulli", 15).input("p", tensor<float>({1}, {1})).attr("dtype", int64_t{8}),
      ErrorCode::kInvalidModel, "dtype 8");
}

TEST(Multinomial, DrawsClassesWithTheSoftmaxOfTheLogits) {
  // Row 0: probabilities 0.1, 0.2, 0.7; row 1: class 0 is -inf and never drawn.
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor logits = tensor<float>(
      {2, 3}, {std::log(0.1f), std::log(0.2f), std::log(0.7f), -inf, 0.0f, std::log(3.0f)});
  const int64_t n = 20000;
  const Outputs o =
      OpTester("Multinomial", 7).input("x", logits).attr("sample_size", n).attr("seed", 4.0f).run();
  ASSERT_EQ(o[0].dtype(), DType::kInt32);  // the default
  ASSERT_EQ(o[0].shape(), (Shape{2, n}));
  const std::vector<std::vector<double>> want = {{0.1, 0.2, 0.7}, {0.0, 0.25, 0.75}};
  for (int64_t r = 0; r < 2; ++r) {
    std::vector<double> count(3, 0);
    for (int64_t s = 0; s < n; ++s) {
      const int32_t c = o[0].data<int32_t>()[r * n + s];
      ASSERT_TRUE(c >= 0 && c < 3) << c;
      count[static_cast<size_t>(c)] += 1;
    }
    for (size_t c = 0; c < 3; ++c) {
      const double p = want[static_cast<size_t>(r)][c];
      const double sd = std::sqrt(static_cast<double>(n) * p * (1 - p));
      EXPECT_NEAR(count[c], static_cast<double>(n) * p, 5 * sd + 0.5)
          << "row " << r << " class " << c;
    }
  }
}

TEST(Multinomial, InfinitiesNaNAndShapes) {
  const float inf = std::numeric_limits<float>::infinity();
  // +inf entries take all the weight, evenly.
  Outputs o = OpTester("Multinomial", 7)
                  .input("x", tensor<float>({1, 4}, {inf, 5.0f, inf, -inf}))
                  .attr("sample_size", int64_t{2000})
                  .attr("dtype", int64_t{7})
                  .run();
  ASSERT_EQ(o[0].dtype(), DType::kInt64);
  int64_t zeros = 0;
  for (int64_t c : values<int64_t>(o[0])) {
    ASSERT_TRUE(c == 0 || c == 2) << c;
    zeros += c == 0;
  }
  EXPECT_NEAR(static_cast<double>(zeros), 1000.0, 5 * std::sqrt(500.0));

  expect_error(OpTester("Multinomial", 7).input("x", tensor<float>({1, 2}, {0.0f, NAN})),
               ErrorCode::kInvalidArgument, "row 0 of the input holds NaN");
  expect_error(OpTester("Multinomial", 7).input("x", tensor<float>({2, 1}, {0.0f, -inf})),
               ErrorCode::kInvalidArgument, "row 1 of the input has every log-probability -inf");
  expect_error(OpTester("Multinomial", 7).input("x", tensor<float>({3}, {0, 0, 0})),
               ErrorCode::kInvalidModel, "2-D");
  expect_error(OpTester("Multinomial", 7)
                   .input("x", tensor<float>({1, 2}, {0, 0}))
                   .attr("dtype", int64_t{1}),
               ErrorCode::kInvalidModel, "int32 or int64");
  expect_error(OpTester("Multinomial", 7)
                   .input("x", tensor<float>({1, 2}, {0, 0}))
                   .attr("sample_size", int64_t{-1}),
               ErrorCode::kInvalidModel, "negative");
  o = OpTester("Multinomial", 7)
          .input("x", tensor<float>({2, 2}, {0, 0, 0, 0}))
          .attr("sample_size", int64_t{0})
          .run();
  EXPECT_EQ(o[0].shape(), (Shape{2, 0}));
}

// Dropout in training mode, opset 13, with ratio and training_mode fed at run time.
OpTester training_dropout(const Tensor& x) {
  return OpTester("Dropout", 13)
      .input("x", x)
      .input("r", DType::kFloat32, {})
      .input("t", DType::kBool, {})
      .output("y")
      .output("m");
}

TEST(DropoutTraining, KeepsAFractionOfOneMinusRatioAndScalesWhatItKeeps) {
  std::vector<float> xv(20000);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) - 3.0f;
  const Tensor x = tensor<float>({100, 200}, xv);
  const Session s = training_dropout(x).session();
  const Outputs o =
      s.run({{"x", x}, {"r", Tensor::scalar<float>(0.75f)}, {"t", Tensor::scalar<bool>(true)}});
  ASSERT_EQ(o[1].dtype(), DType::kBool);
  int64_t kept = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    const bool keep = o[1].data<bool>()[i];
    kept += keep;
    ASSERT_EQ(o[0].data<float>()[i], keep ? xv[i] * 4.0f : 0.0f) << i;
  }
  // 20000 draws of p = 0.25: the standard deviation of the count is about 61.
  EXPECT_NEAR(static_cast<double>(kept), 5000.0, 5 * 61.0);
  // Each run draws a new mask.
  const Outputs again =
      s.run({{"x", x}, {"r", Tensor::scalar<float>(0.75f)}, {"t", Tensor::scalar<bool>(true)}});
  EXPECT_NE(values<bool>(o[1]), values<bool>(again[1]));
}

TEST(DropoutTraining, RatioOneDropsEverythingAndRatiosOutsideAreErrors) {
  const Tensor x = tensor<float>({4}, {1, 2, 3, 4});
  const Session s = training_dropout(x).session();
  const Outputs o =
      s.run({{"x", x}, {"r", Tensor::scalar<float>(1.0f)}, {"t", Tensor::scalar<bool>(true)}});
  EXPECT_EQ(values<float>(o[0]), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(values<bool>(o[1]), (std::vector<bool>{false, false, false, false}));
  for (const float bad : {1.5f, -0.1f, NAN}) {
    const std::string msg = error_of([&] {
      s.run({{"x", x}, {"r", Tensor::scalar<float>(bad)}, {"t", Tensor::scalar<bool>(true)}});
    });
    EXPECT_NE(msg.find("node 'node' (Dropout)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("outside [0, 1]"), std::string::npos) << msg;
  }
}

TEST(DropoutTraining, ASeedRepeatsTheMask) {
  const Tensor x = tensor<float>({64}, std::vector<float>(64, 1.0f));
  const Session s = training_dropout(x).attr("seed", int64_t{7}).session();
  const Feeds feeds = {
      {"x", x}, {"r", Tensor::scalar<float>(0.5f)}, {"t", Tensor::scalar<bool>(true)}};
  EXPECT_EQ(values<bool>(s.run(feeds)[1]), values<bool>(s.run(feeds)[1]));
}

// tools/gen_random_models.py: a PyTorch export with Dropout(training_mode=true) before an LSTM
// and RandomNormalLike noise after it, as TTS decoders keep them at inference.
TEST(RandomModels, APyTorchPrenetDrawsAlikeOnEveryProviderUnderOneSeed) {
  const std::string model =
      std::string(RECUR_TEST_DATA_DIR) + "/random/prenet_lstm_noise/model.onnx";
  std::vector<float> xv(3 * 7 * 8);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * static_cast<float>(i));
  const Feeds feeds = {{"x", tensor<float>({3, 7, 8}, xv)}};
  auto run_with = [&](const SessionOptions& o) {
    return values<float>(Session(model, o).run(feeds)[0]);
  };
  const std::vector<float> ref = run_with(SessionOptions().providers({"reference"}).random_seed(3));
  ASSERT_EQ(ref.size(), 3u * 7 * 4);
  // The random nodes run on the reference provider whatever the list, in the same order, so
  // one seed gives the same draws; only the LSTM and MatMuls move.
  for (const std::string& p : OpTester::runnable_providers()) {
    if (p == "reference") continue;
    const std::vector<float> got =
        run_with(SessionOptions().providers({p, "reference"}).random_seed(3));
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(got[i], ref[i], 1e-5 + 1e-3 * std::fabs(ref[i])) << p << " element " << i;
    }
  }
  EXPECT_EQ(ref, run_with(SessionOptions().providers({"reference"}).random_seed(3)));
  EXPECT_NE(ref, run_with(SessionOptions().providers({"reference"}).random_seed(4)));
  const Session unseeded(model, SessionOptions());
  EXPECT_NE(values<float>(unseeded.run(feeds)[0]), values<float>(unseeded.run(feeds)[0]));
}

}  // namespace
}  // namespace recur::test
