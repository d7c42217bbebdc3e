// Lowering ONNX Runtime's fused operators (runtime/engine/optimize/optimizer.h,
// lower_contrib_ops). Their outputs are checked against ONNX Runtime's own in the CTests
// contrib/* and contrib-onednn/* (tests/data/contrib, tools/gen_contrib_tests.py) and on the
// shipped models as ONNX Runtime saves them (ort-optimized/*). Here: no contrib node is left
// and --explain says what each came from; the lowering happens with optimization off too;
// new values never take a name the model uses; and the forms recur cannot lower are refused
// at load, naming the node and what is wrong (ONNX Runtime's NCHWc layout: lower_nchwc_test.cc).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::floats;
using testing::ModelBuilder;
using testing::set_attr;
using testing::TempDir;

const std::string kCases = std::string(RECUR_SOURCE_DIR) + "/tests/data/contrib";

bool has_note(const NodeAssignment& a, const std::string& part) {
  for (const auto& n : a.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// Every node of `nodes` and of their subgraphs.
void for_each_node(const std::vector<NodeAssignment>& nodes,
                   const std::function<void(const NodeAssignment&)>& f) {
  for (const NodeAssignment& a : nodes) {
    f(a);
    for (const auto& sub : a.subgraphs) for_each_node(sub.nodes, f);
  }
}

// Every case's contrib nodes (in If branches too) are gone, the nodes that keep their names say
// what they were, and the outputs match ONNX Runtime's with optimization off as well as on.
TEST(LowerContrib, EveryCaseLowersAndSaysSo) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCases)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    ++cases;
    // Inverse, which ONNX has no operator for, runs as it is (the reference provider's kernel).
    const bool kept = name.rfind("ms_inverse", 0) == 0;
    for (bool optimize : {true, false}) {
      const SessionOptions opts = SessionOptions().providers({"reference"}).optimize(optimize);
      Session s(entry.path().string() + "/model.onnx", opts);
      bool named = false;
      int lowered = 0;
      for_each_node(s.assignment(), [&](const NodeAssignment& a) {
        if (!kept) {
          EXPECT_EQ(a.op.find("com.microsoft::"), std::string::npos) << a.op;
        }
        EXPECT_NE(a.op, "SimplifiedLayerNormalization");
        if (a.node == name && a.op != "If" && !kept) {
          EXPECT_TRUE(has_note(a, "lowered ONNX Runtime's") || has_note(a, "LayerNormalization-17"))
              << a.node;
        }
        named = named || a.node == name;
        lowered += has_note(a, "lowered ONNX Runtime's") || has_note(a, "LayerNormalization-17");
      });
      // The whole models ONNX Runtime saved (ort_saved_*) have no node named after the case.
      if (name.rfind("ort_saved_", 0) != 0) {
        EXPECT_TRUE(named) << s.explain();
      }
      EXPECT_GE(lowered, kept ? 0 : 1) << s.explain();
      std::ostringstream log;
      const tools::TestResult r =
          tools::run_test_dir(entry.path().string(), opts, tools::Tolerance{1e-3, 1e-5}, &log);
      EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass) << r.reason << "\n" << log.str();
    }
  }
  EXPECT_GE(cases, 50);
}

// Element k of an integer tensor.
int64_t integer_at(const Tensor& t, int64_t k) {
  switch (t.dtype()) {
    case DType::kUInt8:
      return t.data<uint8_t>()[k];
    case DType::kInt8:
      return t.data<int8_t>()[k];
    case DType::kUInt16:
      return t.data<uint16_t>()[k];
    case DType::kInt16:
      return t.data<int16_t>()[k];
    case DType::kInt32:
      return t.data<int32_t>()[k];
    default:
      ADD_FAILURE() << "unexpected output type " << dtype_name(t.dtype());
      return 0;
  }
}

