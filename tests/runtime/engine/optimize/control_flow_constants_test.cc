// Constants inside control flow (runtime/engine/optimize/fold_constants.h): an LSTM inside an If
// branch or a Loop body whose weights are the subgraph's initializers, its Constant nodes, the
// outer graph's initializers, or values computed from those, sees them as constants: its
// weights are repacked once at load, never per run (counted by runtime/provider/repack_count.h),
// and the outputs are those of the reference provider on the unoptimised graph.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "runtime/provider/repack_count.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"
#include "tests/support/plan_run.h"

namespace recur::testing {
namespace {

constexpr int64_t kT = 2, kN = 1, kI = 4, kH = 3;

enum class Weights {
  kSubgraphInitializers,  // W, R, B are initializers of the branch or body
  kSubgraphConstants,     // Constant nodes of the branch or body
  kOuterInitializers,     // initializers of the main graph, read from inside
  kOuterComputed,         // Unsqueeze, inside, of the main graph's 2-D initializers
  kGraphInput,            // W is a graph input: repacked on every run (the control case)
};

Tensor pattern(const Shape& shape, float phase) { return sine_wave(shape, phase, 0.7f, 0.4f); }

Tensor weight(char which) {
  if (which == 'W') return pattern({1, 4 * kH, kI}, 0.1f);
  if (which == 'R') return pattern({1, 4 * kH, kH}, 0.2f);
  return pattern({1, 8 * kH}, 0.3f);
}

void typed_output(onnx::GraphProto& g, const std::string& name, int elem_type) {
  auto* o = g.add_output();
  o->set_name(name);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

void typed_input(onnx::GraphProto& g, const std::string& name, int elem_type) {
  auto* i = g.add_input();
  i->set_name(name);
  i->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

void add_initializer(onnx::GraphProto& g, const std::string& name, const Tensor& t) {
  ASSERT_TRUE(tensor_to_proto(t, name, g.add_initializer()).ok());
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op,
                          const std::vector<std::string>& in, const std::vector<std::string>& out) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out.front());
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

// Puts W, R and B where `w` says: into the subgraph `sub` or the main graph `m`.
void place_weights(ModelBuilder& m, onnx::GraphProto& sub, Weights w) {
  for (char c : {'W', 'R', 'B'}) {
    const std::string name(1, c);
    const Tensor t = weight(c);
    switch (w) {
      case Weights::kSubgraphInitializers:
        add_initializer(sub, name, t);
        break;
      case Weights::kSubgraphConstants: {
        auto* a = add_node(sub, "Constant", {}, {name})->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        ASSERT_TRUE(tensor_to_proto(t, "", a->mutable_t()).ok());
        break;
      }
      case Weights::kOuterInitializers:
        m.initializer(name, t);
        break;
      case Weights::kOuterComputed: {
        Shape flat(t.shape().begin() + 1, t.shape().end());
        m.initializer(name + "2d",
                      Tensor::from_vector<float>(
                          flat, std::vector<float>(t.data<float>(), t.data<float>() + t.numel())));
        add_node(sub, "Unsqueeze", {name + "2d", "axis0"}, {name});
        break;
      }
      case Weights::kGraphInput:
        if (c == 'W') {
          m.input(name, DType::kFloat32, {1, 4 * kH, kI});
        } else {
          m.initializer(name, t);
        }
        break;
    }
  }
  if (w == Weights::kOuterComputed) {
    add_initializer(sub, "axis0", Tensor::from_vector<int64_t>({1}, {0}));
  }
}

void add_lstm(onnx::GraphProto& g, const std::string& yh) {
  set_attr(*add_node(g, "LSTM", {"x", "W", "R", "B"}, {"", yh}), "hidden_size", kH);
}

// yh = If(c) then LSTM(x, W, R, B).Y_h else zeros.
std::string lstm_in_if(const TempDir& dir, Weights w) {
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {kT, kN, kI});
  m.input("c", DType::kBool, {});
  m.output("yh", DType::kFloat32);
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  place_weights(m, then_g, w);
  add_lstm(then_g, "yh_t");
  typed_output(then_g, "yh_t", onnx::TensorProto::FLOAT);
  add_initializer(else_g, "zeros", floats({1, kN, kH}, {0, 0, 0}));
  add_node(else_g, "Identity", {"zeros"}, {"yh_e"});
  typed_output(else_g, "yh_e", onnx::TensorProto::FLOAT);
  auto& node = m.node("If", {"c"}, {"yh"}, "choose");
  set_attr(node, "then_branch", then_g);
  set_attr(node, "else_branch", else_g);
  return m.save(dir.path());
}

// acc = Loop(m) { acc + LSTM(x, W, R, B).Y_h } (zeros).
std::string lstm_in_loop(const TempDir& dir, Weights w) {
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {kT, kN, kI});
  m.input("m", DType::kInt64, {});
  m.initializer("acc0", floats({1, kN, kH}, {0, 0, 0}));
  m.output("acc", DType::kFloat32);
  onnx::GraphProto body;
  body.set_name("body");
  typed_input(body, "iter", onnx::TensorProto::INT64);
  typed_input(body, "cond_in", onnx::TensorProto::BOOL);
  typed_input(body, "acc_in", onnx::TensorProto::FLOAT);
  place_weights(m, body, w);
  add_lstm(body, "yh_b");
  add_node(body, "Add", {"acc_in", "yh_b"}, {"acc_out"});
  add_node(body, "Identity", {"cond_in"}, {"cond_out"});
  typed_output(body, "cond_out", onnx::TensorProto::BOOL);
  typed_output(body, "acc_out", onnx::TensorProto::FLOAT);
  set_attr(m.node("Loop", {"m", "", "acc0"}, {"acc"}, "repeat"), "body", body);
  return m.save(dir.path());
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return INFINITY;
  float d = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    d = std::max(d, std::fabs(a.data<float>()[i] - b.data<float>()[i]));
  return d;
}

// Runs the model three times on each provider that runs here (with the reference provider
// behind it for the other nodes): outputs as the reference provider's on the unoptimised
// graph, and `repacks_per_run` run-time weight repacks per run.
void check_runs(const std::string& path, const Feeds& feeds, int64_t repacks_per_run) {
  const Outputs want =
      Session(path, SessionOptions().providers({"reference"}).optimize(false)).run(feeds);
  for (const std::string& p : test::OpTester::runnable_providers()) {
    std::vector<std::string> chain = {p};
    if (p != "reference") chain.push_back("reference");
    Session s(path, SessionOptions().providers(chain));
    const int64_t before = run_time_repacks();
    for (int run = 0; run < 3; ++run) {
      const Outputs got = s.run(feeds);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_LT(max_abs_diff(got[i], want[i]), 1e-5f) << p << ", output " << i;
    }
    EXPECT_EQ(run_time_repacks() - before, 3 * repacks_per_run) << p << "\n" << s.explain();
  }
}

Feeds if_feeds(Weights w, bool c) {
  Feeds f = {{"x", pattern({kT, kN, kI}, 0.5f)}, {"c", Tensor::scalar(c)}};
  if (w == Weights::kGraphInput) f.emplace_back("W", weight('W'));
  return f;
}

class LstmInControlFlow : public ::testing::TestWithParam<Weights> {};

TEST_P(LstmInControlFlow, IfBranchWeightsAreRepackedOnceAtLoad) {
  TempDir dir;
  const std::string path = lstm_in_if(dir, GetParam());
  const int64_t per_run = GetParam() == Weights::kGraphInput ? 1 : 0;
  check_runs(path, if_feeds(GetParam(), true), per_run);
  check_runs(path, if_feeds(GetParam(), false), 0);  // the other branch has no LSTM
}

TEST_P(LstmInControlFlow, LoopBodyWeightsAreRepackedOnceAtLoad) {
  TempDir dir;
  const std::string path = lstm_in_loop(dir, GetParam());
  Feeds f = {{"x", pattern({kT, kN, kI}, 0.5f)}, {"m", Tensor::scalar<int64_t>(2)}};
  if (GetParam() == Weights::kGraphInput) f.emplace_back("W", weight('W'));
  // Two iterations per run: with W a graph input, two repacks.
  check_runs(path, f, GetParam() == Weights::kGraphInput ? 2 : 0);
}

std::string weights_name(const ::testing::TestParamInfo<Weights>& info) {
  static const char* const kNames[] = {"SubgraphInitializers", "SubgraphConstants",
                                       "OuterInitializers", "OuterComputed", "GraphInputControl"};
  return kNames[static_cast<int>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Weights, LstmInControlFlow,
                         ::testing::Values(Weights::kSubgraphInitializers,
                                           Weights::kSubgraphConstants, Weights::kOuterInitializers,
                                           Weights::kOuterComputed, Weights::kGraphInput),
                         weights_name);

TEST(ControlFlowConstants, WeightsComputedInsideTheBranchFoldAtLoad) {
  // The Unsqueeze of each outer initializer runs once, at load, and the LSTM transposes the
  // results then.
  TempDir dir;
  Session s(lstm_in_if(dir, Weights::kOuterComputed), SessionOptions().providers({"reference"}));
  const std::string e = s.explain();
  for (const char* folded : {"Unsqueeze_W", "Unsqueeze_R", "Unsqueeze_B"})
    EXPECT_NE(e.find(folded), std::string::npos) << e;
  EXPECT_NE(e.find("transposed for the GEMMs at load"), std::string::npos) << e;
}

TEST(ControlFlowConstants, IfOutputsAndOuterReadsAreNotCopied) {
  // y = If(c) then Identity(x) else Identity(x): the branch reads x where it is and its output
  // becomes the If's output, so the session returns the fed memory itself.
  TempDir dir;
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {4});
  m.input("c", DType::kBool, {});
  m.output("y", DType::kFloat32);
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  add_node(then_g, "Identity", {"x"}, {"y_t"});
  typed_output(then_g, "y_t", onnx::TensorProto::FLOAT);
  add_node(else_g, "Identity", {"x"}, {"y_e"});
  typed_output(else_g, "y_e", onnx::TensorProto::FLOAT);
  auto& node = m.node("If", {"c"}, {"y"}, "choose");
  set_attr(node, "then_branch", then_g);
  set_attr(node, "else_branch", else_g);
  // Looked at inside the run (the plan's frame): a Session copies an output that views a feed,
  // since the caller owns the feed's memory.
  auto run = ReferencePlanRun::load(m.bytes());
  ASSERT_TRUE(run.ok()) << run.status().message();
  const Tensor x = floats({4}, {1, 2, 3, 4});
  for (bool c : {true, false}) {
    auto y = run.value()->run({x, Tensor::scalar(c)});
    ASSERT_TRUE(y.ok()) << y.status().message();
    EXPECT_EQ(y.value()[0].raw_data(), x.raw_data()) << "branch " << c;
  }
  // And a Session still returns the values.
  Session s(m.save(dir.path()), SessionOptions().providers({"reference"}));
  const Outputs out = s.run({{"x", x}, {"c", Tensor::scalar(true)}});
  EXPECT_EQ(std::memcmp(out[0].raw_data(), x.raw_data(), 4 * sizeof(float)), 0);
}

}  // namespace
}  // namespace recur::testing
