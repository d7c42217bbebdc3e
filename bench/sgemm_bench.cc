// The machine's GEMM ceiling at the standard suite's RNN GEMM shapes (docs/benchmarking.md):
// oneDNN's dnnl_sgemm (fp32) and dnnl_gemm_bf16bf16f32 (bf16 in, f32 out), on 1 or 2 OpenMP
// threads. An RNN step is two GEMMs: the recurrent one, [N, H] x [H, G*H], and the input
// projection, [N, I] x [I, G*H] per step or [T*N, I] x [I, G*H] over the whole sequence. The
// RNN kernels' GFLOP/s are read as a fraction of these (docs/precision.md, "The sgemm ceiling").
// Counter: FLOP/s, 2*M*N*K per call.
//   build/bench/recur_microbench --benchmark_filter=Gemm --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#if RECUR_HAVE_ONEDNN
#include <omp.h>

#include <dnnl.h>
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

uint16_t to_bf16(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, sizeof(u));
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

void BM_GemmBf16(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  omp_set_num_threads(static_cast<int>(state.range(3)));
  std::vector<uint16_t> a, b;
  for (float f : random_floats(static_cast<size_t>(M * K))) a.push_back(to_bf16(f));
  for (float f : random_floats(static_cast<size_t>(K * N))) b.push_back(to_bf16(f));
  std::vector<float> c(static_cast<size_t>(M * N));
  for (auto _ : state) {
    dnnl_gemm_bf16bf16f32('N', 'N', M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(2 * M * N * K),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

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
BENCHMARK(BM_GemmBf16)->Apply(suite_shapes)->ArgNames({"M", "K", "N", "threads"})->UseRealTime();

#endif

}  // namespace
