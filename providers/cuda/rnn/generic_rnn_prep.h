// Host-side preparation for the cuda-generic RNN: the cell parameters from the ONNX
// attributes, and constant weights in the compute type. No CUDA types: the CPU tests use it.
#pragma once

#include <vector>

#include "providers/cuda/rnn/generic_cell.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::cuda {

// Cell, direction, layout, clip, input_forget, linear_before_reset and the activations with
// their alpha/beta; the sizes (T, N, H, D) are left for the run.
cell::CellParams generic_cell_params(const RnnSpec& spec);

// The values of a float16, float32 or float64 tensor in the compute type C.
template <class C>
std::vector<C> values_as(const Tensor& t);

// B [D][2*G*H] packed as cell::pack_bias_element does: bias [D][G*H] and rbh [D][H] (empty
// unless a GRU has linear_before_reset=1).
template <class C>
void pack_bias_host(const cell::CellParams& p, const Tensor& b, std::vector<C>* bias,
                    std::vector<C>* rbh);

}  // namespace recur::cuda
