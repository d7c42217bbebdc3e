// The oneDNN RNN kernel beyond single runs: one session fed many shapes (primitives and weight
// formats made and dropped as buckets are chosen), what --explain says, and the claim rules
// through the public API.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

bool have_onednn() {
  for (const auto& p : list_providers())
    if (p.name == "onednn") return p.available;
  return false;
}

// One RNN node with constant weights, X [T, N, I] with symbolic T and N, and sequence_lens.
std::string model(const std::string& op, int64_t I, int64_t H, const std::string& direction,
                  bool lbr, const std::vector<std::pair<std::string, int64_t>>& int_attrs = {},
                  float clip = 0.0f) {
  std::mt19937 rng(3);
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  const int64_t G = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {-1, -1, I}, {"T", "N"});
  mb.input("sequence_lens", DType::kInt32, {-1}, {"N"});
  mb.initializer("W", random_tensor({D, G * H, I}, rng));
  mb.initializer("R", random_tensor({D, G * H, H}, rng));
  mb.initializer("B", random_tensor({D, 2 * G * H}, rng));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
  auto& n = mb.node(op, {"X", "W", "R", "B", "sequence_lens"}, {"Y", "Y_h"}, "rnn_node");
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", direction);
  if (lbr) set_attr(n, "linear_before_reset", int64_t{1});
  for (const auto& [k, v] : int_attrs) set_attr(n, k, v);
  if (clip > 0) set_attr(n, "clip", clip);
  return mb.bytes();
}

Session open(const std::string& bytes, SessionOptions o) {
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

void expect_match(const Outputs& got, const Outputs& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const auto cmp = tools::compare(got[i], want[i], tools::Tolerance{});
    EXPECT_TRUE(cmp.match) << what << ": " << want.name(i) << ": " << cmp.reason;
  }
}

// Many shapes through one session: each new (N, T) bucket may choose another weights format
// (blocked, rnn_packed, ldigo), and new formats are reordered from whatever is still held.
TEST(OnednnRnnKernel, ManyShapesOneSession) {
  if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN provider";
  for (const std::string op : {"GRU", "LSTM", "RNN"}) {
    for (const std::string impl : {"any", "auto"}) {
      const std::string bytes = model(op, 9, 17, "bidirectional", op == "GRU");
      SessionOptions dopts;
      dopts.providers({"onednn"})
          .threads(2)
          .set("onednn.impl", impl)
          .set("onednn.tune", impl == "auto" ? "1" : "0");
      SessionOptions ropts;
      ropts.providers({"reference"});
      Session dnn = open(bytes, dopts);
      Session ref = open(bytes, ropts);
      std::mt19937 rng(5);
      struct Shape2 {
        int64_t T, N;
        std::vector<int32_t> lens;
      };
      const std::vector<Shape2> shapes = {{2, 2, {2, 2}},
                                          {1, 1, {1}},
                                          {4, 32, {}},
                                          {3, 2, {3, 1}},
                                          {5, 7, {5, 0, 3, 1, 5, 2, 4}},
                                          {1, 1, {0}},
                                          {2, 2, {2, 2}},
                                          {6, 16, {}}};
      for (const auto& s : shapes) {
        std::vector<int32_t> lens = s.lens;
        if (lens.empty()) lens.assign(static_cast<size_t>(s.N), static_cast<int32_t>(s.T));
        Feeds f = {{"X", random_tensor({s.T, s.N, 9}, rng, 1.0f)},
                   {"sequence_lens", Tensor::from_vector<int32_t>({s.N}, lens)}};
        expect_match(
            dnn.run(f), ref.run(f),
            op + " impl=" + impl + " T=" + std::to_string(s.T) + " N=" + std::to_string(s.N));
      }
    }
  }
}

TEST(OnednnRnnKernel, ExplainShowsRepackAndChoice) {
  if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN provider";
  // Static X: the implementation is chosen at load, and --explain says which.
  std::mt19937 rng(1);
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {5, 4, 8});
  mb.initializer("W", random_tensor({1, 16, 8}, rng));
  mb.initializer("R", random_tensor({1, 16, 4}, rng));
  mb.initializer("B", random_tensor({1, 32}, rng));
  mb.initializer("P", random_tensor({1, 12}, rng));
  mb.output("Y", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R", "B", "", "", "", "P"}, {"Y"}, "lstm");
  set_attr(n, "hidden_size", int64_t{4});
  SessionOptions o;
  o.providers({"onednn"}).threads(1);
  const std::string bytes = mb.bytes();
  Session s = open(bytes, o);
  const std::string e = s.explain();
  EXPECT_NE(e.find("W, R, B, P repacked at load"), std::string::npos) << e;
  EXPECT_NE(e.find("note: oneDNN "), std::string::npos) << e;
  EXPECT_NE(e.find("constant weights released after repacking: 944 B"), std::string::npos) << e;
  ASSERT_EQ(s.assignment().size(), 1u);
  EXPECT_EQ(s.assignment()[0].provider, "onednn");
}

