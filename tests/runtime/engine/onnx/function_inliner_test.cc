// Model-local functions: each call expands into the function's body at load. The expected
// values are worked out by hand from the bodies below; the torch-exported models in
// tests/data/functions check the same against PyTorch.
#include "runtime/engine/onnx/function_inliner.h"

#include <gtest/gtest.h>

#include <google/protobuf/unknown_field_set.h>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::floats;
using testing::ModelBuilder;
using testing::set_attr;
using testing::TempDir;

// A function of domain "pkg" with the given formal inputs and outputs, importing ai.onnx at
// `opset`; its nodes are added by the caller.
onnx::FunctionProto& add_function(ModelBuilder& m, const std::string& name,
                                  const std::vector<std::string>& inputs,
                                  const std::vector<std::string>& outputs, int opset = 17) {
  onnx::FunctionProto& f = *m.proto().add_functions();
  f.set_name(name);
  f.set_domain("pkg");
  for (const auto& i : inputs) f.add_input(i);
  for (const auto& o : outputs) f.add_output(o);
  auto* imp = f.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  return f;
}

onnx::NodeProto& body_node(onnx::FunctionProto& f, const std::string& op,
                           const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs,
                           const std::string& domain = "") {
  onnx::NodeProto& n = *f.add_node();
  n.set_op_type(op);
  n.set_domain(domain);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

// An attribute of `n` that takes the enclosing function's attribute `ref`.
void ref_attr(onnx::NodeProto& n, const std::string& name, const std::string& ref,
              onnx::AttributeProto::AttributeType type) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_ref_attr_name(ref);
  a->set_type(type);
}

// FunctionProto.attribute_proto (field 11, IR version 9): a float default. This build's
// onnx.proto predates the field, so it goes in as an unknown field, as a newer file reads.
void add_float_default(onnx::FunctionProto& f, const std::string& name, float value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  f.GetReflection()->MutableUnknownFields(&f)->AddLengthDelimited(11, a.SerializeAsString());
}

// out = x * alpha + beta, with alpha and beta the function's attributes.
onnx::FunctionProto& add_scaled(ModelBuilder& m) {
  onnx::FunctionProto& f = add_function(m, "Scaled", {"x"}, {"out"});
  f.add_attribute("alpha");
  ref_attr(body_node(f, "Constant", {}, {"a"}), "value_float", "alpha",
           onnx::AttributeProto::FLOAT);
  ref_attr(body_node(f, "Constant", {}, {"b"}), "value_float", "beta", onnx::AttributeProto::FLOAT);
  body_node(f, "Mul", {"x", "a"}, {"xa"});
  body_node(f, "Add", {"xa", "b"}, {"out"});
  return f;
}

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST(FunctionInliner, CallsTakeTheirAttributesOrTheFunctionsDefaults) {
  TempDir dir;
  ModelBuilder m(17, 9);
  m.opset("pkg", 1);
  m.input("x", DType::kFloat32, {2});
  m.output("y1", DType::kFloat32);
  m.output("y2", DType::kFloat32);
  add_float_default(add_scaled(m), "beta", 0.5f);
  set_attr(m.node("Scaled", {"x"}, {"y1"}, "s1", "pkg"), "alpha", 2.0f);
  auto& s2 = m.node("Scaled", {"x"}, {"y2"}, "s2", "pkg");
  set_attr(s2, "alpha", 3.0f);
  set_attr(s2, "beta", -1.0f);
  Session s(m.save(dir.path()));
  Outputs out = s.run({{"x", floats({2}, {1, -4})}});
  EXPECT_EQ(values(out[0]), (std::vector<float>{2.5f, -7.5f}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{2.0f, -13.0f}));
}

TEST(FunctionInliner, AnAttributeNeitherGivenNorDefaultedIsAbsent) {
  // Constant with no value attribute at all: the body node is then invalid, and the loader
  // says so naming the inlined node under the call's name.
  TempDir dir;
  ModelBuilder m(17, 9);
  m.opset("pkg", 1);
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  add_scaled(m);
  set_attr(m.node("Scaled", {"x"}, {"y"}, "s1", "pkg"), "alpha", 2.0f);
  const std::string path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, {"model.onnx", "s1/Constant_1"});
}

