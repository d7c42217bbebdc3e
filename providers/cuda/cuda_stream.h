// Devices, streams and the library handles bound to them, for the CUDA providers.
//
// Ordering model: every run leases one stream (with its own cuDNN handle) and makes it the
// calling thread's current stream for the device. Kernels, allocations, frees and copies made
// on that thread during the run go to that stream, so they are ordered without events. Work
// outside a run (compiling, copies at load, a caller's own device tensors) leases a stream
// for the duration of a ScopedStream, which synchronizes it at the end, as a run's end_run
// does: a block freed outside both has no work pending on it.
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>

#include "providers/cuda/cublas_api.h"
#include "runtime/core/status.h"
#include "runtime/provider/kernel.h"

namespace recur::cuda {

// Device indices the pools and the threads' current streams have room for.
constexpr int kMaxDevices = 64;
// An error for an index outside [0, kMaxDevices).
Status check_device_index(int device);

// The number of CUDA devices; an error when the driver or runtime cannot be used.
Result<int> device_count();
// False, with "no CUDA device" (and the runtime's explanation, if any) in `reason`, when
// device `index` cannot be used.
bool device_available(int index, std::string* reason);

// Makes `index` the calling thread's current device while it lives.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  const Status& status() const { return status_; }

 private:
  int previous_ = -1;
  Status status_;
};

// A stream and the handles bound to it. Owned by a per-device pool and used by one run (or
// one ScopedStream) at a time, so the mutable descriptors it keeps need no locking.
class StreamContext {
 public:
  StreamContext(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  // Created on first use and bound to stream().
  Result<cudnnHandle_t> cudnn();
  // Created on first use, bound to stream(), with a workspace of its own (so that cuBLAS
  // allocates nothing while a CUDA graph is being recorded) and exact float32 math (no TF32).
  Result<Blas> cublas();
  // RNN data descriptors for calls whose sequence lengths are only known at run time.
  Result<cudnnRNNDataDescriptor_t> rnn_data_descriptor(int which);  // which: 0 (x) or 1 (y)

  // Bad data found by a kernel (an index out of range, an integer division by zero) cannot
  // stop the kernel: it clamps and sets this flag to the site's id, and the run reports the
  // error once its stream is synchronized. The flag is mapped host memory: the kernel's
  // device pointer, read on the host with no copy.
  Result<int32_t*> error_flag();
  // The id for a site ("node 'g' (Gather): an index is out of range"), stable for the process.
  int32_t error_site(const std::string& message);
  // After a synchronize: the error a kernel raised since the last call (and clears the flag).
  Status take_error();

 private:
  int device_;
  cudaStream_t stream_;
  cudnnHandle_t cudnn_ = nullptr;
  Blas cublas_;
  void* cublas_workspace_ = nullptr;
  int32_t* flag_host_ = nullptr;
  int32_t* flag_device_ = nullptr;
  cudnnRNNDataDescriptor_t rnn_data_[2] = {nullptr, nullptr};
};

// A leased stream; returned to its pool when the last holder lets go. Its holders
// (ScopedStream, CudaRunState) must end on the thread that made them: the lease is that
// thread's current stream until then.
class StreamLease;

// The calling thread's current stream for `device`, or null outside a run or ScopedStream.
StreamContext* current_stream(int device);

// A stream taken from the pool for one owner beyond any run, back in the pool when the last
// holder lets go. A recorded CUDA graph keeps one: its kernels hold that stream's error flag
// and cuBLAS workspace, so it replays there, and no other run may use them meanwhile.
class PinnedStream {
 public:
  static Result<std::unique_ptr<PinnedStream>> take(int device);
  PinnedStream(const PinnedStream&) = delete;
  PinnedStream& operator=(const PinnedStream&) = delete;
  ~PinnedStream();
  StreamContext& context();
  // While the returned token lives, this is the calling thread's current stream for its
  // device: runs begun on the thread meanwhile run on it. The token ends on this thread.
  std::shared_ptr<void> make_current();

 private:
  explicit PinnedStream(std::shared_ptr<StreamLease> lease);
  std::shared_ptr<StreamLease> lease_;
};

// The current stream for `device` if there is one, else a leased one that is synchronized
// and returned when the ScopedStream ends (also on an error path; a failure there is
// dropped: call synchronize() for the status). For work outside a run.
class ScopedStream {
 public:
  explicit ScopedStream(int device);
  ~ScopedStream();
  ScopedStream(const ScopedStream&) = delete;
  ScopedStream& operator=(const ScopedStream&) = delete;
  const Status& status() const { return status_; }
  StreamContext& context() { return *ctx_; }
  cudaStream_t stream() const { return ctx_->stream(); }
  // Waits for the work queued on the stream.
  Status synchronize();

 private:
  DeviceGuard guard_;
  std::shared_ptr<StreamLease> lease_;
  StreamContext* ctx_ = nullptr;
  bool leased_ = false;  // the stream is this ScopedStream's own, not the current one
  Status status_;
};

// What a CUDA provider's begin_run returns: the run's stream, current on the calling thread
// until the state is destroyed. The cudnn and cuda-generic providers of one session share it.
class CudaRunState final : public ProviderRunState {
 public:
  explicit CudaRunState(int device);
  ~CudaRunState() override;
  const Status& status() const { return status_; }
  StreamContext& context() { return *ctx_; }
  cudaStream_t stream() const { return ctx_->stream(); }
  // Waits for the run's work; reports errors from asynchronous kernels.
  Status finish();

 private:
  int device_;
  std::shared_ptr<StreamLease> lease_;
  StreamContext* ctx_ = nullptr;
  Status status_;
};

}  // namespace recur::cuda
