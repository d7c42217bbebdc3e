// cuda-generic, the fused stacked RNN on cuDNN and CUDA graphs on a real GPU. Every test skips,
// saying why, on a machine without a CUDA device; tools/gpu-check.sh runs them where one is
// lent. What the CPU can check of the same code is in generic_rnn_cpu_test.cc,
// glue_ops_cpu_test.cc, cuda_generic_plan_test.cc and tests/runtime/engine/optimize/.
#if RECUR_HAVE_CUDA

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <thread>

#include "recur/recur.h"
#include "tests/providers/cuda/rnn_case.h"
#include "tests/support/data_dirs.h"
#include "tools/common/testdir.h"

namespace recur::testing {
namespace {

namespace fs = std::filesystem;
using Fusion = SessionOptions::Fusion;

class CudaGenericGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_device_present(&why)) GTEST_SKIP() << "needs a CUDA GPU: " << why;
  }
};

void expect_close(const Outputs& got, const Outputs& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const tools::Comparison c = tools::compare(got[i], want[i], tools::Tolerance{tol, tol});
    EXPECT_TRUE(c.match) << what << " output " << got.name(i) << ": " << c.reason;
  }
}

// The largest |a - b| over two outputs of one shape (infinite where one is NaN and the other
// not), and the largest |b|.
struct Spread {
  double diff = 0, scale = 0;
};
Spread spread(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = as_doubles(a), y = as_doubles(b);
  Spread s;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (std::isnan(x[i]) != std::isnan(y[i])) s.diff = INFINITY;
      continue;
    }
    if (x[i] != y[i]) s.diff = std::max(s.diff, std::abs(x[i] - y[i]));
    s.scale = std::max(s.scale, std::abs(y[i]));
  }
  return s;
}

// cuda-generic's float32 outputs against the float32 reference's, within `tol`; where they
// differ by more, against float64 truth. Some random configurations are ill-conditioned: a
// ThresholdedRelu or a clip that a rounding error moves across its threshold, or activations
// that grow without bound, amplify float32 rounding, so that two float32 computations that sum
// in different orders (cuBLAS and the reference's loops) part ways. There the float32 reference
// is no oracle: the reference provider in float64 on the same values is, and cuda-generic must
// be as close to it as the float32 reference is, within a factor of 8 (or within `tol` of the
// output's largest value). Returns whether the case needed float64.
bool expect_as_accurate_as_reference(const Outputs& got, const Outputs& want, const RnnCase& c,
                                     const std::vector<int32_t>& lens, double tol,
                                     const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  if (got.size() != want.size()) return false;
  std::vector<size_t> differ;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!tools::compare(got[i], want[i], tools::Tolerance{tol, tol}).match) differ.push_back(i);
  }
  if (differ.empty()) return false;
  if (c.dtype != DType::kFloat32) {
    for (size_t i : differ) {
      ADD_FAILURE() << what << " output " << got.name(i) << ": "
                    << tools::compare(got[i], want[i], tools::Tolerance{tol, tol}).reason;
    }
    return false;
  }
  RnnCase wide = c;
  wide.dtype = DType::kFloat64;
  const RnnModel m64 = build_rnn_model(wide, lens);
  Session ref64 = Session::from_bytes(m64.bytes.data(), m64.bytes.size(),
                                      SessionOptions().providers({"reference"}));
  const Outputs truth = ref64.run(m64.feeds);
  for (size_t i : differ) {
    const Spread ref_err = spread(want[i], truth[i]), gpu_err = spread(got[i], truth[i]);
    EXPECT_LE(gpu_err.diff, std::max(8 * ref_err.diff, tol * (1 + ref_err.scale)))
        << what << " output " << got.name(i) << ": "
        << tools::compare(got[i], want[i], tools::Tolerance{tol, tol}).reason
        << "; against float64, cuda-generic is off by " << gpu_err.diff
        << " and the float32 reference by " << ref_err.diff << " (largest |value| " << ref_err.scale
        << ")";
  }
  return true;
}

