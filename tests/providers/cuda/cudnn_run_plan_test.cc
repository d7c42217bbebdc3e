// The cudnn kernel's orchestration without a GPU: plan_cudnn_run and execute_cudnn_run (the
// same code the CUDA kernel runs) over a CPU backend whose data movement uses the CUDA
// kernels' index functions (rnn_index.h) and whose forward() follows cuDNN's documented
// equations, padded unpacked layouts and per-sequence lengths, reading a weight space filled
// through the ONNX -> cuDNN copy plan. Checked against the float64 oracle outputs of
// tests/data/rnn, for every float32 case cudnn claims.
//
// What this cannot check is cuDNN itself: that cudnnRNNForward behaves as documented is for
// the GPU tests (cudnn_gpu_test.cc).
#if RECUR_HAVE_CUDA

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <map>

#include "converters/cudnn_weights.h"
#include "providers/cuda/rnn/cudnn_rnn.h"
#include "providers/cuda/rnn/cudnn_rnn_plan.h"
#include "providers/cuda/rnn/generic_rnn_plan.h"
#include "providers/cuda/rnn/rnn_index.h"
#include "recur/recur.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/rnn/rnn_spec.h"
#include "tests/providers/cuda/rnn_case.h"
#include "tests/support/data_dirs.h"
#include "tools/common/testdir.h"

namespace recur::cuda {
namespace {

namespace fs = std::filesystem;
namespace ix = rnn_index;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

class CpuCudnnBackend final : public CudnnRunBackend {
 public:
  CpuCudnnBackend(const CudnnWeightMap& map, std::vector<float> space, bool relu)
      : map_(map), space_(std::move(space)), relu_(relu) {}

  Result<void*> scratch(int64_t elems) override {
    // Garbage, not zeros: the plan must not rely on scratch contents.
    scratch_.emplace_back(static_cast<size_t>(elems), 12345.0f);
    return static_cast<void*>(scratch_.back().data());
  }

  Status reverse_sequences(const void* src, void* dst, int64_t V, const CudnnRunPlan& p) override {
    const auto* s = static_cast<const float*>(src);
    auto* d = static_cast<float*>(dst);
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t t = 0; t < p.T; ++t) {
        const int64_t from = ix::reversed_step(t, p.cudnn_lengths[static_cast<size_t>(n)]);
        for (int64_t v = 0; v < V; ++v) {
          d[ix::row(p.layout, t, n, p.T, p.N) * V + v] =
              from < 0 ? 0.0f : s[ix::row(p.layout, from, n, p.T, p.N) * V + v];
        }
      }
    return ok_status();
  }

  Status bidir_to_onnx(const void* src, void* dst, const CudnnRunPlan& p) override {
    const auto* s = static_cast<const float*>(src);
    auto* d = static_cast<float*>(dst);
    for (int64_t i = 0; i < p.T * 2 * p.N * p.H; ++i) d[i] = s[ix::bidir_source(i, p.N, p.H)];
    return ok_status();
  }

  Status transpose_states(const void* src, void* dst, int64_t A, int64_t B, int64_t H) override {
    const auto* s = static_cast<const float*>(src);
    auto* d = static_cast<float*>(dst);
    for (int64_t i = 0; i < A * B * H; ++i) d[i] = s[ix::transpose_source(i, A, B, H)];
    return ok_status();
  }

  Status mask_y(void* y, const CudnnRunPlan& p) override {
    auto* d = static_cast<float*>(y);
    for (int64_t i = 0; i < p.y_elems(); ++i) {
      int64_t t = 0, n = 0;
      ix::y_step_batch(i, p.layout, p.T, p.D, p.N, p.H, &t, &n);
      if (t >= p.lengths[static_cast<size_t>(n)]) d[i] = 0.0f;
    }
    return ok_status();
  }

  Status zero(void* dst, int64_t offset, int64_t count) override {
    std::fill_n(static_cast<float*>(dst) + offset, count, 0.0f);
    return ok_status();
  }

