// Where nodes go on a machine with a GPU, planned without one (SessionOptions::plan_only):
//  - the RNN nodes ONNX Runtime sends back to the CPU (clip, peepholes, custom activations,
//    activation_alpha/beta, input_forget, linear_before_reset=0) land on cuda-generic, with
//    cudnn's reason for declining, under the default priority cudnn, cuda-generic, onednn,
//    reference;
//  - dilated MaxPool and AveragePool, which cuDNN cannot pool, go to the next provider;
//  - every node of every model in models/ lands on cudnn or cuda-generic when they are the only
//    providers listed, apart from shape computations, which run on the host;
//  - the stacked LSTM of char_lstm_lm becomes one cudnn node, and --explain says so.
#if RECUR_HAVE_CUDA

#include <gtest/gtest.h>

#include <filesystem>

#include "recur/recur.h"
#include "tests/providers/cuda/rnn_case.h"
#include "tests/support/expect_error.h"

namespace recur::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kAll = {"cudnn", "cuda-generic", "onednn", "reference"};

std::string declined(const NodeAssignment& a, const std::string& provider) {
  for (const auto& d : a.declined)
    if (d.provider == provider) return d.reason;
  return "";
}

struct HeldOut {
  std::string name;
  RnnCase c;
  std::string reason;  // part of cudnn's decline
};

std::vector<HeldOut> held_out_cases() {
  std::vector<HeldOut> v;
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (const char* dir : {"forward", "bidirectional"}) {
      RnnCase c;
      c.op = op;
      c.direction = dir;
      c.attrs = [](onnx::NodeProto& n) { set_attr(n, "clip", 2.5f); };
      v.push_back({std::string(op) + " clip " + dir, c, "clip="});
    }
  }
  {
    RnnCase c;
    c.p = RnnCase::Peepholes::kNonZero;
    v.push_back({"LSTM peepholes", c, "peepholes"});
    c.p = RnnCase::Peepholes::kInput;
    v.push_back({"LSTM peepholes as input", c, "peepholes"});
  }
  {
    RnnCase c;
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"HardSigmoid", "Tanh", "Tanh"});
    };
    v.push_back({"LSTM HardSigmoid", c, "activations="});
    c.direction = "bidirectional";
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(
          n, "activations",
          std::vector<std::string>{"Sigmoid", "Elu", "Softsign", "Sigmoid", "Tanh", "ScaledTanh"});
      set_attr(n, "activation_alpha", std::vector<float>{0.5f, 0.9f});
      set_attr(n, "activation_beta", std::vector<float>{1.5f});
    };
    v.push_back({"LSTM mixed bidirectional", c, "activations="});
  }
  {
    RnnCase c;
    c.op = "GRU";
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"Sigmoid", "Relu"});
    };
    v.push_back({"GRU Relu", c, "activations="});
  }
  {
    RnnCase c;
    c.op = "RNN";
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"LeakyRelu"});
      set_attr(n, "activation_alpha", std::vector<float>{0.2f});
    };
    v.push_back({"RNN LeakyRelu alpha", c, "activation"});
    c.attrs = [](onnx::NodeProto& n) {
      set_attr(n, "activations", std::vector<std::string>{"Sigmoid"});
    };
    v.push_back({"RNN Sigmoid", c, "activations="});
  }
  {
    RnnCase c;
    c.attrs = [](onnx::NodeProto& n) { set_attr(n, "input_forget", int64_t{1}); };
    v.push_back({"LSTM input_forget", c, "input_forget=1"});
  }
  for (int lbr : {0, -1}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      RnnCase c;
      c.op = "GRU";
      c.direction = dir;
      c.gru_linear_before_reset = lbr;
      c.seq_lens = true;
      v.push_back({std::string("GRU linear_before_reset=0 ") + dir + (lbr < 0 ? " (default)" : ""),
                   c, "linear_before_reset=0"});
    }
  }
  {
    RnnCase c;
    c.dtype = DType::kFloat64;
    c.layout = 1;
    v.push_back({"LSTM float64 layout 1", c, "float64"});
  }
  return v;
}

