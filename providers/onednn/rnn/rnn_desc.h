// The oneDNN memory and primitive descriptors of one RNN primitive: which slice of the batch it
// covers, in which layout, and what it reads and writes (ShapeKey), turned into descriptors.
#pragma once

#include <cstdint>
#include <tuple>

#include <dnnl.hpp>

#include "converters/onednn_weights.h"
#include "providers/onednn/rnn/rnn_common.h"

namespace recur::onednn::rnn {

// kLayout1DenseX: layout 1 with X copied into a dense [T, N, I] buffer by the run
// (RnnKernel::run_mode says when), Y and the states in place.
enum class Mode : uint8_t { kLayout0, kLayout1, kPacked, kLayout1DenseX };

// One primitive: a slice of N rows out of ld_n (the whole batch, which sets the strides) and of
// T steps out of the sequence, one direction, the memory layout, which states are read and written,
// and the implementation (weights format and thread count). Cell, precision and sizes are fixed per
// node.
struct ShapeKey {
  int64_t T = 0, N = 0, I = 0, H = 0, ld_n = 0;
  bool reverse = false;
  Mode mode = Mode::kLayout0;
  bool src_iter = false, dst_iter = false;
  int act_dir = 0;  // whose activations (a bidirectional RNN may have two sets)
  bool any = false;
  int threads = 1;
  // Layout 1's sequence length, which sets its strides, when the primitive runs a block of
  // T steps out of it; 0 when it runs the whole sequence.
  int64_t ld_t = 0;
  auto tie() const {
    return std::tie(T, N, I, H, ld_n, reverse, mode, src_iter, dst_iter, act_dir, any, threads,
                    ld_t);
  }
  bool operator<(const ShapeKey& o) const { return tie() < o.tie(); }
};

// oneDNN 2.6 computes some RNN offsets in 32 bits and divides by the dimensions: a shape
// outside that range makes it crash rather than fail (a declared batch of 2^40 raised SIGFPE
// in primitive creation). Such shapes are refused here, with the reason.
Status check_onednn_rnn_shape(int64_t T, int64_t N, int64_t I, int64_t H, int64_t D, int64_t G);

// The descriptors of primitive `k` of a node with `spec` and `geom`; `peephole` when the LSTM
// has P; `bf16` for the bf16 precision (X, Y, hidden states and weights in bf16).
RnnDescs rnn_descs(const ShapeKey& k, const RnnSpec& spec, const OnednnRnnGeometry& geom,
                   bool peephole, bool bf16 = false);

// The cell's primitive on `threads` threads with a user scratchpad, or only what it would ask
// for when `make_primitive` is false; throws dnnl::error.
RnnPd create_rnn_pd(const RnnSpec& spec, const RnnDescs& d, int dir, bool reverse, int threads,
                    bool make_primitive = true);

}  // namespace recur::onednn::rnn
