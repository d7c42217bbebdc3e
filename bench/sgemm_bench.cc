// The machine's GEMM ceiling at the standard suite's RNN GEMM shapes (docs/benchmarking.md):
// oneDNN's dnnl_sgemm and an f32 matmul primitive (fp32), and a bf16 matmul (bf16 in, f32
// out), on 1 or 2 OpenMP threads. An RNN step is two GEMMs: the recurrent one, [N, H] x [H, G*H],
// and the input projection, [N, I] x [I, G*H] per step or [T*N, I] x [I, G*H] over the whole
// sequence. The RNN kernels' GFLOP/s are read as a fraction of these (docs/precision.md, "The sgemm
// ceiling"). Counter: FLOP/s, 2*M*N*K per call.
//   build/bench/recur_microbench --benchmark_filter='Sgemm|Matmul|Gemm' --benchmark_repetitions=5
// tools/bench/sgemm_ceiling.py alternates these with the suite's RNNs and prints the fractions.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#if RECUR_HAVE_ONEDNN
#include <omp.h>

#include <dnnl.hpp>
#endif

namespace {

#if RECUR_HAVE_ONEDNN

std::vector<float> random_floats(size_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 0.1f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Args: M, K, N (row-major C[M, N] = A[M, K] x B[K, N]), threads.
void BM_Sgemm(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  omp_set_num_threads(static_cast<int>(state.range(3)));
  const auto a = random_floats(static_cast<size_t>(M * K));
  const auto b = random_floats(static_cast<size_t>(K * N));
  std::vector<float> c(static_cast<size_t>(M * N));
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(2 * M * N * K),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// A matmul primitive, weights in its own format as an RNN holds them: bf16 x bf16 -> f32
// (oneDNN 2.6 exports no bf16 gemm function), or f32, where oneDNN's brgemm matmul outruns
// dnnl_sgemm on AVX-512 machines.
void matmul_bench(benchmark::State& state, dnnl::memory::data_type dt) {
  using dnnl::memory;
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  omp_set_num_threads(static_cast<int>(state.range(3)));
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::desc a_md({M, K}, dt, memory::format_tag::ab);
  const memory::desc b_md({K, N}, dt, memory::format_tag::any);
  const memory::desc c_md({M, N}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), eng);
  const auto a32 = random_floats(static_cast<size_t>(M * K));
  const auto b32 = random_floats(static_cast<size_t>(K * N));
  memory a(a_md, eng), b(pd.weights_desc(), eng), c(c_md, eng);
  memory a_f(memory::desc({M, K}, memory::data_type::f32, memory::format_tag::ab), eng,
             const_cast<float*>(a32.data()));
  memory b_f(memory::desc({K, N}, memory::data_type::f32, memory::format_tag::ab), eng,
             const_cast<float*>(b32.data()));
  dnnl::reorder(a_f, a).execute(strm, a_f, a);
  dnnl::reorder(b_f, b).execute(strm, b_f, b);
  const dnnl::matmul mm(pd);
  state.SetLabel(pd.impl_info_str());
  for (auto _ : state) {
    mm.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    strm.wait();
  }
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(2 * M * N * K),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_MatmulF32(benchmark::State& state) { matmul_bench(state, dnnl::memory::data_type::f32); }
void BM_GemmBf16(benchmark::State& state) { matmul_bench(state, dnnl::memory::data_type::bf16); }

// The suite's shapes: lstm_large (T=100 N=64 I=H=1024), lstm_med (T=100 N=32 I=256 H=512) and
// gru_lbr1 (T=100 N=32 I=256 H=512, 3 gates); per case the recurrent GEMM and the input
// projection over all T steps.
void suite_shapes(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][3] = {
      {64, 1024, 4096},    // lstm_large recurrent
      {6400, 1024, 4096},  // lstm_large input projection, all steps
      {32, 512, 2048},     // lstm_med recurrent
      {3200, 256, 2048},   // lstm_med input projection
      {32, 512, 1536},     // gru_lbr1 recurrent
      {3200, 256, 1536},   // gru_lbr1 input projection
  };
  for (int threads : {1, 2})
    for (const auto& s : shapes) b->Args({s[0], s[1], s[2], threads});
}

BENCHMARK(BM_Sgemm)->Apply(suite_shapes)->ArgNames({"M", "K", "N", "threads"})->UseRealTime();
BENCHMARK(BM_MatmulF32)->Apply(suite_shapes)->ArgNames({"M", "K", "N", "threads"})->UseRealTime();
BENCHMARK(BM_GemmBf16)->Apply(suite_shapes)->ArgNames({"M", "K", "N", "threads"})->UseRealTime();

#endif

}  // namespace
