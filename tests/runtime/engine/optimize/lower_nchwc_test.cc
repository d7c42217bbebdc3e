// ONNX Runtime's blocked NCHWc layout (runtime/engine/optimize/lower_nchwc.cc). Models ONNX
// Runtime saved on this machine (blocks of 16) are checked against PyTorch in the CTests
// nchwc/*. Here, blocks of 8, which only an AVX2 machine writes: models built by hand with
// filters put into ONNX Runtime's blocked order by this test (the inverse of what the lowering
// does), against the same convolutions in ONNX's own operators; and the refusals, each naming
// the node.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;
using testing::TempDir;

constexpr char kNchwc[] = "com.microsoft.nchwc";

// ONNX's [O, I, kH, kW] filter in ONNX Runtime's order, output channels padded to `o_pad`:
// [O/b][I/bi][kH*kW][bi][b], bi = b where the input channels are blocked, else 1.
Tensor block_filter(const Tensor& w, int64_t b, int64_t o_pad, bool blocked_inputs) {
  const Shape& s = w.shape();
  const int64_t O = s[0], I = s[1], K = s[2] * s[3];
  const int64_t bi = blocked_inputs ? b : 1;
  const int64_t i_pad = (I + bi - 1) / bi * bi;
  std::vector<float> out(static_cast<size_t>(o_pad * i_pad * K), 0.0f);
  const float* src = w.data<float>();
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t k = 0; k < K; ++k) {
        const int64_t at = ((((o / b) * (i_pad / bi) + i / bi) * K + k) * bi + i % bi) * b + o % b;
        out[static_cast<size_t>(at)] = src[(o * I + i) * K + k];
      }
  return Tensor::from_vector<float>({o_pad, i_pad, s[2], s[3]}, out);
}

Tensor padded(const Tensor& v, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), 0.0f);
  std::copy_n(v.data<float>(), v.numel(), out.begin());
  return Tensor::from_vector<float>({n}, out);
}

struct Weights {
  Tensor w1, b1, w2, b2, wd, bd;
};

Weights weights() {
  std::mt19937 rng(41);
  return {random_tensor({20, 3, 3, 3}, rng),  random_tensor({20}, rng),
          random_tensor({12, 24, 3, 3}, rng), random_tensor({12}, rng),
          random_tensor({24, 1, 3, 3}, rng),  random_tensor({24}, rng)};
}