  // cuDNN's RNN, as documented: y in the plan's layout with D*H per row, padding filled with
  // zeros; the backward direction of each sequence starts at its own last step; hy/cy hold
  // each direction's last state.
  Status forward(const CudnnForwardArgs& a, const CudnnRunPlan& p) override {
    ++forward_calls_;
    if (!a.x || !a.y) return internal_error("cuDNN needs x and y");
    const auto* x = static_cast<const float*>(a.x);
    auto* y = static_cast<float*>(a.y);
    const int64_t T = p.T, N = p.N, I = p.I, H = p.H, D = p.D;
    for (int64_t i = 0; i < p.y_elems(); ++i) y[i] = 0.0f;
    for (int64_t d = 0; d < D; ++d) {
      for (int64_t n = 0; n < N; ++n) {
        const int64_t len = p.cudnn_lengths[static_cast<size_t>(n)];
        if (len < 1 || len > T) return internal_error("cuDNN rejects this length");
        std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          const int64_t s = (d * N + n) * H + j;
          h[static_cast<size_t>(j)] = a.hx ? static_cast<const float*>(a.hx)[s] : 0.0;
          c[static_cast<size_t>(j)] = a.cx ? static_cast<const float*>(a.cx)[s] : 0.0;
        }
        for (int64_t k = 0; k < len; ++k) {
          const int64_t t = d == 0 ? k : len - 1 - k;
          const float* xt = x + ix::row(p.layout, t, n, T, N) * I;
          step(p.cell, static_cast<int>(d), xt, I, H, h, c);
          for (int64_t j = 0; j < H; ++j) {
            y[ix::row(p.layout, t, n, T, N) * D * H + d * H + j] =
                static_cast<float>(h[static_cast<size_t>(j)]);
          }
        }
        for (int64_t j = 0; j < H; ++j) {
          const int64_t s = (d * N + n) * H + j;
          if (a.hy) static_cast<float*>(a.hy)[s] = static_cast<float>(h[static_cast<size_t>(j)]);
          if (a.cy) static_cast<float*>(a.cy)[s] = static_cast<float>(c[static_cast<size_t>(j)]);
        }
      }
    }
    return ok_status();
  }

  int forward_calls() const { return forward_calls_; }

 private:
  // W_id v + b_id for linLayerID `id` of pseudo-layer `pl`, hidden unit j.
  double lin(int pl, int id, int64_t j, const float* v, int64_t cols) const {
    const CudnnParamBlock& m = map_.matrix(pl, id);
    const CudnnParamBlock& b = map_.bias(pl, id);
    double s = b.present() ? space_[static_cast<size_t>(b.offset + j)] : 0.0;
    for (int64_t k = 0; k < cols; ++k)
      s += space_[static_cast<size_t>(m.offset + j * cols + k)] * v[k];
    return s;
  }

  void step(RnnCell cell, int pl, const float* xt, int64_t I, int64_t H, std::vector<double>& h,
            std::vector<double>& c) const {
    std::vector<float> hp(h.begin(), h.end());
    std::vector<double> nh(static_cast<size_t>(H)), nc(static_cast<size_t>(H));
    for (int64_t j = 0; j < H; ++j) {
      auto wx = [&](int id) { return lin(pl, id, j, xt, I); };
      auto rh = [&](int id) { return lin(pl, id, j, hp.data(), H); };
      const size_t u = static_cast<size_t>(j);
      if (cell == RnnCell::kLstm) {
        const double i = sigmoid(wx(0) + rh(4)), f = sigmoid(wx(1) + rh(5));
        const double g = std::tanh(wx(2) + rh(6)), o = sigmoid(wx(3) + rh(7));
        nc[u] = f * c[u] + i * g;
        nh[u] = o * std::tanh(nc[u]);
      } else if (cell == RnnCell::kGru) {
        const double r = sigmoid(wx(0) + rh(3)), z = sigmoid(wx(1) + rh(4));
        const double hh = std::tanh(wx(2) + r * rh(5));
        nh[u] = (1 - z) * hh + z * h[u];
      } else {
        const double v = wx(0) + rh(1);
        nh[u] = relu_ ? std::max(0.0, v) : std::tanh(v);
      }
    }
    h = nh;
    if (cell == RnnCell::kLstm) c = nc;
  }

