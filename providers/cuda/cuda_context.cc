#include "providers/cuda/cuda_context.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "providers/cuda/cuda_check.h"
#include "runtime/core/device_memory.h"

namespace recur::cuda {

namespace {

constexpr int kMaxDevices = 64;
// Pinned staging chunk: large enough to reach full PCIe/NVLink bandwidth, small enough that
// two per copy in flight cost little pinned memory.
constexpr size_t kStagingChunk = size_t{4} << 20;

Status check_index(int device) {
  if (device < 0 || device >= kMaxDevices) {
    return invalid_argument("CUDA device index " + std::to_string(device) + " is out of range");
  }
  return ok_status();
}

// --- Streams -------------------------------------------------------------------------------

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

class StreamLease {
 public:
  explicit StreamLease(StreamContext* ctx) : ctx_(ctx) {}
  ~StreamLease() {
    StreamPool& p = stream_pool(ctx_->device());
    std::lock_guard lock(p.mu);
    p.free.push_back(ctx_);
  }
  StreamContext* context() const { return ctx_; }

 private:
  StreamContext* ctx_;
};

namespace {

thread_local std::weak_ptr<StreamLease> t_current[kMaxDevices];

// The thread's current lease for `device`, or a new one that becomes current. `fresh` says
// which.
Result<std::shared_ptr<StreamLease>> current_or_new(int device, bool* fresh) {
  RECUR_RETURN_IF_ERROR(check_index(device));
  if (auto sp = t_current[device].lock()) {
    *fresh = false;
    return sp;
  }
  RECUR_ASSIGN_OR_RETURN(StreamContext * ctx, take_stream(device));
  auto sp = std::make_shared<StreamLease>(ctx);
  t_current[device] = sp;
  *fresh = true;
  return sp;
}

}  // namespace

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
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
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
  auto sp = t_current[device].lock();
  return sp ? sp->context() : nullptr;
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
}

ScopedStream::~ScopedStream() = default;

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

// --- Memory ----------------------------------------------------------------------------------

namespace {

struct MemPool {
  std::once_flag once;
  cudaMemPool_t pool = nullptr;
  Status status;
};

Result<cudaMemPool_t> memory_pool(int device) {
  static MemPool pools[kMaxDevices];
  MemPool& mp = pools[device];
  std::call_once(mp.once, [&mp, device] {
    auto create = [&]() -> Status {
      DeviceGuard guard(device);
      RECUR_RETURN_IF_ERROR(guard.status());
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.handleTypes = cudaMemHandleTypeNone;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = device;
      RECUR_CUDA_CHECK(cudaMemPoolCreate(&mp.pool, &props));
      // Keep every freed block cached: the pool never gives memory back on synchronize.
      uint64_t threshold = UINT64_MAX;
      RECUR_CUDA_CHECK(
          cudaMemPoolSetAttribute(mp.pool, cudaMemPoolAttrReleaseThreshold, &threshold));
      return ok_status();
    };
    mp.status = create();
  });
  RECUR_RETURN_IF_ERROR(mp.status);
  return mp.pool;
}

struct StagingBuffer {
  void* host = nullptr;
  cudaEvent_t done = nullptr;
};

struct StagingPool {
  std::mutex mu;
  std::vector<StagingBuffer*> free;
};

StagingPool& staging_pool(int device) {
  static StagingPool pools[kMaxDevices];
  return pools[device];
}

// Up to two pinned chunks for one copy; returned to the pool when the lease ends.
class StagingLease {
 public:
  explicit StagingLease(int device) : device_(device) {}
  ~StagingLease() {
    StagingPool& p = staging_pool(device_);
    std::lock_guard lock(p.mu);
    for (StagingBuffer* b : bufs_)
      if (b) p.free.push_back(b);
  }
  Result<StagingBuffer*> get(int k) {
    StagingBuffer*& b = bufs_[k & 1];
    if (b) return b;
    StagingPool& p = staging_pool(device_);
    {
      std::lock_guard lock(p.mu);
      if (!p.free.empty()) {
        b = p.free.back();
        p.free.pop_back();
        return b;
      }
    }
    auto nb = std::make_unique<StagingBuffer>();
    RECUR_CUDA_CHECK(cudaHostAlloc(&nb->host, kStagingChunk, cudaHostAllocPortable));
    RECUR_CUDA_CHECK(cudaEventCreateWithFlags(&nb->done, cudaEventDisableTiming));
    b = nb.release();  // pooled for the process's lifetime
    return b;
  }

