// Which RNN nodes the cudnn provider claims, and why it declines the others: planned with
// SessionOptions().plan_only(true), which needs no GPU. Runs in every build that has the
// cudnn provider.
#include <gtest/gtest.h>

#include <filesystem>

#include "recur/recur.h"
#include "tests/providers/cuda/rnn_case.h"
#include "tests/support/expect_error.h"

namespace recur::testing {
namespace {

namespace fs = std::filesystem;

class CudnnClaim : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cudnn_compiled_in()) GTEST_SKIP() << "this build has no cudnn provider";
  }
};

std::string declined_reason(const NodeAssignment& a, const std::string& provider) {
  for (const auto& d : a.declined)
    if (d.provider == provider) return d.reason;
  return "(" + provider + " did not decline)";
}

TEST_F(CudnnClaim, DefaultAttributesGoToCudnn) {
  int planned = 0;
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      for (int layout : {0, 1}) {
        for (bool lens : {false, true}) {
          RnnCase c;
          c.op = op;
          c.direction = dir;
          c.layout = layout;
          c.seq_lens = lens;
          c.initial_h = lens;
          c.initial_c = lens;
          const NodeAssignment a = plan_rnn(c, {"cudnn", "reference"});
          EXPECT_EQ(a.provider, "cudnn") << c.describe() << ": " << declined_reason(a, "cudnn");
          ++planned;
        }
      }
    }
  }
  EXPECT_EQ(planned, 36);
}

TEST_F(CudnnClaim, RnnReluAndExplicitDefaultsAndZeroPeepholesGoToCudnn) {
  RnnCase relu;
  relu.op = "RNN";
  relu.direction = "bidirectional";
  relu.attrs = [](onnx::NodeProto& n) {
    set_attr(n, "activations", std::vector<std::string>{"Relu", "Relu"});
  };
  EXPECT_EQ(plan_rnn(relu, {"cudnn", "reference"}).provider, "cudnn");

  RnnCase lstm;
  lstm.attrs = [](onnx::NodeProto& n) {
    set_attr(n, "activations", std::vector<std::string>{"sigmoid", "Tanh", "tanh"});
  };
  EXPECT_EQ(plan_rnn(lstm, {"cudnn", "reference"}).provider, "cudnn");

  RnnCase zero_p;
  zero_p.p = RnnCase::Peepholes::kZero;
  EXPECT_EQ(plan_rnn(zero_p, {"cudnn", "reference"}).provider, "cudnn");

  RnnCase half;
  half.dtype = DType::kFloat16;
  EXPECT_EQ(plan_rnn(half, {"cudnn", "reference"}).provider, "cudnn");

  RnnCase subset;
  subset.y = false;
  subset.y_c = false;
  EXPECT_EQ(plan_rnn(subset, {"cudnn", "reference"}).provider, "cudnn");
}

struct Declined {
  std::string name;
  RnnCase c;
  std::vector<std::string> reason_parts;
};

