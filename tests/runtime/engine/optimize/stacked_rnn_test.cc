// Stacked RNN fusion (runtime/engine/optimize/stacked_rnn.cc, runtime/rnn/stacked_rnn.h) on the
// CPU: with fusion forced on, the reference provider runs the fused recur::StackedRNN layer by
// layer, so "fusion on and off give the same outputs" is checked here bit for bit, Y_h and Y_c
// of every layer included; the fused node also matches each model's expected outputs (from
// PyTorch). Which chains fuse and which do not, and what --explain says, too.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "recur/recur.h"
#include "tests/support/data_dirs.h"
#include "tests/support/model_builder.h"
#include "tools/common/testdir.h"

namespace recur::testing {
namespace {

namespace fs = std::filesystem;
using Fusion = SessionOptions::Fusion;

const std::string kModels = models_dir();

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

void expect_identical(const Outputs& a, const Outputs& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape()) << what << " " << a.name(i);
    ASSERT_EQ(a[i].dtype(), b[i].dtype()) << what << " " << a.name(i);
    EXPECT_EQ(std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()), 0)
        << what << ": output " << a.name(i) << " differs with fusion on";
  }
}

struct ModelCase {
  const char* name;
  int layers;
  const char* op;
};

TEST(StackedRnnFusion, ModelsOnAndOffAgree) {
  for (const ModelCase& m :
       {ModelCase{"char_lstm_lm", 2, "LSTM"}, ModelCase{"dynamic_lstm", 2, "LSTM"},
        ModelCase{"lstm_streaming", 2, "LSTM"}, ModelCase{"relu_rnn_stack", 3, "RNN"}}) {
    const std::string dir = kModels + "/" + m.name;
    if (!fs::exists(dir + "/model.onnx")) {
      ADD_FAILURE() << dir << " is absent";
      continue;
    }
    Session on(dir + "/model.onnx",
               SessionOptions().providers({"reference"}).rnn_layer_fusion(Fusion::kOn));
    Session off(dir + "/model.onnx",
                SessionOptions().providers({"reference"}).rnn_layer_fusion(Fusion::kOff));
    EXPECT_EQ(count_op(on, "recur::StackedRNN"), 1) << m.name << "\n" << on.explain();
    EXPECT_EQ(count_op(on, m.op), 0) << m.name;
    EXPECT_EQ(count_op(off, m.op), m.layers) << m.name;
    EXPECT_NE(on.explain().find("fused " + std::to_string(m.layers) + " " + m.op + " layers"),
              std::string::npos)
        << on.explain();
    auto sets = tools::read_data_sets(dir);
    ASSERT_TRUE(sets.ok());
    for (const tools::DataSet& ds : *sets) {
      auto feeds = tools::feeds_for(on, ds);
      ASSERT_TRUE(feeds.ok()) << feeds.status().message();
      expect_identical(on.run(*feeds), off.run(*feeds), std::string(m.name) + " " + ds.dir);
    }
    // And the fused node against PyTorch's outputs.
    const tools::TestResult r = tools::run_test_dir(
        dir, SessionOptions().providers({"reference"}).rnn_layer_fusion(Fusion::kOn),
        tools::Tolerance{}, nullptr);
    EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass) << m.name << ": " << r.reason;
  }
}

