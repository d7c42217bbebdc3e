// ONNX RNN weights (W, R, B) to and from a cuDNN weight space. Pure C++: the map of
// (pseudoLayer, linLayerID) to offsets comes from cudnnGetRNNWeightParams on a GPU, and from
// cuDNN's canonical order (canonical_cudnn_weight_map) in CPU tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur {

// One block of a cuDNN weight space: a matrix (rows x cols, row-major) or a bias (rows x 1).
// Offsets and sizes count elements, not bytes.
struct CudnnParamBlock {
  int64_t offset = -1;  // -1: absent (the biases of a NO_BIAS RNN)
  int64_t rows = 0;
  int64_t cols = 0;
  bool present() const { return offset >= 0; }
  int64_t numel() const { return rows * cols; }
  bool operator==(const CudnnParamBlock&) const = default;
};

// The RNN a weight space describes. recur uses projSize = hiddenSize, so pseudoLayer is
// layer * directions + direction (0 forward, 1 backward). Layer 0 reads the input (I); every
// later layer reads the previous layer's output (directions * H).
struct CudnnRnnGeometry {
  RnnCell cell = RnnCell::kLstm;
  int64_t input_size = 0;   // I
  int64_t hidden_size = 0;  // H
  int64_t directions = 1;   // 1 or 2
  bool bias = true;         // CUDNN_RNN_DOUBLE_BIAS; false is CUDNN_RNN_NO_BIAS
  int64_t num_layers = 1;   // > 1 for a fused recur::StackedRNN

  int gates() const { return cell == RnnCell::kLstm ? 4 : cell == RnnCell::kGru ? 3 : 1; }
  // linLayerIDs per pseudo-layer: LSTM 8, GRU 6, RNN 2 (input ones, then recurrent ones).
  int lin_layers() const { return 2 * gates(); }
  int pseudo_layers() const { return static_cast<int>(num_layers * directions); }
  int64_t layer_input_size(int64_t layer) const {
    return layer == 0 ? input_size : directions * hidden_size;
  }
  std::string to_string() const;
  bool operator==(const CudnnRnnGeometry&) const = default;
};

// (pseudoLayer, linLayerID) -> the matrix and bias blocks of one weight space.
class CudnnWeightMap {
 public:
  CudnnWeightMap() = default;
  CudnnWeightMap(const CudnnRnnGeometry& geometry, int64_t weight_space_elems);

  const CudnnRnnGeometry& geometry() const { return geometry_; }
  int64_t weight_space_elems() const { return weight_space_elems_; }
  void set(int pseudo_layer, int lin_layer, CudnnParamBlock matrix, CudnnParamBlock bias);
  const CudnnParamBlock& matrix(int pseudo_layer, int lin_layer) const;
  const CudnnParamBlock& bias(int pseudo_layer, int lin_layer) const;
  // Every block has the shape the geometry implies (H x I for input matrices, H x H for
  // recurrent ones, H x 1 for biases, no bias in NO_BIAS mode), lies inside the weight space,
  // and overlaps no other block.
  Status validate() const;
  bool operator==(const CudnnWeightMap&) const = default;

 private:
  size_t index(int pseudo_layer, int lin_layer) const;
  CudnnRnnGeometry geometry_;
  int64_t weight_space_elems_ = 0;
  std::vector<CudnnParamBlock> matrices_;
  std::vector<CudnnParamBlock> biases_;
};

// cuDNN's canonical weight-space order: the matrices of pseudo-layer 0 (linLayerID 0, 1, ...),
// then those of pseudo-layer 1, and so on; then the biases, pseudo-layer by pseudo-layer in the
// same order; packed without gaps. With one pseudo-layer that is matrices then biases; with
// more, no bias comes before the last matrix. The provider never relies on it (it asks
// cudnnGetRNNWeightParams); the CPU model of cuDNN does, and the GPU test compares the two.
CudnnWeightMap canonical_cudnn_weight_map(const CudnnRnnGeometry& geometry);

// The cuDNN linLayerIDs of ONNX gate `onnx_gate` (ONNX order: LSTM i,o,f,c; GRU z,r,h; RNN
// one gate): `input` for the W block and its Wb bias, `recurrent` for R and Rb.
// LSTM i,o,f,c -> W {0,3,1,2}, R {4,7,5,6}; GRU z,r,h -> W {1,0,2}, R {4,3,5}; RNN W 0, R 1.
struct CudnnLinLayerIds {
  int input = 0;
  int recurrent = 0;
};
CudnnLinLayerIds cudnn_lin_layer_ids(RnnCell cell, int onnx_gate);

// One contiguous block copy between an ONNX tensor and the weight space.
struct CudnnWeightCopy {
  enum class Source { kW, kR, kB };
  Source tensor = Source::kW;
  int64_t onnx_offset = 0;   // elements into W [D,G*H,I], R [D,G*H,H] or B [D,2*G*H]
  int64_t cudnn_offset = 0;  // elements into the weight space
  int64_t count = 0;         // elements
  int layer = 0;             // whose W, R or B (a StackedRNN has one of each per layer)
  bool operator==(const CudnnWeightCopy&) const = default;
};

// The copies that move ONNX W, R and (if the geometry has biases) B into a weight space laid
// out by `map`. Everything not covered by a copy must be zero (zero the weight space first).
struct CudnnWeightPlan {
  CudnnRnnGeometry geometry;
  int64_t weight_space_elems = 0;
  std::vector<CudnnWeightCopy> copies;

  int64_t w_elems() const;  // D*G*H*I
  int64_t r_elems() const;  // D*G*H*H
  int64_t b_elems() const;  // D*2*G*H
};
Result<CudnnWeightPlan> plan_onnx_to_cudnn(const CudnnWeightMap& map);

// Host-side application of a plan; elements are `elem_size` bytes and are copied, not
// converted. apply_onnx_to_cudnn zeroes the weight space first; `b` may be null (zero biases).
Status apply_onnx_to_cudnn(const CudnnWeightPlan& plan, size_t elem_size, const void* w,
                           const void* r, const void* b, void* weight_space,
                           size_t weight_space_bytes);
// The same for several layers: w[l], r[l], b[l] are layer l's tensors (b[l] may be null).
Status apply_onnx_to_cudnn_layers(const CudnnWeightPlan& plan, size_t elem_size,
                                  const std::vector<const void*>& w,
                                  const std::vector<const void*>& r,
                                  const std::vector<const void*>& b, void* weight_space,
                                  size_t weight_space_bytes);
// The inverse: the ONNX W, R and B a weight space holds (B is skipped when null). This brings
// weights trained with cuDNN (PyTorch, Keras CuDNNLSTM) into ONNX, and makes round trips
// testable.
Status apply_cudnn_to_onnx(const CudnnWeightPlan& plan, size_t elem_size, const void* weight_space,
                           size_t weight_space_bytes, void* w, void* r, void* b);

}  // namespace recur