// >= 200 random configurations with every attribute, cuda-generic against the reference.
TEST_F(CudaGenericGpu, RandomParityWithReference) {
  const uint32_t seed0 = parity_seed(20261122u);
  const int count = parity_count(256);
  std::mt19937 rng(seed0);
  RandomRnnLimits lim;
  lim.float64_one_in = 5;
  int compared = 0, ill_conditioned = 0;
  for (int k = 0; k < count; ++k) {
    const RandomRnn r = random_rnn_case(rng, seed0 + static_cast<uint32_t>(k), lim);
    const RnnCase& c = r.c;
    const RnnModel m = build_rnn_model(c, r.lens);
    // Every third configuration with a GEMM and a gate launch per step, the others on the
    // default (the grid kernel, one launch for every step, where the shape fits it).
    SessionOptions opts = SessionOptions().providers({"cuda-generic"});
    if (k % 3 == 2) opts.set("cuda-generic.persistent", "0");
    Session gpu = Session::from_bytes(m.bytes.data(), m.bytes.size(), opts);
    Session ref = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                      SessionOptions().providers({"reference"}));
    ASSERT_EQ(gpu.assignment().at(0).provider, "cuda-generic") << c.describe();
    ill_conditioned +=
        expect_as_accurate_as_reference(gpu.run(m.feeds), ref.run(m.feeds), c, r.lens, 1e-4,
                                        c.describe() + (k % 3 == 2 ? " per-step" : "") +
                                            " (RECUR_PARITY_SEED=" + std::to_string(seed0) + ")");
    ++compared;
  }
  EXPECT_GE(compared, std::min(count, 200));
  // Most configurations must match the float32 reference outright.
  EXPECT_LE(ill_conditioned, compared / 10);
  RecordProperty("ill_conditioned", ill_conditioned);
  std::cout << "[ cuda-generic ] " << compared << " configurations, " << ill_conditioned
            << " judged against float64 (float32 rounding amplified)\n";
}

// The edge shapes and types (rnn_case.h): float16 weights fed at run time, empty T, N and I,
// and the grid kernel's awkward shapes.
TEST_F(CudaGenericGpu, EdgeShapesMatchTheReference) {
  for (const EdgeRnn& e : edge_rnn_cases()) {
    const RnnCase& c = e.r.c;
    const RnnModel m = build_rnn_model(c, e.r.lens);
    SessionOptions opts = SessionOptions().providers({"cuda-generic"});
    opts.set("cuda-generic.persistent", e.grid ? "1" : "0");
    Session gpu = Session::from_bytes(m.bytes.data(), m.bytes.size(), opts);
    Session ref = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                      SessionOptions().providers({"reference"}));
    ASSERT_EQ(gpu.assignment().at(0).provider, "cuda-generic") << c.describe();
    expect_close(gpu.run(m.feeds), ref.run(m.feeds), c.dtype == DType::kFloat16 ? 1e-2 : 1e-4,
                 c.describe() + (e.grid ? " grid" : " per-step"));
  }
}

TEST_F(CudaGenericGpu, OracleSuite) {
  const fs::path root = fs::path(test_data_dir()) / "rnn";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  int ran = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!fs::exists(e.path() / "model.onnx")) continue;
    const bool half = e.path().filename().string().find("float16") != std::string::npos;
    const tools::TestResult r = tools::run_test_dir(
        e.path().string(), SessionOptions().providers({"cuda-generic"}),
        half ? tools::Tolerance{1e-2, 1e-2} : tools::Tolerance{1e-4, 1e-5}, nullptr);
    EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass)
        << e.path().filename() << ": " << r.reason;
    ++ran;
  }
  EXPECT_GT(ran, 150);
}

