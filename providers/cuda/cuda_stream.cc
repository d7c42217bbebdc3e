// Streams and the handles bound to them, leased per run (or per ScopedStream) from a pool per
// device.
#include "providers/cuda/cuda_stream.h"

#include <map>
#include <mutex>
#include <vector>

#include "providers/cuda/cuda_check.h"

namespace recur::cuda {

Status check_device_index(int device) {
  if (device < 0 || device >= kMaxDevices) {
    return invalid_argument("CUDA device index " + std::to_string(device) + " is out of range");
  }
  return ok_status();
}

namespace {

// --- Streams -------------------------------------------------------------------------------

// Process-wide, not per provider: a stream and its handles outlive any run and any provider,
// and ScopedStream serves the device-memory hooks, which have no provider.
struct StreamPool {
  std::mutex mu;
  std::vector<StreamContext*> free;
};

StreamPool& stream_pool(int device) {
  static StreamPool pools[kMaxDevices];
  return pools[device];
}

Result<StreamContext*> take_stream(int device) {
  StreamPool& p = stream_pool(device);
  {
    std::lock_guard lock(p.mu);
    if (!p.free.empty()) {
      StreamContext* c = p.free.back();
      p.free.pop_back();
      return c;
    }
  }
  DeviceGuard guard(device);
  RECUR_RETURN_IF_ERROR(guard.status());
  cudaStream_t s = nullptr;
  // Non-blocking: runs on other threads overlap, and nothing syncs with the legacy stream.
  RECUR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Deliberately never destroyed: contexts live for the process, and destroying CUDA objects
  // during static destruction races with the runtime's own teardown.
  return new StreamContext(device, s);
}

}  // namespace

// Made by current_or_new; the current stream of the thread that made it until its last holder
// lets go.
class StreamLease : public std::enable_shared_from_this<StreamLease> {
 public:
  explicit StreamLease(StreamContext* ctx) : ctx_(ctx) {}
  ~StreamLease();
  StreamContext* context() const { return ctx_; }

 private:
  StreamContext* ctx_;
};

namespace {

// The runs' current streams are per thread: a run and everything it calls stay on one thread.
// Raw pointers, not weak_ptrs: a device-memory deleter reads this array, and may run during
// static destruction, after the thread's thread_locals with destructors are gone
// ([basic.start.term]); a trivially destructible one stays usable until the thread ends.
// The lease clears its slot when it ends, which is on this thread: its holders (ScopedStream,
// CudaRunState) end on the thread that made them.
thread_local StreamLease* t_current[kMaxDevices] = {};

// The thread's current lease for `device`, or a new one that becomes current. `fresh` says
// which.
Result<std::shared_ptr<StreamLease>> current_or_new(int device, bool* fresh) {
  RECUR_RETURN_IF_ERROR(check_device_index(device));
  if (StreamLease* current = t_current[device]) {
    *fresh = false;
    return current->shared_from_this();
  }
  RECUR_ASSIGN_OR_RETURN(StreamContext * ctx, take_stream(device));
  auto sp = std::make_shared<StreamLease>(ctx);
  t_current[device] = sp.get();
  *fresh = true;
  return sp;
}

}  // namespace

StreamLease::~StreamLease() {
  StreamLease*& slot = t_current[ctx_->device()];
  if (slot == this) slot = nullptr;
  StreamPool& p = stream_pool(ctx_->device());
  std::lock_guard lock(p.mu);
  p.free.push_back(ctx_);
}

// --- Devices -------------------------------------------------------------------------------

Result<int> device_count() {
  static const std::pair<int, std::string> cached = [] {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return std::make_pair(-1,
                            std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err));
    }
    return std::make_pair(n, std::string());
  }();
  if (cached.first < 0) return device_error("cudaGetDeviceCount failed: " + cached.second);
  return cached.first;
}

