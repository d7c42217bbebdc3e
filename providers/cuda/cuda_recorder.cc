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
    // Errors ignored (nothing to report them to) and cleared, so that the thread's next
    // kernel launcher does not take them for its own.
    if (exec_ && cudaGraphExecDestroy(exec_) != cudaSuccess) (void)cudaGetLastError();
    if (arena_.base && cudaFree(arena_.base) != cudaSuccess) (void)cudaGetLastError();
  }

  // The recording is made on a stream of the recorder's own, kept for the replays: the
  // captured kernels hold that stream's error flag and cuBLAS workspace, which a replay on
  // another run's stream would share with whichever run holds this one.
  std::shared_ptr<void> bind_thread() override {
    if (!stream_) {
      auto s = PinnedStream::take(device_);
      if (!s.ok()) return nullptr;  // start_recording reports it: the run is not on stream_
      stream_ = std::move(s).value();
    }
    return stream_->make_current();
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
    StreamContext& sc = rs->context();
    if (!stream_ || &sc != &stream_->context()) {
      return internal_error("the recording run is not on the recorder's stream");
    }
    // Everything that allocates or creates handles happens before the capture begins. cuBLAS
    // may be missing where a plan has no GEMM; one that has fails its capture and runs
    // unrecorded, as without cuBLAS it would fail anyway.
    RECUR_RETURN_IF_ERROR(sc.cudnn().status());
    (void)sc.cublas();
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
    auto destroy = [](cudaGraph_t g) {
      if (g && cudaGraphDestroy(g) != cudaSuccess) (void)cudaGetLastError();
    };
    if (err != cudaSuccess) {
      destroy(graph);
      return cuda_error(err, "cudaStreamEndCapture");
    }
    if (arena_.overflow) {
      destroy(graph);
      return device_error("the recording's arena was too small");
    }
    const cudaError_t inst = cudaGraphInstantiate(&exec_, graph, 0);
    destroy(graph);
    if (inst != cudaSuccess) return cuda_error(inst, "cudaGraphInstantiate");
    return ok_status();
  }

  // On the recorder's own stream, then waited for, so that the run's stream (`state`), where
  // the outputs are copied next, sees the results. The errors the replayed kernels raised are
  // in the recorder's stream's flag, read here.
  Status replay(ProviderRunState* state) override {
    if (!dynamic_cast<CudaRunState*>(state) || !exec_ || !stream_) {
      return internal_error("nothing recorded to replay");
    }
    DeviceGuard guard(device_);
    RECUR_RETURN_IF_ERROR(guard.status());
    StreamContext& sc = stream_->context();
    RECUR_CUDA_CHECK(cudaGraphLaunch(exec_, sc.stream()));
    RECUR_CUDA_CHECK(cudaStreamSynchronize(sc.stream()));
    return sc.take_error();
  }

 private:
  int device_;
  size_t measured_ = 0;
  RecordingArena arena_;
  cudaGraphExec_t exec_ = nullptr;
  std::unique_ptr<PinnedStream> stream_;  // declared last: the graph and arena go first
};

}  // namespace

std::unique_ptr<RunRecorder> make_cuda_recorder(int device) {
  return std::make_unique<CudaRecorder>(device);
}

}  // namespace recur::cuda