TEST(FunctionInliner, NestedCallsSubgraphsOmittedInputsAndPassThroughOutputs) {
  TempDir dir;
  ModelBuilder m;
  m.opset("pkg", 1);
  m.input("x", DType::kFloat32, {3});
  m.input("flag", DType::kBool, {});
  m.output("y", DType::kFloat32);
  m.output("same", DType::kFloat32);
  m.output("z", DType::kFloat32);
  // Floor(x, lo): Clip with an optional lower bound; the call leaves it out.
  onnx::FunctionProto& floor = add_function(m, "Floor", {"x", "lo"}, {"out"});
  body_node(floor, "Clip", {"x", "lo"}, {"out"});
  // Gate(x, flag) -> (If flag then Floor(x) * 2 else -x, x): the If's branches read the
  // function's values, the then branch calls another function, and the second output is the
  // input passed through.
  onnx::FunctionProto& gate = add_function(m, "Gate", {"x", "flag"}, {"out", "x"});
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  {
    auto* call = then_g.add_node();
    call->set_op_type("Floor");
    call->set_domain("pkg");
    call->add_input("x");
    call->add_output("fl");
    auto* c = then_g.add_node();
    c->set_op_type("Add");
    c->add_input("fl");
    c->add_input("fl");
    c->add_output("twice");
    then_g.add_output()->set_name("twice");
  }
  else_g.set_name("else");
  {
    auto* neg = else_g.add_node();
    neg->set_op_type("Neg");
    neg->add_input("x");
    neg->add_output("negx");
    else_g.add_output()->set_name("negx");
  }
  auto& iff = body_node(gate, "If", {"flag"}, {"out"});
  set_attr(iff, "then_branch", then_g);
  set_attr(iff, "else_branch", else_g);
  m.node("Gate", {"x", "flag"}, {"y", "same"}, "gate", "pkg");
  // The same function called from a subgraph of the main graph.
  onnx::GraphProto loop_body;
  loop_body.set_name("body");
  for (const char* in : {"i", "cond_in", "acc"}) loop_body.add_input()->set_name(in);
  {
    auto* call = loop_body.add_node();
    call->set_op_type("Gate");
    call->set_domain("pkg");
    call->add_input("acc");
    call->add_input("flag");
    call->add_output("acc_out");
    auto* id = loop_body.add_node();
    id->set_op_type("Identity");
    id->add_input("cond_in");
    id->add_output("cond_out");
  }
  loop_body.add_output()->set_name("cond_out");
  loop_body.add_output()->set_name("acc_out");
  m.initializer("trips", Tensor::from_vector<int64_t>({}, {2}));
  m.initializer("go", Tensor::from_vector<bool>({}, {true}));
  auto& loop = m.node("Loop", {"trips", "go", "x"}, {"z"}, "loop");
  set_attr(loop, "body", loop_body);
  Session s(m.save(dir.path()));
  const Tensor x = floats({3}, {-1.5f, 0.0f, 2.0f});
  Outputs on = s.run({{"x", x}, {"flag", Tensor::from_vector<bool>({}, {true})}});
  EXPECT_EQ(values(on[0]), (std::vector<float>{-3.0f, 0.0f, 4.0f}));
  EXPECT_EQ(values(on[1]), values(x));
  EXPECT_EQ(values(on[2]), (std::vector<float>{-6.0f, 0.0f, 8.0f}));
  Outputs off = s.run({{"x", x}, {"flag", Tensor::from_vector<bool>({}, {false})}});
  EXPECT_EQ(values(off[0]), (std::vector<float>{1.5f, 0.0f, -2.0f}));
  EXPECT_EQ(values(off[2]), (std::vector<float>{-1.5f, 0.0f, 2.0f}));
}

TEST(FunctionInliner, OverloadsAreToldApart) {
  // NodeProto.overload (field 8) and FunctionProto.overload (field 13), IR version 10.
  TempDir dir;
  ModelBuilder m(17, 10);
  m.opset("pkg", 1);
  m.input("x", DType::kFloat32, {2});
  m.output("r", DType::kFloat32);
  m.output("n", DType::kFloat32);
  for (const char* op : {"Relu", "Neg"}) {
    onnx::FunctionProto& f = add_function(m, "Act", {"x"}, {"out"});
    f.GetReflection()->MutableUnknownFields(&f)->AddLengthDelimited(13, op);
    body_node(f, op, {"x"}, {"out"});
  }
  for (const auto& [out, overload] : {std::pair{"r", "Relu"}, std::pair{"n", "Neg"}}) {
    auto& call = m.node("Act", {"x"}, {out}, out, "pkg");
    call.GetReflection()->MutableUnknownFields(&call)->AddLengthDelimited(8, overload);
  }
  Session s(m.save(dir.path()));
  Outputs out = s.run({{"x", floats({2}, {-2, 3})}});
  EXPECT_EQ(values(out[0]), (std::vector<float>{0, 3}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{2, -3}));
}