  const CudnnWeightMap& map_;
  std::vector<float> space_;
  bool relu_;
  std::list<std::vector<float>> scratch_;
  int forward_calls_ = 0;
};

struct FolderResult {
  bool ran = false;
  std::string skip;
};

// Runs one backend-test folder through the plan with the CPU backend; failures are reported
// with the folder's name.
FolderResult run_folder(const fs::path& dir) {
  FolderResult fr;
  auto model = load_model((dir / "model.onnx").string());
  if (!model.ok()) {
    fr.skip = model.status().message();
    return fr;
  }
  const Graph& g = *model->graph;
  if (g.nodes().size() != 1) {
    fr.skip = "not a single node";
    return fr;
  }
  const Node& node = g.node(0);
  if (!cudnn_rnn_claim(node, g).yes) {
    fr.skip = "cudnn declines";
    return fr;
  }
  if (g.value(node.inputs[kRnnX]).type.dtype != DType::kFloat32) {
    fr.skip = "not float32";
    return fr;
  }
  auto sets = tools::read_data_sets(dir.string());
  EXPECT_TRUE(sets.ok()) << dir;
  if (!sets.ok() || sets->empty()) return fr;
  Session ref((dir / "model.onnx").string(), SessionOptions().providers({"reference"}));
  auto feeds = tools::feeds_for(ref, sets->front());
  EXPECT_TRUE(feeds.ok()) << dir << ": " << feeds.status().message();
  if (!feeds.ok()) return fr;
  auto value_of = [&](size_t i) -> const Tensor* {
    if (!node.has_input(i)) return nullptr;
    const std::string& name = g.value(node.inputs[i]).name;
    for (const auto& [n, t] : *feeds)
      if (n == name) return &t;
    return g.initializer(node.inputs[i]);
  };
  auto spec = RnnSpec::parse(node);
  EXPECT_TRUE(spec.ok());
  const Tensor *x = value_of(kRnnX), *w = value_of(kRnnW), *r = value_of(kRnnR),
               *b = value_of(kRnnB), *lens = value_of(kRnnSeqLens), *h0 = value_of(kRnnInitialH),
               *c0 = value_of(kRnnInitialC);
  auto dims = check_rnn_inputs(node, *spec, x, w, r, b, lens, h0, c0, nullptr);
  EXPECT_TRUE(dims.ok()) << dir << ": " << dims.status().message();
  if (!dims.ok()) return fr;

  CudnnRnnGeometry geo;
  geo.cell = spec->cell;
  geo.input_size = dims->input_size;
  geo.hidden_size = dims->hidden;
  geo.directions = dims->directions;
  geo.bias = b != nullptr;
  const CudnnWeightMap map = canonical_cudnn_weight_map(geo);
  auto wplan = plan_onnx_to_cudnn(map);
  EXPECT_TRUE(wplan.ok());
  std::vector<float> space(static_cast<size_t>(map.weight_space_elems()));
  EXPECT_TRUE(apply_onnx_to_cudnn(*wplan, 4, w->raw_data(), r->raw_data(),
                                  b ? b->raw_data() : nullptr, space.data(), space.size() * 4)
                  .ok());
  const bool relu =
      spec->cell == RnnCell::kRnn && spec->activations.front().kind == RnnActivation::Kind::kRelu;
  CpuCudnnBackend backend(map, std::move(space), relu);

  // Outputs by node position, with their expected values.
  std::map<size_t, const Tensor*> expected;
  for (size_t k = 0; k < g.outputs().size() && k < sets->front().outputs.size(); ++k) {
    for (size_t o = 0; o < node.outputs.size(); ++o)
      if (node.outputs[o] == g.outputs()[k]) expected[o] = &sets->front().outputs[k].second;
  }
  const int64_t T = dims->seq_length, N = dims->batch, D = dims->directions, H = dims->hidden;
  const Shape ys = spec->layout == 0 ? Shape{T, D, N, H} : Shape{N, T, D, H};
  const Shape ss = spec->layout == 0 ? Shape{D, N, H} : Shape{N, D, H};
  Tensor y = Tensor::empty(DType::kFloat32, ys), yh = Tensor::empty(DType::kFloat32, ss),
         yc = Tensor::empty(DType::kFloat32, ss);
  for (Tensor* t : {&y, &yh, &yc}) std::fill_n(t->data<float>(), t->numel(), -777.0f);
  const bool want_y = node.has_output(kRnnY), want_yh = node.has_output(kRnnYh),
             want_yc = node.has_output(kRnnYc);
  const CudnnRunPlan plan = plan_cudnn_run(*spec, *dims, lens ? lens->data<int32_t>() : nullptr,
                                           want_y, want_yh, want_yc);
  CudnnRunBuffers buf;
  buf.x = x->raw_data();
  buf.h0 = h0 ? h0->raw_data() : nullptr;
  buf.c0 = c0 ? c0->raw_data() : nullptr;
  buf.y = want_y ? y.raw_data() : nullptr;
  buf.yh = want_yh ? yh.raw_data() : nullptr;
  buf.yc = want_yc ? yc.raw_data() : nullptr;
  const Status st = execute_cudnn_run(plan, buf, backend);
  EXPECT_TRUE(st.ok()) << dir << ": " << st.message();
  EXPECT_EQ(backend.forward_calls(), 1) << dir;
  const Tensor* got[3] = {&y, &yh, &yc};
  for (const auto& [o, want] : expected) {
    const auto cmp = tools::compare(*got[o], *want, tools::Tolerance{1e-4, 1e-5});
    EXPECT_TRUE(cmp.match) << dir.filename() << " output " << o << ": " << cmp.reason
                           << " (max abs " << cmp.max_abs << ")";
  }
  fr.ran = true;
  return fr;
}

