#include "providers/onednn/rnn/rnn_desc.h"

#include <limits>
#include <string>

#include "providers/onednn/common/dnnl_util.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn::rnn {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

RECUR_LOAD_PATH Status check_onednn_rnn_shape(int64_t T, int64_t N, int64_t I, int64_t H, int64_t D,
                                              int64_t G) {
  if (T <= 0 || N <= 0 || I <= 0 || H <= 0) {
    return not_implemented(
        "the oneDNN RNN primitives need positive sizes, got T=" + std::to_string(T) +
        " N=" + std::to_string(N) + " I=" + std::to_string(I) + " H=" + std::to_string(H));
  }
  constexpr __int128 kLimit = std::numeric_limits<int32_t>::max();
  const __int128 t = T, n = N, i = I, h = H, d = D, g = G;
  for (const __int128 elems :
       {t * n * i, t * n * d * h, t * n * d * g * h, d * g * h * i, d * g * h * h}) {
    if (elems > kLimit) {
      return not_implemented("T=" + std::to_string(T) + " N=" + std::to_string(N) +
                             " I=" + std::to_string(I) + " H=" + std::to_string(H) +
                             " needs a buffer of more than 2^31 elements, beyond oneDNN's "
                             "32-bit RNN offsets");
    }
  }
  return ok_status();
}

RnnDescs rnn_descs(const ShapeKey& k, const RnnSpec& spec, const OnednnRnnGeometry& geom,
                   bool peephole, bool bf16) {
  const int64_t T = k.T, N = k.N, I = k.I, H = k.H, Dn = spec.num_directions(), L = k.ld_n;
  const int64_t G = geom.gates(), Gb = geom.bias_gates();
  // oneDNN 2.6's bf16 RNNs take src_layer, dst_layer, the hidden states and the weights in
  // bf16 only (an f32 dst_layer or h state is declined); the cell state and the bias may stay
  // f32. The bf16 buffers mirror the f32 tensors' layouts, so the strides are the same.
  const DT io = bf16 ? DT::bf16 : DT::f32;
  RnnDescs d;
  memory::desc state, state_c;
  switch (k.mode) {
    case Mode::kLayout0:  // X [T, L, I], Y [T, D, L, H], states [D, L, H]
      d.src_layer = memory::desc({T, N, I}, io, memory::dims{L * I, I, 1});
      d.dst_layer = memory::desc({T, N, H}, io, memory::dims{Dn * L * H, H, 1});
      state = memory::desc({1, 1, N, H}, io, memory::dims{Dn * L * H, L * H, H, 1});
      state_c = memory::desc({1, 1, N, H}, DT::f32, memory::dims{Dn * L * H, L * H, H, 1});
      break;
    case Mode::kLayout1: {  // X [L, LT, I], Y [L, LT, D, H], states [L, D, H]
      // A primitive over one row or one step gets the strides of layout 0 for that dimension
      // of size 1 (the bytes are the same): oneDNN 2.6 projects the input of all steps in one
      // GEMM only when src_layer is dense in tnc, and otherwise does a GEMM a step, which made
      // an LSTM of H=256 over one row of 100 steps 1.7-2.6x slower than in layout 0.
      const int64_t LT = k.ld_t > 0 ? k.ld_t : T;
      const int64_t xn = N == 1 ? I : LT * I, yn = N == 1 ? H : LT * Dn * H;
      d.src_layer = memory::desc({T, N, I}, io, memory::dims{T == 1 ? N * I : I, xn, 1});
      d.dst_layer = memory::desc({T, N, H}, io, memory::dims{T == 1 ? N * Dn * H : Dn * H, yn, 1});
      state = memory::desc({1, 1, N, H}, io, memory::dims{L * Dn * H, H, Dn * H, 1});
      state_c = memory::desc({1, 1, N, H}, DT::f32, memory::dims{L * Dn * H, H, Dn * H, 1});
      break;
    }
    case Mode::kLayout1DenseX: {  // X [T, L, I] (the run's copy), Y [L, LT, D, H], states [L, D, H]
      const int64_t LT = k.ld_t > 0 ? k.ld_t : T;
      d.src_layer = memory::desc({T, N, I}, io, memory::dims{L * I, I, 1});
      d.dst_layer = memory::desc({T, N, H}, io, memory::dims{Dn * H, LT * Dn * H, 1});
      state = memory::desc({1, 1, N, H}, io, memory::dims{L * Dn * H, H, Dn * H, 1});
      state_c = memory::desc({1, 1, N, H}, DT::f32, memory::dims{L * Dn * H, H, Dn * H, 1});
      break;
    }
    case Mode::kPacked:
      d.src_layer = memory::desc({T, N, I}, io, Tag::tnc);
      d.dst_layer = memory::desc({T, N, H}, io, Tag::tnc);
      state = memory::desc({1, 1, N, H}, io, Tag::ldnc);
      state_c = memory::desc({1, 1, N, H}, DT::f32, Tag::ldnc);
      break;
  }
  const bool lstm = spec.cell == RnnCell::kLstm;
  if (k.src_iter) {
    d.src_iter = state;
    if (lstm) d.src_iter_c = state_c;
  }
  if (k.dst_iter) {
    d.dst_iter = state;
    if (lstm) d.dst_iter_c = state_c;
  }
  const Tag wtag = k.any ? Tag::any : Tag::ldigo;
  d.weights_layer = memory::desc({1, 1, I, G, H}, io, wtag);
  d.weights_iter = memory::desc({1, 1, H, G, H}, io, wtag);
  d.bias = memory::desc({1, 1, Gb, H}, DT::f32, Tag::ldgo);
  if (peephole) d.weights_peephole = memory::desc({1, 1, 3, H}, DT::f32, Tag::ldgo);
  return d;
}

RnnPd create_rnn_pd(const RnnSpec& spec, const RnnDescs& d, int dir, bool reverse, int threads,
                    bool make_primitive) {
  ThreadScope scope(threads);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto direction = reverse ? dnnl::rnn_direction::unidirectional_right2left
                                 : dnnl::rnn_direction::unidirectional_left2right;
  switch (spec.cell) {
    case RnnCell::kLstm:
      return create_lstm_pd(spec, dir, d, direction, attr, make_primitive);
    case RnnCell::kGru:
      return create_gru_pd(spec, dir, d, direction, attr, make_primitive);
    case RnnCell::kRnn:
      break;
  }
  return create_vanilla_pd(spec, dir, d, direction, attr, make_primitive);
}

}  // namespace recur::onednn::rnn