TEST(FunctionInliner, BodyValueNamesDoNotClashWithTheCallers) {
  // The body's internal value is named like a value of the main graph, and the function is
  // called twice: each copy gets a name of its own.
  TempDir dir;
  ModelBuilder m;
  m.opset("pkg", 1);
  m.input("t", DType::kFloat32, {1});
  m.output("out", DType::kFloat32);
  onnx::FunctionProto& f = add_function(m, "Twice", {"x"}, {"y"});
  body_node(f, "Add", {"x", "x"}, {"t"});
  body_node(f, "Identity", {"t"}, {"y"});
  m.node("Twice", {"t"}, {"u"}, "", "pkg");
  m.node("Twice", {"u"}, {"out"}, "", "pkg");
  Session s(m.save(dir.path()));
  EXPECT_EQ(values(s.run({{"t", floats({1}, {1.5f})}})[0]), (std::vector<float>{6.0f}));
}

TEST(FunctionInliner, AnOpsetTheModelImportsAtAnotherVersionMustAgree) {
  TempDir dir;
  for (const bool agree : {true, false}) {
    ModelBuilder m(18);
    m.opset("pkg", 1);
    m.input("x", DType::kFloat32, {2, 2});
    m.output("y", DType::kFloat32);
    onnx::FunctionProto& f = add_function(m, "F", {"x"}, {"y"}, 17);
    if (agree) {
      body_node(f, "Add", {"x", "x"}, {"y"});  // Add-14 under both opsets
    } else {
      body_node(f, "ReduceMean", {"x"}, {"y"});  // ReduceMean-13 against ReduceMean-18
    }
    m.node("F", {"x"}, {"y"}, "call", "pkg");
    const std::string path = m.save(dir.path(), agree ? "agree.onnx" : "differ.onnx");
    if (agree) {
      Session s(path);
      EXPECT_EQ(values(s.run({{"x", floats({2, 2}, {1, 2, 3, 4})}})[0]),
                (std::vector<float>{2, 4, 6, 8}));
    } else {
      expect_error(
          [&] { Session s(path); }, ErrorCode::kInvalidModel,
          {"differ.onnx", "function 'pkg.F'", "opset 17", "ReduceMean-13", "ReduceMean-18"});
    }
  }
}

TEST(FunctionInliner, ADomainOnlyTheFunctionImportsIsAdded) {
  TempDir dir;
  ModelBuilder m;
  m.opset("pkg", 1);
  m.input("x", DType::kFloat32, {1, 2});
  m.output("y", DType::kFloat32);
  onnx::FunctionProto& f = add_function(m, "Bin", {"x"}, {"y"});
  auto* ml = f.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(1);
  set_attr(body_node(f, "Binarizer", {"x"}, {"y"}, "ai.onnx.ml"), "threshold", 0.5f);
  m.node("Bin", {"x"}, {"y"}, "bin", "pkg");
  Session s(m.save(dir.path()));
  EXPECT_EQ(values(s.run({{"x", floats({1, 2}, {0.25f, 0.75f})}})[0]), (std::vector<float>{0, 1}));
}

// Models a hostile or broken exporter could write: each is refused with the file, the call
// and the function named, before anything is expanded.
class BadFunction : public ::testing::Test {
 protected:
  BadFunction() {
    m.opset("pkg", 1);
    m.input("x", DType::kFloat32, {2});
    m.output("y", DType::kFloat32);
  }
  void expect_refused(const std::vector<std::string>& fragments,
                      const SessionOptions& options = {}) {
    const std::string path = m.save(dir.path());
    std::vector<std::string> all{"model.onnx"};
    all.insert(all.end(), fragments.begin(), fragments.end());
    expect_error([&] { Session s(path, options); }, ErrorCode::kInvalidModel, all);
  }
  TempDir dir;
  ModelBuilder m;
};

