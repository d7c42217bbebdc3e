// Batch-first RNNs in layout 1 (runtime/engine/optimize/fold_rnn_layout.cc): the transposes
// PyTorch's batch_first export writes around an RNN go, the node reads and writes [N, T, ...]
// itself, on every provider that runs here, with the outputs of the reference provider running
// the model as written (optimize off) for one and several rows, states in and out included.
// Near misses, where nothing would be saved or the layout-0 Y is read as such, stay.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/op_tester.h"

namespace recur::testing {
namespace {

struct Form {
  std::string op = "LSTM";
  bool bidirectional = true;
  int opset = 13;
  int layers = 1;          // stacked batch-first layers, joined by the glue without transposes
  bool states = false;     // initial_h (and initial_c) inputs, Y_h (and Y_c) graph outputs
  bool merged_in = false;  // X as one Transpose(2,0,1) of [N, I, T], as a permute folds into it
  bool y_out = false;      // the layout-0 Y is also a graph output
  bool y_read = false;     // the sequence [T, N, D*H] is read as it is (no transpose back)
  bool x_plain = false;    // X is the graph input [T, N, I] (no transpose)
  bool x_shared = false;   // the transposed X is also a graph output
};

constexpr int64_t I = 5, H = 4;

int64_t gates(const Form& f) { return f.op == "LSTM" ? 4 : f.op == "GRU" ? 3 : 1; }

// One layer reading `x` ([T, N, in] layout 0); returns the name of its sequence [T, N, D*H].
std::string layer(ModelBuilder& m, const Form& f, int l, const std::string& x, int64_t in,
                  std::mt19937& rng) {
  const int64_t D = f.bidirectional ? 2 : 1, G = gates(f);
  const std::string p = "l" + std::to_string(l) + "_";
  m.initializer(p + "W", random_tensor({D, G * H, in}, rng));
  m.initializer(p + "R", random_tensor({D, G * H, H}, rng));
  m.initializer(p + "B", random_tensor({D, 2 * G * H}, rng));
  std::vector<std::string> ins = {x, p + "W", p + "R", p + "B", ""};
  std::vector<std::string> outs = {p + "Y"};
  if (f.states) {
    ins.push_back("h0");
    if (f.op == "LSTM") ins.push_back("c0");
    outs.push_back(p + "Y_h");
    m.output(p + "Y_h", DType::kFloat32);
    if (f.op == "LSTM") {
      outs.push_back(p + "Y_c");
      m.output(p + "Y_c", DType::kFloat32);
    }
  }
  auto& n = m.node(f.op, ins, outs, p + f.op);
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", std::string(f.bidirectional ? "bidirectional" : "forward"));
  if (f.op == "GRU") set_attr(n, "linear_before_reset", int64_t{1});
  if (f.y_out && l == f.layers - 1) m.output(p + "Y", DType::kFloat32);
  if (!f.bidirectional) {
    if (f.opset >= 13) {
      m.initializer(p + "axes", Tensor::from_vector<int64_t>({1}, {1}));
      m.node("Squeeze", {p + "Y", p + "axes"}, {p + "seq"}, p + "squeeze");
    } else {
      set_attr(m.node("Squeeze", {p + "Y"}, {p + "seq"}, p + "squeeze"), "axes",
               std::vector<int64_t>{1});
    }
    return p + "seq";
  }
  set_attr(m.node("Transpose", {p + "Y"}, {p + "yt"}, p + "y_transpose"), "perm",
           std::vector<int64_t>{0, 2, 1, 3});
  m.initializer(p + "shape", Tensor::from_vector<int64_t>({3}, {0, 0, -1}));
  m.node("Reshape", {p + "yt", p + "shape"}, {p + "seq"}, p + "reshape");
  return p + "seq";
}

std::string model(const TempDir& dir, const Form& f) {
  std::mt19937 rng(11);
  const int64_t D = f.bidirectional ? 2 : 1;
  ModelBuilder m(f.opset);
  if (f.x_plain) {
    m.input("x", DType::kFloat32, {-1, -1, I}, {"T", "N"});
  } else if (f.merged_in) {
    m.input("x", DType::kFloat32, {-1, I, -1}, {"N", "T"});
  } else {
    m.input("x", DType::kFloat32, {-1, -1, I}, {"N", "T"});
  }
  if (f.states) {
    m.input("h0", DType::kFloat32, {D, -1, H}, {"", "N"});
    if (f.op == "LSTM") m.input("c0", DType::kFloat32, {D, -1, H}, {"", "N"});
  }
  std::string seq = "x";
  if (!f.x_plain) {
    set_attr(m.node("Transpose", {"x"}, {"xt"}, "x_transpose"), "perm",
             f.merged_in ? std::vector<int64_t>{2, 0, 1} : std::vector<int64_t>{1, 0, 2});
    seq = "xt";
    if (f.x_shared) m.output("xt", DType::kFloat32);
  }
  for (int l = 0; l < f.layers; ++l) seq = layer(m, f, l, seq, l == 0 ? I : D * H, rng);
  if (f.y_read) {
    m.node("Relu", {seq}, {"y"}, "relu");
  } else {
    set_attr(m.node("Transpose", {seq}, {"y"}, "y_transpose"), "perm",
             std::vector<int64_t>{1, 0, 2});
  }
  m.output("y", DType::kFloat32);
  return m.save(dir.path());
}

Feeds feeds(const Form& f, int64_t N, int64_t T, std::mt19937& rng) {
  const int64_t D = f.bidirectional ? 2 : 1;
  Feeds in = {{"x", random_tensor(f.x_plain     ? Shape{T, N, I}
                                  : f.merged_in ? Shape{N, I, T}
                                                : Shape{N, T, I},
                                  rng, 1.0f)}};
  if (f.states) {
    in.emplace_back("h0", random_tensor({D, N, H}, rng));
    if (f.op == "LSTM") in.emplace_back("c0", random_tensor({D, N, H}, rng));
  }
  return in;
}

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& a : s.assignment()) n += a.op == op;
  return n;
}