TEST(CudaGenericPlan, HeldOutAttributesGoToCudaGeneric) {
  for (const HeldOut& h : held_out_cases()) {
    const NodeAssignment a = plan_rnn(h.c, kAll);
    EXPECT_EQ(a.provider, "cuda-generic") << h.name << ": " << declined(a, "cuda-generic");
    EXPECT_NE(declined(a, "cudnn").find(h.reason), std::string::npos)
        << h.name << ": cudnn declined with '" << declined(a, "cudnn") << "'";
  }
}

// cuDNN's pooling has no dilation: a dilated MaxPool or AveragePool (dilations from opset 19)
// goes to the next provider, with cuda-generic's reason.
TEST(CudaGenericPlan, DilatedPoolingIsDeclined) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (const bool dilated : {false, true}) {
      ModelBuilder mb(19);
      mb.input("x", DType::kFloat32, {1, 2, 7, 7});
      mb.output("y", DType::kFloat32);
      onnx::NodeProto& n = mb.node(op, {"x"}, {"y"}, "pool");
      set_attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
      set_attr(n, "dilations", std::vector<int64_t>{dilated ? 2 : 1, 1});
      const std::string bytes = mb.bytes();
      Session s = Session::from_bytes(
          bytes.data(), bytes.size(),
          SessionOptions().providers({"cuda-generic", "reference"}).plan_only(true));
      const NodeAssignment& a = s.assignment().at(0);
      const std::string what = std::string(op) + (dilated ? " dilated" : "");
      EXPECT_EQ(a.provider, dilated ? "reference" : "cuda-generic") << what;
      if (dilated) {
        EXPECT_NE(declined(a, "cuda-generic").find("dilated pooling"), std::string::npos)
            << what << ": cuda-generic declined with '" << declined(a, "cuda-generic") << "'";
      }
    }
  }
}

// Pad runs on cuda-generic in every mode and type, except before opset 11 on a type other than
// float16/32/64, whose float `value` attribute only the reference converts.
TEST(CudaGenericPlan, PadStaysOnTheGpu) {
  struct C {
    int opset;
    DType dt;
    const char* mode;
    bool gpu;
  };
  for (const C& c : {C{2, DType::kFloat32, "constant", true}, C{2, DType::kInt32, "edge", false},
                     C{13, DType::kInt32, "reflect", true}, C{19, DType::kUInt8, "wrap", true},
                     C{18, DType::kFloat16, "edge", true}}) {
    ModelBuilder mb(c.opset);
    mb.input("x", c.dt, {2, 5});
    mb.output("y", c.dt);
    std::vector<std::string> ins = {"x"};
    if (c.opset >= 11) {
      mb.initializer("pads", Tensor::from_vector<int64_t>({4}, {0, 1, 0, 2}));
      ins.push_back("pads");
    }
    onnx::NodeProto& n = mb.node("Pad", ins, {"y"}, "pad");
    set_attr(n, "mode", std::string(c.mode));
    if (c.opset < 11) set_attr(n, "pads", std::vector<int64_t>{0, 1, 0, 2});
    const std::string bytes = mb.bytes();
    Session s = Session::from_bytes(
        bytes.data(), bytes.size(),
        SessionOptions().providers({"cuda-generic", "reference"}).plan_only(true));
    const NodeAssignment& a = s.assignment().at(0);
    const std::string what = "Pad-" + std::to_string(c.opset) + " " + std::string(dtype_name(c.dt));
    EXPECT_EQ(a.provider, c.gpu ? "cuda-generic" : "reference") << what;
    if (!c.gpu) {
      EXPECT_NE(declined(a, "cuda-generic").find("before opset 11"), std::string::npos)
          << what << ": " << declined(a, "cuda-generic");
    }
  }
}

// GlobalAveragePool runs on cuda-generic (as ReduceMean over the spatial axes) in every float
// type, so a CNN's pooled features stay on the GPU; GlobalMaxPool, whose NaN handling the
// reduction's max does not share, goes to the next provider.
TEST(CudaGenericPlan, GlobalAveragePoolStaysOnTheGpu) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
      ModelBuilder mb;
      mb.input("x", dt, {2, 3, 5, 7});
      mb.output("y", dt);
      mb.node(op, {"x"}, {"y"}, "pool");
      const std::string bytes = mb.bytes();
      Session s = Session::from_bytes(
          bytes.data(), bytes.size(),
          SessionOptions().providers({"cuda-generic", "reference"}).plan_only(true));
      const bool average = std::string(op) == "GlobalAveragePool";
      EXPECT_EQ(s.assignment().at(0).provider, average ? "cuda-generic" : "reference")
          << op << " " << dtype_name(dt);
    }
  }
}

