// The session: input validation, concurrent runs, options, explain, and run-time limits.
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::floats;
using testing::ModelBuilder;
using testing::TempDir;

// y = x + c with x float32[batch, 3].
std::string add_model(const TempDir& dir) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {-1, 3}, {"batch"});
  m.initializer("c", floats({3}, {1, 2, 3}));
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "c"}, {"y"}, "add");
  return m.save(dir.path());
}

TEST(Session, MissingInputNamesIt) {
  TempDir dir;
  Session s(add_model(dir));
  expect_error([&] { s.run({}); }, ErrorCode::kInvalidArgument, {"missing input 'x'", "[batch,3]"});
}

TEST(Session, UnknownInputNamesItAndTheRealOnes) {
  TempDir dir;
  Session s(add_model(dir));
  expect_error(
      [&] {
        s.run({{"x", floats({1, 3}, {0, 0, 0})}, {"z", floats({1}, {0})}});
      },
      ErrorCode::kInvalidArgument, {"unknown input 'z'", "x"});
}

TEST(Session, WrongDtypeRankOrShape) {
  TempDir dir;
  Session s(add_model(dir));
  expect_error(
      [&] {
        s.run({{"x", Tensor::from_vector<int64_t>({1, 3}, {1, 2, 3})}});
      },
      ErrorCode::kInvalidArgument, {"'x'", "int64", "float32"});
  expect_error(
      [&] {
        s.run({{"x", floats({3}, {1, 2, 3})}});
      },
      ErrorCode::kInvalidArgument, {"'x'", "rank 1", "rank 2"});
  expect_error(
      [&] {
        s.run({{"x", floats({1, 4}, {1, 2, 3, 4})}});
      },
      ErrorCode::kInvalidArgument, {"'x'", "dimension 1 must be 3"});
}

TEST(Session, FeedingAnInputTwiceIsAnError) {
  TempDir dir;
  Session s(add_model(dir));
  const Tensor x = floats({1, 3}, {1, 2, 3});
  expect_error([&] { s.run({{"x", x}, {"x", x}}); }, ErrorCode::kInvalidArgument, {"'x'", "twice"});
}

TEST(Session, ConcurrentRunsGiveTheSingleThreadedResult) {
  TempDir dir;
  Session s(add_model(dir));
  std::vector<Tensor> inputs;
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < 4; ++t) {
    std::vector<float> v(64 * 3);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t * 1000 + i) * 0.5f;
    inputs.push_back(floats({64, 3}, v));
    std::vector<float> e(v.size());
    for (size_t i = 0; i < v.size(); ++i) e[i] = v[i] + static_cast<float>(i % 3 + 1);
    expected.push_back(e);
  }
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 50; ++r) {
        Outputs o = s.run({{"x", inputs[static_cast<size_t>(t)]}});
        const float* y = o[0].data<float>();
        for (size_t i = 0; i < expected[static_cast<size_t>(t)].size(); ++i)
          bad[static_cast<size_t>(t)] += y[i] != expected[static_cast<size_t>(t)][i];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[static_cast<size_t>(t)], 0) << "thread " << t;
}

TEST(Session, UnknownProviderAndSetting) {
  TempDir dir;
  const auto path = add_model(dir);
  expect_error([&] { Session s(path, SessionOptions().providers({"tpu"})); },
               ErrorCode::kInvalidArgument, {"unknown provider 'tpu'", "reference"});
  expect_error([&] { Session s(path, SessionOptions().set("warp.speed", "9")); },
               ErrorCode::kInvalidArgument, {"warp.speed"});
  expect_error([&] { Session s(path, SessionOptions().set("reference.fast", "1")); },
               ErrorCode::kInvalidArgument, {"reference", "fast"});
}

// Providers pass the count to OpenMP as is: 100000 used to crash libgomp, -5 went unnoticed.
TEST(Session, ThreadsOutsideTheMachinesRangeAreRefused) {
  TempDir dir;
  const std::string model = add_model(dir);
  for (int n : {-5, -1, 100000, 40000}) {
    SCOPED_TRACE(n);
    expect_error([&] { Session s(model, SessionOptions{}.threads(n)); },
                 ErrorCode::kInvalidArgument,
                 {"threads must be 0 (automatic) or 1..", "got " + std::to_string(n)});
  }
  for (int n : {0, 1}) {
    Session s(model, SessionOptions{}.threads(n));
    Outputs out = s.run({{"x", floats({1, 3}, {1, 1, 1})}});
    EXPECT_EQ(out[0].data<float>()[2], 4.0f);
  }
}

TEST(Session, PlanOnlySessionsExplainButDoNotRun) {
  TempDir dir;
  Session s(add_model(dir), SessionOptions().providers({"reference"}).plan_only(true));
  ASSERT_EQ(s.assignment().size(), 1u);
  EXPECT_EQ(s.assignment()[0].provider, "reference");
  EXPECT_NE(s.explain().find("add"), std::string::npos);
  expect_error(
      [&] {
        s.run({{"x", floats({1, 3}, {1, 2, 3})}});
      },
      ErrorCode::kFailedPrecondition, {"plan_only"});
}

