// How one ONNX RNN call maps onto one cudnnRNNForward call and the glue around it: decided
// on the host from the attributes, the run's sizes and its sequence lengths, and carried out
// through a backend. The CUDA kernel's backend uses cuDNN and small CUDA kernels; the CPU
// tests use loops and a model of cuDNN's documented equations, so the orchestration is
// tested on machines without a GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "converters/cudnn_weights.h"
#include "providers/cuda/cuda_options.h"
#include "recur/dtype.h"
#include "runtime/core/status.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::cuda {

struct CudnnRunPlan {
  RnnCell cell = RnnCell::kLstm;
  int layout = 0;  // ONNX layout: 0 -> cuDNN SEQ_MAJOR_UNPACKED, 1 -> BATCH_MAJOR_UNPACKED
  int64_t T = 0, N = 0, I = 0, H = 0, D = 1;
  int64_t L = 1;  // layers (a fused recur::StackedRNN): states are [L*D,N,H], layout 0 only
  // direction=reverse: X is reversed within each length into scratch, cuDNN runs forward, and
  // Y is un-reversed. Y_h/Y_c need nothing: the last step cuDNN runs is ONNX's step 0.
  bool reverse = false;
  // layout 0 with D=2: cuDNN's y is [T,N,2,H]; ONNX wants [T,2,N,H].
  bool bidir_reorder = false;
  // layout 1 with D>1 and N>1: ONNX states are [N,D,H]; cuDNN's are [D,N,H].
  bool transpose_states = false;
  // cuDNN writes y into scratch (reverse, reorder, or Y not requested: cuDNN always writes y).
  bool y_to_scratch = false;
  bool full_lengths = true;            // every length is T (no sequence_lens, or all T)
  std::vector<int32_t> lengths;        // per batch, as given (0..T)
  std::vector<int32_t> cudnn_lengths;  // what cuDNN is told: a length of 0 runs as 1
  std::vector<int32_t> zero_batches;   // batches of length 0: their outputs are zeroed after
  bool want_y = false, want_yh = false, want_yc = false;

  int64_t x_elems() const { return T * N * I; }
  int64_t y_elems() const { return T * N * D * H; }
  int64_t state_elems() const { return L * D * N * H; }
};

// cuDNN's persistent RNN algorithms, named without cuDNN's types so that the CPU tests see the
// choice.
enum class PersistentAlgo { kStaticSmallH, kStatic, kDynamic };

// What the choice of algorithm depends on in the device: all zero where it cannot say.
struct GpuTraits {
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  // What cuda-generic's grid kernel needs of it (grid_shape in generic_rnn_plan.h).
  int64_t shared_memory_optin = 0;  // bytes of shared memory a block may have
  bool cooperative_launch = false;
};

// The device's traits; all zero where it cannot be asked (no device, no driver).
GpuTraits read_gpu_traits(int device);

// The persistent algorithms to try, in order, for a batch of N with every length full and
// constant weights; STANDARD comes after them all, and is all that is left when the list is
// empty. cudnn.persistent=1 tries every one cuDNN might take; auto (the default) only where
// one is known to be faster than STANDARD and as accurate: the small-hidden-size kernel for
// LSTM and GRU with H <= 192, and PERSIST_STATIC for one float16 unidirectional layer
// with H <= 1024, H and I multiples of 128, on a GPU of compute capability 8.0 or above with 98
// or more multiprocessors (not x.6), LSTM and RNN at N a multiple of 8 up to 128 (RNN not at
// N >= 96 with H >= 896), never GRU. These are shapes where PyTorch takes them too (it also
// takes the small-H kernel for RNN up to H = 384, which recur does not: docs/gpu-results.md).
std::vector<PersistentAlgo> persistent_candidates(const CudnnRnnGeometry& g, DType dtype, int64_t N,
                                                  CudaOptions::Persistent mode,
                                                  const GpuTraits& gpu);

// `lengths` is the host copy of sequence_lens (N values in [0, T]) or null.
CudnnRunPlan plan_cudnn_run(const RnnSpec& spec, const RnnDims& dims, const int32_t* lengths,
                            bool want_y, bool want_yh, bool want_yc);

// Pointers in the backend's memory (device memory for CUDA); null where absent.
struct CudnnRunBuffers {
  const void* x = nullptr;   // ONNX X
  const void* h0 = nullptr;  // ONNX initial_h
  const void* c0 = nullptr;  // ONNX initial_c
  void* y = nullptr;         // ONNX Y, when requested
  void* yh = nullptr;        // ONNX Y_h
  void* yc = nullptr;        // ONNX Y_c
};

// cuDNN's view of one call: x/y in its layout ([T,N,V] or [N,T,V] with V = I or D*H),
// states [D,N,H].
struct CudnnForwardArgs {
  const void* x = nullptr;
  void* y = nullptr;
  const void* hx = nullptr;
  const void* cx = nullptr;
  void* hy = nullptr;
  void* cy = nullptr;
};

class CudnnRunBackend {
 public:
  virtual ~CudnnRunBackend() = default;
  // Scratch memory for `elems` elements, alive until the backend is destroyed.
  virtual Result<void*> scratch(int64_t elems) = 0;
  // dst[t,n,:] = src[len_n-1-t, n, :] for t < len_n (plan.lengths after 0 -> 1), else 0;
  // rows of V elements in the plan's layout.
  virtual Status reverse_sequences(const void* src, void* dst, int64_t V,
                                   const CudnnRunPlan& plan) = 0;
  // [T,N,2,H] -> [T,2,N,H].
  virtual Status bidir_to_onnx(const void* src, void* dst, const CudnnRunPlan& plan) = 0;
  // [A,B,H] -> [B,A,H].
  virtual Status transpose_states(const void* src, void* dst, int64_t A, int64_t B, int64_t H) = 0;
  // Zeroes ONNX Y at every step t >= plan.lengths[n].
  virtual Status mask_y(void* y, const CudnnRunPlan& plan) = 0;
  // Zeroes `count` elements at element offset `offset`.
  virtual Status zero(void* dst, int64_t offset, int64_t count) = 0;
  virtual Status forward(const CudnnForwardArgs& args, const CudnnRunPlan& plan) = 0;
};

Status execute_cudnn_run(const CudnnRunPlan& plan, const CudnnRunBuffers& buffers,
                         CudnnRunBackend& backend);

}  // namespace recur::cuda