// Every case of the RNN oracle suite runs on a GPU provider: cudnn where it can, cuda-generic
// for the rest. cudnn.defer_to_grid=0: which float32 nodes cudnn would leave to the grid kernel
// depends on the device (CudnnRunPlan.Float32StandardShapesGoToTheGridKernel), and the counts
// are the same with and without one.
TEST(CudaGenericPlan, OracleSuiteStaysOnTheGpu) {
  const fs::path root = fs::path(test_data_dir()) / "rnn";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  int generic = 0, cudnn = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    const fs::path model = e.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    Session s(model.string(),
              SessionOptions().providers(kAll).plan_only(true).set("cudnn.defer_to_grid", "0"));
    for (const auto& a : s.assignment()) {
      EXPECT_TRUE(a.provider == "cudnn" || a.provider == "cuda-generic")
          << e.path().filename() << " " << a.node << " on " << a.provider;
      generic += a.provider == "cuda-generic";
      cudnn += a.provider == "cudnn";
    }
  }
  EXPECT_GT(generic, 50);
  EXPECT_GT(cudnn, 40);
}

bool is_host_shape(const NodeAssignment& a) {
  if (a.provider != "host") return false;
  for (const auto& n : a.notes)
    if (n.find("shape computation") != std::string::npos) return true;
  return false;
}

TEST(CudaGenericPlan, EveryModelNodeOnAGpuProvider) {
  int models = 0;
  for (const auto& e : fs::directory_iterator(models_dir())) {
    const fs::path model = e.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    // Control flow, which neither GPU provider implements yet: vad_streaming's whole network
    // sits in an If (issue 13), greedy_seq2seq's decoder in a Loop over Sequence values.
    const auto name = e.path().filename();
    if (name == "vad_streaming" || name == "greedy_seq2seq") continue;
    Session s(model.string(),
              SessionOptions().providers({"cudnn", "cuda-generic"}).plan_only(true));
    for (const auto& a : s.assignment()) {
      const bool gpu = a.provider == "cudnn" || a.provider == "cuda-generic";
      EXPECT_TRUE(gpu || is_host_shape(a))
          << e.path().filename() << ": " << a.node << " (" << a.op << ") on '" << a.provider << "'";
    }
    ++models;
  }
  EXPECT_GE(models, 12);
}

TEST(CudaGenericPlan, StackedLstmFusionIsExplained) {
  const std::string path = models_dir() + "/char_lstm_lm/model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  Session fused(path, SessionOptions().providers({"cudnn", "cuda-generic"}).plan_only(true));
  int stacked = 0, lstm = 0;
  for (const auto& a : fused.assignment()) {
    if (a.op == "recur::StackedRNN") {
      ++stacked;
      EXPECT_EQ(a.provider, "cudnn");
      bool noted = false;
      for (const auto& n : a.notes) noted |= n.find("fused 2 LSTM layers") != std::string::npos;
      EXPECT_TRUE(noted);
    }
    lstm += a.op == "LSTM";
  }
  EXPECT_EQ(stacked, 1);
  EXPECT_EQ(lstm, 0);
  EXPECT_NE(fused.explain().find("fused 2 LSTM layers into one node"), std::string::npos)
      << fused.explain();

  Session apart(path, SessionOptions()
                          .providers({"cudnn", "cuda-generic"})
                          .plan_only(true)
                          .rnn_layer_fusion(SessionOptions::Fusion::kOff));
  lstm = 0;
  for (const auto& a : apart.assignment()) lstm += a.op == "LSTM" && a.provider == "cudnn";
  EXPECT_EQ(lstm, 2);

  // Auto fusion pays only on a GPU provider: a CPU session keeps the layers apart.
  Session cpu(path, SessionOptions().providers({"reference"}));
  for (const auto& a : cpu.assignment()) EXPECT_NE(a.op, "recur::StackedRNN");
}

