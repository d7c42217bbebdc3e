#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "recur/tensor.h"
#include "recur/value_info.h"
#include "runtime/core/copy_bytes.h"
#include "runtime/core/device_memory.h"
#include "runtime/core/memory_budget.h"
#include "runtime/core/tensor_owner.h"

namespace recur {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kInvalidModel:
      return "invalid model";
    case ErrorCode::kNotImplemented:
      return "not implemented";
    case ErrorCode::kOutOfRange:
      return "out of range";
    case ErrorCode::kFailedPrecondition:
      return "failed precondition";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kDevice:
      return "device error";
    case ErrorCode::kInternal:
      return "internal error";
    case ErrorCode::kCancelled:
      return "cancelled";
  }
  return "unknown error";
}

std::string Device::to_string() const {
  return kind == Kind::kCPU ? "cpu" : "cuda:" + std::to_string(index);
}

int64_t shape_numel(const Shape& shape) {
  // A corrupt shape must not overflow (undefined behaviour): saturate instead, so that any
  // allocation of it fails cleanly. A zero anywhere makes the product zero.
  int64_t n = 1;
  bool saturated = false;
  for (int64_t d : shape) {
    if (d == 0) return 0;
    if (saturated || __builtin_mul_overflow(n, d, &n)) saturated = true;
  }
  return saturated ? INT64_MAX : n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

// 64-byte alignment suits AVX-512 loads and oneDNN's preferred alignment.
constexpr size_t kAlignment = 64;

// Counts `bytes` against the calling thread's run budget (SessionOptions::memory_limit), if
// any; returns the budget to release them to when the memory is freed.
std::shared_ptr<MemoryBudget> charge_budget(size_t bytes, const Shape& shape) {
  MemoryBudget* budget = current_memory_budget();
  if (!budget) return nullptr;
  if (!budget->try_charge(bytes)) {
    budget->exceeded(bytes, "allocating a tensor of shape " + shape_to_string(shape))
        .throw_if_error();
  }
  return budget->shared_from_this();
}

std::shared_ptr<void> allocate_host(size_t bytes, const Shape& shape) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  std::shared_ptr<MemoryBudget> budget = charge_budget(rounded, shape);
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (!p) {
    if (budget) budget->release(rounded);
    throw Error(ErrorCode::kInternal,
                "out of host memory allocating " + std::to_string(bytes) + " bytes");
  }
  if (!budget) return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return std::shared_ptr<void>(p, [budget = std::move(budget), rounded](void* q) {
    std::free(q);
    budget->release(rounded);
  });
}

// Readers take no lock (every device tensor's allocation and copy reads the hooks), and the
// hooks are set again whenever a session creates a GPU provider. So a set, once published,
// is never written: readers load a pointer to an immutable copy. Copies are kept for the
// process (a reader may still hold one) and shared by equal sets, so there are as many as
// there are copies of the CUDA providers' code in the process (one, or two in the tests).
std::mutex g_hooks_mutex;
std::atomic<const DeviceMemoryHooks*> g_cuda_hooks{nullptr};

}  // namespace

std::shared_ptr<void> own_string(std::unique_ptr<std::string> bytes) {
  return std::shared_ptr<std::string>(std::move(bytes));
}

void set_device_memory_hooks(Device::Kind kind, DeviceMemoryHooks hooks) {
  if (kind != Device::Kind::kCUDA) return;
  std::lock_guard lock(g_hooks_mutex);
  if (!hooks.allocate && !hooks.copy) {
    g_cuda_hooks.store(nullptr, std::memory_order_release);
    return;
  }
  // Never destroyed: a reader on another thread may hold a set during static destruction.
  static auto* sets = new std::deque<DeviceMemoryHooks>();
  auto it = std::find_if(sets->begin(), sets->end(), [&](const DeviceMemoryHooks& h) {
    return h.allocate == hooks.allocate && h.copy == hooks.copy;
  });
  if (it == sets->end()) it = sets->insert(sets->end(), hooks);
  g_cuda_hooks.store(&*it, std::memory_order_release);
}

const DeviceMemoryHooks* device_memory_hooks(Device::Kind kind) {
  if (kind != Device::Kind::kCUDA) return nullptr;
  return g_cuda_hooks.load(std::memory_order_acquire);
}