// The QLinear operators of statically quantized models and the quantization operators of
// ONNX Runtime's domain (tests/data/qlinear; ONNX Runtime's outputs, or numpy's for the two it
// has no CPU kernel for): lowered to DequantizeLinear, the float operator and QuantizeLinear,
// or to ONNX's own operator. Each output is within one quantization step of the expected one
// (ONNX Runtime computes some another way: QLinearAdd with the ratio of the scales,
// QLinearSigmoid from a table; numpy's means are float64) at no more than one element in ten;
// float outputs (DequantizeLinear's) within rtol 1e-3.
TEST(LowerContrib, QLinearCasesWithinOneStepOfOnnxRuntime) {
  const std::string root = std::string(RECUR_SOURCE_DIR) + "/tests/data/qlinear";
  int cases = 0, exact = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    ++cases;
    for (const char* provider : {"reference", "onednn"}) {
      if (std::string(provider) == "onednn" && !testing::have_provider("onednn")) continue;
      const SessionOptions opts = std::string(provider) == "reference"
                                      ? SessionOptions().providers({"reference"})
                                      : SessionOptions().providers({provider, "reference"});
      Session s(entry.path().string() + "/model.onnx", opts);
      for_each_node(s.assignment(), [&](const NodeAssignment& a) {
        EXPECT_EQ(a.op.find("com.microsoft::"), std::string::npos) << a.op;
      });
      auto sets = tools::read_data_sets(entry.path().string(), &s);
      ASSERT_TRUE(sets.ok()) << sets.status().message();
      for (const tools::DataSet& ds : *sets) {
        auto feeds = tools::feeds_for(s, ds);
        ASSERT_TRUE(feeds.ok()) << feeds.status().message();
        const Outputs got = s.run(*feeds);
        ASSERT_EQ(got.size(), ds.outputs.size());
        bool all_exact = true;
        for (size_t i = 0; i < got.size(); ++i) {
          const Tensor& want = ds.outputs[i].second;
          if (want.dtype() == DType::kFloat32) {
            const auto cmp = tools::compare(got[i], want, tools::Tolerance{});
            EXPECT_TRUE(cmp.match) << cmp.reason;
            all_exact = all_exact && cmp.max_abs == 0.0;
            continue;
          }
          ASSERT_EQ(got[i].dtype(), want.dtype());
          ASSERT_EQ(got[i].shape(), want.shape());
          int64_t off = 0;
          for (int64_t k = 0; k < want.numel(); ++k) {
            const int64_t g = integer_at(got[i], k), w = integer_at(want, k);
            EXPECT_LE(std::abs(g - w), 1) << "element " << k;
            off += g != w;
          }
          EXPECT_LE(off * 10, want.numel()) << off << " of " << want.numel() << " off by one";
          all_exact = all_exact && off == 0;
        }
        exact += all_exact && std::string(provider) == "reference";
      }
    }
  }
  EXPECT_GE(cases, 32);
  // Most match exactly: a lowering off by a scale or a zero point would match none.
  EXPECT_GE(exact * 4, cases * 3) << exact << " of " << cases << " exact";
}

// A FusedConv with a sum input and an activation, in a model that already uses the names the
// lowering would give its intermediate values.
TEST(LowerContrib, NewValuesTakeNoNameTheModelUses) {
  TempDir dir;
  ModelBuilder m(17);
  m.opset("com.microsoft", 1);
  m.input("x", DType::kFloat32, {1, 1, 4});
  m.input("c/conv", DType::kFloat32, {1, 1, 4});
  m.initializer("w", floats({1, 1, 1}, {2.0f}));
  m.output("y", DType::kFloat32);
  m.output("other", DType::kFloat32);
  auto& conv = m.node("FusedConv", {"x", "w", "", "c/conv"}, {"y"}, "c", "com.microsoft");
  set_attr(conv, "activation", std::string("Relu"));
  m.node("Neg", {"c/conv"}, {"other"}, "neg");
  const std::string path = m.save(dir.path());
  Session s(path, SessionOptions().providers({"reference"}));
  const Outputs out = s.run({{"x", floats({1, 1, 4}, {1, -1, 2, -3})},
                             {"c/conv", floats({1, 1, 4}, {0.5f, 0.5f, -5, 7})}});
  // relu(2x + z) and -z
  const std::vector<float> want_y = {2.5f, 0, 0, 1}, want_other = {-0.5f, -0.5f, 5, -7};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(out["y"].data<float>()[i], want_y[i]) << i;
    EXPECT_FLOAT_EQ(out["other"].data<float>()[i], want_other[i]) << i;
  }
}

struct Refusal {
  const char* what;
  std::string op;
  std::vector<std::string> inputs;
  std::function<void(onnx::NodeProto&)> attrs;
  std::vector<std::string> parts;
  bool unranked_x = false;
};

