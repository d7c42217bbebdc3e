// Tensors that own or borrow their memory, on the host or on a device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "recur/dtype.h"
#include "recur/error.h"
#include "recur/export.h"
#include "recur/small_vector.h"

namespace recur {

struct RECUR_API Device {
  enum class Kind : uint8_t { kCPU = 0, kCUDA = 1 };
  Kind kind = Kind::kCPU;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int index = 0) { return {Kind::kCUDA, index}; }
  bool is_cpu() const { return kind == Kind::kCPU; }
  // Spelled out rather than defaulted: the public headers are C++17.
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string to_string() const;  // "cpu", "cuda:0"
};

// Up to 8 dimensions live inside the shape itself; it converts to and from
// std::vector<int64_t>, which it was before.
using Shape = SmallVector<int64_t, 8>;
RECUR_API int64_t shape_numel(const Shape& shape);
RECUR_API std::string shape_to_string(const Shape& shape);  // "[2,3,4]"

template <class T>
struct DTypeOf;
// One line per type: it reads as the table it is.
// clang-format off
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<Float16> { static constexpr DType value = DType::kFloat16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBFloat16; };
template <> struct DTypeOf<Float8E4M3FN> { static constexpr DType value = DType::kFloat8E4M3FN; };
template <> struct DTypeOf<Float8E4M3FNUZ> { static constexpr DType value = DType::kFloat8E4M3FNUZ; };
template <> struct DTypeOf<Float8E5M2> { static constexpr DType value = DType::kFloat8E5M2; };
template <> struct DTypeOf<Float8E5M2FNUZ> { static constexpr DType value = DType::kFloat8E5M2FNUZ; };
template <> struct DTypeOf<Int4> { static constexpr DType value = DType::kInt4; };
template <> struct DTypeOf<UInt4> { static constexpr DType value = DType::kUInt4; };
template <> struct DTypeOf<Float8E8M0> { static constexpr DType value = DType::kFloat8E8M0; };
template <> struct DTypeOf<Float4E2M1> { static constexpr DType value = DType::kFloat4E2M1; };
template <> struct DTypeOf<Int2> { static constexpr DType value = DType::kInt2; };
template <> struct DTypeOf<UInt2> { static constexpr DType value = DType::kUInt2; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUInt16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kUInt32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kUInt64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<std::string> { static constexpr DType value = DType::kString; };
// clang-format on
template <class T>
inline constexpr DType dtype_of_v = DTypeOf<std::remove_cv_t<T>>::value;

// A typed n-dimensional array, an ONNX sequence of them (is_sequence()), or an ONNX map
// (is_map()). Copies are shallow: they share the same memory. String tensors hold std::string
// elements.
class RECUR_API Tensor {
 public:
  Tensor() = default;

  // Uninitialised memory owned by the tensor, on the host or (in a CUDA build) on a device.
  static Tensor empty(DType dtype, Shape shape, Device device = Device::cpu());
  static Tensor zeros(DType dtype, Shape shape);
  // Memory owned by the caller, which must outlive every use of the tensor.
  static Tensor borrow(void* data, DType dtype, Shape shape, Device device = Device::cpu());
  // Memory kept alive by `owner` (a mapped file, a pooled block, ...).
  static Tensor wrap(std::shared_ptr<void> owner, void* data, DType dtype, Shape shape,
                     Device device = Device::cpu());

  template <class T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values);
  template <class T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, std::vector<T>{value});
  }
  // An ONNX sequence value. `element_dtype` is needed when `elements` may be empty.
  static Tensor sequence(std::vector<Tensor> elements, DType element_dtype = DType::kUndefined);
  // `seq` with `element` inserted before position `pos` (0 <= pos <= its length). When
  // nothing else holds the sequence (its use count is 1: a kernel's input taken from the frame
  // it was last read in) it grows in place, else it is copied; the elements are shared either
  // way. Throws recur::Error as sequence() does for an element of another type.
  static Tensor sequence_insert(Tensor seq, size_t pos, Tensor element);
  // `seq` without its element at `pos` (0 <= pos < its length): in place when nothing else
  // holds the sequence, as sequence_insert. Throws recur::Error for a position outside it.
  static Tensor sequence_erase(Tensor seq, size_t pos);
  // An empty ONNX optional.
  static Tensor none();
  // An ONNX map: `keys` (1-D, int64 or string, no key twice) paired in order with `values`
  // (1-D, as many, of a numeric or string dtype). Both are held on the host, as they are.
  // Throws recur::Error when they do not fit.
  static Tensor map(Tensor keys, Tensor values);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_.at(static_cast<size_t>(i < 0 ? i + rank() : i)); }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  Device device() const { return device_; }
  bool is_cpu() const { return device_.is_cpu(); }
  bool is_sequence() const { return dtype_ == DType::kSequence; }
  bool is_none() const { return dtype_ == DType::kNone; }
  bool is_map() const { return dtype_ == DType::kMap; }
  // A plain array: not undefined, a sequence, a map or an empty optional.
  bool is_tensor() const {
    return dtype_ != DType::kUndefined && !is_sequence() && !is_none() && !is_map();
  }
  // The tensors of a sequence (throws recur::Error for a plain tensor).
  const std::vector<Tensor>& elements() const;
  // A sequence's element type (kUndefined when unknown and empty; kMap for maps); a map's
  // value type.
  DType element_dtype() const { return element_dtype_; }
  // A map's keys and values, in the order it was made (throw recur::Error for other values).
  const Tensor& map_keys() const;
  const Tensor& map_values() const;

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  // Typed access; throws recur::Error if T does not match dtype().
  template <class T>
  T* data() {
    check_dtype(dtype_of_v<T>);
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    check_dtype(dtype_of_v<T>);
    return static_cast<const T*>(data_);
  }

  // The same memory seen with another shape of equal element count.
  Tensor reshaped(Shape shape) const;
  // A host copy that owns its memory.
  Tensor clone() const;
  // This tensor on `device`: itself if it is already there, else a copy (host <-> GPU).
  // Throws recur::Error when the device has no provider in this build or the copy fails.
  Tensor to(Device device) const;
  // Shares ownership of the memory (null for borrowed tensors).
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  void check_dtype(DType want) const;

  DType dtype_ = DType::kUndefined;
  DType element_dtype_ = DType::kUndefined;  // sequences and maps only
  Shape shape_;
  Device device_;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

template <class T>
Tensor Tensor::from_vector(Shape shape, const std::vector<T>& values) {
  Tensor t = empty(dtype_of_v<T>, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel()) {  // NOLINT
    throw Error(ErrorCode::kInvalidArgument,
                "Tensor::from_vector: " + std::to_string(values.size()) + " values for shape " +
                    shape_to_string(t.shape()));
  }
  T* out = static_cast<T*>(t.raw_data());
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace recur
