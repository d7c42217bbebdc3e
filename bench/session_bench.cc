// Session creation for a model from models/ (char_lstm_lm: embedding, 2-layer LSTM, linear,
// log-softmax): parsing, optimisation, claims and compiling, with the reference provider alone
// and with oneDNN in front (which repacks the LSTM weights and sets up its primitives).
// Counter: bytes/s of the model file, and sessions/s.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace recur {
namespace {

const std::vector<std::vector<std::string>> kChains = {{"reference"}, {"onednn", "reference"}};

// Args: model index (0 char_lstm_lm, 1 dynamic_lstm), provider chain index.
void BM_SessionCreate(benchmark::State& state) {
  const char* const models[] = {"char_lstm_lm", "dynamic_lstm"};
  const std::string name = models[state.range(0)];
  const auto& chain = kChains[static_cast<size_t>(state.range(1))];
  const std::string path = std::string(RECUR_SOURCE_DIR) + "/models/" + name + "/model.onnx";
  std::string label = name + " ";
  for (size_t i = 0; i < chain.size(); ++i) label += (i ? "," : "") + chain[i];
  state.SetLabel(label);
  std::string why;
  if (!bench::provider_usable(chain.front(), &why)) {
    state.SkipWithError(why.c_str());
    return;
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    state.SkipWithError(("no model at " + path).c_str());
    return;
  }
  const SessionOptions opts = SessionOptions{}.providers(chain).threads(1);
  try {
    for (auto _ : state) {
      Session s(path, opts);
      benchmark::DoNotOptimize(&s);
    }
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(size));
  state.counters["sessions/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SessionCreate)
    ->ArgNames({"model", "providers"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace recur
