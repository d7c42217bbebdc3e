// Schema validation at load: unknown, mistyped and missing attributes, input and output counts,
// allowed attribute values, nodes inside subgraphs, how a node's opset picks its operator
// version (ai.onnx 1..26, ai.onnx.ml 1..5), each error naming the file, node and attribute.
#include <gtest/gtest.h>

#include <functional>

#include "recur/recur.h"
#include "runtime/engine/onnx/model_loader.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::ModelBuilder;
using testing::set_attr;
using testing::TempDir;

// The loader's verdict on `m`: "" if it loads, else the error message.
std::string load_error(const ModelBuilder& m, bool strict = true) {
  LoadOptions o;
  o.strict_schema = strict;
  const std::string bytes = m.bytes();
  auto r = load_model_from_bytes(bytes.data(), bytes.size(), ".", "model.onnx", o);
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidModel) << r.status().message();
  return r.status().message();
}

#define EXPECT_HAS(text, part)                               \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "'" << (part) << "' not in: " << (text)

ModelBuilder relu_model(int opset = 17) {
  ModelBuilder m(opset);
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  return m;
}

// A forward LSTM (or GRU, RNN) node 'lstm_1' over X[1,1,2] with hidden size 3, whose
// attributes `edit` sets.
ModelBuilder rnn_model(const std::string& op, const std::function<void(onnx::NodeProto&)>& edit,
                       int opset = 17) {
  const int gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  ModelBuilder m(opset);
  m.input("X", DType::kFloat32, {1, 1, 2});
  m.initializer("W", testing::floats({1, gates * 3, 2}, std::vector<float>(gates * 6, 0.1f)));
  m.initializer("R", testing::floats({1, gates * 3, 3}, std::vector<float>(gates * 9, 0.1f)));
  m.output("Y", DType::kFloat32);
  auto& n = m.node(op, {"X", "W", "R"}, {"Y"}, "lstm_1");
  set_attr(n, "hidden_size", int64_t{3});
  edit(n);
  return m;
}

TEST(SchemaCheck, ValidModelsLoad) {
  ModelBuilder m = relu_model();
  m.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_EQ(load_error(m), "");
  EXPECT_EQ(load_error(rnn_model(
                "LSTM",
                [](onnx::NodeProto& n) {
                  set_attr(n, "direction", std::string("forward"));
                  set_attr(n, "input_forget", int64_t{1});
                  set_attr(n, "clip", 2.0f);
                  set_attr(n, "activations", std::vector<std::string>{"Sigmoid", "tanh", "Relu"});
                })),
            "");
}

TEST(SchemaCheck, UnknownAttributeIsAnError) {
  TempDir dir;
  ModelBuilder m = relu_model();
  set_attr(m.node("Relu", {"x"}, {"y"}, "relu"), "alpha_typo", 1.0f);
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel,
               {path, "node 'relu' (Relu)", "unknown attribute 'alpha_typo'"});
}

TEST(SchemaCheck, UnknownAttributeIsAWarningWhenNotStrict) {
  TempDir dir;
  ModelBuilder m = relu_model();
  set_attr(m.node("Relu", {"x"}, {"y"}, "relu"), "alpha_typo", 1.0f);
  const auto path = m.save(dir.path());
  ::testing::internal::CaptureStderr();
  Session s(path, SessionOptions().providers({"reference"}).strict_schema(false));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(s.warnings().size(), 1u);
  EXPECT_HAS(s.warnings()[0], "node 'relu' (Relu)");
  EXPECT_HAS(s.warnings()[0], "'alpha_typo'");
  EXPECT_HAS(err, "warning");
  EXPECT_HAS(err, "'alpha_typo'");
  EXPECT_HAS(s.explain(), "'alpha_typo'");
  // Other violations stay errors.
  ModelBuilder bad = relu_model();
  bad.node("Relu", {"x", "x"}, {"y"}, "relu");
  EXPECT_HAS(load_error(bad, false), "has 2 inputs");
}