TEST(Session, SelectedOutputs) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("a", DType::kFloat32);
  m.output("b", DType::kFloat32);
  m.node("Add", {"x", "x"}, {"a"});
  m.node("Mul", {"x", "x"}, {"b"});
  Session s(m.save(dir.path()));
  RunOptions only_b;
  only_b.outputs = {"b"};
  Outputs o = s.run({{"x", floats({2}, {3, 4})}}, only_b);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o.name(0), "b");
  EXPECT_EQ(o[0].data<float>()[1], 16.0f);
  RunOptions missing;
  missing.outputs = {"c"};
  expect_error(
      [&] {
        s.run({{"x", floats({2}, {3, 4})}}, missing);
      },
      ErrorCode::kInvalidArgument, {"no output 'c'"});
}

// A run that asks for some outputs runs only the nodes they need: a node that only an
// unwanted output needs neither costs time nor fails the run (onnxruntime issue 16483).
TEST(Session, SelectedOutputsRunOnlyTheNodesTheyNeed) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.input("s", DType::kString, {1});
  m.output("b", DType::kFloat32);
  m.output("d", DType::kInt64);
  m.node("Add", {"x", "x"}, {"a"}, "add");
  auto& cast = m.node("Cast", {"s"}, {"d"}, "cast");
  testing::set_attr(cast, "to", int64_t{7});
  m.node("Mul", {"a", "x"}, {"b"}, "mul");
  Session s(m.save(dir.path()), SessionOptions().profile(""));
  const Tensor word = Tensor::from_vector<std::string>({1}, {"foo"});
  const Tensor x = floats({2}, {3, 4});
  RunOptions only_b;
  only_b.outputs = {"b"};
  Outputs o = s.run({{"x", x}, {"s", word}}, only_b);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].data<float>()[0], 18.0f);
  EXPECT_EQ(o[0].data<float>()[1], 32.0f);
  for (const ProfileEvent& e : s.profile()) EXPECT_NE(e.name, "cast");
  // Asking for every output runs the Cast, which cannot parse "foo".
  expect_error(
      [&] {
        s.run({{"x", x}, {"s", word}});
      },
      ErrorCode::kInvalidArgument, {"cast", "foo"});
  RunOptions only_d;
  only_d.outputs = {"d"};
  o = s.run({{"x", x}, {"s", Tensor::from_vector<std::string>({1}, {"12"})}}, only_d);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].data<int64_t>()[0], 12);
  size_t muls = 0;
  for (const ProfileEvent& e : s.profile()) muls += e.name == "mul";
  EXPECT_EQ(muls, 1u);  // the first run's; not the failed run's (the Cast came first) nor the last
}

// Random nodes run whichever outputs are asked for, so that with a fixed seed an output has
// the same values in a run that asks for it alone as in one that asks for everything. The
// first draw is made by a node of its own, or inside an If's branch.
TEST(Session, SelectedOutputsKeepTheRandomDraws) {
  for (const bool in_branch : {false, true}) {
    SCOPED_TRACE(in_branch ? "in a branch" : "a node");
    TempDir dir;
    ModelBuilder m;
    m.input("c", DType::kBool, {});
    m.output("first", DType::kFloat32);
    m.output("second", DType::kFloat32);
    if (in_branch) {
      onnx::GraphProto branch;
      branch.set_name("draws");
      auto* n = branch.add_node();
      n->set_op_type("RandomUniform");
      n->add_output("drawn");
      testing::set_attr(*n, "shape", std::vector<int64_t>{4});
      branch.add_output()->set_name("drawn");
      auto& iff = m.node("If", {"c"}, {"first"}, "branching");
      testing::set_attr(iff, "then_branch", branch);
      testing::set_attr(iff, "else_branch", branch);
    } else {
      auto& n = m.node("RandomUniform", {}, {"first"}, "draw_first");
      testing::set_attr(n, "shape", std::vector<int64_t>{4});
    }
    auto& n = m.node("RandomUniform", {}, {"second"}, "draw_second");
    testing::set_attr(n, "shape", std::vector<int64_t>{4});
    Session s(m.save(dir.path()), SessionOptions().random_seed(7));
    const Feeds feeds = {{"c", Tensor::scalar(true)}};
    const Outputs all = s.run(feeds);
    RunOptions only_second;
    only_second.outputs = {"second"};
    const Outputs second = s.run(feeds, only_second);
    ASSERT_EQ(second.size(), 1u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(second[0].data<float>()[i], all[1].data<float>()[i]);
  }
}

TEST(Session, ConstantNodesWithAndWithoutOptimisation) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  auto& k = m.node("Constant", {}, {"k"}, "konst");
  auto* a = k.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(1);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->add_float_data(10);
  a->mutable_t()->add_float_data(20);
  m.node("Add", {"x", "k"}, {"y"});
  const auto path = m.save(dir.path());
  for (bool optimize : {true, false}) {
    Session s(path, SessionOptions().optimize(optimize));
    Outputs o = s.run({{"x", floats({2}, {1, 2})}});
    EXPECT_EQ(o[0].data<float>()[1], 22.0f) << "optimize=" << optimize;
    // Folded into an initializer, the Constant node no longer appears in the assignment.
    EXPECT_EQ(s.assignment().size(), optimize ? 1u : 2u);
  }
}

