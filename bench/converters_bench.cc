// Weight repacking, per converter: ONNX to oneDNN (W/R gate permutation in ldgoi and ldigo,
// the combined bias) and ONNX to a cuDNN weight space (building the copy plan, and applying
// it). Counters: bytes/s of weights read and written, so a slower repack shows at once.
#include <benchmark/benchmark.h>

#include <vector>

#include "converters/cudnn_weights.h"
#include "converters/onednn_weights.h"

namespace recur {
namespace {

RnnCell cell_of(int64_t k) {
  return k == 0 ? RnnCell::kLstm : k == 1 ? RnnCell::kGru : RnnCell::kRnn;
}
const char* cell_name(RnnCell c) {
  return c == RnnCell::kLstm ? "LSTM" : c == RnnCell::kGru ? "GRU" : "RNN";
}

// Args: cell (0 LSTM, 1 GRU, 2 RNN), hidden size H, input size I, format (0 ldgoi, 1 ldigo).
void BM_ConverterOnnxToOnednnWeights(benchmark::State& state) {
  OnednnRnnGeometry g;
  g.cell = cell_of(state.range(0));
  g.hidden = state.range(1);
  g.input_size = state.range(2);
  g.directions = 1;
  const auto format = state.range(3) ? OnednnWeightsFormat::kLdigo : OnednnWeightsFormat::kLdgoi;
  const int64_t nw = g.weights_size(g.input_size), nr = g.weights_size(g.hidden);
  std::vector<float> w(static_cast<size_t>(nw), 0.5f), r(static_cast<size_t>(nr), 0.25f);
  std::vector<float> out_w(w.size()), out_r(r.size());
  for (auto _ : state) {
    Status a = onnx_to_onednn_weights(g, w.data(), g.input_size, format, out_w.data());
    Status b = onnx_to_onednn_weights(g, r.data(), g.hidden, format, out_r.data());
    if (!a.ok() || !b.ok()) {
      state.SkipWithError((a.ok() ? b : a).message().c_str());
      break;
    }
    benchmark::DoNotOptimize(out_w.data());
    benchmark::DoNotOptimize(out_r.data());
    benchmark::ClobberMemory();
  }
  // Each element is read once and written once.
  state.SetBytesProcessed(state.iterations() * (nw + nr) * 2 * int64_t{sizeof(float)});
  state.SetLabel(std::string(cell_name(g.cell)) + (state.range(3) ? " ldigo" : " ldgoi"));
}
BENCHMARK(BM_ConverterOnnxToOnednnWeights)
    ->ArgNames({"cell", "H", "I", "ldigo"})
    ->Args({0, 128, 64, 0})
    ->Args({0, 512, 256, 0})
    ->Args({0, 512, 256, 1})
    ->Args({0, 1024, 1024, 0})
    ->Args({0, 1024, 1024, 1})
    ->Args({1, 512, 256, 0})
    ->Args({2, 512, 256, 0});

void BM_ConverterOnnxToOnednnBias(benchmark::State& state) {
  OnednnRnnGeometry g;
  g.cell = cell_of(state.range(0));
  g.linear_before_reset = g.cell == RnnCell::kGru;
  g.hidden = state.range(1);
  g.input_size = g.hidden;
  const int64_t nb = 2 * g.gates() * g.hidden;
  std::vector<float> b(static_cast<size_t>(nb), 0.1f), out(static_cast<size_t>(g.bias_size()));
  for (auto _ : state) {
    Status s = onnx_to_onednn_bias(g, b.data(), out.data());
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * (nb + g.bias_size()) * int64_t{sizeof(float)});
  state.SetLabel(cell_name(g.cell));
}
BENCHMARK(BM_ConverterOnnxToOnednnBias)->ArgNames({"cell", "H"})->Args({0, 1024})->Args({1, 1024});

CudnnRnnGeometry cudnn_geometry(const benchmark::State& state) {
  CudnnRnnGeometry g;
  g.cell = cell_of(state.range(0));
  g.hidden_size = state.range(1);
  g.input_size = state.range(2);
  g.directions = state.range(3);
  g.num_layers = 1;
  return g;
}

// Building the copy plan from a weight map (done once per node at compile time).
void BM_ConverterCudnnCopyPlan(benchmark::State& state) {
  const CudnnRnnGeometry g = cudnn_geometry(state);
  const CudnnWeightMap map = canonical_cudnn_weight_map(g);
  int64_t copies = 0;
  for (auto _ : state) {
    auto plan = plan_onnx_to_cudnn(map);
    if (!plan.ok()) {
      state.SkipWithError(plan.status().message().c_str());
      break;
    }
    copies = static_cast<int64_t>(plan->copies.size());
    benchmark::DoNotOptimize(plan->copies.data());
  }
  state.counters["copies"] = static_cast<double>(copies);
  state.counters["plans/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(cell_name(g.cell));
}
BENCHMARK(BM_ConverterCudnnCopyPlan)
    ->ArgNames({"cell", "H", "I", "D"})
    ->Args({0, 512, 256, 1})
    ->Args({0, 512, 256, 2})
    ->Args({1, 512, 256, 1});

// Applying the plan on the host: ONNX W, R, B into a zeroed weight space.
void BM_ConverterCudnnApplyPlan(benchmark::State& state) {
  const CudnnRnnGeometry g = cudnn_geometry(state);
  auto plan = plan_onnx_to_cudnn(canonical_cudnn_weight_map(g));
  if (!plan.ok()) {
    state.SkipWithError(plan.status().message().c_str());
    return;
  }
  std::vector<float> w(static_cast<size_t>(plan->w_elems()), 0.5f);
  std::vector<float> r(static_cast<size_t>(plan->r_elems()), 0.25f);
  std::vector<float> b(static_cast<size_t>(plan->b_elems()), 0.1f);
  std::vector<float> space(static_cast<size_t>(plan->weight_space_elems));
  for (auto _ : state) {
    Status s = apply_onnx_to_cudnn(*plan, sizeof(float), w.data(), r.data(), b.data(), space.data(),
                                   space.size() * sizeof(float));
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(space.data());
    benchmark::ClobberMemory();
  }
  // Zeroing the space, then reading and writing every ONNX element once.
  const int64_t moved =
      plan->weight_space_elems + 2 * (plan->w_elems() + plan->r_elems() + plan->b_elems());
  state.SetBytesProcessed(state.iterations() * moved * int64_t{sizeof(float)});
  state.SetLabel(cell_name(g.cell));
}
BENCHMARK(BM_ConverterCudnnApplyPlan)
    ->ArgNames({"cell", "H", "I", "D"})
    ->Args({0, 128, 64, 1})
    ->Args({0, 512, 256, 1})
    ->Args({0, 1024, 1024, 1})
    ->Args({1, 512, 256, 2});

}  // namespace
}  // namespace recur