bool device_available(int index, std::string* reason) {
  Result<int> n = device_count();
  if (!n.ok()) {
    if (reason) *reason = "no CUDA device (" + n.status().message() + ")";
    return false;
  }
  if (*n == 0) {
    if (reason) *reason = "no CUDA device";
    return false;
  }
  if (index < 0 || index >= *n) {
    if (reason) {
      *reason = "no CUDA device " + std::to_string(index) + " (this machine has " +
                std::to_string(*n) + ")";
    }
    return false;
  }
  return true;
}

DeviceGuard::DeviceGuard(int index) {
  int current = -1;
  cudaError_t err = cudaGetDevice(&current);
  if (err != cudaSuccess) {
    status_ = cuda_error(err, "cudaGetDevice");
    return;
  }
  if (current != index) {
    err = cudaSetDevice(index);
    if (err != cudaSuccess) {
      status_ = cuda_error(err, "cudaSetDevice");
      return;
    }
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ < 0) return;
  // Ignored, and cleared so that the thread's next kernel launcher (which returns
  // cudaGetLastError()) does not report it as its own.
  if (cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

// --- Stream contexts -------------------------------------------------------------------------

Result<cudnnHandle_t> StreamContext::cudnn() {
  if (!cudnn_) {
    DeviceGuard guard(device_);
    RECUR_RETURN_IF_ERROR(guard.status());
    cudnnHandle_t h = nullptr;
    RECUR_CUDA_CHECK(cudnnCreate(&h));
    const cudnnStatus_t st = cudnnSetStream(h, stream_);
    if (st != CUDNN_STATUS_SUCCESS) {
      cudnnDestroy(h);
      return cudnn_error(st, "cudnnSetStream");
    }
    cudnn_ = h;
  }
  return cudnn_;
}

Result<Blas> StreamContext::cublas() {
  if (!cublas_.handle) {
    RECUR_ASSIGN_OR_RETURN(const CublasApi* api, cublas_api());
    DeviceGuard guard(device_);
    RECUR_RETURN_IF_ERROR(guard.status());
    // 32 MiB: what cuBLAS recommends for Hopper.
    constexpr size_t kWorkspace = size_t{32} << 20;
    if (!cublas_workspace_) RECUR_CUDA_CHECK(cudaMalloc(&cublas_workspace_, kWorkspace));
    cublasHandle_t h = nullptr;
    RECUR_RETURN_IF_ERROR(check(api->create(&h), "cublasCreate"));
    Status st = check(api->set_stream(h, stream_), "cublasSetStream");
    if (st.ok())
      st = check(api->set_workspace(h, cublas_workspace_, kWorkspace), "cublasSetWorkspace");
    if (st.ok()) st = check(api->set_math_mode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    if (!st.ok()) {
      api->destroy(h);
      return st;
    }
    cublas_ = Blas{api, h};
  }
  return cublas_;
}

Result<cudnnRNNDataDescriptor_t> StreamContext::rnn_data_descriptor(int which) {
  if (which < 0 || which > 1) return internal_error("rnn_data_descriptor: bad index");
  if (!rnn_data_[which]) RECUR_CUDA_CHECK(cudnnCreateRNNDataDescriptor(&rnn_data_[which]));
  return rnn_data_[which];
}

namespace {

// Sites are shared by every stream: a recorded run may replay on another stream than the one
// it was recorded on.
struct SiteRegistry {
  std::mutex mu;
  std::map<std::string, int32_t> ids;
  std::vector<std::string> messages;
};
SiteRegistry& sites() {
  static SiteRegistry r;
  return r;
}

}  // namespace

Result<int32_t*> StreamContext::error_flag() {
  if (!flag_device_) {
    DeviceGuard guard(device_);
    RECUR_RETURN_IF_ERROR(guard.status());
    void* host = nullptr;
    RECUR_CUDA_CHECK(cudaHostAlloc(&host, sizeof(int32_t), cudaHostAllocMapped));
    *static_cast<int32_t*>(host) = 0;
    void* dev = nullptr;
    RECUR_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
    flag_host_ = static_cast<int32_t*>(host);
    flag_device_ = static_cast<int32_t*>(dev);
  }
  return flag_device_;
}

int32_t StreamContext::error_site(const std::string& message) {
  SiteRegistry& r = sites();
  std::lock_guard lock(r.mu);
  auto it = r.ids.find(message);
  if (it != r.ids.end()) return it->second;
  r.messages.push_back(message);
  const auto id = static_cast<int32_t>(r.messages.size());
  r.ids.emplace(message, id);
  return id;
}

Status StreamContext::take_error() {
  if (!flag_host_) return ok_status();
  const int32_t id = *static_cast<volatile int32_t*>(flag_host_);
  if (id == 0) return ok_status();
  *flag_host_ = 0;
  SiteRegistry& r = sites();
  std::lock_guard lock(r.mu);
  if (id < 0 || static_cast<size_t>(id) > r.messages.size()) {
    return invalid_argument("a CUDA kernel reported bad input data (unknown site)");
  }
  return invalid_argument(r.messages[static_cast<size_t>(id - 1)]);
}

StreamContext* current_stream(int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  const StreamLease* current = t_current[device];
  return current ? current->context() : nullptr;
}

Result<std::unique_ptr<PinnedStream>> PinnedStream::take(int device) {
  RECUR_RETURN_IF_ERROR(check_device_index(device));
  RECUR_ASSIGN_OR_RETURN(StreamContext * ctx, take_stream(device));
  return std::unique_ptr<PinnedStream>(new PinnedStream(std::make_shared<StreamLease>(ctx)));
}

PinnedStream::PinnedStream(std::shared_ptr<StreamLease> lease) : lease_(std::move(lease)) {}

PinnedStream::~PinnedStream() = default;

StreamContext& PinnedStream::context() { return *lease_->context(); }

std::shared_ptr<void> PinnedStream::make_current() {
  const int device = lease_->context()->device();
  StreamLease* previous = t_current[device];
  t_current[device] = lease_.get();
  // Holds the lease too: a run state that shared it through current_or_new may outlive this
  // PinnedStream by a little, and the stream must not go back to the pool before both end.
  return std::shared_ptr<void>(
      lease_.get(), [device, previous, keep = lease_](void*) { t_current[device] = previous; });
}

ScopedStream::ScopedStream(int device) : guard_(device) {
  if (!guard_.status().ok()) {
    status_ = guard_.status();
    return;
  }
  bool fresh = false;
  auto lease = current_or_new(device, &fresh);
  if (!lease.ok()) {
    status_ = lease.status();
    return;
  }
  lease_ = std::move(lease).value();
  ctx_ = lease_->context();
  leased_ = fresh;
}

ScopedStream::~ScopedStream() {
  // Callers synchronize before they return success, but not on their error paths, and once
  // the stream is no longer current, a block freed on this thread is freed with no ordering
  // (cuda_memory_pool.cc): its pending copies must be done. On an idle stream this costs a
  // few microseconds. A stream that was current already is the run's (or an outer
  // ScopedStream's), which synchronizes it itself.
  if (leased_ && cudaStreamSynchronize(ctx_->stream()) != cudaSuccess) (void)cudaGetLastError();
}

Status ScopedStream::synchronize() {
  RECUR_RETURN_IF_ERROR(status_);
  RECUR_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream()));
  return ok_status();
}

CudaRunState::CudaRunState(int device) : device_(device) {
  DeviceGuard guard(device);
  if (!guard.status().ok()) {
    status_ = guard.status();
    return;
  }
  bool fresh = false;
  auto lease = current_or_new(device, &fresh);
  if (!lease.ok()) {
    status_ = lease.status();
    return;
  }
  lease_ = std::move(lease).value();
  ctx_ = lease_->context();
}

CudaRunState::~CudaRunState() = default;

Status CudaRunState::finish() {
  RECUR_RETURN_IF_ERROR(status_);
  DeviceGuard guard(device_);
  RECUR_RETURN_IF_ERROR(guard.status());
  RECUR_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream()));
  return ctx_->take_error();
}

}  // namespace recur::cuda