Tensor Tensor::empty(DType dtype, Shape shape, Device device) {
  if (dtype == DType::kUndefined || dtype == DType::kSequence || dtype == DType::kNone ||
      dtype == DType::kMap) {
    throw Error(ErrorCode::kInvalidArgument, std::string("Tensor::empty cannot make a ") +
                                                 std::string(dtype_name(dtype)) + " tensor");
  }
  if (dtype == DType::kString && !device.is_cpu()) {
    throw Error(ErrorCode::kNotImplemented, "string tensors live on the host only");
  }
  for (int64_t d : shape) {
    if (d < 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "negative dimension in shape " + shape_to_string(shape));
  }
  const int64_t count = shape_numel(shape);
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(count), dtype_size(dtype), &bytes) ||
      count == INT64_MAX) {
    throw Error(ErrorCode::kOutOfRange,
                "a tensor of shape " + shape_to_string(shape) + " is too large to allocate");
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.device_ = device;
  if (dtype == DType::kString) {
    // Strings are objects: constructed here and destroyed with the last owner.
    const auto n = static_cast<size_t>(shape_numel(t.shape_));
    // The string objects count; what they later allocate for long contents does not.
    std::shared_ptr<MemoryBudget> budget = charge_budget(bytes, t.shape_);
    auto* strings = new std::string[n == 0 ? 1 : n];
    t.owner_ = std::shared_ptr<void>(strings, [budget = std::move(budget), bytes](void* p) {
      delete[] static_cast<std::string*>(p);
      if (budget) budget->release(bytes);
    });
  } else if (device.is_cpu()) {
    t.owner_ = allocate_host(bytes, t.shape_);
  } else {
    const DeviceMemoryHooks* hooks = device_memory_hooks(device.kind);
    if (!hooks || !hooks->allocate) {
      throw Error(ErrorCode::kDevice, "cannot allocate on " + device.to_string() +
                                          ": no provider for this device is loaded");
    }
    t.owner_ = hooks->allocate(bytes, device.index);
    if (!t.owner_) {
      throw Error(ErrorCode::kDevice, "out of memory on " + device.to_string() + " allocating " +
                                          std::to_string(bytes) + " bytes");
    }
  }
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t = empty(dtype, std::move(shape));
  if (dtype != DType::kString) std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::sequence(std::vector<Tensor> elements, DType element_dtype) {
  if (element_dtype == DType::kUndefined && !elements.empty()) {
    element_dtype = elements.front().dtype();
  }
  for (const Tensor& e : elements) {
    if (!e.defined() || e.is_sequence() || e.is_none() || e.dtype() != element_dtype) {
      throw Error(ErrorCode::kInvalidArgument, "a sequence holds tensors of one dtype (" +
                                                   std::string(dtype_name(element_dtype)) +
                                                   "), not " + std::string(dtype_name(e.dtype())));
    }
    // A sequence of maps is one ONNX type, seq(map(K, V)): its maps agree on K and V.
    const Tensor& first = elements.front();
    if (e.is_map() && (e.map_keys().dtype() != first.map_keys().dtype() ||
                       e.element_dtype() != first.element_dtype())) {
      throw Error(ErrorCode::kInvalidArgument,
                  "a sequence holds maps of one key and value type (" +
                      std::string(dtype_name(first.map_keys().dtype())) + ", " +
                      std::string(dtype_name(first.element_dtype())) + "), not (" +
                      std::string(dtype_name(e.map_keys().dtype())) + ", " +
                      std::string(dtype_name(e.element_dtype())) + ")");
    }
  }
  auto holder = std::make_shared<std::vector<Tensor>>(std::move(elements));
  Tensor t;
  t.dtype_ = DType::kSequence;
  t.element_dtype_ = element_dtype;
  t.shape_ = {static_cast<int64_t>(holder->size())};
  t.data_ = holder.get();
  t.owner_ = std::move(holder);
  return t;
}

namespace {

template <typename K>
std::string key_text(const K& k) {
  if constexpr (std::is_same_v<K, std::string>)
    return "'" + k + "'";
  else
    return std::to_string(k);
}

// Whether `keys` (int64 or string, host) holds a key twice, and which, for the error. ZipMap
// makes one small map per row: up to 16 keys are compared pairwise, without the sorted copy.
template <typename K>
std::optional<std::string> repeated_key(const Tensor& keys) {
  const K* k = keys.data<K>();
  const int64_t n = keys.numel();
  if (n <= 16) {
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < i; ++j)
        if (k[i] == k[j]) return key_text(k[i]);
    return std::nullopt;
  }
  std::vector<K> sorted(k, k + n);
  std::sort(sorted.begin(), sorted.end());
  const auto it = std::adjacent_find(sorted.begin(), sorted.end());
  if (it == sorted.end()) return std::nullopt;
  return key_text(*it);
}

}  // namespace

