// cuda-generic's RNN without a GPU: run_generic_rnn (the sequence of GEMMs and gate launches
// the CUDA kernel runs) over HostRnnBackend, which calls the very cell functions of
// generic_cell.h that the CUDA kernels call, element by element. Checked against
//  - the float64 oracle outputs of every case in tests/data/rnn (every attribute: clip,
//    peepholes, activations with alpha/beta, input_forget, both GRU variants, sequence lengths
//    with zeros, directions, layouts, float16/32/64), and
//  - the reference provider on 240 random configurations that mix every attribute.
// What this cannot check is the CUDA side (launch sizes, cuBLAS's transposes): the GPU tests
// (cuda_generic_gpu_test.cc) do.
#if RECUR_HAVE_CUDA

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include "providers/cuda/rnn/generic_rnn.h"
#include "providers/cuda/rnn/generic_rnn_plan.h"
#include "providers/cuda/rnn/generic_rnn_prep.h"
#include "recur/recur.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/rnn/rnn_spec.h"
#include "tests/providers/cuda/rnn_case.h"
#include "tools/common/testdir.h"

namespace recur::testing {
namespace {

namespace fs = std::filesystem;
using cuda::cell::CellParams;

// The node's inputs, from the feeds by name or the graph's initializers.
const Tensor* find_input(const Graph& g, const Node& n, size_t i,
                         const std::vector<std::pair<std::string, Tensor>>& feeds) {
  if (!n.has_input(i)) return nullptr;
  const std::string& name = g.value(n.inputs[i]).name;
  for (const auto& [k, t] : feeds)
    if (k == name) return &t;
  return g.initializer(n.inputs[i]);
}

template <class T, class C>
std::vector<C> as_compute(const Tensor* t) {
  if (!t) return {};
  return cuda::values_as<C>(*t);
}

template <class C>
bool any_nan(const C* a, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t k = 0; k < cols; ++k)
      if (std::isnan(static_cast<double>(a[m * ld + k]))) return true;
  return false;
}

// HostRnnBackend, refusing a GEMM that reads NaN: with every scratch buffer filled with NaN
// first, that is a GEMM reading scratch that no earlier step wrote, which on the GPU is pool
// memory left by another run (and what compute-sanitizer's initcheck reports).
template <class T, class C>
class WrittenScratchBackend final : public cuda::GenericRnnBackend<T, C> {
 public:
  Status gemm_nt(int64_t M, int64_t Nc, int64_t K, const C* A, int64_t lda, int64_t sa, const C* B,
                 int64_t ldb, int64_t sb, C* Cm, int64_t ldc, int64_t sc, int64_t batch) override {
    for (int64_t q = 0; q < batch; ++q)
      if (any_nan(A + q * sa, M, K, lda) || any_nan(B + q * sb, Nc, K, ldb))
        return internal_error("a GEMM reads scratch that no step wrote");
    return host_.gemm_nt(M, Nc, K, A, lda, sa, B, ldb, sb, Cm, ldc, sc, batch);
  }
  Status init(const CellParams& p, const T* h0, const T* c0, C* h, C* c) override {
    return host_.init(p, h0, c0, h, c);
  }
  Status step(const CellParams& p, const cuda::cell::StepBuffers<T, C>& b, int64_t s,
              int phase) override {
    return host_.step(p, b, s, phase);
  }
  Status grid(const CellParams& p, const cuda::cell::StepBuffers<T, C>& b, const C* r, C* h2,
              const cuda::GridShape& g) override {
    return host_.grid(p, b, r, h2, g);
  }
  Status finish(const CellParams& p, const int32_t* lens, const C* h, const C* c, T* yh,
                T* yc) override {
    return host_.finish(p, lens, h, c, yh, yc);
  }

