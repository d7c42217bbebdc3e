// The cuDNN RNN kernel: ONNX LSTM, GRU and RNN (and the fused recur::StackedRNN) on
// cudnnRNNForward. Compiling (cudnn_rnn.cc) prepares descriptors, the weight space and, for a
// static X shape, the per-shape plan; running (cudnn_rnn_run.cc) makes only the calls that
// depend on the run's sequence lengths.
#pragma once

#include <atomic>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "converters/cudnn_weights.h"
#include "providers/cuda/cuda_context.h"
#include "providers/cuda/rnn/cudnn_rnn_desc.h"
#include "providers/cuda/rnn/cudnn_rnn_plan.h"
#include "runtime/provider/execution_provider.h"
#include "runtime/rnn/rnn_spec.h"
#include "runtime/rnn/stacked_rnn.h"

namespace recur::cuda {

// Descriptors and sizes for one (T, N). Immutable once built, so concurrent runs share it;
// only the persistent algorithm's "works" flag may drop to false.
struct ShapePlan {
  int64_t T = 0, N = 0;
  TensorDesc h_desc;           // [D,N,H], packed
  RnnDataDesc x_full, y_full;  // every length T
  size_t workspace = 0;        // STANDARD with every length T
  // A persistent algorithm cuDNN accepted for this shape (each stream makes its own
  // descriptor for it, as for STANDARD), and its workspace.
  cudnnRNNAlgo_t persist_algo = CUDNN_RNN_ALGO_STANDARD;
  size_t persist_workspace = 0;
  mutable std::atomic<bool> persist_ok{false};
};

class CudnnRnnKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(CompileContext& ctx);
  Status run(KernelContext& ctx) const override;

 private:
  // A run's buffers: what cudnnRNNForward reads and writes, and each layer's state outputs.
  struct RunIo {
    std::vector<std::shared_ptr<void>> keep;  // scratch, freed on the run's stream
    CudnnRunBuffers buf;
    bool want_y = false, want_yh = false, want_yc = false;
    std::vector<Tensor*> yh_out, yc_out;
  };

  // Compile steps, in order.
  Status parse_node(CompileContext& ctx);
  Status configure(CompileContext& ctx);
  Status prepare_weight_space(CompileContext& ctx, cudnnHandle_t handle,
                              std::shared_ptr<void>& space);
  void note_choices(CompileContext& ctx);
  Status prepare_static_shape(CompileContext& ctx, cudnnHandle_t handle);

  // Run steps, in order.
  Result<RnnDims> check_inputs(KernelContext& ctx) const;
  Status allocate_outputs(KernelContext& ctx, const RnnDims& dims, RunIo& io) const;
  Status gather_states(KernelContext& ctx, StreamContext& sc, const RnnDims& dims, RunIo& io) const;
  Status zero_outputs(StreamContext& sc, const RnnDims& dims, const RunIo& io) const;
  Result<std::shared_ptr<void>> repack_weights(KernelContext& ctx, StreamContext& sc) const;
  Status scatter_states(StreamContext& sc, const RnnDims& dims, const RunIo& io) const;
  Result<void*> scratch(RunIo& io, int64_t elems) const;

  Result<std::shared_ptr<const ShapePlan>> shape_plan(cudnnHandle_t handle, int64_t T,
                                                      int64_t N) const;
  Result<std::shared_ptr<const ShapePlan>> build_shape_plan(cudnnHandle_t handle, int64_t T,
                                                            int64_t N) const;
  Status try_persistent(cudnnHandle_t handle, ShapePlan& sp) const;

  // The descriptor with `algo` for runs on `sc`'s stream (and, for PERSIST_DYNAMIC, built for
  // batch N). cuDNN may keep per-descriptor state while it runs, so concurrent runs (each on
  // its own stream) never share one; created once per stream, then reused.
  Result<cudnnRNNDescriptor_t> desc_for(const StreamContext& sc, cudnnHandle_t handle,
                                        cudnnRNNAlgo_t algo = CUDNN_RNN_ALGO_STANDARD,
                                        int64_t N = 0) const;

  friend class CudaRnnBackend;

  // Input and output positions: the node's own, or layer l's in a recur::StackedRNN.
  size_t in_pos(int l, RnnInput which) const {
    return stacked_ ? stacked_input(l, which) : static_cast<size_t>(which);
  }
  size_t out_pos(int l, RnnOutput which) const {
    return stacked_ ? stacked_output(l, which) : static_cast<size_t>(which);
  }
  size_t lens_pos() const { return stacked_ ? 1 : static_cast<size_t>(kRnnSeqLens); }
  // A persistent algorithm was asked for by setting (not auto's choice by shape), so --explain
  // says when none was taken.
  bool asked_persistent() const {
    return persistent_ != CudaOptions::Persistent::kOff &&
           persistent_ != CudaOptions::Persistent::kAuto;
  }

  RnnSpec spec_;
  bool stacked_ = false;
  int layers_ = 1;
  RnnConfig config_;
  int device_ = 0;
  CudaOptions::Persistent persistent_ = CudaOptions::Persistent::kOff;
  GpuTraits gpu_;  // for the choice of persistent algorithm
  RnnDesc desc_;   // STANDARD
  size_t weight_bytes_ = 0;
  CudnnWeightPlan weight_plan_;
  CudnnWeightMap weight_map_;
  std::shared_ptr<void> weights_;  // device weight space; null when repacked per run
  // Shape-only stand-ins for W, R and B when they were repacked and released, so that the
  // run-time checks of check_rnn_inputs still see their shapes.
  Tensor w_shape_, r_shape_, b_shape_;
  bool has_b_ = false;

  mutable std::mutex desc_mu_;
  using DescKey = std::tuple<const StreamContext*, cudnnRNNAlgo_t, int64_t>;
  mutable std::map<DescKey, RnnDesc> stream_descs_;

  static constexpr size_t kMaxShapes = 32;
  mutable std::mutex mu_;
  mutable std::list<std::shared_ptr<const ShapePlan>> shapes_;  // most recent first
};

}  // namespace recur::cuda