TEST(SchemaCheck, AttributeOfTheWrongType) {
  ModelBuilder m(17);
  m.input("a", DType::kFloat32, {2, 2});
  m.input("b", DType::kFloat32, {2, 2});
  m.output("y", DType::kFloat32);
  set_attr(m.node("Gemm", {"a", "b"}, {"y"}, "gemm"), "alpha", int64_t{2});
  const std::string e = load_error(m);
  EXPECT_HAS(e, "model.onnx: node 'gemm' (Gemm): attribute 'alpha' must be a float, got int");
}

TEST(SchemaCheck, MissingRequiredAttribute) {
  ModelBuilder m = relu_model();
  m.node("Cast", {"x"}, {"y"}, "cast");
  EXPECT_HAS(load_error(m), "node 'cast' (Cast): required attribute 'to' is missing");
}

TEST(SchemaCheck, TooManyInputs) {
  ModelBuilder m = relu_model();
  m.node("Relu", {"x", "x"}, {"y"}, "relu");
  EXPECT_HAS(load_error(m), "node 'relu' (Relu): has 2 inputs; Relu-17 takes 1");
}

TEST(SchemaCheck, TooFewInputs) {
  ModelBuilder m = rnn_model("LSTM", [](onnx::NodeProto& n) { n.mutable_input()->RemoveLast(); });
  EXPECT_HAS(load_error(m), "node 'lstm_1' (LSTM): has 2 inputs; LSTM-17 takes 3 to 8");
}

TEST(SchemaCheck, TooManyOutputs) {
  ModelBuilder m = relu_model();
  m.node("Relu", {"x"}, {"y", "z"}, "relu");
  EXPECT_HAS(load_error(m), "node 'relu' (Relu): has 2 outputs; Relu-17 takes 1");
}

TEST(SchemaCheck, AttributeGivenTwice) {
  ModelBuilder m =
      rnn_model("GRU", [](onnx::NodeProto& n) { set_attr(n, "hidden_size", int64_t{0}); });
  EXPECT_HAS(load_error(m), "node 'lstm_1' (GRU): attribute 'hidden_size' is given twice");
}

TEST(SchemaCheck, TrailingOmittedOptionalInputsAreFine) {
  // LSTM-17 takes at most 8 inputs; omitted ones at the end do not count.
  ModelBuilder m = rnn_model("LSTM", [](onnx::NodeProto& n) {
    for (int i = 0; i < 7; ++i) n.add_input("");
  });
  EXPECT_EQ(load_error(m), "");
  ModelBuilder too_many = rnn_model("LSTM", [](onnx::NodeProto& n) {
    for (int i = 0; i < 5; ++i) n.add_input("");
    n.add_input("X");
  });
  EXPECT_HAS(load_error(too_many), "has 9 inputs; LSTM-17 takes 3 to 8");
}

TEST(SchemaCheck, RnnInputForgetAndLinearBeforeReset) {
  const std::string e = load_error(
      rnn_model("LSTM", [](onnx::NodeProto& n) { set_attr(n, "input_forget", int64_t{5}); }));
  EXPECT_EQ(e, "model.onnx: node 'lstm_1' (LSTM): attribute 'input_forget' must be 0 or 1, got 5");
  EXPECT_HAS(
      load_error(rnn_model(
          "GRU", [](onnx::NodeProto& n) { set_attr(n, "linear_before_reset", int64_t{7}); })),
      "node 'lstm_1' (GRU): attribute 'linear_before_reset' must be 0 or 1, got 7");
  // Each belongs to its own operator.
  EXPECT_HAS(load_error(rnn_model(
                 "GRU", [](onnx::NodeProto& n) { set_attr(n, "input_forget", int64_t{0}); })),
             "unknown attribute 'input_forget'");
}