// A chain built here: bidirectional GRU layers joined by Transpose(0,2,1,3) + Reshape(0,0,-1),
// with sequence lengths, initial states and every layer's Y_h as graph outputs.
std::string bidirectional_chain(int layers, int64_t T, int64_t N, int64_t I, int64_t H,
                                bool extra_reader) {
  ModelBuilder mb(14);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 0.3f);
  auto rand = [&](const Shape& s) {
    Tensor t = Tensor::empty(DType::kFloat32, s);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = nd(rng);
    return t;
  };
  mb.input("X", DType::kFloat32, {T, N, I});
  mb.input("lens", DType::kInt32, {N});
  mb.initializer("shape", Tensor::from_vector<int64_t>({3}, {0, 0, -1}));
  std::string x = "X";
  for (int l = 0; l < layers; ++l) {
    const std::string s = std::to_string(l);
    const int64_t in = l == 0 ? I : 2 * H;
    mb.initializer("W" + s, rand({2, 3 * H, in}));
    mb.initializer("R" + s, rand({2, 3 * H, H}));
    mb.initializer("B" + s, rand({2, 6 * H}));
    mb.input("h0_" + s, DType::kFloat32, {2, N, H});
    onnx::NodeProto& n = mb.node("GRU", {x, "W" + s, "R" + s, "B" + s, "lens", "h0_" + s},
                                 {"Y" + s, "Yh" + s}, "gru" + s);
    set_attr(n, "hidden_size", H);
    set_attr(n, "direction", std::string("bidirectional"));
    set_attr(n, "linear_before_reset", int64_t{1});
    mb.output("Yh" + s, DType::kFloat32);
    if (l + 1 < layers) {
      mb.node("Transpose", {"Y" + s}, {"T" + s}, "tr" + s);
      set_attr(*mb.graph().mutable_node(mb.graph().node_size() - 1), "perm",
               std::vector<int64_t>{0, 2, 1, 3});
      mb.node("Reshape", {"T" + s, "shape"}, {"X" + s}, "rs" + s);
      x = "X" + s;
    } else {
      mb.output("Y" + s, DType::kFloat32);
    }
  }
  if (extra_reader) mb.output("T0", DType::kFloat32);  // the glue is read elsewhere: no fusion
  return mb.bytes();
}

TEST(StackedRnnFusion, BidirectionalGruChainWithLengths) {
  const int64_t T = 6, N = 4, I = 5, H = 7;
  const std::string bytes = bidirectional_chain(3, T, N, I, H, false);
  Session on =
      Session::from_bytes(bytes.data(), bytes.size(),
                          SessionOptions().providers({"reference"}).rnn_layer_fusion(Fusion::kOn));
  Session off =
      Session::from_bytes(bytes.data(), bytes.size(),
                          SessionOptions().providers({"reference"}).rnn_layer_fusion(Fusion::kOff));
  EXPECT_EQ(count_op(on, "recur::StackedRNN"), 1) << on.explain();
  EXPECT_EQ(count_op(on, "Transpose"), 0);
  EXPECT_EQ(count_op(off, "GRU"), 3);
  std::mt19937 rng(9);
  std::normal_distribution<float> nd;
  Feeds feeds;
  Tensor x = Tensor::empty(DType::kFloat32, {T, N, I});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = nd(rng);
  feeds.emplace_back("X", x);
  feeds.emplace_back("lens", Tensor::from_vector<int32_t>({N}, {6, 0, 3, 1}));
  for (int l = 0; l < 3; ++l) {
    Tensor h = Tensor::empty(DType::kFloat32, {2, N, H});
    for (int64_t i = 0; i < h.numel(); ++i) h.data<float>()[i] = nd(rng);
    feeds.emplace_back("h0_" + std::to_string(l), h);
  }
  expect_identical(on.run(feeds), off.run(feeds), "bidirectional GRU chain");

  // A glue value read by something else is not fused away.
  const std::string shared = bidirectional_chain(2, T, N, I, H, true);
  Session s =
      Session::from_bytes(shared.data(), shared.size(),
                          SessionOptions().providers({"reference"}).rnn_layer_fusion(Fusion::kOn));
  EXPECT_EQ(count_op(s, "recur::StackedRNN"), 0);
}

TEST(StackedRnnFusion, AutoLeavesCpuSessionsAlone) {
  const std::string path = kModels + "/char_lstm_lm/model.onnx";
  if (!fs::exists(path)) GTEST_SKIP();
  Session s(path, SessionOptions().providers({"reference"}));
  EXPECT_EQ(count_op(s, "recur::StackedRNN"), 0);
  EXPECT_EQ(count_op(s, "LSTM"), 2);
}

}  // namespace
}  // namespace recur::testing