TEST_F(CudnnClaim, DeclinesNameTheAttribute) {
  std::vector<Declined> cases;
  {
    RnnCase c;
    c.attrs = [](onnx::NodeProto& n) { set_attr(n, "clip", 3.0f); };
    cases.push_back({"lstm clip", c, {"clip=3", "cell state"}});
  }
  {
    RnnCase c;
    c.op = "GRU";
    c.attrs = [](onnx::NodeProto& n) { set_attr(n, "clip", 0.5f); };
    cases.push_back({"gru clip", c, {"clip=0.5"}});
  }
  {
    RnnCase c;
    c.p = RnnCase::Peepholes::kNonZero;
    cases.push_back({"peepholes", c, {"P (peepholes)", "not all zeros"}});
  }
  {
    RnnCase c;
    c.p = RnnCase::Peepholes::kInput;
    cases.push_back({"peepholes as input", c, {"P (peepholes)", "not a constant"}});
  }
  {
    RnnCase c;
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"Sigmoid", "Relu", "Tanh"});
    };
    cases.push_back({"lstm relu", c, {"activations=[Sigmoid,Relu,Tanh]"}});
  }
  {
    RnnCase c;
    c.op = "GRU";
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"HardSigmoid", "Tanh"});
    };
    cases.push_back({"gru hardsigmoid", c, {"activations=[HardSigmoid,Tanh]"}});
  }
  {
    RnnCase c;
    c.op = "RNN";
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"Sigmoid"});
    };
    cases.push_back({"rnn sigmoid", c, {"activations=[Sigmoid]", "Tanh or Relu"}});
  }
  {
    RnnCase c;
    c.op = "RNN";
    c.direction = "bidirectional";
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"Tanh", "Relu"});
    };
    cases.push_back({"rnn mixed", c, {"activations=[Tanh,Relu]", "same in both directions"}});
  }
  {
    RnnCase c;
    c.op = "RNN";
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"LeakyRelu"});
      set_attr(n, "activation_alpha", std::vector<float>{0.1f});
    };
    cases.push_back({"rnn alpha", c, {"activations=[LeakyRelu]", "activation_alpha"}});
  }
  {
    RnnCase c;
    c.attrs = [](onnx::NodeProto& n) { set_attr(n, "activation_beta", std::vector<float>{0.5f}); };
    cases.push_back({"lstm beta only", c, {"activation_alpha/activation_beta"}});
  }
  {
    RnnCase c;
    c.attrs = [](onnx::NodeProto& n) { set_attr(n, "input_forget", int64_t{1}); };
    cases.push_back({"input_forget", c, {"input_forget=1"}});
  }
  {
    RnnCase c;
    c.op = "GRU";
    c.gru_linear_before_reset = 0;
    cases.push_back({"gru lbr=0", c, {"linear_before_reset=0"}});
  }
  {
    RnnCase c;
    c.op = "GRU";
    c.gru_linear_before_reset = -1;  // left out: ONNX's default is 0
    cases.push_back({"gru lbr absent", c, {"linear_before_reset=0"}});
  }
  {
    RnnCase c;
    c.dtype = DType::kFloat64;
    cases.push_back({"float64", c, {"X is float64", "float32 and float16"}});
  }
  {
    RnnCase c;
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "clip", 1.0f);
      set_attr(n, "input_forget", int64_t{1});
    };
    cases.push_back({"two reasons", c, {"clip=1", "input_forget=1"}});
  }
  for (const auto& d : cases) {
    const NodeAssignment a = plan_rnn(d.c, {"cudnn", "reference"});
    EXPECT_EQ(a.provider, "reference") << d.name;
    const std::string why = declined_reason(a, "cudnn");
    for (const auto& part : d.reason_parts) {
      EXPECT_NE(why.find(part), std::string::npos)
          << d.name << ": '" << part << "' not in: " << why;
    }
  }
}

TEST_F(CudnnClaim, ExplainShowsCopiesAndKeepsLengthsOnTheHost) {
  RnnCase c;
  c.seq_lens = true;
  c.initial_h = true;
  const RnnModel m = build_rnn_model(c);
  Session s =
      Session::from_bytes(m.bytes.data(), m.bytes.size(),
                          SessionOptions().providers({"cudnn", "reference"}).plan_only(true));
  const std::string e = s.explain();
  EXPECT_NE(e.find("X: cpu -> cuda:0 for rnn (every run)"), std::string::npos) << e;
  EXPECT_NE(e.find("initial_h: cpu -> cuda:0 for rnn (every run)"), std::string::npos) << e;
  // Constant weights are repacked at load: no copy of W/R/B is planned.
  EXPECT_EQ(e.find("W: cpu"), std::string::npos) << e;
  EXPECT_EQ(e.find("B: cpu"), std::string::npos) << e;
  // cuDNN reads the lengths from host memory: no upload.
  EXPECT_EQ(e.find("sequence_lens: cpu"), std::string::npos) << e;
  EXPECT_NE(e.find("plan only"), std::string::npos) << e;
}