TEST(CudnnRunPlan, FeatureSuiteThroughACpuModelOfCudnn) {
  const fs::path root = fs::path(testing::test_data_dir()) / "rnn";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  int ran = 0;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!fs::exists(e.path() / "model.onnx")) continue;
    if (run_folder(e.path()).ran) {
      ++ran;
      names.push_back(e.path().filename().string());
    }
  }
  // Layouts, directions, lengths (zeros included), states and output subsets are all in the
  // suite; make sure they were exercised rather than skipped.
  EXPECT_GT(ran, 40);
  auto has = [&](const std::string& part) {
    for (const auto& n : names)
      if (n.find(part) != std::string::npos) return true;
    return false;
  };
  for (const char* part :
       {"reverse", "bidirectional", "layout1", "seqlens", "all_zero", "outputs_y"})
    EXPECT_TRUE(has(part)) << "no claimed case exercises " << part;
}

TEST(CudnnRunPlan, Decisions) {
  RnnSpec spec;
  spec.cell = RnnCell::kLstm;
  spec.direction = RnnDirection::kBidirectional;
  spec.layout = 1;
  RnnDims d{5, 3, 2, 4, 2};
  const int32_t lens[3] = {5, 0, 2};
  CudnnRunPlan p = plan_cudnn_run(spec, d, lens, true, true, true);
  EXPECT_FALSE(p.reverse);
  EXPECT_FALSE(p.bidir_reorder);  // layout 1: [N,T,2H] is already [N,T,2,H]
  EXPECT_TRUE(p.transpose_states);
  EXPECT_FALSE(p.y_to_scratch);
  EXPECT_FALSE(p.full_lengths);
  EXPECT_EQ(p.cudnn_lengths, (std::vector<int32_t>{5, 1, 2}));
  EXPECT_EQ(p.zero_batches, (std::vector<int32_t>{1}));

  spec.layout = 0;
  p = plan_cudnn_run(spec, d, nullptr, false, true, false);
  EXPECT_TRUE(p.bidir_reorder);
  EXPECT_FALSE(p.transpose_states);
  EXPECT_TRUE(p.y_to_scratch);  // cuDNN always writes y
  EXPECT_TRUE(p.full_lengths);

  spec.direction = RnnDirection::kReverse;
  spec.cell = RnnCell::kGru;
  spec.layout = 1;
  d.directions = 1;
  p = plan_cudnn_run(spec, d, nullptr, true, true, true);
  EXPECT_TRUE(p.reverse);
  EXPECT_FALSE(p.transpose_states);  // D = 1: [N,1,H] and [1,N,H] are the same memory
  EXPECT_FALSE(p.want_yc);           // GRU has no Y_c
}