// Whether the GPU providers alone can place every node of the model.
bool gpu_places_every_node(const fs::path& model) {
  try {
    Session s(model.string(),
              SessionOptions().providers({"cudnn", "cuda-generic"}).plan_only(true));
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Every model with only the GPU providers listed, against its expected outputs; fusion on
// (cuDNN numLayers) and off agree. A model with a node neither GPU provider runs (control
// flow: CudaGenericPlan.EveryModelNodeOnAGpuProvider names them) has the reference provider
// behind them for those nodes.
TEST_F(CudaGenericGpu, ModelsOnTheGpu) {
  for (const auto& e : fs::directory_iterator(models_dir())) {
    if (!fs::exists(e.path() / "model.onnx")) continue;
    const SessionOptions gpu =
        gpu_places_every_node(e.path() / "model.onnx")
            ? SessionOptions().providers({"cudnn", "cuda-generic"})
            : SessionOptions().providers({"cudnn", "cuda-generic", "reference"});
    const tools::TestResult r =
        tools::run_test_dir(e.path().string(), gpu, tools::Tolerance{}, nullptr);
    EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass)
        << e.path().filename() << ": " << r.reason;

    Session on((e.path() / "model.onnx").string(),
               SessionOptions(gpu).rnn_layer_fusion(Fusion::kOn));
    Session off((e.path() / "model.onnx").string(),
                SessionOptions(gpu).rnn_layer_fusion(Fusion::kOff));
    auto sets = tools::read_data_sets(e.path().string());
    ASSERT_TRUE(sets.ok());
    for (const auto& ds : *sets) {
      auto feeds = tools::feeds_for(on, ds);
      ASSERT_TRUE(feeds.ok());
      expect_close(on.run(*feeds), off.run(*feeds), 1e-4,
                   e.path().filename().string() + " fusion on vs off");
    }
  }
}

// CUDA graphs: the replays give what normal runs give, for a streaming LSTM and for a model
// with shape computations on the host.
TEST_F(CudaGenericGpu, CudaGraphsReplayMatches) {
  RnnCase c;
  c.T = 50;
  c.N = 1;
  c.I = 64;
  c.H = 128;
  c.weight_scale = 0.1f;
  for (const char* provider : {"cudnn", "cuda-generic"}) {
    const RnnModel m = build_rnn_model(c);
    Session plain =
        Session::from_bytes(m.bytes.data(), m.bytes.size(), SessionOptions().providers({provider}));
    Session graphs = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                         SessionOptions().providers({provider}).cuda_graphs(true));
    EXPECT_NE(graphs.explain().find("recorded on its second run"), std::string::npos)
        << graphs.explain();
    const Outputs want = plain.run(m.feeds);
    for (int k = 0; k < 5; ++k)
      expect_close(graphs.run(m.feeds), want, 1e-6, std::string(provider) + " replay");
    // New input values, same shapes: the replay reads them.
    RnnCase c2 = c;
    c2.seed = 99;
    const RnnModel m2 = build_rnn_model(c2);
    Feeds f2 = m2.feeds;
    Feeds only_x;
    for (auto& [n, t] : f2)
      if (n == "X") only_x.emplace_back(n, t);
    expect_close(graphs.run(only_x), plain.run(only_x), 1e-6, std::string(provider) + " new X");
    EXPECT_EQ(graphs.explain().find("not recorded"), std::string::npos) << graphs.explain();
  }
  // A model with shape computations on the host and a fused stacked LSTM: one session, the
  // same data set run normally, recorded, then replayed.
  const std::string dir = models_dir() + "/char_lstm_lm";
  Session g(dir + "/model.onnx",
            SessionOptions().providers({"cudnn", "cuda-generic"}).cuda_graphs(true));
  auto sets = tools::read_data_sets(dir);
  ASSERT_TRUE(sets.ok());
  const tools::DataSet& ds = sets->front();
  auto feeds = tools::feeds_for(g, ds);
  ASSERT_TRUE(feeds.ok());
  for (int k = 0; k < 4; ++k) {
    const Outputs o = g.run(*feeds);
    for (size_t i = 0; i < o.size(); ++i) {
      const tools::Comparison c = tools::compare(o[i], ds.outputs[i].second, tools::Tolerance{});
      EXPECT_TRUE(c.match) << "char_lstm_lm run " << k << ": " << c.reason;
    }
  }
  EXPECT_EQ(g.explain().find("not recorded"), std::string::npos) << g.explain();
}

// A random node on the host beside device work: a replay would repeat one run's draws, so the
// run is not recorded, and each run draws anew.
TEST_F(CudaGenericGpu, ARandomNodeKeepsARunFromBeingRecorded) {
  testing::ModelBuilder m;
  m.input("x", DType::kFloat32, {2, 8});
  m.output("y", DType::kFloat32).output("n", DType::kFloat32);
  m.node("Relu", {"x"}, {"y"});
  m.node("RandomNormalLike", {"x"}, {"n"}, "noise");
  const std::string bytes = m.bytes();
  const Session s = Session::from_bytes(
      bytes.data(), bytes.size(),
      SessionOptions().providers({"cuda-generic", "reference"}).cuda_graphs(true));
  EXPECT_NE(s.explain().find("node 'noise' (RandomNormalLike) draws random values on the host"),
            std::string::npos)
      << s.explain();
  const Feeds feeds = {{"x", Tensor::from_vector<float>({2, 8}, std::vector<float>(16, -1.0f))}};
  std::vector<std::vector<float>> draws;
  for (int k = 0; k < 3; ++k) {
    const Outputs o = s.run(feeds);
    EXPECT_EQ(o[0].data<float>()[0], 0.0f);
    draws.emplace_back(o[1].data<float>(), o[1].data<float>() + o[1].numel());
  }
  EXPECT_NE(draws[1], draws[2]);
}