TEST_F(CudnnClaim, DeclinedNodeGetsACopyEachWay) {
  // An LSTM with clip falls back to the CPU between two cuDNN LSTMs, chained through their
  // states: its initial_h comes back from the GPU and its Y_h goes there again.
  ModelBuilder mb(17);
  std::mt19937 rng(3);
  const int64_t T = 3, N = 2, I = 4, H = 4;
  mb.input("X", DType::kFloat32, {T, N, I});
  for (int k = 0; k < 3; ++k) {
    const std::string s = std::to_string(k);
    mb.initializer("W" + s, random_tensor(DType::kFloat32, {1, 4 * H, I}, 0.3f, rng));
    mb.initializer("R" + s, random_tensor(DType::kFloat32, {1, 4 * H, H}, 0.3f, rng));
    const std::string h0 = k == 0 ? "" : "h" + std::to_string(k);
    onnx::NodeProto& n = mb.node("LSTM", {"X", "W" + s, "R" + s, "", "", h0},
                                 {"", "h" + std::to_string(k + 1)}, "lstm" + s);
    set_attr(n, "hidden_size", H);
    if (k == 1) set_attr(n, "clip", 2.0f);
  }
  mb.output("h3", DType::kFloat32);
  const std::string bytes = mb.bytes();
  Session s =
      Session::from_bytes(bytes.data(), bytes.size(),
                          SessionOptions().providers({"cudnn", "reference"}).plan_only(true));
  std::map<std::string, std::string> who;
  for (const auto& a : s.assignment()) who[a.node] = a.provider;
  EXPECT_EQ(who["lstm0"], "cudnn");
  EXPECT_EQ(who["lstm1"], "reference");
  EXPECT_EQ(who["lstm2"], "cudnn");
  const std::string e = s.explain();
  EXPECT_NE(e.find("h1: cuda:0 -> cpu for lstm1 (every run)"), std::string::npos) << e;
  EXPECT_NE(e.find("h2: cpu -> cuda:0 for lstm2 (every run)"), std::string::npos) << e;
}

TEST_F(CudnnClaim, CudaGenericTakesWhatCudnnDeclines) {
  RnnCase c;
  c.attrs = [](onnx::NodeProto& n) { set_attr(n, "clip", 3.0f); };
  const NodeAssignment a = plan_rnn(c, {"cudnn", "cuda-generic", "reference"});
  EXPECT_EQ(a.provider, "cuda-generic");
  EXPECT_NE(declined_reason(a, "cudnn").find("clip=3"), std::string::npos)
      << declined_reason(a, "cudnn");
}

TEST_F(CudnnClaim, WithoutADeviceCudnnDeclinesOutsidePlanOnly) {
  std::string why;
  if (cuda_device_present(&why)) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
  RnnCase c;
  const RnnModel m = build_rnn_model(c);
  Session s = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                  SessionOptions().providers({"cudnn", "reference"}));
  const NodeAssignment& a = s.assignment().at(0);
  EXPECT_EQ(a.provider, "reference");
  EXPECT_EQ(declined_reason(a, "cudnn").rfind("no CUDA device", 0), 0u)
      << declined_reason(a, "cudnn");
  // And the run works, on the CPU.
  const Outputs out = s.run(m.feeds);
  EXPECT_EQ(out["Y"].shape(), (Shape{c.T, 1, c.N, c.H}));
}

