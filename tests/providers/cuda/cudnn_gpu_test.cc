// The cudnn provider on a real GPU. Every test skips, saying why, on a machine without a CUDA
// device; tools/gpu-check.sh runs them where one is lent.
#if RECUR_HAVE_CUDA

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <thread>

#include "converters/cudnn_weights.h"
#include "providers/cuda/rnn/cudnn_weight_params.h"
#include "recur/recur.h"
#include "tests/providers/cuda/rnn_case.h"
#include "tools/common/testdir.h"

namespace recur::testing {
namespace {

namespace fs = std::filesystem;

class CudnnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_device_present(&why)) GTEST_SKIP() << "needs a CUDA GPU: " << why;
  }
};

// |a - b| <= atol + rtol*|b| everywhere; the first failure, or empty.
std::string mismatch(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.shape() != want.shape()) {
    return "shape " + shape_to_string(got.shape()) + " vs " + shape_to_string(want.shape());
  }
  const auto g = as_doubles(got), w = as_doubles(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (!(std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]))) {
      return "element " + std::to_string(i) + ": " + std::to_string(g[i]) + " vs " +
             std::to_string(w[i]);
    }
  }
  return {};
}

// Where two maps of one geometry first differ, for the failure message.
std::string first_difference(const CudnnWeightMap& got, const CudnnWeightMap& want) {
  auto text = [](const CudnnParamBlock& b) {
    return "{" + std::to_string(b.offset) + ", " + std::to_string(b.rows) + "x" +
           std::to_string(b.cols) + "}";
  };
  const CudnnRnnGeometry& g = want.geometry();
  for (int p = 0; p < g.pseudo_layers(); ++p) {
    for (int id = 0; id < g.lin_layers(); ++id) {
      const std::string at =
          " (pseudoLayer " + std::to_string(p) + ", linLayerID " + std::to_string(id) + "): cuDNN ";
      if (!(got.matrix(p, id) == want.matrix(p, id)))
        return "matrix" + at + text(got.matrix(p, id)) + ", canonical " + text(want.matrix(p, id));
      if (!(got.bias(p, id) == want.bias(p, id)))
        return "bias" + at + text(got.bias(p, id)) + ", canonical " + text(want.bias(p, id));
    }
  }
  return "weight space of " + std::to_string(got.weight_space_elems()) + " elements, canonical " +
         std::to_string(want.weight_space_elems());
}

TEST_F(CudnnGpu, WeightParamsMatchTheCanonicalOrder) {
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnn}) {
      for (int64_t D : {1, 2}) {
        for (int64_t L : {1, 3}) {
          for (bool bias : {true, false}) {
            for (auto [I, H] : {std::pair<int64_t, int64_t>{3, 5}, {64, 128}, {17, 33}}) {
              const CudnnRnnGeometry g{.cell = cell,
                                       .input_size = I,
                                       .hidden_size = H,
                                       .directions = D,
                                       .bias = bias,
                                       .num_layers = L};
              auto got = cuda::query_cudnn_weight_map(g, dt, 0);
              ASSERT_TRUE(got.ok()) << g.to_string() << ": " << got.status().message();
              const CudnnWeightMap want = canonical_cudnn_weight_map(g);
              EXPECT_TRUE(*got == want)
                  << g.to_string() << " layers=" << L << " " << dtype_name(dt)
                  << ": cudnnGetRNNWeightParams disagrees with the canonical order at "
                  << first_difference(*got, want);
            }
          }
        }
      }
    }
  }
}

// Every case of the RNN oracle suite that cudnn claims, run on the GPU against the float64
// oracle's outputs.
TEST_F(CudnnGpu, FeatureSuite) {
  const fs::path root = fs::path(test_data_dir()) / "rnn";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  int ran = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    const fs::path model = e.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    const SessionOptions opts = SessionOptions().providers({"cudnn", "reference"});
    Session probe(model.string(), opts);
    bool on_cudnn = false;
    for (const auto& a : probe.assignment()) on_cudnn |= a.provider == "cudnn";
    if (!on_cudnn) continue;
    const bool half = e.path().filename().string().find("float16") != std::string::npos;
    const tools::Tolerance tol = half ? tools::Tolerance{1e-2, 1e-2} : tools::Tolerance{1e-4, 1e-5};
    const tools::TestResult r = tools::run_test_dir(e.path().string(), opts, tol, nullptr);
    EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass)
        << e.path().filename() << ": " << r.reason;
    ++ran;
  }
  EXPECT_GT(ran, 40);
}

