// Bad inputs to LSTM, GRU and RNN nodes through the public API: each gives a recur::Error whose
// message names the node and the input concerned, at load where the model already tells, at
// run time otherwise.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "recur/recur.h"

namespace {

using recur::DType;
using recur::ErrorCode;
using recur::Tensor;

constexpr const char* kNode = "node 'rnn_node'";

// A one-node model builder: inputs are graph inputs (with a declared shape, possibly symbolic,
// or none) or float initializers filled with a constant.
class ModelBuilder {
 public:
  ModelBuilder(const std::string& op, int opset = 14) {
    model_.set_ir_version(8);
    auto* os = model_.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
    node_ = model_.mutable_graph()->add_node();
    node_->set_op_type(op);
    node_->set_name("rnn_node");
    model_.mutable_graph()->set_name("g");
  }

  // A graph input. dims: fixed numbers or symbols ("" for a dim with neither); nullopt for an
  // unknown rank.
  ModelBuilder& input(const std::string& name, int elem_type,
                      std::optional<std::vector<std::string>> dims) {
    auto* vi = model_.mutable_graph()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    if (dims) {
      auto* shape = tt->mutable_shape();
      for (const auto& d : *dims) {
        auto* dim = shape->add_dim();
        if (d.empty()) continue;
        if (std::isdigit(static_cast<unsigned char>(d[0]))) {
          dim->set_dim_value(std::stoll(d));
        } else {
          dim->set_dim_param(d);
        }
      }
    }
    node_->add_input(name);
    return *this;
  }

  ModelBuilder& initializer(const std::string& name, const std::vector<int64_t>& dims,
                            int elem_type = onnx::TensorProto::FLOAT) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (elem_type == onnx::TensorProto::DOUBLE) {
        t->add_double_data(0.1);
      } else {
        t->add_float_data(0.1f);
      }
    }
    node_->add_input(name);
    return *this;
  }

  ModelBuilder& omitted_input() {
    node_->add_input("");
    return *this;
  }

  ModelBuilder& output(const std::string& name) {
    node_->add_output(name);
    if (!name.empty()) {
      auto* vi = model_.mutable_graph()->add_output();
      vi->set_name(name);
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    }
    return *this;
  }

  ModelBuilder& attr_int(const std::string& name, int64_t v) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }

  ModelBuilder& attr_string(const std::string& name, const std::string& v) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }

  recur::Session session() const {
    const std::string bytes = model_.SerializeAsString();
    return recur::Session::from_bytes(bytes.data(), bytes.size(),
                                      recur::SessionOptions{}.providers({"reference"}));
  }

 private:
  onnx::ModelProto model_;
  onnx::NodeProto* node_;
};

constexpr int kFloat = onnx::TensorProto::FLOAT;

Tensor filled(const recur::Shape& shape, float v = 0.5f) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = v;
  return t;
}

Tensor lens_tensor(const std::vector<int32_t>& v) {
  return Tensor::from_vector<int32_t>({static_cast<int64_t>(v.size())}, v);
}