// The same network in ONNX's operators: Conv 3->20 (Relu), padded by ONNX Runtime to 24
// channels, a depthwise Conv over the 24 (LeakyRelu 0.2) plus its input, a 3x3 Conv 24->12
// (blocked input), its 12 channels kept.
std::string plain_model(const Weights& w) {
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {2, 3, 6, 7});
  m.initializer("w1", w.w1).initializer("b1", w.b1).initializer("wd", w.wd);
  m.initializer("bd", w.bd).initializer("w2", w.w2).initializer("b2", w.b2);
  m.initializer("pads", Tensor::from_vector<int64_t>({8}, {0, 0, 0, 0, 0, 4, 0, 0}));
  m.output("y", DType::kFloat32);
  set_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"});
  m.node("Pad", {"r1", "pads"}, {"p1"});
  auto& dw = m.node("Conv", {"p1", "wd", "bd"}, {"d"});
  set_attr(dw, "group", int64_t{24});
  set_attr(dw, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(m.node("LeakyRelu", {"d"}, {"dl"}), "alpha", 0.2f);
  m.node("Add", {"dl", "p1"}, {"s"});
  set_attr(m.node("Conv", {"s", "w2", "b2"}, {"y"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  return m.bytes();
}

// As ONNX Runtime writes it on an AVX2 machine (blocks of 8), with `split` the Add done on
// Reshapes to [N, C/8, H, W, 8] as it writes an Add whose shapes it cannot prove equal.
ModelBuilder blocked_model(const Weights& w, bool split) {
  ModelBuilder m(17);
  m.opset(kNchwc, 1);
  m.input("x", DType::kFloat32, {2, 3, 6, 7});
  m.initializer("w1", block_filter(w.w1, 8, 24, false)).initializer("b1", padded(w.b1, 24));
  m.initializer("wd", block_filter(w.wd, 8, 24, false)).initializer("bd", w.bd);
  m.initializer("w2", block_filter(w.w2, 8, 16, true)).initializer("b2", w.b2);
  m.output("y", DType::kFloat32);
  auto& c1 = m.node("Conv", {"x", "w1", "b1"}, {"r1"}, "conv1", kNchwc);
  set_attr(c1, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(c1, "activation", std::string("Relu"));
  auto& dw = m.node("Conv", {"r1", "wd", "bd"}, {"dl"}, "dw", kNchwc);
  set_attr(dw, "group", int64_t{24});
  set_attr(dw, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(dw, "activation", std::string("LeakyRelu"));
  set_attr(dw, "activation_params", std::vector<float>{0.2f});
  if (split) {
    m.initializer("split", Tensor::from_vector<int64_t>({5}, {0, -1, 0, 0, 8}));
    m.initializer("join", Tensor::from_vector<int64_t>({4}, {0, -1, 0, 0}));
    m.node("Reshape", {"dl", "split"}, {"dl5"});
    m.node("Reshape", {"r1", "split"}, {"r15"});
    m.node("Add", {"dl5", "r15"}, {"s5"});
    m.node("Reshape", {"s5", "join"}, {"s"});
  } else {
    m.node("Add", {"dl", "r1"}, {"s"});
  }
  set_attr(m.node("Conv", {"s", "w2", "b2"}, {"c2"}, "conv2", kNchwc), "pads",
           std::vector<int64_t>{1, 1, 1, 1});
  set_attr(m.node("ReorderOutput", {"c2"}, {"y"}, "out", kNchwc), "channels", int64_t{12});
  return m;
}

Tensor input() {
  std::mt19937 rng(43);
  return random_tensor({2, 3, 6, 7}, rng, 1.0f);
}

void expect_near(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5) << "element " << i;
}

TEST(LowerNchwc, BlocksOfEightFromTheFilterShapes) {
  const Weights w = weights();
  const std::string plain = plain_model(w);
  Session want_s =
      Session::from_bytes(plain.data(), plain.size(), SessionOptions().providers({"reference"}));
  const Tensor want = want_s.run({{"x", input()}})[0];
  // 24 output channels are a multiple of 8 and not of 16: the model's block is 8 whatever
  // this CPU's is.
  const std::string blocked = blocked_model(w, false).bytes();
  for (bool optimize : {true, false}) {
    Session s =
        Session::from_bytes(blocked.data(), blocked.size(), SessionOptions().optimize(optimize));
    expect_near(s.run({{"x", input()}})[0], want);
    EXPECT_NE(s.explain().find("lowered ONNX Runtime's com.microsoft.nchwc::Conv 'dw'"),
              std::string::npos)
        << s.explain();
  }
}

TEST(LowerNchwc, TheSplitReshapesAroundAnAddComputeOnThePlainTensors) {
  const Weights w = weights();
  const std::string plain = plain_model(w);
  Session want_s =
      Session::from_bytes(plain.data(), plain.size(), SessionOptions().providers({"reference"}));
  const std::string blocked = blocked_model(w, true).bytes();
  Session s = Session::from_bytes(blocked.data(), blocked.size(), SessionOptions());
  expect_near(s.run({{"x", input()}})[0], want_s.run({{"x", input()}})[0]);
}

// Conv A (8 -> 20 channels, padded to 24) whose 20 channels ReorderOutput reads, then Conv B
// (24 -> 8) over all 24. With `padding_bias` A's padding channels carry a bias and B's filter
// weighs them, which ONNX Runtime computes (its padding is not zero here), so recur must keep
// the padding; without it, A computes 20 channels and B reads 20.
ModelBuilder padding_model(bool padding_bias, Tensor* a_plain, Tensor* a_bias, Tensor* b_plain) {
  std::mt19937 rng(47);
  *a_plain = random_tensor({24, 8, 3, 3}, rng);
  *b_plain = random_tensor({8, 24, 1, 1}, rng);
  std::vector<float> bias(24, 0.0f);
  for (int i = 0; i < 24; ++i)
    bias[static_cast<size_t>(i)] = (i < 20 || padding_bias) ? 0.1f * (i + 1) : 0.0f;
  if (!padding_bias) {
    // ONNX Runtime's own padding: zero filters and bias on A's channels 20..23, zero weights on
    // them in B.
    float* a = a_plain->data<float>();
    float* b = b_plain->data<float>();
    for (int o = 20; o < 24; ++o)
      for (int k = 0; k < 8 * 9; ++k) a[o * 8 * 9 + k] = 0.0f;
    for (int o = 0; o < 8; ++o)
      for (int i = 20; i < 24; ++i) b[o * 24 + i] = 0.0f;
  }
  *a_bias = Tensor::from_vector<float>({24}, bias);
  ModelBuilder m(17);
  m.opset(kNchwc, 1);
  m.input("x", DType::kFloat32, {1, 8, 5, 5});
  m.initializer("wa", block_filter(*a_plain, 8, 24, true)).initializer("ba", *a_bias);
  m.initializer("wb", block_filter(*b_plain, 8, 8, true));
  m.output("y", DType::kFloat32).output("a", DType::kFloat32);
  m.node("ReorderInput", {"x"}, {"xb"}, "in", kNchwc);
  auto& a = m.node("Conv", {"xb", "wa", "ba"}, {"ab"}, "conv_a", kNchwc);
  set_attr(a, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(a, "activation", std::string("Sigmoid"));
  set_attr(m.node("ReorderOutput", {"ab"}, {"a"}, "out_a", kNchwc), "channels", int64_t{20});
  m.node("Conv", {"ab", "wb"}, {"yb"}, "conv_b", kNchwc);
  set_attr(m.node("ReorderOutput", {"yb"}, {"y"}, "out_b", kNchwc), "channels", int64_t{8});
  return m;
}

// The same in ONNX's operators over all 24 channels, as ONNX Runtime computes it.
Outputs padded_oracle(const Tensor& a_plain, const Tensor& a_bias, const Tensor& b_plain,
                      const Tensor& x) {
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {1, 8, 5, 5});
  m.initializer("wa", a_plain).initializer("ba", a_bias).initializer("wb", b_plain);
  m.initializer("starts", Tensor::from_vector<int64_t>({1}, {0}));
  m.initializer("ends", Tensor::from_vector<int64_t>({1}, {20}));
  m.initializer("axes", Tensor::from_vector<int64_t>({1}, {1}));
  m.output("y", DType::kFloat32).output("a", DType::kFloat32);
  set_attr(m.node("Conv", {"x", "wa", "ba"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Sigmoid", {"c"}, {"s"});
  m.node("Slice", {"s", "starts", "ends", "axes"}, {"a"});
  m.node("Conv", {"s", "wb"}, {"y"});
  const std::string bytes = m.bytes();
  Session s =
      Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
  return s.run({{"x", x}});
}

TEST(LowerNchwc, PaddingIsDroppedWhereNothingReadsIt) {
  for (bool padding_bias : {false, true}) {
    SCOPED_TRACE(padding_bias ? "padding that carries values" : "ONNX Runtime's zero padding");
    Tensor a_plain, a_bias, b_plain;
    const std::string bytes = padding_model(padding_bias, &a_plain, &a_bias, &b_plain).bytes();
    std::mt19937 rng(53);
    const Tensor x = random_tensor({1, 8, 5, 5}, rng, 1.0f);
    const Outputs want = padded_oracle(a_plain, a_bias, b_plain, x);
    Session s = Session::from_bytes(bytes.data(), bytes.size(), SessionOptions());
    const Outputs got = s.run({{"x", x}});
    ASSERT_EQ(got.size(), 2u);
    expect_near(got[0], want[0]);
    expect_near(got[1], want[1]);
    // Conv A computes its 20 channels only where B's filter ignores the other 4.
    EXPECT_EQ(s.explain().find("20 of 24 computed") != std::string::npos, !padding_bias)
        << s.explain();
  }
}

// One node reading a blocked tensor, `op` over it.
void expect_refused(const std::string& op, const std::vector<std::string>& parts) {
  TempDir dir;
  ModelBuilder m(17);
  m.opset(kNchwc, 1);
  m.input("x", DType::kFloat32, {1, 16, 4, 4});
  m.output("y", DType::kFloat32);
  m.node("ReorderInput", {"x"}, {"b"}, "in", kNchwc);
  if (op == "Transpose") {
    m.node("Transpose", {"b"}, {"t"}, "reader");
    set_attr(m.node("ReorderOutput", {"t"}, {"y"}, "out", kNchwc), "channels", int64_t{16});
  } else if (op == "output") {
    m.node("Relu", {"b"}, {"y"}, "reader");
  } else if (op == "Upsample") {
    set_attr(m.node("Upsample", {"b"}, {"u"}, "reader", kNchwc), "scales",
             std::vector<int64_t>{1, 2, 2, 2});
    set_attr(m.node("ReorderOutput", {"u"}, {"y"}, "out", kNchwc), "channels", int64_t{16});
  } else if (op == "ReorderOutput") {
    m.node("ReorderOutput", {"b"}, {"y"}, "reader", kNchwc);
  } else if (op == "Conv") {
    m.input("w", DType::kFloat32, {16, 16, 1, 1});
    m.node("Conv", {"b", "w"}, {"c"}, "reader", kNchwc);
    set_attr(m.node("ReorderOutput", {"c"}, {"y"}, "out", kNchwc), "channels", int64_t{16});
  } else if (op == "If") {
    // A branch reads the blocked tensor from the enclosing graph.
    onnx::GraphProto branch;
    branch.set_name("branch");
    auto* n = branch.add_node();
    n->set_op_type("Identity");
    n->add_input("b");
    n->add_output("r");
    branch.add_output()->set_name("r");
    branch.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
    m.initializer("cond", Tensor::from_vector<bool>({}, {true}));
    auto& iff = m.node("If", {"cond"}, {"t"}, "reader");
    set_attr(iff, "then_branch", branch);
    set_attr(iff, "else_branch", branch);
    set_attr(m.node("ReorderOutput", {"t"}, {"y"}, "out", kNchwc), "channels", int64_t{16});
  } else if (op == "ReorderOutput40") {
    set_attr(m.node("ReorderOutput", {"b"}, {"y"}, "reader", kNchwc), "channels", int64_t{40});
  } else if (op == "plain") {
    m.node("GlobalMaxPool", {"x"}, {"p"}, "reader", kNchwc);
    m.node("Add", {"p", "b"}, {"s"});
    set_attr(m.node("ReorderOutput", {"s"}, {"y"}, "out", kNchwc), "channels", int64_t{16});
  } else if (op == "depthwise") {
    std::mt19937 rng(1);
    m.initializer("w", random_tensor({16, 1, 3, 3}, rng));
    set_attr(m.node("Conv", {"b", "w"}, {"c"}, "reader", kNchwc), "group", int64_t{40});
    set_attr(m.node("ReorderOutput", {"c"}, {"y"}, "out", kNchwc), "channels", int64_t{16});
  } else if (op == "Conv20") {
    std::mt19937 rng(1);
    m.initializer("w", random_tensor({20, 16, 1, 1}, rng));
    m.node("Conv", {"b", "w"}, {"c"}, "reader", kNchwc);
    set_attr(m.node("ReorderOutput", {"c"}, {"y"}, "out", kNchwc), "channels", int64_t{20});
  }
  const std::string path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, parts);
}

TEST(LowerNchwc, UsesRecurCannotReadAreRefusedNamingTheNode) {
  expect_refused("Transpose", {"node 'reader' (Transpose)", "NCHWc layout"});
  expect_refused("output", {"graph output 'y'", "NCHWc layout"});
  expect_refused("Upsample", {"node 'reader'", "scales must be [1, 1, h, w]"});
  expect_refused("ReorderOutput", {"node 'reader'", "channels attribute must be positive"});
  expect_refused("Conv", {"node 'reader'", "filter must be a constant"});
  expect_refused("Conv20", {"node 'reader'", "not in whole blocks"});
  expect_refused("If", {"node 'reader' (If)", "NCHWc layout"});
  expect_refused("ReorderOutput40", {"node 'reader'", "has 16 channels, fewer than its 40"});
  expect_refused("plain", {"node 'reader'", "must come from ReorderInput"});
  expect_refused("depthwise", {"node 'reader'", "(group 40) is not in whole blocks"});
}

TEST(LowerNchwc, SplitsIntoDifferentBlocksAreRefused) {
  TempDir dir;
  ModelBuilder m(17);
  m.opset(kNchwc, 1);
  m.input("x", DType::kFloat32, {1, 16, 4, 4});
  m.output("y", DType::kFloat32);
  m.initializer("s8", Tensor::from_vector<int64_t>({5}, {0, -1, 0, 0, 8}));
  m.initializer("s16", Tensor::from_vector<int64_t>({5}, {0, -1, 0, 0, 16}));
  m.initializer("join", Tensor::from_vector<int64_t>({4}, {0, -1, 0, 0}));
  m.node("ReorderInput", {"x"}, {"b"}, "in", kNchwc);
  m.node("Reshape", {"b", "s8"}, {"b8"}, "split8");
  m.node("Reshape", {"b", "s16"}, {"b16"}, "split16");
  m.node("Reshape", {"b8", "join"}, {"j8"});
  m.node("Reshape", {"b16", "join"}, {"j16"});
  m.node("Add", {"j8", "j16"}, {"s"});
  set_attr(m.node("ReorderOutput", {"s"}, {"y"}, "out", kNchwc), "channels", int64_t{16});
  const std::string path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel,
               {path, "blocks of 16", "blocks of 8"});
}

}  // namespace
}  // namespace recur