 private:
  cuda::HostRnnBackend<T, C> host_;
};

// Runs the RNN node `n` of `g` with the host backend; outputs Y, Y_h, Y_c (undefined when
// the node has no such output).
template <class T, class C>
Result<std::vector<Tensor>> run_host(const Graph& g, const Node& n,
                                     const std::vector<std::pair<std::string, Tensor>>& feeds,
                                     int64_t grid_blocks) {
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, RnnSpec::parse(n));
  const Tensor* x = find_input(g, n, kRnnX, feeds);
  const Tensor* w = find_input(g, n, kRnnW, feeds);
  const Tensor* r = find_input(g, n, kRnnR, feeds);
  const Tensor* b = find_input(g, n, kRnnB, feeds);
  const Tensor* lens = find_input(g, n, kRnnSeqLens, feeds);
  const Tensor* h0 = find_input(g, n, kRnnInitialH, feeds);
  const Tensor* c0 = find_input(g, n, kRnnInitialC, feeds);
  const Tensor* p = find_input(g, n, kRnnP, feeds);
  RECUR_ASSIGN_OR_RETURN(RnnDims dims, check_rnn_inputs(n, spec, x, w, r, b, lens, h0, c0, p));
  CellParams cp = cuda::generic_cell_params(spec);
  cp.T = dims.seq_length;
  cp.N = dims.batch;
  cp.H = dims.hidden;
  cp.D = dims.directions;
  const std::vector<C> xc = as_compute<T, C>(x), wc = as_compute<T, C>(w), rc = as_compute<T, C>(r),
                       pc = as_compute<T, C>(p);
  std::vector<C> bias, rbh;
  if (b) cuda::pack_bias_host<C>(cp, *b, &bias, &rbh);
  const DType dt = x->dtype();
  const Shape ys = spec.layout == 0 ? Shape{cp.T, cp.D, cp.N, cp.H} : Shape{cp.N, cp.T, cp.D, cp.H};
  const Shape ss = spec.layout == 0 ? Shape{cp.D, cp.N, cp.H} : Shape{cp.N, cp.D, cp.H};
  std::vector<Tensor> out = {Tensor::empty(dt, ys), Tensor::empty(dt, ss), Tensor::empty(dt, ss)};
  cuda::GenericRnnRun<T, C> run;
  run.p = cp;
  run.I = dims.input_size;
  run.x = xc.data();
  run.w = wc.data();
  run.r = rc.data();
  run.bias = bias.empty() ? nullptr : bias.data();
  run.rbh = rbh.empty() ? nullptr : rbh.data();
  run.peep = pc.empty() ? nullptr : pc.data();
  run.lens = lens ? lens->data<int32_t>() : nullptr;
  run.h0 = h0 ? static_cast<const T*>(h0->raw_data()) : nullptr;
  run.c0 = c0 ? static_cast<const T*>(c0->raw_data()) : nullptr;
  // Garbage in Y: the kernel must write every element, padding included.
  for (Tensor& t : out) {
    T* d = static_cast<T*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) d[i] = static_cast<T>(C(777));
  }
  run.y = static_cast<T*>(out[0].raw_data());
  run.yh = static_cast<T*>(out[1].raw_data());
  run.yc = spec.cell == RnnCell::kLstm ? static_cast<T*>(out[2].raw_data()) : nullptr;
  // Scratch starts as NaN, where the GPU's starts as whatever the pool held: an element read
  // before it is written shows in the outputs or in a GEMM's operands.
  const C nan = std::numeric_limits<C>::quiet_NaN();
  std::vector<C> xw(static_cast<size_t>(run.xw_elems()), nan),
      rg(static_cast<size_t>(run.rg_elems()), nan), h(static_cast<size_t>(run.state_elems()), nan),
      c(h.size(), nan), aux(h.size(), nan), h2(h.size(), nan);
  run.xw = xw.data();
  run.rg = rg.data();
  run.h = h.data();
  run.c = spec.cell == RnnCell::kLstm ? c.data() : nullptr;
  run.aux = aux.data();
  if (grid_blocks > 0) {
    std::string why;
    // 48 KiB of shared memory: the default a block gets without opting in to more.
    run.grid = cuda::grid_shape(run.p, grid_blocks, 48 << 10, sizeof(C), &why);
    if (!run.grid.ok() && cp.N > 0 && cp.H > 0)
      return internal_error("no grid shape for " + std::to_string(grid_blocks) + " blocks: " + why);
    run.h2 = h2.data();
  }
  WrittenScratchBackend<T, C> be;
  RECUR_RETURN_IF_ERROR((cuda::run_generic_rnn<T, C>(run, be)));
  // The grid order reads aux outside any GEMM: every element of it must have been written.
  if (run.grid.ok() && run.p.T * run.p.N > 0 && spec.cell == RnnCell::kGru &&
      !spec.linear_before_reset && any_nan(aux.data(), 1, static_cast<int64_t>(aux.size()), 0))
    return internal_error("the grid order leaves aux unwritten");
  if (spec.cell != RnnCell::kLstm) out[2] = Tensor();
  return out;
}