TEST_F(CudnnClaim, Settings) {
  RnnCase c;
  const RnnModel m = build_rnn_model(c);
  auto open = [&](const std::string& key, const std::string& value) {
    return Session::from_bytes(
        m.bytes.data(), m.bytes.size(),
        SessionOptions().providers({"cudnn", "reference"}).plan_only(true).set(key, value));
  };
  EXPECT_EQ(open("cudnn.tf32", "1").assignment().at(0).provider, "cudnn");
  EXPECT_EQ(open("cudnn.persistent", "true").assignment().at(0).provider, "cudnn");
  EXPECT_EQ(open("cudnn.device", "0").assignment().at(0).provider, "cudnn");
  EXPECT_EQ(open("cudnn.defer_to_grid", "0").assignment().at(0).provider, "cudnn");
  expect_error([&] { open("cudnn.defer_to_grid", "auto"); }, ErrorCode::kInvalidArgument,
               {"cudnn.defer_to_grid", "0|1"});
  expect_error([&] { open("cudnn.tf32", "maybe"); }, ErrorCode::kInvalidArgument,
               {"cudnn.tf32", "0|1"});
  for (const char* v : {"auto", "small_h", "static", "dynamic"}) {
    EXPECT_EQ(open("cudnn.persistent", v).assignment().at(0).provider, "cudnn") << v;
  }
  expect_error([&] { open("cudnn.persistent", "sometimes"); }, ErrorCode::kInvalidArgument,
               {"cudnn.persistent", "auto"});
  expect_error([&] { open("cudnn.device", "-1"); }, ErrorCode::kInvalidArgument, {"cudnn.device"});
  expect_error([&] { open("cudnn.fast", "1"); }, ErrorCode::kInvalidArgument,
               {"no setting 'fast'", "device", "tf32", "persistent", "defer_to_grid"});
}

// Every feature case of the RNN suite (tests/data/rnn): cuDNN takes the ones with default
// attributes, and each decline names what stops it.
TEST_F(CudnnClaim, FeatureSuitePlan) {
  const fs::path root = fs::path(test_data_dir()) / "rnn";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  const std::vector<std::string> known = {"clip",
                                          "activations",
                                          "activation_alpha",
                                          "input_forget",
                                          "linear_before_reset",
                                          "P (peepholes)",
                                          "float64",
                                          "opset"};
  std::map<std::string, std::string> who;
  int claimed = 0, total = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    const fs::path model = e.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    Session s(model.string(), SessionOptions().providers({"cudnn", "reference"}).plan_only(true));
    for (const auto& a : s.assignment()) {
      if (a.op != "LSTM" && a.op != "GRU" && a.op != "RNN") continue;
      ++total;
      who[e.path().filename().string()] = a.provider;
      if (a.provider == "cudnn") {
        ++claimed;
        continue;
      }
      const std::string why = declined_reason(a, "cudnn");
      bool named = false;
      for (const auto& k : known) named |= why.find(k) != std::string::npos;
      EXPECT_TRUE(named) << e.path().filename() << ": " << why;
    }
  }
  EXPECT_GT(total, 100);
  EXPECT_GT(claimed, 50);
  const std::map<std::string, std::string> expect = {
      {"lstm_forward", "cudnn"},
      {"lstm_bidirectional_layout1_seqlens", "cudnn"},
      {"lstm_bidirectional_seqlens_all_zero", "cudnn"},
      {"lstm_reverse_seqlens", "cudnn"},
      {"gru_lbr1_forward", "cudnn"},
      {"gru_lbr1_layout1_seqlens", "cudnn"},
      {"rnn_relu", "cudnn"},
      {"rnn_bidirectional_layout1_seqlens", "cudnn"},
      {"lstm_float16", "cudnn"},
      {"gru_forward", "reference"},  // linear_before_reset=0, ONNX's default
      {"lstm_clip", "reference"},
      {"lstm_peepholes", "reference"},
      {"lstm_input_forget", "reference"},
      {"lstm_relu", "reference"},
      {"rnn_leakyrelu_alpha_beta", "reference"},
  };
  for (const auto& [name, provider] : expect) {
    if (!who.count(name)) continue;  // the suite may rename cases
    EXPECT_EQ(who[name], provider) << name;
  }
}

}  // namespace
}  // namespace recur::testing
