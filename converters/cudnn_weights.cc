#include "converters/cudnn_weights.h"

#include <algorithm>
#include <cstring>

#include "runtime/core/checked_math.h"

namespace recur {

namespace {

std::string block_name(int pseudo_layer, int lin_layer, const char* what) {
  return std::string(what) + " (pseudoLayer " + std::to_string(pseudo_layer) + ", linLayerID " +
         std::to_string(lin_layer) + ")";
}

}  // namespace

std::string CudnnRnnGeometry::to_string() const {
  const char* c = cell == RnnCell::kLstm ? "LSTM" : cell == RnnCell::kGru ? "GRU" : "RNN";
  return std::string(c) + " I=" + std::to_string(input_size) + " H=" + std::to_string(hidden_size) +
         " D=" + std::to_string(directions) + (bias ? " DOUBLE_BIAS" : " NO_BIAS") +
         (num_layers != 1 ? " layers=" + std::to_string(num_layers) : std::string());
}

CudnnWeightMap::CudnnWeightMap(const CudnnRnnGeometry& geometry, int64_t weight_space_elems)
    : geometry_(geometry), weight_space_elems_(weight_space_elems) {
  const size_t n = static_cast<size_t>(geometry.pseudo_layers() * geometry.lin_layers());
  matrices_.assign(n, CudnnParamBlock{});
  biases_.assign(n, CudnnParamBlock{});
}

size_t CudnnWeightMap::index(int pseudo_layer, int lin_layer) const {
  return static_cast<size_t>(pseudo_layer * geometry_.lin_layers() + lin_layer);
}

void CudnnWeightMap::set(int pseudo_layer, int lin_layer, CudnnParamBlock matrix,
                         CudnnParamBlock bias) {
  matrices_.at(index(pseudo_layer, lin_layer)) = matrix;
  biases_.at(index(pseudo_layer, lin_layer)) = bias;
}

const CudnnParamBlock& CudnnWeightMap::matrix(int pseudo_layer, int lin_layer) const {
  return matrices_.at(index(pseudo_layer, lin_layer));
}

const CudnnParamBlock& CudnnWeightMap::bias(int pseudo_layer, int lin_layer) const {
  return biases_.at(index(pseudo_layer, lin_layer));
}

Status CudnnWeightMap::validate() const {
  const CudnnRnnGeometry& g = geometry_;
  const int64_t H = g.hidden_size, I = g.input_size;
  if (H <= 0 || I <= 0 || (g.directions != 1 && g.directions != 2) || g.num_layers < 1) {
    return internal_error("cuDNN weight map: bad geometry " + g.to_string());
  }
  // Offsets are sums of products of these; a later layer reads D * H inputs.
  if (!checked_product(
          {g.num_layers, g.directions, 2 * g.gates(), H, g.directions, std::max(H, I), 8})) {
    return internal_error("cuDNN weight map: sizes overflow 64 bits for " + g.to_string());
  }
  if (matrices_.size() != static_cast<size_t>(g.pseudo_layers() * g.lin_layers())) {
    return internal_error("cuDNN weight map: not built for " + g.to_string());
  }
  struct Range {
    int64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  auto check = [&](const CudnnParamBlock& b, int64_t rows, int64_t cols,
                   const std::string& name) -> Status {
    if (!b.present()) return internal_error("cuDNN weight map: " + name + " is missing");
    if (b.rows != rows || b.cols != cols) {
      return internal_error("cuDNN weight map: " + name + " is " + std::to_string(b.rows) + "x" +
                            std::to_string(b.cols) + ", expected " + std::to_string(rows) + "x" +
                            std::to_string(cols) + " for " + g.to_string());
    }
    if (b.offset + b.numel() > weight_space_elems_) {
      return internal_error("cuDNN weight map: " + name + " at offset " + std::to_string(b.offset) +
                            " ends past the weight space (" + std::to_string(weight_space_elems_) +
                            " elements)");
    }
    ranges.push_back({b.offset, b.offset + b.numel(), name});
    return ok_status();
  };
  const int half = g.gates();
  for (int p = 0; p < g.pseudo_layers(); ++p) {
    for (int id = 0; id < g.lin_layers(); ++id) {
      const int64_t cols = id < half ? g.layer_input_size(p / g.directions) : H;
      RECUR_RETURN_IF_ERROR(check(matrix(p, id), H, cols, block_name(p, id, "matrix")));
      if (g.bias) {
        RECUR_RETURN_IF_ERROR(check(bias(p, id), H, 1, block_name(p, id, "bias")));
      } else if (bias(p, id).present()) {
        return internal_error("cuDNN weight map: " + block_name(p, id, "bias") +
                              " is present in NO_BIAS mode");
      }
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end) {
      return internal_error("cuDNN weight map: " + ranges[i - 1].name + " overlaps " +
                            ranges[i].name);
    }
  }
  return ok_status();
}

CudnnWeightMap canonical_cudnn_weight_map(const CudnnRnnGeometry& g) {
  const int64_t H = g.hidden_size;
  const int half = g.gates();
  int64_t total = 0;
  for (int p = 0; p < g.pseudo_layers(); ++p) {
    total += half * H * g.layer_input_size(p / g.directions) + half * H * H +
             (g.bias ? g.lin_layers() * H : 0);
  }
  CudnnWeightMap map(g, total);
  // Every pseudo-layer's matrices first, then every pseudo-layer's biases: what
  // cudnnGetRNNWeightParams reported on an H200 with cuDNN 9.19 (docs/gpu-results.md).
  std::vector<std::vector<CudnnParamBlock>> mats(static_cast<size_t>(g.pseudo_layers()));
  int64_t offset = 0;
  for (int p = 0; p < g.pseudo_layers(); ++p) {
    const int64_t I = g.layer_input_size(p / g.directions);
    for (int id = 0; id < g.lin_layers(); ++id) {
      const int64_t cols = id < half ? I : H;
      mats[static_cast<size_t>(p)].push_back({offset, H, cols});
      offset += H * cols;
    }
  }
  for (int p = 0; p < g.pseudo_layers(); ++p) {
    for (int id = 0; id < g.lin_layers(); ++id) {
      CudnnParamBlock bias;
      if (g.bias) {
        bias = {offset, H, 1};
        offset += H;
      }
      map.set(p, id, mats[static_cast<size_t>(p)][static_cast<size_t>(id)], bias);
    }
  }
  return map;
}

CudnnLinLayerIds cudnn_lin_layer_ids(RnnCell cell, int onnx_gate) {
  switch (cell) {
    case RnnCell::kLstm: {
      // ONNX i,o,f,c; cuDNN 0=i, 1=f, 2=c~, 3=o.
      static constexpr int kIds[4] = {0, 3, 1, 2};
      return {kIds[onnx_gate], kIds[onnx_gate] + 4};
    }
    case RnnCell::kGru: {
      // ONNX z,r,h; cuDNN 0=r, 1=z (update), 2=h~.
      static constexpr int kIds[3] = {1, 0, 2};
      return {kIds[onnx_gate], kIds[onnx_gate] + 3};
    }
    case RnnCell::kRnn:
      return {0, 1};
  }
  return {};
}

int64_t CudnnWeightPlan::w_elems() const {
  return geometry.directions * geometry.gates() * geometry.hidden_size * geometry.input_size;
}
int64_t CudnnWeightPlan::r_elems() const {
  return geometry.directions * geometry.gates() * geometry.hidden_size * geometry.hidden_size;
}
int64_t CudnnWeightPlan::b_elems() const {
  return geometry.directions * 2 * geometry.gates() * geometry.hidden_size;
}

Result<CudnnWeightPlan> plan_onnx_to_cudnn(const CudnnWeightMap& map) {
  RECUR_RETURN_IF_ERROR(map.validate());
  const CudnnRnnGeometry& g = map.geometry();
  const int64_t H = g.hidden_size, G = g.gates();
  CudnnWeightPlan plan;
  plan.geometry = g;
  plan.weight_space_elems = map.weight_space_elems();
  using T = CudnnWeightCopy::Source;
  for (int l = 0; l < g.num_layers; ++l) {
    const int64_t I = g.layer_input_size(l);
    for (int d = 0; d < g.directions; ++d) {
      const int p = static_cast<int>(l * g.directions + d);
      for (int gate = 0; gate < G; ++gate) {
        const CudnnLinLayerIds ids = cudnn_lin_layer_ids(g.cell, gate);
        // W[d, gate*H:(gate+1)*H, :] and R[d, gate*H:(gate+1)*H, :] are contiguous H x I and
        // H x H row-major blocks, the layout cuDNN uses for each linLayer matrix.
        plan.copies.push_back(
            {T::kW, (d * G + gate) * H * I, map.matrix(p, ids.input).offset, H * I, l});
        plan.copies.push_back(
            {T::kR, (d * G + gate) * H * H, map.matrix(p, ids.recurrent).offset, H * H, l});
        if (g.bias) {
          // B[d] = [Wb gates..., Rb gates...]; Wb goes with the input id, Rb with the
          // recurrent.
          plan.copies.push_back(
              {T::kB, d * 2 * G * H + gate * H, map.bias(p, ids.input).offset, H, l});
          plan.copies.push_back(
              {T::kB, d * 2 * G * H + (G + gate) * H, map.bias(p, ids.recurrent).offset, H, l});
        }
      }
    }
  }
  return plan;
}

namespace {

Status check_space(const CudnnWeightPlan& plan, size_t elem_size, size_t weight_space_bytes) {
  if (elem_size == 0) return internal_error("cuDNN weight plan: element size 0");
  if (weight_space_bytes < static_cast<size_t>(plan.weight_space_elems) * elem_size) {
    return internal_error("cuDNN weight plan: the weight space has " +
                          std::to_string(weight_space_bytes) + " bytes; the plan needs " +
                          std::to_string(static_cast<size_t>(plan.weight_space_elems) * elem_size));
  }
  return ok_status();
}

}  // namespace

Status apply_onnx_to_cudnn_layers(const CudnnWeightPlan& plan, size_t elem_size,
                                  const std::vector<const void*>& w,
                                  const std::vector<const void*>& r,
                                  const std::vector<const void*>& b, void* weight_space,
                                  size_t weight_space_bytes) {
  RECUR_RETURN_IF_ERROR(check_space(plan, elem_size, weight_space_bytes));
  const size_t L = static_cast<size_t>(plan.geometry.num_layers);
  if (w.size() != L || r.size() != L || b.size() != L) {
    return internal_error("cuDNN weight plan: one W, R and B per layer are required");
  }
  for (size_t l = 0; l < L; ++l) {
    if (!w[l] || !r[l]) return internal_error("cuDNN weight plan: W and R are required");
  }
  std::memset(weight_space, 0, weight_space_bytes);
  auto* dst = static_cast<char*>(weight_space);
  for (const CudnnWeightCopy& c : plan.copies) {
    const size_t l = static_cast<size_t>(c.layer);
    const void* src = c.tensor == CudnnWeightCopy::Source::kW   ? w[l]
                      : c.tensor == CudnnWeightCopy::Source::kR ? r[l]
                                                                : b[l];
    if (!src) continue;  // no B: the biases stay zero
    std::memcpy(dst + static_cast<size_t>(c.cudnn_offset) * elem_size,
                static_cast<const char*>(src) + static_cast<size_t>(c.onnx_offset) * elem_size,
                static_cast<size_t>(c.count) * elem_size);
  }
  return ok_status();
}

Status apply_onnx_to_cudnn(const CudnnWeightPlan& plan, size_t elem_size, const void* w,
                           const void* r, const void* b, void* weight_space,
                           size_t weight_space_bytes) {
  if (plan.geometry.num_layers != 1) {
    return internal_error("cuDNN weight plan: several layers need apply_onnx_to_cudnn_layers");
  }
  return apply_onnx_to_cudnn_layers(plan, elem_size, {w}, {r}, {b}, weight_space,
                                    weight_space_bytes);
}

Status apply_cudnn_to_onnx(const CudnnWeightPlan& plan, size_t elem_size, const void* weight_space,
                           size_t weight_space_bytes, void* w, void* r, void* b) {
  RECUR_RETURN_IF_ERROR(check_space(plan, elem_size, weight_space_bytes));
  if (plan.geometry.num_layers != 1) {
    return internal_error("cuDNN weight plan: apply_cudnn_to_onnx reads one layer");
  }
  if (!w || !r) return internal_error("cuDNN weight plan: W and R are required");
  if (b && !plan.geometry.bias) std::memset(b, 0, static_cast<size_t>(plan.b_elems()) * elem_size);
  const auto* src = static_cast<const char*>(weight_space);
  for (const CudnnWeightCopy& c : plan.copies) {
    void* dst = c.tensor == CudnnWeightCopy::Source::kW   ? w
                : c.tensor == CudnnWeightCopy::Source::kR ? r
                                                          : b;
    if (!dst) continue;
    std::memcpy(static_cast<char*>(dst) + static_cast<size_t>(c.onnx_offset) * elem_size,
                src + static_cast<size_t>(c.cudnn_offset) * elem_size,
                static_cast<size_t>(c.count) * elem_size);
  }
  return ok_status();
}

}  // namespace recur