// Glue operators on the GPU against the reference, through whole sessions.
TEST_F(CudaGenericGpu, GlueOperatorsMatchTheReference) {
  const std::vector<std::string> dirs = {"attention_lstm_classifier", "bigru_classifier", "crnn",
                                         "packed_bilstm_tagger", "rnnoise_gru"};
  for (const std::string& name : dirs) {
    const std::string dir = models_dir() + "/" + name;
    Session gpu(dir + "/model.onnx", SessionOptions().providers({"cudnn", "cuda-generic"}));
    Session ref(dir + "/model.onnx", SessionOptions().providers({"reference"}));
    auto sets = tools::read_data_sets(dir);
    ASSERT_TRUE(sets.ok());
    for (const auto& ds : *sets) {
      auto feeds = tools::feeds_for(gpu, ds);
      ASSERT_TRUE(feeds.ok());
      expect_close(gpu.run(*feeds), ref.run(*feeds), 1e-4, name);
    }
  }
}

// Pad in every mode (pads that crop too, and a fill value) and GlobalAveragePool, both added
// after the last GPU run, on the device against the reference provider.
TEST_F(CudaGenericGpu, PadAndGlobalAveragePoolMatchTheReference) {
  std::mt19937 rng(5);
  const Tensor x = random_tensor(DType::kFloat32, {2, 3, 16}, 1.0f, rng);
  // Pad moves bits (exact); the pool sums in another order than the reference.
  auto both = [&](const std::string& bytes, const std::string& what, double tol) {
    Session gpu = Session::from_bytes(bytes.data(), bytes.size(),
                                      SessionOptions().providers({"cuda-generic"}));
    EXPECT_EQ(gpu.assignment().at(0).provider, "cuda-generic") << what;
    Session ref =
        Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
    expect_close(gpu.run({{"x", x}}), ref.run({{"x", x}}), tol, what);
  };
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    ModelBuilder m(19);
    m.input("x", DType::kFloat32, {2, 3, 16});
    m.initializer("pads", Tensor::from_vector<int64_t>({6}, {0, 0, 7, 0, 1, -2}));
    m.initializer("value", Tensor::from_vector<float>({}, {1.5f}));
    m.output("y", DType::kFloat32);
    set_attr(m.node("Pad", {"x", "pads", "value"}, {"y"}, "pad"), "mode", std::string(mode));
    both(m.bytes(), std::string("Pad ") + mode, 0.0);
  }
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2, 3, 16});
  m.output("y", DType::kFloat32);
  m.node("GlobalAveragePool", {"x"}, {"y"}, "pool");
  both(m.bytes(), "GlobalAveragePool", 1e-6);
}

