// The gate kernels alone, on the CPU:
//  - the cuda-generic cell math (providers/cuda/rnn/generic_cell.h): the very functions each
//    CUDA thread runs, called in a host loop over [N][H] elements for one step. Counter: bytes/s
//    of the gate inputs read and the states written (an estimate of the memory traffic).
//  - the reference provider's cell step (providers/reference/rnn): the recurrent GEMM of one
//    step and the gate loop. Counter: FLOP/s of the GEMM, 2*N*G*H*H.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/bench_util.h"
#include "providers/cuda/rnn/generic_cell.h"
#include "providers/reference/rnn/rnn_common.h"

namespace recur {
namespace {

namespace cell = cuda::cell;

// Args: cell (0 LSTM, 1 GRU lbr=1, 2 RNN), N, H.
void BM_GateGenericCell(benchmark::State& state) {
  cell::CellParams p;
  const int64_t k = state.range(0);
  p.cell = k == 0 ? cell::kLstm : k == 1 ? cell::kGru : cell::kRnn;
  p.linear_before_reset = 1;
  p.T = 1;
  p.N = state.range(1);
  p.H = state.range(2);
  p.D = 1;
  for (auto& a : p.act[0]) a.kind = cell::kTanh;
  p.act[0][0].kind = p.cell == cell::kRnn ? cell::kTanh : cell::kSigmoid;
  const int64_t G = p.gates(), NH = p.N * p.H, GH = G * p.H;
  const auto xw = bench::random_floats(static_cast<size_t>(p.N * GH), 1);
  const auto rg = bench::random_floats(static_cast<size_t>(p.N * GH), 2);
  const auto bias = bench::random_floats(static_cast<size_t>(GH), 3);
  const auto rbh = bench::random_floats(static_cast<size_t>(p.H), 4);
  auto h = bench::random_floats(static_cast<size_t>(NH), 5);
  auto c = bench::random_floats(static_cast<size_t>(NH), 6);
  std::vector<float> y(static_cast<size_t>(NH));
  cell::StepBuffers<float, float> b;
  b.xw = xw.data();
  b.rg = rg.data();
  b.bias = bias.data();
  b.rbh = rbh.data();
  b.h = h.data();
  b.c = c.data();
  b.y = y.data();
  for (auto _ : state) {
    for (int64_t e = 0; e < NH; ++e) {
      const cell::Dnj at = cell::split_dnj(e, p.N, p.H);
      if (p.cell == cell::kLstm) {
        cell::lstm_element(p, b, 0, at);
      } else if (p.cell == cell::kGru) {
        cell::gru_element(p, b, 0, at, 0);
      } else {
        cell::rnn_element(p, b, 0, at);
      }
    }
    benchmark::DoNotOptimize(h.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  // Per element: G values of xw, rg and bias read; h (and c) read and written; y written.
  const int64_t per = 3 * G + (p.cell == cell::kLstm ? 5 : 3);
  state.SetBytesProcessed(state.iterations() * NH * per * int64_t{sizeof(float)});
  state.SetItemsProcessed(state.iterations() * NH);
  state.SetLabel(k == 0 ? "LSTM" : k == 1 ? "GRU lbr=1" : "RNN tanh");
}
BENCHMARK(BM_GateGenericCell)
    ->ArgNames({"cell", "N", "H"})
    ->Args({0, 1, 128})
    ->Args({0, 32, 512})
    ->Args({1, 32, 512})
    ->Args({2, 32, 512})
    ->Args({0, 64, 1024});

// Args: cell (0 LSTM, 1 GRU lbr=1, 2 RNN), N, H.
void BM_GateReferenceStep(benchmark::State& state) {
  const int64_t k = state.range(0), N = state.range(1), H = state.range(2);
  RnnSpec spec;
  spec.cell = k == 0 ? RnnCell::kLstm : k == 1 ? RnnCell::kGru : RnnCell::kRnn;
  spec.linear_before_reset = k == 1;
  spec.hidden_size = H;
  using Kind = RnnActivation::Kind;
  if (k == 0) {
    spec.activations = {{Kind::kSigmoid}, {Kind::kTanh}, {Kind::kTanh}};
  } else if (k == 1) {
    spec.activations = {{Kind::kSigmoid}, {Kind::kTanh}};
  } else {
    spec.activations = {{Kind::kTanh}};
  }
  const int64_t G = spec.num_gates(), GH = G * H;
  const auto xw = bench::random_floats(static_cast<size_t>(N * GH), 1);
  const auto rt = bench::random_floats(static_cast<size_t>(H * GH), 2);
  const auto rbh = bench::random_floats(static_cast<size_t>(H), 3);
  auto h = bench::random_floats(static_cast<size_t>(N * H), 4);
  auto c = bench::random_floats(static_cast<size_t>(N * H), 5);
  std::vector<float> gates(static_cast<size_t>(N * GH)), scratch(static_cast<size_t>(N * H));
  std::vector<const float*> rows(static_cast<size_t>(N));
  std::vector<uint8_t> active(static_cast<size_t>(N), 1);
  for (int64_t n = 0; n < N; ++n) rows[static_cast<size_t>(n)] = xw.data() + n * GH;
  const reference::rnn::CellOps ops = k == 0   ? reference::rnn::lstm_cell_ops()
                                      : k == 1 ? reference::rnn::gru_cell_ops()
                                               : reference::rnn::rnn_cell_ops();
  reference::rnn::StepArgs<float> a;
  a.spec = &spec;
  a.batch = N;
  a.hidden = H;
  a.xw_rows = rows.data();
  a.active = active.data();
  a.rt = rt.data();
  a.rbh = k == 1 ? rbh.data() : nullptr;
  a.h = h.data();
  a.c = k == 0 ? c.data() : nullptr;
  a.gates = gates.data();
  a.scratch = scratch.data();
  for (auto _ : state) {
    ops.step_float(a);
    benchmark::DoNotOptimize(h.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(N * GH * H) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  state.SetLabel(k == 0 ? "LSTM" : k == 1 ? "GRU lbr=1" : "RNN tanh");
}
BENCHMARK(BM_GateReferenceStep)
    ->ArgNames({"cell", "N", "H"})
    ->Args({0, 1, 128})
    ->Args({0, 32, 512})
    ->Args({1, 32, 512})
    ->Args({2, 32, 512})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace recur