int folded(const Session& s) {
  const std::string e = s.explain();
  int n = 0;
  for (size_t at = e.find("batch-first: runs in layout 1"); at != std::string::npos;
       at = e.find("batch-first: runs in layout 1", at + 1))
    ++n;
  return n;
}

// Every provider's outputs against the reference running the model as written.
void expect_same_outputs(const std::string& path, const Form& f, int want_folded) {
  const Session as_written(path, SessionOptions().providers({"reference"}).optimize(false));
  for (const std::string& p : test::OpTester::runnable_providers()) {
    // The reference provider behind: the Transposes and Reshapes are not oneDNN's.
    Session s(path, SessionOptions().providers(p == "reference"
                                                   ? std::vector<std::string>{p}
                                                   : std::vector<std::string>{p, "reference"}));
    EXPECT_EQ(folded(s), want_folded) << p << "\n" << s.explain();
    std::mt19937 rng(5);
    for (const auto& [N, T] : {std::pair<int64_t, int64_t>{1, 6}, {3, 4}, {2, 1}}) {
      const Feeds in = feeds(f, N, T, rng);
      const Outputs want = as_written.run(in);
      const Outputs got = s.run(in);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i].shape(), want[i].shape()) << p << " " << want.name(i);
        for (int64_t k = 0; k < want[i].numel(); ++k)
          ASSERT_NEAR(got[i].data<float>()[k], want[i].data<float>()[k], 2e-5)
              << p << " N=" << N << " T=" << T << " " << want.name(i) << " at " << k;
      }
    }
  }
}

// expect_same_outputs, and the Transposes left on the reference provider.
void expect_folded(const std::string& path, const Form& f, int want_folded, int transposes) {
  expect_same_outputs(path, f, want_folded);
  Session s(path, SessionOptions().providers({"reference"}));
  EXPECT_EQ(count_op(s, "Transpose"), transposes) << s.explain();
}

void check_folds(const Form& f) {
  TempDir dir;
  const std::string path = model(dir, f);
  expect_same_outputs(path, f, f.layers);
  // No transpose is left that copies the sequence: only the states' (when there are any), and
  // the merged permutation of X, reduced to one that swaps I and T.
  Session s(path, SessionOptions().providers({"reference"}));
  const int state_transposes = f.states ? f.layers * (f.op == "LSTM" ? 4 : 2) : 0;
  EXPECT_EQ(count_op(s, "Transpose"), state_transposes + (f.merged_in ? 1 : 0)) << s.explain();
  EXPECT_EQ(count_op(s, "Reshape"), f.layers) << s.explain();
}

TEST(FoldRnnLayout, BidirectionalLstm) { check_folds(Form{}); }

TEST(FoldRnnLayout, ForwardGruThroughSqueezeAtOpset11) {
  check_folds(Form{.op = "GRU", .bidirectional = false, .opset = 11});
}