TEST_F(BadFunction, CallsThatFormACycle) {
  onnx::FunctionProto& a = add_function(m, "A", {"x"}, {"y"});
  body_node(a, "B", {"x"}, {"y"}, "pkg");
  onnx::FunctionProto& b = add_function(m, "B", {"x"}, {"y"});
  body_node(b, "A", {"x"}, {"y"}, "pkg");
  m.node("A", {"x"}, {"y"}, "call", "pkg");
  expect_refused({"cycle", "function 'pkg.A' calls function 'pkg.B' calls function 'pkg.A'"});
}

TEST_F(BadFunction, AnExpansionBombIsRefusedBeforeExpanding) {
  // F0 calls F1 twice, ... F29 is one node: 2^29 nodes if expanded.
  for (int i = 0; i < 30; ++i) {
    onnx::FunctionProto& f = add_function(m, "F" + std::to_string(i), {"x"}, {"y"});
    if (i == 29) {
      body_node(f, "Neg", {"x"}, {"y"});
      continue;
    }
    const std::string next = "F" + std::to_string(i + 1);
    body_node(f, next, {"x"}, {"h"}, "pkg");
    body_node(f, next, {"h"}, {"y"}, "pkg");
  }
  m.node("F0", {"x"}, {"y"}, "call", "pkg");
  expect_refused({"more than 1048576 nodes"});
}

TEST_F(BadFunction, TooManyInputs) {
  onnx::FunctionProto& f = add_function(m, "F", {"x"}, {"y"});
  body_node(f, "Neg", {"x"}, {"y"});
  m.node("F", {"x", "x"}, {"y"}, "call", "pkg");
  expect_refused({"node 'call' (pkg::F)", "function 'pkg.F'", "2 inputs"});
}

TEST_F(BadFunction, AnAttributeOfTheWrongType) {
  add_scaled(m);
  auto& call = m.node("Scaled", {"x"}, {"y"}, "call", "pkg");
  set_attr(call, "alpha", int64_t{2});
  expect_refused({"node 'call' (pkg::Scaled)", "'alpha'", "INT", "FLOAT"});
}

TEST_F(BadFunction, AnUndeclaredAttributeIsAnErrorOrUnderLaxSchemaAWarning) {
  onnx::FunctionProto& f = add_function(m, "F", {"x"}, {"y"});
  body_node(f, "Neg", {"x"}, {"y"});
  set_attr(m.node("F", {"x"}, {"y"}, "call", "pkg"), "gain", 2.0f);
  expect_refused({"node 'call' (pkg::F)", "'gain'", "does not declare"});
  Session lax(m.save(dir.path(), "lax.onnx"), SessionOptions().strict_schema(false));
  ASSERT_EQ(lax.warnings().size(), 1u);
  EXPECT_NE(lax.warnings()[0].find("'gain'"), std::string::npos) << lax.warnings()[0];
}

TEST_F(BadFunction, ABodyThatReadsAValueItDoesNotDefine) {
  onnx::FunctionProto& f = add_function(m, "F", {"x"}, {"y"});
  body_node(f, "Add", {"x", "w"}, {"y"});  // "w" is the caller's business, not the function's
  m.initializer("w", floats({2}, {1, 1}));
  m.node("F", {"x"}, {"y"}, "call", "pkg");
  expect_refused({"function 'pkg.F'", "reads 'w'"});
}

TEST_F(BadFunction, DefinedTwice) {
  for (int i = 0; i < 2; ++i) body_node(add_function(m, "F", {"x"}, {"y"}), "Neg", {"x"}, {"y"});
  m.node("F", {"x"}, {"y"}, "call", "pkg");
  expect_refused({"function 'F'", "defined twice"});
}

TEST_F(BadFunction, AnOutputNoNodeWrites) {
  onnx::FunctionProto& f = add_function(m, "F", {"x"}, {"y", "lost"});
  body_node(f, "Neg", {"x"}, {"y"});
  m.node("F", {"x"}, {"y"}, "call", "pkg");
  expect_refused({"function 'pkg.F'", "output 'lost' is never produced"});
}

TEST_F(BadFunction, AnAttributeReferenceOutsideAnyFunction) {
  ref_attr(m.node("Constant", {}, {"y"}, "c"), "value_float", "alpha", onnx::AttributeProto::FLOAT);
  expect_refused({"node 'c' (Constant)", "'alpha'", "no model-local function"});
}

}  // namespace
}  // namespace recur