Tensor Tensor::sequence_insert(Tensor seq, size_t pos, Tensor element) {
  const std::vector<Tensor>& old = seq.elements();
  if (pos > old.size()) {
    throw Error(ErrorCode::kOutOfRange, "cannot insert at position " + std::to_string(pos) +
                                            " of a sequence of " + std::to_string(old.size()));
  }
  const bool same_type = element.is_tensor() && (seq.element_dtype_ == DType::kUndefined ||
                                                 element.dtype() == seq.element_dtype_);
  if (seq.owner_.use_count() == 1 && same_type) {
    auto* elements = static_cast<std::vector<Tensor>*>(seq.data_);
    elements->insert(elements->begin() + static_cast<std::ptrdiff_t>(pos), std::move(element));
    seq.element_dtype_ = elements->front().dtype();
    seq.shape_ = {static_cast<int64_t>(elements->size())};
    return seq;
  }
  // Shared, or a map (whose key and value types sequence() checks): a new sequence.
  std::vector<Tensor> elements;
  elements.reserve(old.size() + 1);
  elements.insert(elements.end(), old.begin(), old.end());
  elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(pos), std::move(element));
  const DType type = seq.element_dtype_;
  return sequence(std::move(elements), type);
}

Tensor Tensor::sequence_erase(Tensor seq, size_t pos) {
  const std::vector<Tensor>& old = seq.elements();
  if (pos >= old.size()) {
    throw Error(ErrorCode::kOutOfRange, "cannot erase position " + std::to_string(pos) +
                                            " of a sequence of " + std::to_string(old.size()));
  }
  const auto at = static_cast<std::ptrdiff_t>(pos);
  if (seq.owner_.use_count() == 1) {
    auto* elements = static_cast<std::vector<Tensor>*>(seq.data_);
    elements->erase(elements->begin() + at);
    seq.shape_ = {static_cast<int64_t>(elements->size())};
    return seq;
  }
  std::vector<Tensor> elements;
  elements.reserve(old.size() - 1);
  elements.insert(elements.end(), old.begin(), old.begin() + at);
  elements.insert(elements.end(), old.begin() + at + 1, old.end());
  const DType type = seq.element_dtype_;
  return sequence(std::move(elements), type);
}

Tensor Tensor::map(Tensor keys, Tensor values) {
  auto refuse = [](const std::string& why) { throw Error(ErrorCode::kInvalidArgument, why); };
  if (!keys.is_tensor() || (keys.dtype() != DType::kInt64 && keys.dtype() != DType::kString)) {
    refuse("a map's keys are an int64 or string tensor, not " +
           std::string(dtype_name(keys.dtype())));
  }
  if (!values.is_tensor() || dtype_size(values.dtype()) == 0) {
    refuse("a map's values are a numeric or string tensor, not " +
           std::string(dtype_name(values.dtype())));
  }
  if (keys.rank() != 1 || values.rank() != 1 || keys.numel() != values.numel()) {
    refuse("a map pairs 1-D keys and values of one length, not " + shape_to_string(keys.shape()) +
           " keys and " + shape_to_string(values.shape()) + " values");
  }
  keys = keys.to(Device::cpu());
  values = values.to(Device::cpu());
  const std::optional<std::string> twice =
      keys.dtype() == DType::kInt64 ? repeated_key<int64_t>(keys) : repeated_key<std::string>(keys);
  if (twice) refuse("a map holds the key " + *twice + " twice");
  auto holder = std::make_shared<std::vector<Tensor>>(
      std::vector<Tensor>{std::move(keys), std::move(values)});
  Tensor t;
  t.dtype_ = DType::kMap;
  t.element_dtype_ = (*holder)[1].dtype();
  t.shape_ = {(*holder)[0].numel()};
  t.data_ = holder.get();
  t.owner_ = std::move(holder);
  return t;
}

const Tensor& Tensor::map_keys() const {
  if (!is_map()) throw Error(ErrorCode::kInvalidArgument, "the value is not a map");
  return (*static_cast<const std::vector<Tensor>*>(data_))[0];
}

const Tensor& Tensor::map_values() const {
  if (!is_map()) throw Error(ErrorCode::kInvalidArgument, "the value is not a map");
  return (*static_cast<const std::vector<Tensor>*>(data_))[1];
}

Tensor Tensor::none() {
  Tensor t;
  t.dtype_ = DType::kNone;
  return t;
}