// Which persistent algorithms each mode tries: the shapes where auto takes one are those of
// the H200 measurements in docs/gpu-results.md.
TEST(CudnnRunPlan, PersistentAlgorithmByShape) {
  using Mode = CudaOptions::Persistent;
  using A = PersistentAlgo;
  const GpuTraits h200{9, 0, 132}, a40{8, 6, 84}, small{8, 0, 40}, none{};
  auto geo = [](RnnCell cell, int64_t I, int64_t H, int64_t D = 1, int64_t L = 1) {
    return CudnnRnnGeometry{
        .cell = cell, .input_size = I, .hidden_size = H, .directions = D, .num_layers = L};
  };
  const auto f32 = DType::kFloat32, f16 = DType::kFloat16;
  using V = std::vector<A>;
  // lstm_stream (H=128): the small-H kernel in either type, on any device that reports >= 6.x.
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 64, 128), f32, 1, Mode::kAuto, h200),
            V{A::kStaticSmallH});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kGru, 64, 192), f16, 1, Mode::kAuto, a40),
            V{A::kStaticSmallH});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 64, 160, 2, 3), f32, 7, Mode::kAuto, h200),
            V{A::kStaticSmallH});
  // Not RNN's small-H kernel: less accurate than STANDARD on the H200.
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kRnn, 64, 128), f32, 1, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 64, 193), f32, 1, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 64, 128), f32, 1, Mode::kAuto, none), V{});
  // lstm_med and lstm_large in float16: PERSIST_STATIC; not in float32, not for GRU, not
  // bidirectional or stacked, not at a batch off the multiples of 8 or over 128.
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512), f16, 32, Mode::kAuto, h200),
            V{A::kStatic});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 1024, 1024), f16, 64, Mode::kAuto, h200),
            V{A::kStatic});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512), f32, 32, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kGru, 256, 512), f16, 32, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512, 2), f16, 32, Mode::kAuto, h200),
            V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512, 1, 2), f16, 32, Mode::kAuto, h200),
            V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512), f16, 12, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512), f16, 136, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 200, 512), f16, 32, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 1152), f16, 32, Mode::kAuto, h200), V{});
  // Devices: 8.6 and ones with fewer than 98 multiprocessors keep STANDARD.
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512), f16, 32, Mode::kAuto, a40), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 512), f16, 32, Mode::kAuto, small), V{});
  // rnn_tanh in float16: PERSIST_STATIC, but not at N >= 96 with H >= 896.
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kRnn, 256, 512), f16, 32, Mode::kAuto, h200),
            V{A::kStatic});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kRnn, 256, 1024), f16, 96, Mode::kAuto, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 256, 1024), f16, 96, Mode::kAuto, h200),
            V{A::kStatic});
  // Off: none. On: every one cuDNN might take, whatever the device says.
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 64, 128), f32, 1, Mode::kOff, h200), V{});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 64, 128), f32, 1, Mode::kOn, none),
            (V{A::kStaticSmallH, A::kStatic, A::kDynamic}));
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kRnn, 64, 128), f32, 1, Mode::kOn, none),
            (V{A::kStatic, A::kDynamic}));
  // One algorithm by name: that one alone, whatever the shape or device (cuDNN may refuse it).
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kRnn, 64, 128), f32, 1, Mode::kSmallH, none),
            V{A::kStaticSmallH});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kLstm, 128, 256, 2), f32, 16, Mode::kStatic, h200),
            V{A::kStatic});
  EXPECT_EQ(persistent_candidates(geo(RnnCell::kGru, 256, 512), f32, 32, Mode::kDynamic, h200),
            V{A::kDynamic});
}