// Runs `f` and returns the recur::Error it throws; fails the test if it throws none.
template <class F>
recur::Error expect_error(F&& f) {
  try {
    f();
  } catch (const recur::Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a recur::Error";
  return recur::Error(ErrorCode::kOk, "");
}

void expect_mentions(const recur::Error& e, std::initializer_list<const char*> words) {
  const std::string m = e.what();
  for (const char* w : words)
    EXPECT_NE(m.find(w), std::string::npos) << "'" << w << "' not in: " << m;
}

// LSTM with X [T,N,I] (symbolic T and N), constant W/R/B for H, and a sequence_lens input.
ModelBuilder lstm_with_lens(int64_t I, int64_t H) {
  ModelBuilder b("LSTM");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", std::to_string(I)})
      .initializer("W", {1, 4 * H, I})
      .initializer("R", {1, 4 * H, H})
      .initializer("B", {1, 8 * H})
      .input("sequence_lens", onnx::TensorProto::INT32, std::vector<std::string>{"N"})
      .output("Y")
      .output("Y_h")
      .attr_int("hidden_size", H);
  return b;
}

TEST(RnnErrors, SequenceLengthGreaterThanT) {
  auto s = lstm_with_lens(3, 4).session();
  auto e = expect_error([&] {
    s.run({{"X", filled({5, 2, 3})}, {"sequence_lens", lens_tensor({5, 6})}});
  });
  EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
  expect_mentions(e, {kNode, "sequence_lens[1] = 6", "[0, 5]"});
}

TEST(RnnErrors, NegativeSequenceLength) {
  auto s = lstm_with_lens(3, 4).session();
  auto e = expect_error([&] {
    s.run({{"X", filled({5, 2, 3})}, {"sequence_lens", lens_tensor({-1, 2})}});
  });
  EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
  expect_mentions(e, {kNode, "sequence_lens[0] = -1"});
}

TEST(RnnErrors, SequenceLengthsOfTheWrongBatch) {
  auto s = lstm_with_lens(3, 4).session();
  auto e = expect_error([&] {
    s.run({{"X", filled({5, 2, 3})}, {"sequence_lens", lens_tensor({5, 5, 5})}});
  });
  expect_mentions(e, {kNode, "sequence_lens", "[2]"});
}

TEST(RnnErrors, ValidSequenceLengthsRun) {
  // The same model runs with lengths in range, 0 and T included: the checks above are not
  // failing for another reason.
  auto s = lstm_with_lens(3, 4).session();
  auto out = s.run({{"X", filled({5, 2, 3})}, {"sequence_lens", lens_tensor({5, 0})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (recur::Shape{5, 1, 2, 4}));
  EXPECT_EQ(out[1].data<float>()[4], 0.0f);  // Y_h of the empty sequence
}

TEST(RnnErrors, HiddenSizeDisagreesWithConstantR) {
  ModelBuilder b("GRU");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "3"})
      .initializer("W", {1, 12, 3})
      .initializer("R", {1, 12, 4})
      .output("Y")
      .attr_int("hidden_size", 5);
  auto e = expect_error([&] { b.session(); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  expect_mentions(e, {kNode, "hidden_size 5", "R"});
}

TEST(RnnErrors, HiddenSizeDisagreesWithConstantW) {
  ModelBuilder b("RNN");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "3"})
      .initializer("W", {1, 4, 3})
      .initializer("R", {1, 5, 5})
      .output("Y")
      .attr_int("hidden_size", 5);
  auto e = expect_error([&] { b.session(); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  expect_mentions(e, {kNode, "hidden_size 5", "W"});
}

TEST(RnnErrors, HiddenSizeDisagreesWithFedR) {
  // W and R as graph inputs of unknown shape: caught when the run sees them.
  ModelBuilder b("LSTM");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "I"})
      .input("W", kFloat, std::nullopt)
      .input("R", kFloat, std::nullopt)
      .output("Y")
      .attr_int("hidden_size", 4);
  auto s = b.session();
  auto e = expect_error([&] {
    s.run({{"X", filled({2, 1, 3})}, {"W", filled({1, 16, 3})}, {"R", filled({1, 12, 3})}});
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  expect_mentions(e, {kNode, "input R", "hidden_size 4"});
  // And W of the wrong size against a correct R.
  auto e2 = expect_error([&] {
    s.run({{"X", filled({2, 1, 3})}, {"W", filled({1, 12, 3})}, {"R", filled({1, 16, 4})}});
  });
  expect_mentions(e2, {kNode, "input W", "hidden_size 4"});
}

TEST(RnnErrors, InputSizeOfXDisagreesWithW) {
  // X's last dimension symbolic: a run-time error naming X and W.
  ModelBuilder b("LSTM");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "I"})
      .initializer("W", {1, 16, 3})
      .initializer("R", {1, 16, 4})
      .output("Y")
      .attr_int("hidden_size", 4);
  auto s = b.session();
  auto e = expect_error([&] { s.run({{"X", filled({2, 1, 5})}}); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  expect_mentions(e, {kNode, "input X", "input size", "5", "W expects 3"});
}

TEST(RnnErrors, InputSizeOfXDisagreesWithWAtLoad) {
  ModelBuilder b("GRU");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "5"})
      .initializer("W", {1, 12, 3})
      .initializer("R", {1, 12, 4})
      .output("Y");
  auto e = expect_error([&] { b.session(); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  expect_mentions(e, {kNode, "X has input size 5", "W expects 3"});
}

TEST(RnnErrors, XOfRank2AtRunTime) {
  ModelBuilder b("RNN");
  b.input("X", kFloat, std::nullopt)
      .initializer("W", {1, 4, 3})
      .initializer("R", {1, 4, 4})
      .output("Y")
      .attr_int("hidden_size", 4);
  auto s = b.session();
  auto e = expect_error([&] { s.run({{"X", filled({2, 3})}}); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  expect_mentions(e, {kNode, "input X must have rank 3", "[2,3]"});
}

TEST(RnnErrors, XDeclaredWithRank2) {
  ModelBuilder b("RNN");
  b.input("X", kFloat, std::vector<std::string>{"N", "3"})
      .initializer("W", {1, 4, 3})
      .initializer("R", {1, 4, 4})
      .output("Y");
  auto e = expect_error([&] { b.session(); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  expect_mentions(e, {kNode, "input X must have rank 3"});
}

TEST(RnnErrors, WeightOfAnotherDtype) {
  ModelBuilder b("LSTM");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "3"})
      .initializer("W", {1, 16, 3}, onnx::TensorProto::DOUBLE)
      .initializer("R", {1, 16, 4})
      .output("Y");
  auto e = expect_error([&] { b.session(); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  expect_mentions(e, {kNode, "input W is float64", "X is float32"});
}

TEST(RnnErrors, InitialHOfAnotherDtype) {
  // initial_h declared float64 next to a float32 X: caught at load.
  ModelBuilder b("GRU");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "3"})
      .initializer("W", {1, 12, 3})
      .initializer("R", {1, 12, 4})
      .omitted_input()
      .omitted_input()
      .input("initial_h", onnx::TensorProto::DOUBLE, std::nullopt)
      .output("Y");
  auto e = expect_error([&] { b.session(); });
  expect_mentions(e, {kNode, "input initial_h is float64", "X is float32"});
}

TEST(RnnErrors, SequenceLensNotInt32) {
  ModelBuilder b("LSTM");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "3"})
      .initializer("W", {1, 16, 3})
      .initializer("R", {1, 16, 4})
      .omitted_input()
      .input("sequence_lens", onnx::TensorProto::INT64, std::vector<std::string>{"N"})
      .output("Y");
  auto e = expect_error([&] { b.session(); });
  expect_mentions(e, {kNode, "sequence_lens must be int32", "int64"});
}

TEST(RnnErrors, IntegerX) {
  ModelBuilder b("RNN");
  b.input("X", onnx::TensorProto::INT32, std::vector<std::string>{"T", "N", "3"})
      .input("W", onnx::TensorProto::INT32, std::nullopt)
      .input("R", onnx::TensorProto::INT32, std::nullopt)
      .output("Y");
  auto e = expect_error([&] { b.session(); });
  expect_mentions(e, {kNode, "input X must be a floating-point tensor"});
}

TEST(RnnErrors, MissingX) {
  ModelBuilder b("LSTM");
  b.omitted_input().initializer("W", {1, 16, 3}).initializer("R", {1, 16, 4}).output("Y");
  auto e = expect_error([&] { b.session(); });
  expect_mentions(e, {kNode, "input X is missing"});
}

TEST(RnnErrors, InitialHOfTheWrongShape) {
  ModelBuilder b("LSTM");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "3"})
      .initializer("W", {1, 16, 3})
      .initializer("R", {1, 16, 4})
      .omitted_input()
      .omitted_input()
      .input("initial_h", kFloat, std::nullopt)
      .output("Y");
  auto s = b.session();
  auto e = expect_error([&] {
    s.run({{"X", filled({2, 3, 3})}, {"initial_h", filled({1, 2, 4})}});
  });
  expect_mentions(e, {kNode, "input initial_h must have shape [1,3,4]", "[1,2,4]"});
}

TEST(RnnErrors, Layout1BeforeOpset14) {
  ModelBuilder b("GRU", 7);
  b.input("X", kFloat, std::vector<std::string>{"N", "T", "3"})
      .initializer("W", {1, 12, 3})
      .initializer("R", {1, 12, 4})
      .output("Y")
      .attr_int("layout", 1);
  auto e = expect_error([&] { b.session(); });
  // The schema check at load: GRU-7 has no layout attribute.
  expect_mentions(e, {kNode, "attribute 'layout'", "needs opset 14"});
}

TEST(RnnErrors, UnknownDirection) {
  ModelBuilder b("RNN");
  b.input("X", kFloat, std::vector<std::string>{"T", "N", "3"})
      .initializer("W", {1, 4, 3})
      .initializer("R", {1, 4, 4})
      .output("Y")
      .attr_string("direction", "sideways");
  auto e = expect_error([&] { b.session(); });
  expect_mentions(e, {kNode, "direction' must be", "'sideways'"});
}

}  // namespace
