// ONNX RNN weights to oneDNN's RNN layouts and back. Pure functions with no oneDNN dependency.
//
// oneDNN's RNN primitives (one layer, D directions, G gates, hidden size H) take:
//   weights_layer {1, D, I, G, H} and weights_iter {1, D, H, G, H}, in format ldgoi (memory
//     order l,d,g,o,i: ONNX's own W/R order, up to the gate blocks) or ldigo (l,d,i,g,o);
//   bias {1, D, Gb, H} (ldgo), the sum of ONNX's Wb and Rb per gate; LBR-GRU has Gb = 4;
//   weights_peephole {1, D, 3, H} (ldgo), LSTM only, gates i,f,o.
// Gate orders: LSTM ONNX i,o,f,c -> oneDNN i,f,c,o; GRU z,r,h -> u,r,o (one to one); RNN one.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur {

enum class OnednnWeightsFormat { kLdgoi, kLdigo };

struct OnednnRnnGeometry {
  RnnCell cell = RnnCell::kLstm;
  bool linear_before_reset = false;  // GRU: the 4-gate LBR bias
  bool input_forget = false;         // LSTM: f = 1 - i, expressed by negating the i blocks
  int64_t directions = 1;            // D
  int64_t input_size = 0;            // I
  int64_t hidden = 0;                // H

  static OnednnRnnGeometry of(const RnnSpec& spec, int64_t input_size, int64_t hidden);

  int64_t gates() const { return cell == RnnCell::kLstm ? 4 : cell == RnnCell::kGru ? 3 : 1; }
  int64_t bias_gates() const { return cell == RnnCell::kGru && linear_before_reset ? 4 : gates(); }
  // Element counts of the oneDNN buffers; `in` is I for weights_layer and H for weights_iter.
  int64_t weights_size(int64_t in) const { return directions * gates() * hidden * in; }
  int64_t bias_size() const { return directions * bias_gates() * hidden; }
  int64_t peephole_size() const { return directions * 3 * hidden; }
};

// For each oneDNN gate g, the ONNX gate block it takes: LSTM {i,f,c,o} <- ONNX {0,2,3,1}.
std::span<const int> onednn_gate_to_onnx(RnnCell cell);
// oneDNN peephole gates {i,f,o} <- ONNX P blocks {0,2,1}.
inline constexpr std::array<int, 3> kOnednnPeepholeToOnnx = {0, 2, 1};

// W [D, G*H, I] (in = I) or R [D, G*H, H] (in = H) into oneDNN's gate order and `format`.
// With input_forget the forget gate gets the negated input-gate block: f = 1 - sigmoid(a) =
// sigmoid(-a), exact without clip. `out` holds weights_size(in) elements. With
// discard_source, `onnx` is read for the last time and its pages go back to the kernel as
// they are read (discard_pages): only for memory the caller frees next and no one else reads.
Status onnx_to_onednn_weights(const OnednnRnnGeometry& g, const float* onnx, int64_t in,
                              OnednnWeightsFormat format, float* out, bool discard_source = false);
// For a packer that writes ldigo straight from its own layout: where one direction's ldigo
// ([in][G*H]) takes each row s of the ONNX matrix ([G*H][in]), at column rows[s] of each of its
// `in` rows; -1 for a block oneDNN derives instead (LSTM's f under input_forget), which
// derive_ldigo_blocks then fills. The same values as onnx_to_onednn_weights' kLdigo.
std::vector<int64_t> onnx_rows_in_ldigo(const OnednnRnnGeometry& g);
void derive_ldigo_blocks(const OnednnRnnGeometry& g, int64_t in, float* ldigo);

// B [D, 2*G*H] (null: zeros) into oneDNN's combined bias, bias_size() elements.
Status onnx_to_onednn_bias(const OnednnRnnGeometry& g, const float* onnx_b, float* out);
// P [D, 3*H] (null: zeros) into oneDNN's peephole order, peephole_size() elements.
Status onnx_to_onednn_peephole(const OnednnRnnGeometry& g, const float* onnx_p, float* out);

// The inverses. ONNX gates that oneDNN derives (LSTM f under input_forget) come back as the
// derived block (-i). The combined bias cannot be split: it comes back in Wb with Rb zero,
// except LBR-GRU's fourth gate, which is Rb of h. The result computes the same function.
Status onednn_to_onnx_weights(const OnednnRnnGeometry& g, const float* onednn, int64_t in,
                              OnednnWeightsFormat format, float* onnx);
Status onednn_to_onnx_bias(const OnednnRnnGeometry& g, const float* onednn_b, float* onnx_b);
Status onednn_to_onnx_peephole(const OnednnRnnGeometry& g, const float* onednn_p, float* onnx_p);

}  // namespace recur
