#include "providers/cuda/cuda_recorder.h"

#include <algorithm>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_memory_pool.h"
#include "providers/cuda/cuda_stream.h"

namespace recur::cuda {

namespace {

class CudaRecorder final : public RunRecorder {
 public:
  explicit CudaRecorder(int device) : device_(device) {}
  ~CudaRecorder() override {
    DeviceGuard guard(device_);
    if (exec_) cudaGraphExecDestroy(exec_);
    if (arena_.base) cudaFree(arena_.base);
  }

  void start_measuring() override {
    measured_ = 0;
    set_thread_allocation_counter(&measured_);
  }
  size_t stop_measuring() override {
    set_thread_allocation_counter(nullptr);
    return measured_;
  }

  Status start_recording(ProviderRunState* state, size_t arena_bytes) override {
    auto* rs = dynamic_cast<CudaRunState*>(state);
    if (!rs) return internal_error("recording needs the CUDA run state");
    RECUR_RETURN_IF_ERROR(rs->status());
    DeviceGuard guard(device_);
    RECUR_RETURN_IF_ERROR(guard.status());
    // Everything that allocates or creates handles happens before the capture begins.
    StreamContext& sc = rs->context();
    RECUR_RETURN_IF_ERROR(sc.cudnn().status());
    RECUR_RETURN_IF_ERROR(sc.cublas().status());
    RECUR_RETURN_IF_ERROR(sc.error_flag().status());
    if (!arena_.base) {
      void* p = nullptr;
      RECUR_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(arena_bytes, kArenaAlign)));
      arena_.base = static_cast<char*>(p);
      arena_.size = std::max<size_t>(arena_bytes, kArenaAlign);
      arena_.device = device_;
    }
    arena_.used = 0;
    arena_.overflow = false;
    RECUR_CUDA_CHECK(cudaStreamSynchronize(sc.stream()));
    RECUR_CUDA_CHECK(cudaStreamBeginCapture(sc.stream(), cudaStreamCaptureModeThreadLocal));
    set_thread_arena(&arena_);
    return ok_status();
  }

  Status stop_recording(ProviderRunState* state) override {
    set_thread_arena(nullptr);
    auto* rs = dynamic_cast<CudaRunState*>(state);
    if (!rs) return internal_error("recording needs the CUDA run state");
    DeviceGuard guard(device_);
    cudaGraph_t graph = nullptr;
    const cudaError_t err = cudaStreamEndCapture(rs->context().stream(), &graph);
    if (err != cudaSuccess) {
      if (graph) cudaGraphDestroy(graph);
      return cuda_error(err, "cudaStreamEndCapture");
    }
    if (arena_.overflow) {
      cudaGraphDestroy(graph);
      return device_error("the recording's arena was too small");
    }
    const cudaError_t inst = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    if (inst != cudaSuccess) return cuda_error(inst, "cudaGraphInstantiate");
    return ok_status();
  }

  Status replay(ProviderRunState* state) override {
    auto* rs = dynamic_cast<CudaRunState*>(state);
    if (!rs || !exec_) return internal_error("nothing recorded to replay");
    DeviceGuard guard(device_);
    RECUR_RETURN_IF_ERROR(guard.status());
    RECUR_CUDA_CHECK(cudaGraphLaunch(exec_, rs->context().stream()));
    return ok_status();
  }

 private:
  int device_;
  size_t measured_ = 0;
  RecordingArena arena_;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

std::unique_ptr<RunRecorder> make_cuda_recorder(int device) {
  return std::make_unique<CudaRecorder>(device);
}

}  // namespace recur::cuda