TEST(SchemaCheck, RnnDirectionLayoutHiddenSizeClip) {
  EXPECT_HAS(
      load_error(rnn_model(
          "RNN", [](onnx::NodeProto& n) { set_attr(n, "direction", std::string("sideways")); })),
      "attribute 'direction' must be 'forward', 'reverse' or 'bidirectional', got "
      "'sideways'");
  EXPECT_HAS(
      load_error(rnn_model("LSTM", [](onnx::NodeProto& n) { set_attr(n, "layout", int64_t{2}); })),
      "node 'lstm_1' (LSTM): attribute 'layout' must be 0 or 1, got 2");
  EXPECT_HAS(
      load_error(rnn_model("GRU", [](onnx::NodeProto& n) { n.mutable_attribute(0)->set_i(0); })),
      "attribute 'hidden_size' must be positive, got 0");
  EXPECT_HAS(load_error(rnn_model("LSTM", [](onnx::NodeProto& n) { set_attr(n, "clip", -1.0f); })),
             "attribute 'clip' must be positive");
}

TEST(SchemaCheck, RnnActivations) {
  EXPECT_HAS(load_error(rnn_model(
                 "LSTM",
                 [](onnx::NodeProto& n) {
                   set_attr(n, "activations", std::vector<std::string>{"Sigmoid", "Tanh", "Swish"});
                 })),
             "node 'lstm_1' (LSTM): attribute 'activations' lists the unknown activation 'Swish'");
  EXPECT_HAS(load_error(rnn_model(
                 "GRU",
                 [](onnx::NodeProto& n) {
                   set_attr(n, "activations", std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"});
                 })),
             "attribute 'activations' lists 3 functions; a single-direction GRU takes 2");
  // Bidirectional: one set per direction, or one set for both.
  for (size_t count : {1u, 2u}) {
    EXPECT_EQ(load_error(rnn_model("RNN",
                                   [count](onnx::NodeProto& n) {
                                     set_attr(n, "direction", std::string("bidirectional"));
                                     set_attr(n, "activations",
                                              std::vector<std::string>(count, "Tanh"));
                                   })),
              "")
        << count;
  }
}

TEST(SchemaCheck, OtherEnumAttributes) {
  auto pad = [](int opset, const std::string& mode) {
    ModelBuilder m(opset);
    m.input("x", DType::kFloat32, {2});
    m.input("pads", DType::kInt64, {2});
    m.output("y", DType::kFloat32);
    set_attr(m.node("Pad", {"x", "pads"}, {"y"}, "pad"), "mode", mode);
    return m;
  };
  EXPECT_EQ(load_error(pad(17, "reflect")), "");
  // 'wrap' arrived with Pad-19.
  EXPECT_HAS(load_error(pad(18, "wrap")),
             "node 'pad' (Pad): attribute 'mode' must be 'constant', 'reflect' or 'edge', got "
             "'wrap'");
  EXPECT_EQ(load_error(pad(19, "wrap")), "");

  ModelBuilder resize(13);
  resize.input("x", DType::kFloat32, {1, 1, 2, 2});
  resize.input("scales", DType::kFloat32, {4});
  resize.output("y", DType::kFloat32);
  set_attr(resize.node("Resize", {"x", "", "scales"}, {"y"}, "up"), "mode",
           std::string("bilinear"));
  EXPECT_HAS(load_error(resize),
             "node 'up' (Resize): attribute 'mode' must be 'nearest', 'linear' or 'cubic', got "
             "'bilinear'");

  ModelBuilder d2s = relu_model();
  auto& n = d2s.node("DepthToSpace", {"x"}, {"y"}, "d2s");
  set_attr(n, "blocksize", int64_t{2});
  set_attr(n, "mode", std::string("dcr"));
  EXPECT_HAS(load_error(d2s), "attribute 'mode' must be 'DCR' or 'CRD', got 'dcr'");
}

// then_branch of If: a node with an unknown attribute.
onnx::GraphProto branch(const std::string& node_name, bool valid) {
  ModelBuilder b;
  b.output("t", DType::kFloat32);
  auto& n = b.node("Identity", {"x"}, {"t"}, node_name);
  if (!valid) set_attr(n, "axis", int64_t{0});
  return b.graph();
}

TEST(SchemaCheck, InvalidNodeInIfBranch) {
  auto model = [](bool valid) {
    ModelBuilder m;
    m.input("c", DType::kBool, {});
    m.input("x", DType::kFloat32, {2});
    m.output("y", DType::kFloat32);
    auto& n = m.node("If", {"c"}, {"y"}, "if");
    set_attr(n, "then_branch", branch("inner", valid));
    set_attr(n, "else_branch", branch("other", true));
    return m;
  };
  EXPECT_EQ(load_error(model(true)), "");
  const std::string e = load_error(model(false));
  EXPECT_HAS(e, "subgraph 'then_branch' of node 'if' (If)");
  EXPECT_HAS(e, "node 'inner' (Identity): unknown attribute 'axis'");
}

TEST(SchemaCheck, InvalidNodeInLoopBody) {
  auto model = [](bool valid) {
    ModelBuilder body;
    body.input("i", DType::kInt64, {});
    body.input("cond_in", DType::kBool, {});
    body.input("acc", DType::kFloat32, {2});
    body.output("cond_out", DType::kBool);
    body.output("acc_out", DType::kFloat32);
    body.node("Identity", {"cond_in"}, {"cond_out"}, "keep");
    if (valid) {
      body.node("Relu", {"acc"}, {"acc_out"}, "step");
    } else {
      body.node("Relu", {"acc", "acc"}, {"acc_out"}, "step");
    }
    ModelBuilder m;
    m.input("n", DType::kInt64, {});
    m.input("c", DType::kBool, {});
    m.input("x", DType::kFloat32, {2});
    m.output("y", DType::kFloat32);
    set_attr(m.node("Loop", {"n", "c", "x"}, {"y"}, "loop"), "body", body.graph());
    return m;
  };
  EXPECT_EQ(load_error(model(true)), "");
  const std::string e = load_error(model(false));
  EXPECT_HAS(e, "subgraph 'body' of node 'loop' (Loop)");
  EXPECT_HAS(e, "node 'step' (Relu): has 2 inputs");
}

// Split-18 added num_outputs and ReduceMax-18 moved axes from an attribute to an input (ONNX
// 1.12's registry, which recur used up to opset 17, knew neither).
TEST(SchemaCheck, OperatorVersionsAfterOpset17) {
  auto split = [](int opset) {
    ModelBuilder m(opset);
    m.input("x", DType::kFloat32, {4});
    m.output("a", DType::kFloat32);
    m.output("b", DType::kFloat32);
    set_attr(m.node("Split", {"x"}, {"a", "b"}, "split"), "num_outputs", int64_t{2});
    return m;
  };
  EXPECT_EQ(load_error(split(18)), "");
  EXPECT_EQ(load_error(split(22)), "");
  EXPECT_HAS(load_error(split(17)),
             "node 'split' (Split): unknown attribute 'num_outputs' (not in the schema of "
             "Split-17; it needs opset 18)");

  auto reduce = [](int opset) {
    ModelBuilder m(opset);
    m.input("x", DType::kFloat32, {2, 2});
    m.output("y", DType::kFloat32);
    set_attr(m.node("ReduceMax", {"x"}, {"y"}, "rmax"), "axes", std::vector<int64_t>{1});
    return m;
  };
  EXPECT_EQ(load_error(reduce(17)), "");
  EXPECT_HAS(load_error(reduce(18)), "node 'rmax' (ReduceMax): unknown attribute 'axes'");

  // Gelu exists only from opset 20 on.
  ModelBuilder gelu = relu_model(20);
  set_attr(gelu.node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", std::string("fast"));
  EXPECT_HAS(load_error(gelu),
             "node 'gelu' (Gelu): attribute 'approximate' must be 'none' or 'tanh', got 'fast'");
}

// A node gets its operator's latest version at or below its opset: LSTM-7 up to opset 13,
// LSTM-14 (which added layout) from 14 on. Facts from ONNX's Operators.md and Changelog.md.
TEST(SchemaCheck, OpsetPicksTheLatestVersionAtOrBelowIt) {
  auto layout = [](int opset) {
    return rnn_model(
        "LSTM", [](onnx::NodeProto& n) { set_attr(n, "layout", int64_t{0}); }, opset);
  };
  EXPECT_EQ(load_error(layout(14)), "");
  EXPECT_EQ(load_error(layout(21)), "");
  EXPECT_HAS(load_error(layout(13)),
             "node 'lstm_1' (LSTM): unknown attribute 'layout' (not in the schema of LSTM-13; "
             "it needs opset 14)");
  EXPECT_HAS(load_error(layout(7)), "it needs opset 14)");

  // Relu-1 had consumed_inputs; Relu-6 dropped it.
  auto relu = [](int opset) {
    ModelBuilder m = relu_model(opset);
    set_attr(m.node("Relu", {"x"}, {"y"}, "relu"), "consumed_inputs", std::vector<int64_t>{0});
    return m;
  };
  EXPECT_EQ(load_error(relu(1)), "");
  EXPECT_EQ(load_error(relu(5)), "");
  EXPECT_HAS(load_error(relu(6)), "node 'relu' (Relu): unknown attribute 'consumed_inputs'");

  // Gelu-20 is the first Gelu: at opset 19 the loader has no schema for it and leaves the node
  // to the providers.
  auto gelu = [](int opset) {
    ModelBuilder m = relu_model(opset);
    set_attr(m.node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", std::string("fast"));
    return m;
  };
  EXPECT_EQ(load_error(gelu(19)), "");
  EXPECT_HAS(load_error(gelu(20)), "attribute 'approximate' must be 'none' or 'tanh'");
}

// ai.onnx.ml: LabelEncoder-2 added keys_floats and LabelEncoder-4 keys_tensor (Changelog-ml.md).
TEST(SchemaCheck, MlDomainVersions) {
  auto encoder = [](int ml_opset, const std::string& attr) {
    ModelBuilder m = relu_model();
    m.opset("ai.onnx.ml", ml_opset);
    auto& n = m.node("LabelEncoder", {"x"}, {"y"}, "enc", "ai.onnx.ml");
    set_attr(n, attr, std::vector<float>{1.0f});
    return m;
  };
  EXPECT_EQ(load_error(encoder(2, "keys_floats")), "");
  EXPECT_EQ(load_error(encoder(5, "keys_floats")), "");
  EXPECT_HAS(load_error(encoder(1, "keys_floats")),
             "node 'enc' (ai.onnx.ml::LabelEncoder): unknown attribute 'keys_floats' (not in the "
             "schema of LabelEncoder-1; it needs opset 2)");
  EXPECT_HAS(load_error(encoder(3, "keys_tensor")),
             "unknown attribute 'keys_tensor' (not in the schema of LabelEncoder-3; it needs "
             "opset 4)");
  // keys_tensor is a tensor, not a list of floats.
  EXPECT_HAS(load_error(encoder(4, "keys_tensor")),
             "attribute 'keys_tensor' must be a tensor, got");
}

TEST(SchemaCheck, OtherDomainsAreNotChecked) {
  ModelBuilder m = relu_model();
  m.opset("ai.onnx.preview.training", 1);
  set_attr(m.node("Relu", {"x"}, {"y"}, "relu", "ai.onnx.preview.training"), "anything",
           int64_t{1});
  EXPECT_EQ(load_error(m), "");
}

}  // namespace
}  // namespace recur