TEST(CudaGenericPlan, ShapeComputationsStayOnTheHost) {
  const std::string path = models_dir() + "/char_lstm_lm/model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  Session s(path, SessionOptions().providers({"cudnn", "cuda-generic"}).plan_only(true));
  int host = 0;
  for (const auto& a : s.assignment()) {
    if (a.op == "Shape") {
      EXPECT_EQ(a.provider, "host");
    }
    if (a.op == "ConstantOfShape") {
      EXPECT_EQ(a.provider, "cuda-generic");
    }
    host += a.provider == "host";
  }
  EXPECT_GE(host, 4);  // Shape, Gather, Unsqueeze, Concat
  // The shape computation reads the device tensor's shape: no copy of it to the host.
  const std::string ex = s.explain();
  EXPECT_EQ(ex.find("cuda:0 -> cpu for /lstm/Shape"), std::string::npos) << ex;
}

// cuda-generic's settings: device and persistent (0, 1 or auto); nothing of cudnn's.
TEST(CudaGenericPlan, Settings) {
  const std::string path = models_dir() + "/lstm_basic/model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  auto open = [&](const std::string& key, const std::string& value) {
    return Session(path,
                   SessionOptions().providers({"cuda-generic"}).plan_only(true).set(key, value));
  };
  for (const char* v : {"auto", "1", "on", "0"}) {
    EXPECT_EQ(open("cuda-generic.persistent", v).assignment().at(0).provider, "cuda-generic") << v;
  }
  // cudnn's one-algorithm values name cuDNN's algorithms: nothing of cuda-generic's.
  for (const char* v : {"maybe", "static"}) {
    expect_error([&] { open("cuda-generic.persistent", v); }, ErrorCode::kInvalidArgument,
                 {"cuda-generic.persistent", "0|1|auto"});
  }
  expect_error([&] { open("cuda-generic.tf32", "1"); }, ErrorCode::kInvalidArgument,
               {"no setting 'tf32'", "device", "persistent"});
}

// Which plans CUDA graphs can record, decided from the plan alone.
TEST(CudaGenericPlan, CudaGraphEligibility) {
  auto graphs_line = [](const Session& s) {
    const std::string ex = s.explain();
    const auto at = ex.find("cuda graphs:");
    return at == std::string::npos ? std::string() : ex.substr(at, ex.find('\n', at) - at);
  };
  const SessionOptions gpu =
      SessionOptions().providers({"cudnn", "cuda-generic"}).plan_only(true).cuda_graphs(true);
  for (const char* name : {"char_lstm_lm", "lstm_streaming", "crnn", "rnnoise_gru"}) {
    Session s(models_dir() + "/" + name + "/model.onnx", gpu);
    EXPECT_NE(graphs_line(s).find("recorded on its second run"), std::string::npos)
        << name << ": " << graphs_line(s);
  }
  // cuDNN reads sequence lengths on the host: computed on the device, they come back per run.
  Session tagger(models_dir() + "/packed_bilstm_tagger/model.onnx", gpu);
  EXPECT_NE(graphs_line(tagger).find("not used: the run copies"), std::string::npos)
      << graphs_line(tagger);
  // Fed by the caller and read on the host: a recording would keep one run's lengths.
  RnnCase c;
  c.seq_lens = true;
  const RnnModel m = build_rnn_model(c);
  Session lens = Session::from_bytes(m.bytes.data(), m.bytes.size(), gpu);
  EXPECT_NE(graphs_line(lens).find("reads the values of graph input 'sequence_lens'"),
            std::string::npos)
      << graphs_line(lens);
  // cuda-generic reads them on the device: recordable.
  Session generic = Session::from_bytes(
      m.bytes.data(), m.bytes.size(),
      SessionOptions().providers({"cuda-generic"}).plan_only(true).cuda_graphs(true));
  EXPECT_NE(graphs_line(generic).find("recorded on its second run"), std::string::npos)
      << graphs_line(generic);
  // No GPU node: nothing to record.
  Session cpu = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                    SessionOptions().providers({"reference"}).cuda_graphs(true));
  EXPECT_NE(graphs_line(cpu).find("no node runs on a GPU"), std::string::npos) << graphs_line(cpu);
}

}  // namespace
}  // namespace recur::testing

#endif  // RECUR_HAVE_CUDA