TEST(FoldRnnLayout, StatesInAndOut) {
  check_folds(Form{.states = true});
  check_folds(Form{.op = "RNN", .bidirectional = false, .states = true});
}

TEST(FoldRnnLayout, StackedLayersChainThroughTheirGlue) {
  check_folds(Form{.layers = 3});
  check_folds(Form{.op = "GRU", .bidirectional = false, .layers = 2, .states = true});
}

TEST(FoldRnnLayout, APermutationMergedIntoTheInputTranspose) {
  check_folds(Form{.merged_in = true});
}

// The batch-first input x [N, T, I] and its time-major Transpose, xt.
void transposed_input(ModelBuilder& m) {
  m.input("x", DType::kFloat32, {-1, -1, I}, {"N", "T"});
  set_attr(m.node("Transpose", {"x"}, {"xt"}, "x_transpose"), "perm",
           std::vector<int64_t>{1, 0, 2});
}

// The other reader of the transposed X keeps its Transpose; the node still reads [N, T, I].
TEST(FoldRnnLayout, ASharedInputTransposeStaysForItsOtherReader) {
  TempDir dir;
  const Form f{.x_shared = true};
  const std::string path = model(dir, f);
  expect_folded(path, f, 1, 1);
}

// Two batch-first RNNs reading one transposed X (two heads over the same features): both
// fold, and the Transpose, read by neither now, goes.
TEST(FoldRnnLayout, TwoNodesReadingOneTransposedInput) {
  TempDir dir;
  std::mt19937 rng(11);
  ModelBuilder m(13);
  transposed_input(m);
  const Form f;
  for (int l = 0; l < 2; ++l) {
    const std::string seq = layer(m, f, l, "xt", I, rng);
    const std::string y = "y" + std::to_string(l);
    set_attr(m.node("Transpose", {seq}, {y}, y + "_transpose"), "perm",
             std::vector<int64_t>{1, 0, 2});
    m.output(y, DType::kFloat32);
  }
  const std::string path = m.save(dir.path());
  expect_folded(path, f, 2, 0);
}

// A classifier that reads only the last state: Y is unread (its declared layout-0 shape is
// dropped with the layout), X's Transpose goes and Y_h gets one of its own.
TEST(FoldRnnLayout, OnlyTheLastStateRead) {
  TempDir dir;
  std::mt19937 rng(11);
  ModelBuilder m(13);
  transposed_input(m);
  m.initializer("W", random_tensor({1, 3 * H, I}, rng));
  m.initializer("R", random_tensor({1, 3 * H, H}, rng));
  auto& gru = m.node("GRU", {"xt", "W", "R"}, {"Y", "Y_h"}, "gru");
  set_attr(gru, "hidden_size", H);
  m.initializer("axes", Tensor::from_vector<int64_t>({1}, {0}));
  m.node("Squeeze", {"Y_h", "axes"}, {"h"}, "squeeze");
  m.output("h", DType::kFloat32);
  // What an exporter's shape inference leaves: Y declared [T, 1, N, H].
  auto* vi = m.graph().add_value_info();
  vi->set_name("Y");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const auto& [param, value] :
       std::vector<std::pair<std::string, int64_t>>{{"T", 0}, {"", 1}, {"N", 0}, {"", H}}) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (param.empty()) {
      dim->set_dim_value(value);
    } else {
      dim->set_dim_param(param);
    }
  }
  const std::string path = m.save(dir.path());
  const Form f{.op = "GRU", .bidirectional = false};
  expect_folded(path, f, 1, 1);
}

TEST(FoldRnnLayout, NearMissesStayInLayout0) {
  for (const auto& [f, why] : std::vector<std::pair<Form, std::string>>{
           {Form{.y_out = true}, "the layout-0 Y is a graph output"},
           {Form{.y_read = true}, "the sequence is read time-major"},
           {Form{.x_plain = true}, "X is time-major already"},
           {Form{.layers = 2, .y_read = true}, "a chain whose last Y is read time-major"}}) {
    SCOPED_TRACE(why);
    TempDir dir;
    const std::string path = model(dir, f);
    expect_same_outputs(path, f, 0);
  }
}

TEST(FoldRnnLayout, Int8PrecisionKeepsLayout0ForOnednnInt8Lstm) {
  TempDir dir;
  const std::string path = model(dir, Form{});
  Session s(
      path,
      SessionOptions().providers({"reference"}).cpu_precision(SessionOptions::Precision::kInt8));
  EXPECT_EQ(folded(s), 0) << s.explain();
}

}  // namespace
}  // namespace recur::testing