// Random configurations against the reference provider: cells, directions, layouts, odd
// sizes, lengths with zeros, initial states, output subsets, weights as inputs.
TEST_F(CudnnGpu, RandomParityWithReference) {
  const uint32_t seed0 = parity_seed(20261121u);
  const int count = parity_count(256);
  std::mt19937 rng(seed0);
  // What cuDNN claims: default activations (or Relu on RNN), no clip, no peepholes.
  RandomRnnLimits lim;
  lim.every_attribute = false;
  int compared = 0;
  for (int k = 0; k < count; ++k) {
    RandomRnn r = random_rnn_case(rng, seed0 + static_cast<uint32_t>(k), lim);
    RnnCase& c = r.c;
    if (c.op == "RNN" && std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
      const std::vector<std::string> relu(static_cast<size_t>(c.D()), "Relu");
      c.attrs = [relu](onnx::NodeProto& n) { set_attr(n, "activations", relu); };
      c.attrs_summary = "activations=Relu";
    }
    const RnnModel m = build_rnn_model(c, r.lens);
    Session gpu =
        Session::from_bytes(m.bytes.data(), m.bytes.size(), SessionOptions().providers({"cudnn"}));
    Session ref = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                      SessionOptions().providers({"reference"}));
    const Outputs got = gpu.run(m.feeds);
    const Outputs want = ref.run(m.feeds);
    ASSERT_EQ(got.size(), want.size()) << c.describe();
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string bad = mismatch(got[i], want[i], 1e-4, 1e-5);
      EXPECT_TRUE(bad.empty()) << c.describe() << " output " << got.name(i) << ": " << bad
                               << " (reproduce with RECUR_PARITY_SEED=" << seed0 << ")";
    }
    ++compared;
  }
  EXPECT_GE(compared, std::min(count, 200));
}

TEST_F(CudnnGpu, Float16AgainstFloat32Reference) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    RnnCase c;
    c.op = op;
    c.direction = "bidirectional";
    c.T = 7;
    c.N = 4;
    c.I = 32;
    c.H = 64;
    c.dtype = DType::kFloat16;
    c.seq_lens = true;
    const RnnModel m = build_rnn_model(c, {7, 0, 3, 5});
    Session gpu =
        Session::from_bytes(m.bytes.data(), m.bytes.size(), SessionOptions().providers({"cudnn"}));
    Session ref = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                      SessionOptions().providers({"reference"}));
    const Outputs got = gpu.run(m.feeds), want = ref.run(m.feeds);
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string bad = mismatch(got[i], want[i], 2e-2, 2e-2);
      EXPECT_TRUE(bad.empty()) << op << " " << got.name(i) << ": " << bad;
    }
  }
}

TEST_F(CudnnGpu, DeviceTensorsStayOnTheDevice) {
  RnnCase c;
  const RnnModel m = build_rnn_model(c);
  Session s = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                  SessionOptions().providers({"cudnn", "reference"}));
  const Outputs host = s.run(m.feeds);
  Feeds dev;
  for (const auto& [name, t] : m.feeds) dev.emplace_back(name, t.to(Device::cuda(0)));
  RunOptions ro;
  ro.outputs_on_device = true;
  const Outputs out = s.run(dev, ro);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].device(), Device::cuda(0)) << out.name(i);
    const Tensor back = out[i].to(Device::cpu());
    EXPECT_TRUE(mismatch(back, host[i], 0, 0).empty()) << out.name(i);
  }
}