// Which float32 nodes cudnn leaves to cuda-generic's grid kernel, given an H200's traits: the
// shapes cuDNN runs with STANDARD at a static batch up to 64 where the grid kernel fits; not
// those of its persistent algorithms, float16, a batch the model leaves open, TF32, or a
// device or setting that rules the grid kernel out.
TEST(CudnnRunPlan, Float32StandardShapesGoToTheGridKernel) {
  using Mode = CudaOptions::Persistent;
  const GpuTraits h200{9, 0, 132, 232448, true}, no_coop{9, 0, 132, 232448, false}, none{};
  CudaOptions cudnn;  // as the cudnn provider defaults
  cudnn.persistent = Mode::kAuto;
  auto reason = [](const testing::RnnCase& c, const CudaOptions& o, Mode generic,
                   const GpuTraits& gpu) {
    const testing::RnnModel m = testing::build_rnn_model(c);
    auto model = load_model_from_bytes(m.bytes.data(), m.bytes.size(), "", c.describe());
    EXPECT_TRUE(model.ok()) << model.status().message();
    if (!model.ok()) return std::string("(no model)");
    const Graph& g = *model->graph;
    return cudnn_rnn_grid_reason(g.node(0), g, o, generic, gpu);
  };
  auto sized = [](const char* op, int64_t N, int64_t I, int64_t H) {
    testing::RnnCase c;
    c.op = op;
    c.T = 2;
    c.N = N;
    c.I = I;
    c.H = H;
    return c;
  };
  // With the defaults on an H200.
  auto left = [&](const testing::RnnCase& c) {
    return !reason(c, cudnn, Mode::kAuto, h200).empty();
  };
  // lstm_med, gru_lbr1, rnn_tanh (N = 32, H = 512) and bilstm (N = 16, H = 256, both layouts).
  const testing::RnnCase lstm_med = sized("LSTM", 32, 256, 512);
  const std::string why = reason(lstm_med, cudnn, Mode::kAuto, h200);
  EXPECT_NE(why.find("static batch of 32, which cuDNN runs with its STANDARD algorithm"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("cudnn.defer_to_grid=0"), std::string::npos) << why;
  EXPECT_TRUE(left(sized("GRU", 32, 256, 512)));
  EXPECT_TRUE(left(sized("RNN", 32, 256, 512)));
  testing::RnnCase bilstm = sized("LSTM", 16, 128, 256);
  bilstm.direction = "bidirectional";
  EXPECT_TRUE(left(bilstm));
  bilstm.layout = 1;
  EXPECT_TRUE(left(bilstm));
  // The batch: up to kGridAutoBatch, and fixed in the model.
  EXPECT_TRUE(left(sized("LSTM", kGridAutoBatch, 256, 512)));
  EXPECT_FALSE(left(sized("LSTM", kGridAutoBatch + 1, 256, 512)));
  testing::RnnCase open = lstm_med;
  open.dynamic_batch = true;
  EXPECT_FALSE(left(open));
  open.layout = 1;
  EXPECT_FALSE(left(open));
  // cuDNN's persistent small-H kernel (lstm_stream: N = 1, H = 128) stays, unless the weights
  // are inputs (no weight space at load, so STANDARD) or cudnn.persistent=0.
  testing::RnnCase stream = sized("LSTM", 1, 64, 128);
  EXPECT_FALSE(left(stream));
  CudaOptions standard = cudnn;
  standard.persistent = Mode::kOff;
  EXPECT_FALSE(reason(stream, standard, Mode::kAuto, h200).empty());
  stream.weights_as_inputs = true;
  const std::string inputs = reason(stream, cudnn, Mode::kAuto, h200);
  EXPECT_NE(inputs.find("weights that are not constants"), std::string::npos) << inputs;
  // RNN has no small-H kernel in auto: STANDARD.
  EXPECT_TRUE(left(sized("RNN", 1, 64, 128)));
  // lstm_large (N = 64, H = 1024): too wide for the grid kernel's registers.
  EXPECT_FALSE(left(sized("LSTM", 64, 64, 1024)));
  // float16 keeps cuDNN (PERSIST_STATIC, and the grid kernel was not measured against it).
  testing::RnnCase half = lstm_med;
  half.dtype = DType::kFloat16;
  EXPECT_FALSE(left(half));
  // A node cudnn declines is not its to leave.
  testing::RnnCase clipped = lstm_med;
  clipped.attrs = [](onnx::NodeProto& n) { testing::set_attr(n, "clip", 3.0f); };
  EXPECT_FALSE(left(clipped));
  // Settings: TF32 asked of cuDNN, the rule off, cuda-generic's grid kernel off.
  CudaOptions tf32 = cudnn;
  tf32.tf32 = true;
  EXPECT_TRUE(reason(lstm_med, tf32, Mode::kAuto, h200).empty());
  CudaOptions keep = cudnn;
  keep.defer_to_grid = false;
  EXPECT_TRUE(reason(lstm_med, keep, Mode::kAuto, h200).empty());
  EXPECT_TRUE(reason(lstm_med, cudnn, Mode::kOff, h200).empty());
  EXPECT_FALSE(reason(lstm_med, cudnn, Mode::kOn, h200).empty());
  // Devices: no cooperative launch, or nothing known (no device).
  EXPECT_TRUE(reason(lstm_med, cudnn, Mode::kAuto, no_coop).empty());
  EXPECT_TRUE(reason(lstm_med, cudnn, Mode::kAuto, none).empty());
}

TEST(CudnnRunPlan, IndexFunctions) {
  EXPECT_EQ(ix::reversed_step(0, 3), 2);
  EXPECT_EQ(ix::reversed_step(2, 3), 0);
  EXPECT_EQ(ix::reversed_step(3, 3), -1);
  // [T=2,N=3,2,H=2] -> [T,2,N,H]: element (t=1, d=1, n=2, h=1).
  const int64_t N = 3, H = 2;
  const int64_t dst = ((1 * 2 + 1) * N + 2) * H + 1;
  EXPECT_EQ(ix::bidir_source(dst, N, H), ((1 * N + 2) * 2 + 1) * H + 1);
  // [A=2,B=3,H=2] -> [B,A,H]: element (b=2, a=1, h=0).
  EXPECT_EQ(ix::transpose_source((2 * 2 + 1) * 2 + 0, 2, 3, 2), (1 * 3 + 2) * 2 + 0);
  int64_t t = 0, n = 0;
  ix::y_step_batch(((3 * 2 + 1) * 4 + 2) * 5, 0, 6, 2, 4, 5, &t, &n);  // layout 0 [T,D,N,H]
  EXPECT_EQ(t, 3);
  EXPECT_EQ(n, 2);
  ix::y_step_batch(((2 * 6 + 3) * 2 + 1) * 5, 1, 6, 2, 4, 5, &t, &n);  // layout 1 [N,T,D,H]
  EXPECT_EQ(t, 3);
  EXPECT_EQ(n, 2);
}

}  // namespace
}  // namespace recur::cuda

#endif  // RECUR_HAVE_CUDA