TEST(LowerContrib, RefusesWhatItCannotLowerNamingTheNode) {
  // MatMulNBits' attributes: K, N = 4, block_size 16 and, where not 0, bits.
  const auto nbits = [](int64_t k, int64_t bits) {
    return [k, bits](onnx::NodeProto& n) {
      set_attr(n, "K", k);
      set_attr(n, "N", int64_t{4});
      set_attr(n, "block_size", int64_t{16});
      if (bits != 0) set_attr(n, "bits", bits);
    };
  };
  const std::vector<Refusal> refusals = {
      {"unknown activation",
       "FusedConv",
       {"x", "w"},
       [](onnx::NodeProto& n) { set_attr(n, "activation", std::string("Swish")); },
       {"activation 'Swish' is not one ONNX Runtime fuses"}},
      {"too many parameters",
       "FusedConv",
       {"x", "w"},
       [](onnx::NodeProto& n) {
         set_attr(n, "activation", std::string("LeakyRelu"));
         set_attr(n, "activation_params", std::vector<float>{0.1f, 0.2f});
       },
       {"activation LeakyRelu takes 1 activation_params, the node has 2"}},
      {"Clip without its bounds",
       "FusedConv",
       {"x", "w"},
       [](onnx::NodeProto& n) { set_attr(n, "activation", std::string("Clip")); },
       {"activation Clip takes 2 activation_params, the node has 0"}},
      {"FusedGemm without an activation",
       "FusedGemm",
       {"x2", "w2"},
       [](onnx::NodeProto&) {},
       {"has no activation"}},
      {"FusedGemm with Clip",
       "FusedGemm",
       {"x2", "w2"},
       [](onnx::NodeProto& n) { set_attr(n, "activation", std::string("Clip")); },
       {"fuses no Clip into a Gemm"}},
      {"ScaledTanh without beta",
       "FusedGemm",
       {"x2", "w2"},
       [](onnx::NodeProto& n) {
         set_attr(n, "activation", std::string("ScaledTanh"));
         set_attr(n, "activation_alpha", 1.0f);
       },
       {"ScaledTanh needs its alpha and beta"}},
      {"transposition of an unranked operand",
       "FusedMatMul",
       {"x", "w2"},
       [](onnx::NodeProto& n) { set_attr(n, "transA", int64_t{1}); },
       {"A's rank is not known"},
       true},
      {"missing gamma",
       "SkipLayerNormalization",
       {"x", "x", ""},
       [](onnx::NodeProto&) {},
       {"input 2 is required"}},
      {"a float input to a QLinear operator",
       "QLinearSigmoid",
       {"x", "s", "", "s"},
       [](onnx::NodeProto&) {},
       {"its quantized input is float32"}},
      {"QLinearConcat without whole triples",
       "QLinearConcat",
       {"s", "", "x", "s", "", "x"},
       [](onnx::NodeProto& n) { set_attr(n, "axis", int64_t{1}); },
       {"has 6 inputs; QLinearConcat takes Y_scale"}},
      {"a float input to the NHWC QLinearConv of level 'all'",
       "QLinearConv",
       {"x", "s", "", "w", "s", "", "s", ""},
       [](onnx::NodeProto& n) { set_attr(n, "channels_last", int64_t{1}); },
       {"its quantized input is float32"}},
      {"a float input to NhwcMaxPool",
       "NhwcMaxPool",
       {"x"},
       [](onnx::NodeProto& n) { set_attr(n, "kernel_shape", std::vector<int64_t>{2}); },
       {"its quantized input is float32"}},
      {"a float input to MulInteger",
       "MulInteger",
       {"x", "", "x"},
       [](onnx::NodeProto&) {},
       {"its quantized input is float32"}},
      {"Attention with rotary embeddings",
       "Attention",
       {"x", "w2"},
       [](onnx::NodeProto& n) {
         set_attr(n, "num_heads", int64_t{1});
         set_attr(n, "do_rotary", int64_t{1});
       },
       {"do_rotary=1"}},
      {"MultiHeadAttention with Q, K and V packed in the query",
       "MultiHeadAttention",
       {"x"},
       [](onnx::NodeProto& n) { set_attr(n, "num_heads", int64_t{1}); },
       {"its key or value is not given", "packed forms"}},
      {"a 1-D mask neither batch nor 2 * batch long",
       "Attention",
       {"x", "w3", "", "mask3"},
       [](onnx::NodeProto& n) { set_attr(n, "num_heads", int64_t{1}); },
       {"its 1-D mask has 3 entries; with batch 1 it takes 1 (sequence ends) or 2"}},
      {"2-bit MatMulNBits",
       "MatMulNBits",
       {"x2", "w2", "s"},
       nbits(2, 2),
       {"bits=2; recur lowers 4-bit and 8-bit weights"}},
      {"MatMulNBits whose B is not packed uint8",
       "MatMulNBits",
       {"x2", "w2", "s"},
       nbits(2, 0),
       {"B is float32; it is packed uint8"}},
      {"MatMulNBits whose B is not the size its attributes imply",
       "MatMulNBits",
       {"x2", "u8", "s"},
       nbits(2, 0),
       {"B has 3 elements; K=2, N=4, bits=4, block_size=16 take 32"}},
      {"MatMulNBits of a huge K",
       "MatMulNBits",
       {"x2", "w2", "s"},
       nbits(int64_t{1} << 62, 0),
       {"K and N must be from 1 to 2^31 - 1"}},
      {"GroupQueryAttention with smooth_softmax",
       "GroupQueryAttention",
       {"x", "", "", "", "", "mask3", "mask3"},
       [](onnx::NodeProto& n) {
         set_attr(n, "num_heads", int64_t{1});
         set_attr(n, "kv_num_heads", int64_t{1});
         set_attr(n, "smooth_softmax", int64_t{1});
       },
       {"smooth_softmax or head_sink"}},
      {"GroupQueryAttention whose query heads are not a multiple of its key heads",
       "GroupQueryAttention",
       {"x", "", "", "", "", "mask3", "mask3"},
       [](onnx::NodeProto& n) {
         set_attr(n, "num_heads", int64_t{3});
         set_attr(n, "kv_num_heads", int64_t{2});
       },
       {"num_heads 3 and kv_num_heads 2"}},
      {"DequantizeLinear without its scale",
       "DequantizeLinear",
       {"x", ""},
       [](onnx::NodeProto&) {},
       {"input 1 is required"}},
  };
  for (const Refusal& r : refusals) {
    SCOPED_TRACE(r.what);
    TempDir dir;
    ModelBuilder m(17);
    m.opset("com.microsoft", 1);
    if (r.unranked_x) {
      onnx::ValueInfoProto* in = m.graph().add_input();
      in->set_name("x");
      in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    } else {
      m.input("x", DType::kFloat32, {1, 2, 5});
    }
    m.input("x2", DType::kFloat32, {3, 2});
    m.initializer("w", floats({2, 2, 1}, {1, 2, 3, 4}));
    m.initializer("w2", floats({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
    m.initializer("s", floats({}, {0.1f}));
    m.initializer("w3", floats({5, 6}, std::vector<float>(30, 0.5f)));
    m.initializer("mask3", Tensor::from_vector<int32_t>({3}, {1, 2, 1}));
    m.initializer("u8", Tensor::from_vector<uint8_t>({3}, {1, 2, 3}));
    m.output("y", DType::kFloat32);
    r.attrs(m.node(r.op, r.inputs, {"y"}, "the_node", "com.microsoft"));
    const std::string path = m.save(dir.path());
    std::vector<std::string> parts = r.parts;
    parts.push_back(path);
    parts.push_back("node 'the_node' (com.microsoft::" + r.op + ")");
    expect_error([&] { Session s(path, SessionOptions().providers({"reference"})); },
                 ErrorCode::kInvalidModel, parts);
  }
}

// The schema check knows the contrib operators: an attribute of the wrong type is refused at
// load before any lowering.
TEST(LowerContrib, SchemaRefusesAWrongAttributeType) {
  TempDir dir;
  ModelBuilder m(17);
  m.opset("com.microsoft", 1);
  m.input("x", DType::kFloat32, {1, 2, 5});
  m.initializer("w", floats({2, 2, 1}, {1, 2, 3, 4}));
  m.output("y", DType::kFloat32);
  set_attr(m.node("FusedConv", {"x", "w"}, {"y"}, "conv", "com.microsoft"), "activation",
           int64_t{1});
  const std::string path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel,
               {path, "node 'conv' (com.microsoft::FusedConv)", "activation"});
}

}  // namespace
}  // namespace recur
