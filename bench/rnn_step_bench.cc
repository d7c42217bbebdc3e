// One RNN time step per provider, through a session: an LSTM/GRU/RNN node with T = 1, so each
// iteration is one step (the recurrent GEMM, the input GEMM for that step, the gates) plus the
// provider's per-run overhead. Providers this build lacks, or whose device is absent (cudnn and
// cuda-generic without a GPU), are skipped with the reason. Counter: FLOP/s of the two GEMMs,
// 2*N*G*H*(I+H) per step.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "bench/bench_util.h"

namespace recur {
namespace {

const char* const kProviders[] = {"reference", "onednn", "cudnn", "cuda-generic"};
const char* const kOps[] = {"LSTM", "GRU", "RNN"};

// Args: provider index, op index, N, I, H.
void BM_RnnStep(benchmark::State& state) {
  const std::string provider = kProviders[state.range(0)];
  const std::string op = kOps[state.range(1)];
  const int64_t N = state.range(2), I = state.range(3), H = state.range(4);
  state.SetLabel(provider + " " + op);
  std::string why;
  if (!bench::provider_usable(provider, &why)) {
    state.SkipWithError(why.c_str());
    return;
  }
  const std::string bytes = bench::rnn_model_bytes(op, 1, N, I, H);
  std::unique_ptr<Session> session;
  try {
    // Only the provider itself: a step that silently fell back would measure something else.
    session = std::make_unique<Session>(Session::from_bytes(
        bytes.data(), bytes.size(), SessionOptions{}.providers({provider}).threads(1)));
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const Feeds feeds = {{"X", bench::random_tensor({1, N, I})}};
  try {
    session->run(feeds);  // the first run may choose an implementation
    for (auto _ : state) {
      Outputs out = session->run(feeds);
      benchmark::DoNotOptimize(out.tensors().data());
    }
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const double flop = 2.0 * static_cast<double>(N * bench::gates_of(op) * H * (I + H));
  state.counters["FLOP/s"] = benchmark::Counter(flop * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

void step_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"provider", "op", "N", "I", "H"});
  for (int64_t p = 0; p < 4; ++p) {
    b->Args({p, 0, 1, 64, 128});      // lstm_stream's step
    b->Args({p, 0, 32, 256, 512});    // lstm_med's step
    b->Args({p, 1, 32, 256, 512});    // gru_lbr1's step
    b->Args({p, 2, 32, 256, 512});    // rnn_tanh's step
    b->Args({p, 0, 64, 1024, 1024});  // lstm_large's step
  }
}
BENCHMARK(BM_RnnStep)->Apply(step_args)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace recur