// Loop with a trip count input M and one loop-carried value, adding 1 per iteration. With
// `stops_after`, the body's cond output ends the loop after that many iterations (iter + 1 <
// stops_after), as a scripted `while` or `break` does.
std::string counting_loop(const TempDir& dir, std::optional<int64_t> stops_after = {}) {
  ModelBuilder m;
  m.input("m", DType::kInt64, {});
  m.input("v0", DType::kFloat32, {1});
  m.initializer("one", floats({1}, {1}));
  if (stops_after) m.initializer("last", Tensor::scalar<int64_t>(*stops_after - 1));
  m.output("v", DType::kFloat32);
  onnx::GraphProto body;
  body.set_name("body");
  auto add_input = [&](const char* name, int type) {
    auto* i = body.add_input();
    i->set_name(name);
    i->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  };
  add_input("iter", 7);
  add_input("cond_in", 9);
  add_input("v_in", 1);
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->add_input("v_in");
  add->add_input("one");  // captured from the outer graph
  add->add_output("v_out");
  auto* keep = body.add_node();
  keep->set_op_type(stops_after ? "Less" : "Identity");
  keep->add_input(stops_after ? "iter" : "cond_in");
  if (stops_after) keep->add_input("last");
  keep->add_output("cond_out");
  body.add_output()->set_name("cond_out");
  body.add_output()->set_name("v_out");
  auto& loop = m.node("Loop", {"m", "", "v0"}, {"v"}, "counter");
  testing::set_attr(loop, "body", body);
  return m.save(dir.path());
}

TEST(Session, LoopRunsAndCapturesOuterValues) {
  TempDir dir;
  Session s(counting_loop(dir));
  Outputs o = s.run({{"m", Tensor::scalar<int64_t>(7)}, {"v0", floats({1}, {0.5f})}});
  EXPECT_EQ(o[0].data<float>()[0], 7.5f);
  Outputs zero = s.run({{"m", Tensor::scalar<int64_t>(0)}, {"v0", floats({1}, {0.5f})}});
  EXPECT_EQ(zero[0].data<float>()[0], 0.5f);
}

// A negative M runs no iteration (ONNX Runtime's reading; Python's range(-5) is empty too), so
// the carried value comes out as it went in.
TEST(Session, LoopNegativeTripCountRunsNoIteration) {
  TempDir dir;
  Session s(counting_loop(dir), SessionOptions().max_loop_iterations(1000));
  Outputs o = s.run({{"m", Tensor::scalar<int64_t>(-5)}, {"v0", floats({1}, {0.5f})}});
  EXPECT_EQ(o[0].data<float>()[0], 0.5f);
  Outputs min = s.run({{"m", Tensor::scalar<int64_t>(INT64_MIN)}, {"v0", floats({1}, {2})}});
  EXPECT_EQ(min[0].data<float>()[0], 2.0f);
}

TEST(Session, LoopTripCountAboveTheLimit) {
  TempDir dir;
  Session s(counting_loop(dir), SessionOptions().max_loop_iterations(1000));
  expect_error(
      [&] {
        s.run({{"m", Tensor::scalar<int64_t>(int64_t{1} << 60)}, {"v0", floats({1}, {0})}});
      },
      ErrorCode::kOutOfRange, {"counter", "ran 1000 iterations", "limit is 1000"});
}

// PyTorch writes a scripted loop that can `break` as a Loop whose M is INT64_MAX: M is an upper
// bound, and only the iterations that run count against max_loop_iterations.
TEST(Session, LoopTripCountAboveTheLimitEndedByItsCond) {
  TempDir dir;
  Session s(counting_loop(dir, 5), SessionOptions().max_loop_iterations(1000));
  Outputs o = s.run({{"m", Tensor::scalar<int64_t>(INT64_MAX)}, {"v0", floats({1}, {0.5f})}});
  EXPECT_EQ(o[0].data<float>()[0], 5.5f);
  Outputs fewer = s.run({{"m", Tensor::scalar<int64_t>(3)}, {"v0", floats({1}, {0.5f})}});
  EXPECT_EQ(fewer[0].data<float>()[0], 3.5f);
}

}  // namespace
}  // namespace recur

namespace recur {
namespace {

TEST(Tensor, OverflowingShapesFailCleanly) {
  EXPECT_EQ(shape_numel({int64_t{1} << 32, int64_t{1} << 32, 0}), 0);
  EXPECT_EQ(shape_numel({int64_t{1} << 40, int64_t{1} << 40}), INT64_MAX);
  testing::expect_error(
      [] {
        Tensor::empty(DType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40});
      },
      ErrorCode::kOutOfRange, {"too large"});
  testing::expect_error([] { Tensor::empty(DType::kFloat64, {int64_t{1} << 62}); },
                        ErrorCode::kOutOfRange, {"too large"});
}

}  // namespace
}  // namespace recur