TEST_F(CudnnGpu, ConcurrentRunsOnOneSession) {
  RnnCase c;
  c.direction = "bidirectional";
  c.layout = 1;
  c.seq_lens = true;
  c.T = 9;
  c.N = 5;
  std::vector<RnnModel> models;
  const RnnModel base = build_rnn_model(c, {9, 0, 4, 9, 1});
  Session s = Session::from_bytes(base.bytes.data(), base.bytes.size(),
                                  SessionOptions().providers({"cudnn"}));
  Session ref = Session::from_bytes(base.bytes.data(), base.bytes.size(),
                                    SessionOptions().providers({"reference"}));
  // Each thread feeds its own lengths, so descriptors differ between concurrent runs.
  std::vector<std::vector<int32_t>> lens = {
      {9, 0, 4, 9, 1}, {1, 2, 3, 4, 5}, {9, 9, 9, 9, 9}, {0, 0, 0, 0, 7}};
  std::vector<Outputs> want;
  std::vector<Feeds> feeds;
  for (const auto& l : lens) {
    Feeds f = base.feeds;
    for (auto& [name, t] : f)
      if (name == "sequence_lens") t = Tensor::from_vector<int32_t>({c.N}, l);
    want.push_back(ref.run(f));
    feeds.push_back(f);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&, th] {
      for (int it = 0; it < 25; ++it) {
        const size_t k = static_cast<size_t>((th + it) % static_cast<int>(feeds.size()));
        const Outputs got = s.run(feeds[k]);
        for (size_t i = 0; i < got.size(); ++i)
          if (!mismatch(got[i], want[k][i], 1e-4, 1e-5).empty()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(CudnnGpu, PersistentAndTf32Options) {
  RnnCase c;
  c.T = 16;
  c.N = 8;
  c.I = 128;
  c.H = 128;
  const RnnModel m = build_rnn_model(c);
  Session ref = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                    SessionOptions().providers({"reference"}));
  const Outputs want = ref.run(m.feeds);
  for (const auto& [key, tol] :
       {std::pair<std::string, double>{"cudnn.persistent", 1e-4}, {"cudnn.tf32", 5e-3}}) {
    Session s = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                    SessionOptions().providers({"cudnn"}).set(key, "1"));
    const Outputs got = s.run(m.feeds);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(mismatch(got[i], want[i], tol, tol).empty()) << key << " " << got.name(i);
    }
    // Whether cuDNN took a persistent algorithm is its choice (STANDARD is the fallback), so it
    // is recorded, not asserted: without it, the check above compared STANDARD with itself.
    if (key == "cudnn.persistent") {
      std::string notes;
      for (const std::string& n : s.assignment().at(0).notes) notes += n + "; ";
      const bool taken = notes.find("no persistent") == std::string::npos &&
                         notes.find("persistent RNN algorithm") != std::string::npos;
      RecordProperty("persistent_algorithm_taken", taken ? "yes" : "no");
      std::cout << "[ cudnn    ] persistent algorithm " << (taken ? "taken" : "not taken") << ": "
                << notes << "\n";
    }
  }
}

// A float32 shape cuDNN runs with STANDARD goes to cuda-generic's grid kernel when cuda-generic
// is listed, and stays with cudnn.defer_to_grid=0 or without cuda-generic; a shape of cuDNN's
// persistent small-H kernel stays. Both placements give the reference's outputs.
TEST_F(CudnnGpu, Float32StandardShapesGoToTheGridKernel) {
  RnnCase c;
  c.T = 8;
  c.N = 32;
  c.I = 64;
  c.H = 512;
  c.weight_scale = 0.05f;
  const RnnModel m = build_rnn_model(c);
  auto open = [&](const std::vector<std::string>& providers, const char* defer) {
    return Session::from_bytes(
        m.bytes.data(), m.bytes.size(),
        SessionOptions().providers(providers).set("cudnn.defer_to_grid", defer));
  };
  Session ref = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                    SessionOptions().providers({"reference"}));
  const Outputs want = ref.run(m.feeds);
  Session left = open({"cudnn", "cuda-generic"}, "1");
  const NodeAssignment& a = left.assignment().at(0);
  EXPECT_EQ(a.provider, "cuda-generic") << left.explain();
  ASSERT_FALSE(a.declined.empty());
  EXPECT_NE(a.declined.front().reason.find("STANDARD"), std::string::npos)
      << a.declined.front().reason;
  Session kept = open({"cudnn", "cuda-generic"}, "0");
  EXPECT_EQ(kept.assignment().at(0).provider, "cudnn") << kept.explain();
  EXPECT_EQ(open({"cudnn", "reference"}, "1").assignment().at(0).provider, "cudnn");
  for (Session* s : {&left, &kept}) {
    const Outputs got = s->run(m.feeds);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(mismatch(got[i], want[i], 1e-4, 1e-5).empty())
          << s->assignment().at(0).provider << " " << got.name(i);
    }
  }
  RnnCase small = c;
  small.N = 1;
  small.H = 128;
  const RnnModel ms = build_rnn_model(small);
  Session s = Session::from_bytes(ms.bytes.data(), ms.bytes.size(),
                                  SessionOptions().providers({"cudnn", "cuda-generic"}));
  EXPECT_EQ(s.assignment().at(0).provider, "cudnn") << s.explain();
}

}  // namespace
}  // namespace recur::testing

#endif  // RECUR_HAVE_CUDA