 private:
  int device_;
  StagingBuffer* bufs_[2] = {nullptr, nullptr};
};

}  // namespace

namespace {

constexpr size_t kArenaAlign = 256;

struct Arena {
  int device = 0;
  char* base = nullptr;
  size_t size = 0;
  size_t used = 0;
  bool overflow = false;
};
thread_local Arena* t_arena = nullptr;
thread_local size_t* t_measured = nullptr;

size_t aligned(size_t b) {
  return (std::max<size_t>(b, 1) + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
}

}  // namespace

Result<std::shared_ptr<void>> allocate_device(size_t bytes, int device) {
  RECUR_RETURN_IF_ERROR(check_index(device));
  if (t_measured) *t_measured += aligned(bytes);
  if (t_arena && t_arena->device == device) {
    Arena& a = *t_arena;
    if (a.used + aligned(bytes) > a.size) {
      a.overflow = true;
      return Status(ErrorCode::kDevice, "the CUDA graph recording ran out of its arena (" +
                                            std::to_string(a.size) + " bytes)");
    }
    void* p = a.base + a.used;
    a.used += aligned(bytes);
    // The recorder owns the arena: nothing to free, and the address stays valid for replays.
    return std::shared_ptr<void>(p, [](void*) {});
  }
  const bool in_run = current_stream(device) != nullptr;
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  RECUR_ASSIGN_OR_RETURN(cudaMemPool_t pool, memory_pool(device));
  void* p = nullptr;
  const cudaStream_t stream = scoped.stream();
  const cudaError_t err = cudaMallocFromPoolAsync(&p, std::max<size_t>(bytes, 1), pool, stream);
  if (err != cudaSuccess) {
    return Status(ErrorCode::kDevice, "out of memory on cuda:" + std::to_string(device) +
                                          " allocating " + std::to_string(bytes) + " bytes (" +
                                          cudaGetErrorString(err) + ")");
  }
  // The allocation is ordered on `stream`: a run's later work on it needs nothing more.
  // Outside a run, a synchronize makes the block usable from any stream.
  if (!in_run) RECUR_RETURN_IF_ERROR(scoped.synchronize());
  return std::shared_ptr<void>(p, [device, stream](void* q) {
    DeviceGuard guard(device);
    StreamContext* cur = current_stream(device);
    // Freed in the order of the stream that used it last: the current run's, or the one it
    // was allocated on.
    (void)cudaFreeAsync(q, cur ? cur->stream() : stream);
  });
}

Status copy_host_to_device(void* dst, int device, const void* src, size_t bytes) {
  if (bytes == 0) return ok_status();
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  const cudaStream_t s = scoped.stream();
  StagingLease staging(device);
  for (size_t off = 0, k = 0; off < bytes; off += kStagingChunk, ++k) {
    const size_t n = std::min(kStagingChunk, bytes - off);
    RECUR_ASSIGN_OR_RETURN(StagingBuffer * b, staging.get(static_cast<int>(k)));
    // Chunk k-2 used this buffer: wait until its transfer has left it.
    if (k >= 2) RECUR_CUDA_CHECK(cudaEventSynchronize(b->done));
    std::memcpy(b->host, static_cast<const char*>(src) + off, n);
    RECUR_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<char*>(dst) + off, b->host, n, cudaMemcpyHostToDevice, s));
    RECUR_CUDA_CHECK(cudaEventRecord(b->done, s));
  }
  return scoped.synchronize();
}

Status copy_device_to_host(void* dst, const void* src, int device, size_t bytes) {
  if (bytes == 0) return ok_status();
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  const cudaStream_t s = scoped.stream();
  StagingLease staging(device);
  const size_t chunks = (bytes + kStagingChunk - 1) / kStagingChunk;
  auto enqueue = [&](size_t k) -> Status {
    const size_t off = k * kStagingChunk;
    const size_t n = std::min(kStagingChunk, bytes - off);
    RECUR_ASSIGN_OR_RETURN(StagingBuffer * b, staging.get(static_cast<int>(k)));
    RECUR_CUDA_CHECK(cudaMemcpyAsync(b->host, static_cast<const char*>(src) + off, n,
                                     cudaMemcpyDeviceToHost, s));
    RECUR_CUDA_CHECK(cudaEventRecord(b->done, s));
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(enqueue(0));
  for (size_t k = 0; k < chunks; ++k) {
    // Overlap: chunk k+1 transfers while chunk k is copied out of its buffer.
    if (k + 1 < chunks) RECUR_RETURN_IF_ERROR(enqueue(k + 1));
    RECUR_ASSIGN_OR_RETURN(StagingBuffer * b, staging.get(static_cast<int>(k)));
    RECUR_CUDA_CHECK(cudaEventSynchronize(b->done));
    const size_t off = k * kStagingChunk;
    std::memcpy(static_cast<char*>(dst) + off, b->host, std::min(kStagingChunk, bytes - off));
  }
  return ok_status();
}

Status copy_device_to_device(void* dst, int dst_device, const void* src, int src_device,
                             size_t bytes) {
  if (bytes == 0) return ok_status();
  const bool in_run = current_stream(dst_device) != nullptr;
  ScopedStream scoped(dst_device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  if (dst_device == src_device) {
    RECUR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, scoped.stream()));
  } else {
    RECUR_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, scoped.stream()));
  }
  // In a run, later work on the run's stream is ordered after the copy.
  return in_run ? ok_status() : scoped.synchronize();
}

namespace {

std::shared_ptr<void> hook_allocate(size_t bytes, int device) {
  auto r = allocate_device(bytes, device);
  return r.ok() ? std::move(r).value() : nullptr;
}

Status hook_copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (src_device.is_cpu() && dst_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return ok_status();
  }
  if (src_device.is_cpu()) return copy_host_to_device(dst, dst_device.index, src, bytes);
  if (dst_device.is_cpu()) return copy_device_to_host(dst, src, src_device.index, bytes);
  return copy_device_to_device(dst, dst_device.index, src, src_device.index, bytes);
}

}  // namespace

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
    t_measured = &measured_;
  }
  size_t stop_measuring() override {
    t_measured = nullptr;
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
    t_arena = &arena_;
    return ok_status();
  }

  Status stop_recording(ProviderRunState* state) override {
    t_arena = nullptr;
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
  Arena arena_;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

std::unique_ptr<RunRecorder> make_cuda_recorder(int device) {
  return std::make_unique<CudaRecorder>(device);
}

void install_device_memory_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    DeviceMemoryHooks hooks;
    hooks.allocate = &hook_allocate;
    hooks.copy = &hook_copy;
    set_device_memory_hooks(Device::Kind::kCUDA, hooks);
  });
}

}  // namespace recur::cuda