TEST(OnednnRnnKernel, GraphInputWeightsAreRepackedPerRun) {
  if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN provider";
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {3, 2, 5});
  mb.input("W", DType::kFloat32, {1, 18, 5});
  mb.input("R", DType::kFloat32, {1, 18, 6});
  mb.output("Y_h", DType::kFloat32);
  auto& n = mb.node("GRU", {"X", "W", "R"}, {"", "Y_h"}, "gru");
  set_attr(n, "hidden_size", int64_t{6});
  const std::string bytes = mb.bytes();
  SessionOptions o;
  o.providers({"onednn"});
  Session s = open(bytes, o);
  EXPECT_NE(s.explain().find("W, R are graph inputs: weights repacked per run"), std::string::npos)
      << s.explain();
  SessionOptions r;
  r.providers({"reference"});
  Session ref = open(bytes, r);
  std::mt19937 rng(9);
  for (int i = 0; i < 3; ++i) {  // new weights every run
    Feeds f = {{"X", random_tensor({3, 2, 5}, rng)},
               {"W", random_tensor({1, 18, 5}, rng)},
               {"R", random_tensor({1, 18, 6}, rng)}};
    expect_match(s.run(f), ref.run(f), "run " + std::to_string(i));
  }
}

TEST(OnednnRnnKernel, DeclinedNodesNameTheReason) {
  if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string clip = model("LSTM", 3, 4, "forward", false, {}, 0.5f);
  SessionOptions only;
  only.providers({"onednn"});
  testing::expect_error([&] { open(clip, only); }, ErrorCode::kNotImplemented,
                        {"rnn_node", "onednn", "clip"});
  // With the reference behind it, the node falls back, and --explain says why.
  SessionOptions both;
  both.providers({"onednn", "reference"});
  Session s = open(clip, both);
  EXPECT_EQ(s.assignment()[0].provider, "reference");
  EXPECT_NE(s.explain().find("onednn: clip=0.5"), std::string::npos) << s.explain();

  const std::string forget_clip =
      model("LSTM", 3, 4, "forward", false, {{"input_forget", 1}}, 0.5f);
  testing::expect_error([&] { open(forget_clip, only); }, ErrorCode::kNotImplemented,
                        {"rnn_node", "input_forget together with clip"});
  // input_forget alone runs on oneDNN (a negated input gate).
  const std::string forget = model("LSTM", 3, 4, "forward", false, {{"input_forget", 1}});
  EXPECT_EQ(open(forget, only).assignment()[0].provider, "onednn");
}

// Shapes oneDNN's RNN primitives cannot take. A declared batch of 2^40 made primitive creation
// at load divide by zero inside oneDNN (SIGFPE; found by mutating models): the session now
// loads, and a run reports the shape mismatch. An input size of 0 is valid ONNX: the node goes
// to the reference provider, with the reason.
TEST(OnednnRnnKernel, ShapesOnednnCannotTakeAreRefusedNotCrashed) {
  if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(9);
  for (const std::string op : {"LSTM", "GRU", "RNN"}) {
    const int64_t G = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1, H = 4, I = 3;
    ModelBuilder mb(14);
    mb.input("X", DType::kFloat32, {3, int64_t{1} << 40, I});
    mb.initializer("W", random_tensor({1, G * H, I}, rng));
    mb.initializer("R", random_tensor({1, G * H, H}, rng));
    mb.output("Y", DType::kFloat32);
    set_attr(mb.node(op, {"X", "W", "R"}, {"Y"}, "rnn_node"), "hidden_size", H);
    const std::string bytes = mb.bytes();
    SessionOptions o;
    o.providers({"onednn"});
    Session s = open(bytes, o);
    EXPECT_EQ(s.assignment()[0].provider, "onednn");
    testing::expect_error(
        [&] {
          s.run({{"X", random_tensor({3, 2, I}, rng)}});
        },
        ErrorCode::kInvalidArgument, {"'X'", "1099511627776"});
  }
  const std::string empty_input = model("LSTM", 0, 4, "forward", false);
  SessionOptions both;
  both.providers({"onednn", "reference"});
  Session s = open(empty_input, both);
  EXPECT_EQ(s.assignment()[0].provider, "reference");
  EXPECT_NE(s.explain().find("onednn: input size 0"), std::string::npos) << s.explain();
  Feeds f = {{"X", Tensor::empty(DType::kFloat32, {2, 3, 0})},
             {"sequence_lens", Tensor::from_vector<int32_t>({3}, {2, 1, 0})}};
  EXPECT_EQ(s.run(f).size(), 2u);
}

}  // namespace
}  // namespace recur