const std::vector<Tensor>& Tensor::elements() const {
  if (!is_sequence()) throw Error(ErrorCode::kInvalidArgument, "the value is not a sequence");
  return *static_cast<const std::vector<Tensor>*>(data_);
}

Tensor Tensor::borrow(void* data, DType dtype, Shape shape, Device device) {
  return wrap(nullptr, data, dtype, std::move(shape), device);
}

Tensor Tensor::wrap(std::shared_ptr<void> owner, void* data, DType dtype, Shape shape,
                    Device device) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.device_ = device;
  t.owner_ = std::move(owner);
  t.data_ = data;
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (!is_tensor()) {
    throw Error(ErrorCode::kInvalidArgument,
                "a " + std::string(dtype_name(dtype_)) + " value cannot be reshaped");
  }
  if (shape_numel(shape) != numel()) {
    throw Error(ErrorCode::kInvalidArgument, "cannot view a tensor of shape " +
                                                 shape_to_string(shape_) + " as " +
                                                 shape_to_string(shape));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  if (is_none()) return *this;
  if (is_sequence()) {
    std::vector<Tensor> copies;
    for (const Tensor& e : elements()) copies.push_back(e.clone());
    return sequence(std::move(copies), element_dtype_);
  }
  if (is_map()) return map(map_keys().clone(), map_values().clone());
  Tensor t = empty(dtype_, shape_);
  copy_tensor(*this, t).throw_if_error();
  return t;
}

Tensor Tensor::to(Device device) const {
  Result<Tensor> r = to_device(*this, device);
  if (!r.ok()) r.status().throw_if_error();
  return std::move(r).value();
}

void Tensor::check_dtype(DType want) const {
  if (want != dtype_) {
    throw Error(ErrorCode::kInternal, "tensor accessed as " + std::string(dtype_name(want)) +
                                          " but holds " + std::string(dtype_name(dtype_)));
  }
}

Status copy_tensor(const Tensor& src, Tensor& dst) {
  if (src.dtype() != dst.dtype() || src.numel() != dst.numel()) {
    return internal_error("copy_tensor: " + std::string(dtype_name(src.dtype())) +
                          shape_to_string(src.shape()) + " into " +
                          std::string(dtype_name(dst.dtype())) + shape_to_string(dst.shape()));
  }
  if (!src.is_tensor()) {
    return internal_error("copy_tensor: a " + std::string(dtype_name(src.dtype())) +
                          " is not an array");
  }
  if (src.dtype() == DType::kString) {
    if (!src.is_cpu() || !dst.is_cpu()) return not_implemented("string tensors live on the host");
    const auto* from = static_cast<const std::string*>(src.raw_data());
    auto* to = static_cast<std::string*>(dst.raw_data());
    for (int64_t i = 0; i < src.numel(); ++i) to[i] = from[i];
    return ok_status();
  }
  const size_t bytes = src.nbytes();
  if (bytes == 0) return ok_status();
  if (src.is_cpu() && dst.is_cpu()) {
    copy_bytes(dst.raw_data(), src.raw_data(), bytes);
    return ok_status();
  }
  const Device::Kind kind = src.is_cpu() ? dst.device().kind : src.device().kind;
  const DeviceMemoryHooks* hooks = device_memory_hooks(kind);
  if (!hooks || !hooks->copy) return device_error("no provider for the device is loaded");
  return hooks->copy(dst.raw_data(), dst.device(), src.raw_data(), src.device(), bytes);
}

Result<Tensor> to_device(const Tensor& src, Device device) {
  // A map lives on the host: the operators that take maps are host operators.
  if (src.is_none() || src.is_map()) return src;
  if (src.is_sequence()) {
    std::vector<Tensor> moved;
    bool same = true;
    for (const Tensor& e : src.elements()) {
      RECUR_ASSIGN_OR_RETURN(Tensor m, to_device(e, device));
      same = same && m.raw_data() == e.raw_data();
      moved.push_back(std::move(m));
    }
    if (same) return src;
    return Tensor::sequence(std::move(moved), src.element_dtype());
  }
  if (src.device() == device) return src;
  Tensor dst;
  try {
    dst = Tensor::empty(src.dtype(), src.shape(), device);
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
  RECUR_RETURN_IF_ERROR(copy_tensor(src, dst));
  return dst;
}

std::string ValueInfo::shape_string() const {
  if (!shape) return "?";
  std::string s = "[";
  for (size_t i = 0; i < shape->size(); ++i) {
    if (i) s += ",";
    const Dim& d = (*shape)[i];
    s += d.is_fixed() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
  }
  return s + "]";
}

}  // namespace recur