// ConvTranspose on cuBLAS and col2im (added after the last GPU run) against the reference: 2-D
// with groups, dilation and output_padding; depthwise 1-D with a bias.
TEST_F(CudaGenericGpu, ConvTransposeMatchesTheReference) {
  std::mt19937 rng(9);
  using V = std::vector<int64_t>;
  struct C {
    Shape x, w;
    std::function<void(onnx::NodeProto&)> attrs;
    int64_t bias;  // output channels, or 0 for none
  };
  const std::vector<C> cases = {
      {{2, 4, 5, 6},
       {4, 3, 3, 2},
       [](onnx::NodeProto& n) {
         set_attr(n, "group", int64_t{2});
         set_attr(n, "strides", V{2, 3});
         set_attr(n, "dilations", V{2, 1});
         set_attr(n, "output_padding", V{1, 0});
         set_attr(n, "pads", V{1, 0, 0, 1});
       },
       0},
      {{1, 8, 33},
       {8, 1, 16},
       [](onnx::NodeProto& n) {
         set_attr(n, "group", int64_t{8});
         set_attr(n, "strides", V{8});
         set_attr(n, "pads", V{4, 4});
       },
       8},
  };
  for (const C& c : cases) {
    ModelBuilder m;
    m.input("x", DType::kFloat32, c.x);
    m.initializer("w", random_tensor(DType::kFloat32, c.w, 0.3f, rng));
    std::vector<std::string> ins = {"x", "w"};
    if (c.bias) {
      m.initializer("b", random_tensor(DType::kFloat32, {c.bias}, 0.3f, rng));
      ins.push_back("b");
    }
    m.output("y", DType::kFloat32);
    c.attrs(m.node("ConvTranspose", ins, {"y"}, "ct"));
    const std::string bytes = m.bytes();
    const Tensor x = random_tensor(DType::kFloat32, c.x, 1.0f, rng);
    Session gpu = Session::from_bytes(bytes.data(), bytes.size(),
                                      SessionOptions().providers({"cuda-generic"}));
    EXPECT_EQ(gpu.assignment().at(0).provider, "cuda-generic");
    Session ref =
        Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
    expect_close(gpu.run({{"x", x}}), ref.run({{"x", x}}), 1e-5,
                 "ConvTranspose " + shape_to_string(c.x));
  }
}

// Einsum on cuBLAS (added after the last GPU run) against numpy's outputs: every case of
// tests/data/einsum, each node on cuda-generic.
TEST_F(CudaGenericGpu, EinsumMatchesNumpy) {
  const fs::path root = fs::path(test_data_dir()) / "einsum";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  int ran = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    const SessionOptions gpu = SessionOptions().providers({"cuda-generic", "reference"});
    Session s((e.path() / "model.onnx").string(), gpu);
    if (s.assignment().at(0).provider != "cuda-generic") continue;  // not two float operands
    const tools::TestResult r =
        tools::run_test_dir(e.path().string(), gpu, tools::Tolerance{1e-4, 1e-5}, nullptr);
    EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass)
        << e.path().filename() << ": " << r.reason;
    ++ran;
  }
  EXPECT_GE(ran, 20);
}

TEST_F(CudaGenericGpu, BadIndicesAreReportedNotRead) {
  const std::string dir = models_dir() + "/char_lstm_lm";
  Session gpu(dir + "/model.onnx", SessionOptions().providers({"cudnn", "cuda-generic"}));
  Tensor tokens = Tensor::from_vector<int64_t>({1, 3}, {1, 999, 2});  // vocabulary of 40
  try {
    gpu.run({{"tokens", tokens}});
    ADD_FAILURE() << "an out-of-range token was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  // The session keeps working.
  const tools::TestResult r = tools::run_test_dir(
      dir, SessionOptions().providers({"cudnn", "cuda-generic"}), tools::Tolerance{}, nullptr);
  EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass) << r.reason;
}

// The same through CUDA graph replays, from two threads at once: each replay reports its own
// bad index (the recorded kernels write the error flag of the stream the recording keeps) and
// the good runs beside it stay correct.
TEST_F(CudaGenericGpu, BadIndicesAreReportedByTheReplay) {
  const std::string dir = models_dir() + "/char_lstm_lm";
  Session gpu(dir + "/model.onnx",
              SessionOptions().providers({"cudnn", "cuda-generic"}).cuda_graphs(true));
  Session ref(dir + "/model.onnx", SessionOptions().providers({"reference"}));
  const Tensor good = Tensor::from_vector<int64_t>({1, 3}, {1, 7, 2});
  const Tensor bad = Tensor::from_vector<int64_t>({1, 3}, {1, 999, 2});  // vocabulary of 40
  const Outputs want = ref.run({{"tokens", good}});
  for (int i = 0; i < 3; ++i) gpu.run({{"tokens", good}});  // measured, recorded, replayed
  std::atomic<int> reported{0}, missed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if ((i + t) % 2 == 0) {
          try {
            gpu.run({{"tokens", bad}});
            ++missed;
          } catch (const Error& e) {
            if (std::string(e.what()).find("out of range") != std::string::npos) ++reported;
          }
        } else {
          expect_close(gpu.run({{"tokens", good}}), want, 1e-4, "a good replay beside bad ones");
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(missed.load(), 0);
  EXPECT_EQ(reported.load(), 20);
}

}  // namespace
}  // namespace recur::testing

#endif  // RECUR_HAVE_CUDA