// grid_blocks > 0: the grid kernel's order of operations (HostRnnBackend::grid) on that many
// blocks at most; 0: a GEMM and a gate kernel per step.
Result<std::vector<Tensor>> run_host_any(const Graph& g, const Node& n,
                                         const std::vector<std::pair<std::string, Tensor>>& feeds,
                                         int64_t grid_blocks = 0) {
  const Tensor* x = find_input(g, n, kRnnX, feeds);
  if (!x) return invalid_argument("no X");
  switch (x->dtype()) {
    case DType::kFloat64:
      return run_host<double, double>(g, n, feeds, grid_blocks);
    case DType::kFloat16:
      return run_host<Float16, float>(g, n, feeds, grid_blocks);
    default:
      return run_host<float, float>(g, n, feeds, grid_blocks);
  }
}

const Node* rnn_node(const Graph& g) {
  for (const Node& n : g.nodes())
    if (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN") return &n;
  return nullptr;
}

TEST(GenericRnnCpu, OracleSuite) {
  const fs::path root = fs::path(test_data_dir()) / "rnn";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    const fs::path model = e.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    auto m = load_model(model.string());
    ASSERT_TRUE(m.ok()) << m.status().message();
    const Graph& g = *m->graph;
    const Node* n = rnn_node(g);
    ASSERT_NE(n, nullptr) << e.path();
    auto sets = tools::read_data_sets(e.path().string());
    ASSERT_TRUE(sets.ok()) << sets.status().message();
    for (const tools::DataSet& ds : *sets) {
      // Inputs without names follow the graph's input order.
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (size_t k = 0; k < ds.inputs.size(); ++k) {
        std::string name = ds.inputs[k].first;
        if (name.empty() && k < g.inputs().size()) name = g.value(g.inputs()[k]).name;
        feeds.emplace_back(name, ds.inputs[k].second);
      }
      // Per-step launches, and the grid kernel on 132 blocks (an H100 or H200) and on 2.
      for (int64_t grid_blocks : {0, 132, 2}) {
        auto got = run_host_any(g, *n, feeds, grid_blocks);
        ASSERT_TRUE(got.ok()) << e.path().filename() << ": " << got.status().message();
        const bool half = e.path().filename().string().find("float16") != std::string::npos;
        const tools::Tolerance tol =
            half ? tools::Tolerance{1e-2, 1e-2} : tools::Tolerance{1e-4, 1e-5};
        for (size_t k = 0; k < ds.outputs.size(); ++k) {
          // Expected outputs name the node's outputs (Y, Y_h, Y_c), or follow their order.
          const std::string& name = ds.outputs[k].first;
          size_t which = k;
          for (size_t o = 0; o < n->outputs.size(); ++o)
            if (n->has_output(o) && g.value(n->outputs[o]).name == name) which = o;
          ASSERT_LT(which, got->size());
          const tools::Comparison c = tools::compare((*got)[which], ds.outputs[k].second, tol);
          EXPECT_TRUE(c.match) << e.path().filename() << " output " << which << " (grid on "
                               << grid_blocks << " blocks): " << c.reason;
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

// The model of `c` run by the host backend against the reference provider.
void expect_host_matches_reference(const RnnCase& c, const std::vector<int32_t>& lens,
                                   int64_t grid_blocks, tools::Tolerance tol) {
  const RnnModel m = build_rnn_model(c, lens);
  Session ref = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                    SessionOptions().providers({"reference"}));
  const Outputs want = ref.run(m.feeds);
  auto model = load_model_from_bytes(m.bytes.data(), m.bytes.size(), ".", "case");
  ASSERT_TRUE(model.ok());
  const Graph& g = *model->graph;
  std::vector<std::pair<std::string, Tensor>> feeds(m.feeds.begin(), m.feeds.end());
  auto got = run_host_any(g, *rnn_node(g), feeds, grid_blocks);
  ASSERT_TRUE(got.ok()) << c.describe() << ": " << got.status().message();
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t which = want.name(i) == "Y" ? 0 : want.name(i) == "Y_h" ? 1 : 2;
    const tools::Comparison cmp = tools::compare((*got)[which], want[i], tol);
    EXPECT_TRUE(cmp.match) << c.describe() << " (grid on " << grid_blocks << " blocks) output "
                           << want.name(i) << ": " << cmp.reason;
  }
}

// The edge shapes and types (rnn_case.h), against the reference provider.
TEST(GenericRnnCpu, EdgeShapesMatchTheReference) {
  for (const EdgeRnn& e : edge_rnn_cases()) {
    const double tol = e.r.c.dtype == DType::kFloat16 ? 1e-2 : 1e-4;
    expect_host_matches_reference(e.r.c, e.r.lens, e.grid ? 132 : 0, {tol, tol});
  }
}

// Random configurations with every attribute, against the reference provider.
TEST(GenericRnnCpu, RandomParityWithReference) {
  std::mt19937 rng(424242);
  RandomRnnLimits lim;
  lim.max_T = 6;
  lim.max_N = 4;
  lim.max_I = 6;
  lim.max_H = 7;
  lim.weights_as_inputs_one_in = 5;
  lim.float64_one_in = 4;
  lim.output_subsets = false;
  for (int k = 0; k < 240; ++k) {
    const RandomRnn r = random_rnn_case(rng, 1000 + static_cast<uint32_t>(k), lim);
    // Half of them on the grid kernel's order, on 2 to 17 blocks: several blocks per direction
    // and several units per block.
    const int64_t blocks = k % 2 == 1 ? 2 + (k / 2) % 16 : 0;
    expect_host_matches_reference(r.c, r.lens, blocks, {1e-4, 1e-5});
  }
}

CellParams grid_params(int32_t cell, int64_t H, int64_t N, int64_t D, int32_t lbr = 1) {
  CellParams p;
  p.cell = cell;
  p.linear_before_reset = lbr;
  p.direction = D == 2 ? 2 : 0;
  p.T = 3, p.N = N, p.H = H, p.D = D;
  return p;
}

// The grid kernel's division on an H200 (132 multiprocessors, 227 KiB of shared memory a
// block): the benchmark's lstm_peep and gru_lbr0 shapes, and what it refuses.
TEST(GenericRnnCpu, GridShapeOfTheBenchmarkShapes) {
  constexpr int64_t kSms = 132, kSmem = 227 << 10;
  std::string why;
  const cuda::GridShape lstm =
      cuda::grid_shape(grid_params(cuda::cell::kLstm, 512, 32, 1), kSms, kSmem, 4, &why);
  ASSERT_TRUE(lstm.ok()) << why;
  EXPECT_EQ(lstm.units, 4);
  EXPECT_EQ(lstm.blocks, 128);
  EXPECT_EQ(lstm.phases, 1);
  EXPECT_EQ(lstm.cols[0], 16);    // 4 gates x 4 units
  EXPECT_EQ(lstm.chunks[0], 16);  // threads per column
  EXPECT_EQ(lstm.kc[0], 32);      // 512 terms in 16 chunks
  EXPECT_EQ(lstm.rows_staged, 32);
  // linear_before_reset=0: z and r first (8 columns), then the h gate alone (4 columns) on
  // every thread, so that neither phase leaves threads idle.
  const cuda::GridShape gru =
      cuda::grid_shape(grid_params(cuda::cell::kGru, 512, 32, 1, 0), kSms, kSmem, 4, &why);
  ASSERT_TRUE(gru.ok()) << why;
  EXPECT_EQ(gru.phases, 2);
  EXPECT_EQ(gru.cols[0], 8);
  EXPECT_EQ(gru.cols[1], 4);
  EXPECT_EQ(gru.kc[0], 16);
  EXPECT_EQ(gru.kc[1], 8);
  // Too wide for the registers: per-step launches instead, with the reason.
  EXPECT_FALSE(
      cuda::grid_shape(grid_params(cuda::cell::kLstm, 4096, 8, 1), kSms, kSmem, 4, &why).ok());
  EXPECT_NE(why.find("terms per thread"), std::string::npos) << why;
  EXPECT_FALSE(cuda::grid_shape(grid_params(cuda::cell::kLstm, 64, 8, 2), 1, kSmem, 4, &why).ok());
  // float64 holds half as many terms.
  EXPECT_TRUE(
      cuda::grid_shape(grid_params(cuda::cell::kRnn, 1024, 8, 1), kSms, kSmem, 4, nullptr).ok());
  EXPECT_FALSE(
      cuda::grid_shape(grid_params(cuda::cell::kRnn, 2048, 8, 1), kSms, kSmem, 8, nullptr).ok());
}

// Over the blocks and phases, every column of every direction's H R^T is computed exactly once,
// each thread's chunk stays inside the row, and the shared memory fits.
TEST(GenericRnnCpu, GridShapeCoversEveryColumnOnce) {
  std::mt19937 rng(77);
  int checked = 0;
  for (int k = 0; k < 400; ++k) {
    const int32_t cell = static_cast<int32_t>(rng() % 3);
    const int64_t H = 1 + rng() % 700, N = 1 + rng() % 80, D = 1 + rng() % 2;
    const auto blocks = static_cast<int64_t>(1 + rng() % 140);
    const auto smem = static_cast<int64_t>(16 + rng() % 220) << 10;
    const CellParams p = grid_params(cell, H, N, D, static_cast<int32_t>(rng() % 2));
    const cuda::GridShape g = cuda::grid_shape(p, blocks, smem, 4, nullptr);
    if (!g.ok()) continue;
    ++checked;
    ASSERT_LE(g.blocks, blocks);
    ASSERT_LE(g.smem_bytes, smem);
    ASSERT_GE(g.rows_staged, 1);
    std::vector<int> seen(static_cast<size_t>(D * p.gates() * H), 0);
    for (int64_t b = 0; b < g.blocks; ++b) {
      const cuda::GridTile t = cuda::grid_tile(g, b);
      for (int f = 0; f < g.phases; ++f) {
        ASSERT_LE(g.cols[f] * g.chunks[f], cuda::kGridThreads);
        ASSERT_GE(g.chunks[f] * g.kc[f], H);
        for (int64_t c = 0; c < g.cols[f]; ++c) {
          const int64_t col = cuda::grid_col(p, g, t, c, f);
          if (col >= 0) ++seen[static_cast<size_t>(t.d * p.gates() * H + col)];
        }
      }
    }
    for (size_t i = 0; i < seen.size(); ++i)
      ASSERT_EQ(seen[i], 1) << "column " << i << " of cell " << cell << " H=" << H << " D=" << D
                            << " on " << blocks << " blocks";
  }
  EXPECT_GT(checked, 200);
}

TEST(GenericRnnCpu, ClaimsEveryFloatRnn) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      RnnCase c;
      c.op = op;
      c.dtype = dt;
      c.attrs = [](onnx::NodeProto& n) { set_attr(n, "clip", 1.5f); };
      const RnnModel m = build_rnn_model(c);
      auto model = load_model_from_bytes(m.bytes.data(), m.bytes.size(), ".", "case");
      ASSERT_TRUE(model.ok());
      const Node* n = rnn_node(*model->graph);
      EXPECT_TRUE(cuda::generic_rnn_claim(*n, *model->graph).yes) << op << " " << dtype_name(dt);
    }
  }
}

}  // namespace
}  // namespace recur::testing

#endif  // RECUR_HAVE_CUDA
