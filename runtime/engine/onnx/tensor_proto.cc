#include "runtime/engine/onnx/tensor_proto.h"
#include "runtime/core/code_layout.h"
#include "runtime/core/copy_bytes.h"
#include "runtime/core/tensor_owner.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>
// After onnx_pb.h, which defines the ONNX_API macro it uses.
#include <onnx/onnx-data_pb.h>

namespace recur {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; big-endian hosts need byte swapping");

namespace fs = std::filesystem;

namespace {

const char* file_type(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

Result<int> open_regular_file(const std::string& path, const std::string& kind) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return io_error("cannot open " + kind + " '" + path + "': " + std::strerror(errno));
  }
  auto refuse = [&](mode_t mode) {
    return io_error(kind + " '" + path + "' is " + file_type(mode) + ", not a regular file");
  };
  if (!S_ISREG(st.st_mode)) return refuse(st.st_mode);
  // O_NONBLOCK: should the path become a FIFO between stat() and open(), open() still returns
  // at once and the fstat() below refuses it. On a regular file the flag changes nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io_error("cannot open " + kind + " '" + path + "': " + std::strerror(errno));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return refuse(st.st_mode);
  }
  return fd;
}

Result<std::string> read_regular_file(const std::string& path, const std::string& kind) {
  RECUR_ASSIGN_OR_RETURN(const int fd, open_regular_file(path, kind));
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      return io_error("cannot read " + kind + " '" + path + "': " + why);
    }
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return bytes;
}

Result<ExternalData::Mapping> ExternalData::map(const fs::path& path) {
  const std::string key = path.string();
  auto it = maps_.find(key);
  if (it != maps_.end()) return it->second;
  RECUR_ASSIGN_OR_RETURN(const int fd, open_regular_file(key, "external data file"));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return io_error("cannot stat external data file '" + key + "'");
  }
  Mapping m;
  m.size = static_cast<size_t>(st.st_size);
  if (m.size > 0) {
    // MAP_PRIVATE: a stray write can never reach the file.
    void* p = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return io_error("cannot map external data file '" + key + "'");
    }
    const size_t size = m.size;
    m.base = std::shared_ptr<void>(p, [size](void* q) { ::munmap(q, size); });
  }
  ::close(fd);
  maps_.emplace(key, m);
  return m;
}

Result<Tensor> ExternalData::read(const std::string& location, int64_t offset, int64_t length,
                                  DType dtype, const Shape& shape, const std::string& what) {
  if (location.empty()) return invalid_model(what + ": external data has no location");
  const fs::path rel(location);
  if (rel.is_absolute()) {
    return invalid_model(what + ": external data location '" + location +
                         "' is an absolute path; it must be relative to the model's folder");
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir_, ec);
  const fs::path full = fs::weakly_canonical(dir_ / rel, ec);
  if (ec) return io_error(what + ": cannot resolve external data '" + location + "'");
  auto [b, f] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (b != base.end()) {
    return invalid_model(what + ": external data location '" + location +
                         "' escapes the model's folder " + base.string());
  }
  if (offset < 0) return invalid_model(what + ": negative external data offset");
  std::lock_guard lock(mutex_);
  RECUR_ASSIGN_OR_RETURN(Mapping m, map(full));
  const size_t need = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  if (length >= 0 && static_cast<size_t>(length) != need) {
    return invalid_model(what + ": external data length " + std::to_string(length) +
                         " does not match the " + std::to_string(need) + " bytes of a " +
                         std::string(dtype_name(dtype)) + shape_to_string(shape) + " tensor");
  }
  if (static_cast<size_t>(offset) > m.size || need > m.size - static_cast<size_t>(offset)) {
    // Offset and size apart, not their end: offset + need may not fit in any integer type.
    return invalid_model(what + ": external data of " + std::to_string(need) + " bytes at offset " +
                         std::to_string(offset) + " runs past the end of '" + location + "' (" +
                         std::to_string(m.size) + " bytes)");
  }
  if (need == 0) return Tensor::empty(dtype, shape);
  auto* p = static_cast<char*>(m.base.get()) + offset;
  if (reinterpret_cast<uintptr_t>(p) % dtype_size(dtype) != 0) {
    // Misaligned elements would be undefined behaviour to read in place: copy instead.
    Tensor t = Tensor::empty(dtype, shape);
    copy_bytes(t.raw_data(), p, need);
    return t;
  }
  return Tensor::wrap(m.base, p, dtype, shape);
}

bool known_tensor_dtype(int32_t t) {
  switch (static_cast<DType>(t)) {
    case DType::kFloat32:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kFloat64:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kBFloat16:
    case DType::kString:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      return true;
    default:
      return false;
  }
}

namespace {

// int4, uint4, float4e2m1, int2 and uint2: several elements to a byte in raw_data.
bool is_packed(DType t) { return dtype_bits(t) < 8 && dtype_bits(t) > 0; }

// Bytes of `count` elements in raw_data, the packed types padded to a whole byte.
size_t raw_bytes(DType t, int64_t count) {
  const size_t bits = dtype_bits(t);
  if (bits < 8 && bits > 0) {
    const size_t per = 8 / bits;
    return (static_cast<size_t>(count) + per - 1) / per;
  }
  return static_cast<size_t>(count) * dtype_size(t);
}

// One packed field as the byte it is held in: the signed integers sign-extended, float4e2m1
// keeping its code in the low nibble.
uint8_t widen_packed(uint8_t v, DType t) {
  const size_t bits = dtype_bits(t);
  const auto mask = static_cast<uint8_t>((1u << bits) - 1);
  v &= mask;
  const bool negative = (t == DType::kInt4 || t == DType::kInt2) && (v >> (bits - 1)) != 0;
  return negative ? static_cast<uint8_t>(v | ~mask) : v;
}

// Unpacks elements stored lowest bits first into one byte each.
void unpack_bits(const uint8_t* packed, DType t, Tensor& out) {
  const size_t bits = dtype_bits(t);
  const int64_t per = static_cast<int64_t>(8 / bits);
  auto* o = static_cast<uint8_t*>(out.raw_data());
  for (int64_t i = 0; i < out.numel(); ++i) {
    const auto shift = static_cast<unsigned>((i % per) * static_cast<int64_t>(bits));
    o[i] = widen_packed(static_cast<uint8_t>(packed[i / per] >> shift), t);
  }
}

// The typed field that holds a tensor of `dtype` when it has no raw_data, and its length.
std::pair<const char*, int64_t> typed_field(const onnx::TensorProto& p, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {"float_data", p.float_data_size()};
    case DType::kFloat64:
      return {"double_data", p.double_data_size()};
    case DType::kInt64:
      return {"int64_data", p.int64_data_size()};
    case DType::kUInt32:
    case DType::kUInt64:
      return {"uint64_data", p.uint64_data_size()};
    default:  // the narrower integers, bool, float16 and bfloat16
      return {"int32_data", p.int32_data_size()};
  }
}

template <class Dst, class Field>
Status copy_field(const Field& field, Tensor& t, const std::string& what, const char* field_name) {
  if (field.size() != t.numel()) {
    return invalid_model(what + ": " + field_name + " holds " + std::to_string(field.size()) +
                         " values but the shape " + shape_to_string(t.shape()) + " needs " +
                         std::to_string(t.numel()));
  }
  auto* out = static_cast<Dst*>(t.raw_data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
  return ok_status();
}

// The tensor's shape from its dims, and its element count, guarded before anything is
// allocated: a corrupt dims list must not ask for exabytes.
RECUR_LOAD_PATH Result<int64_t> read_dims(const onnx::TensorProto& proto, const std::string& what,
                                          Shape* shape) {
  for (int64_t d : proto.dims()) {
    if (d < 0) return invalid_model(what + ": negative dimension " + std::to_string(d));
    shape->push_back(d);
  }
  __int128 count = 1;
  for (int64_t d : *shape) {
    count *= d;
    if (count > (static_cast<__int128>(1) << 40)) {
      return invalid_model(what + ": shape " + shape_to_string(*shape) + " is too large");
    }
  }
  return static_cast<int64_t>(count);
}

Result<Tensor> string_tensor(const onnx::TensorProto& proto, const Shape& shape, int64_t count,
                             const std::string& what) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return not_implemented(what + ": string tensors in external data are not supported");
  }
  // In int64: a count narrowed to int could wrap to the number of strings held.
  if (static_cast<int64_t>(proto.string_data_size()) != count) {
    return invalid_model(what + ": string_data holds " + std::to_string(proto.string_data_size()) +
                         " values but the shape " + shape_to_string(shape) + " needs " +
                         std::to_string(count));
  }
  Tensor t = Tensor::empty(DType::kString, shape);
  auto* out = t.data<std::string>();
  for (int i = 0; i < proto.string_data_size(); ++i) out[i] = proto.string_data(i);
  return t;
}

Result<Tensor> external_tensor(const onnx::TensorProto& proto, ExternalData* external, DType dtype,
                               const Shape& shape, const std::string& what) {
  if (!external) return invalid_model(what + ": external data is not allowed here");
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() != "offset" && kv.key() != "length") continue;
    // The whole value must be the number: stoll would read "12abc" as 12 and go on to read
    // data from an offset the file never said.
    const std::string& v = kv.value();
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
      return invalid_model(what + ": external data " + kv.key() + " '" + v + "' is not a number");
    }
    (kv.key() == "offset" ? offset : length) = n;
  }
  return external->read(location, offset, length, dtype, shape, what);
}

// The data must match the shape before anything is allocated: a corrupt dims list with a
// few bytes of data must be an error, not a request for gigabytes.
RECUR_LOAD_PATH Status check_data_size(const onnx::TensorProto& proto, DType dtype,
                                       const Shape& shape, int64_t count, size_t nbytes,
                                       const std::string& what) {
  if (proto.has_raw_data() && proto.raw_data().size() != nbytes) {
    return invalid_model(what + ": raw_data has " + std::to_string(proto.raw_data().size()) +
                         " bytes but a " + std::string(dtype_name(dtype)) + shape_to_string(shape) +
                         " tensor needs " + std::to_string(nbytes));
  }
  if (!proto.has_raw_data()) {
    const auto [field, held] = typed_field(proto, dtype);
    // int32_data holds the packed types packed as in raw_data, one byte per entry; one
    // value per entry is read too.
    if (held != count &&
        !(is_packed(dtype) && static_cast<size_t>(held) == raw_bytes(dtype, count))) {
      return invalid_model(what + ": " + field + " holds " + std::to_string(held) +
                           " values but the shape " + shape_to_string(shape) + " needs " +
                           std::to_string(count));
    }
  }
  return ok_status();
}

void copy_raw_data(const onnx::TensorProto& proto, size_t nbytes, Tensor& t) {
  const std::string& raw = proto.raw_data();
  if (is_packed(t.dtype())) {
    unpack_bits(reinterpret_cast<const uint8_t*>(raw.data()), t.dtype(), t);
    return;
  }
  copy_bytes(t.raw_data(), raw.data(), nbytes);
  if (t.dtype() == DType::kBool) {
    // Normalise to 0/1 so that reading the bytes as bool is well defined.
    auto* b = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) b[i] = b[i] != 0;
  }
}

// The values from the typed field that holds t's dtype.
Status copy_typed_field(const onnx::TensorProto& proto, Tensor& t, const std::string& what) {
  switch (t.dtype()) {
    case DType::kFloat32:
      return copy_field<float>(proto.float_data(), t, what, "float_data");
    case DType::kFloat64:
      return copy_field<double>(proto.double_data(), t, what, "double_data");
    case DType::kInt64:
      return copy_field<int64_t>(proto.int64_data(), t, what, "int64_data");
    case DType::kUInt32:
      return copy_field<uint32_t>(proto.uint64_data(), t, what, "uint64_data");
    case DType::kUInt64:
      return copy_field<uint64_t>(proto.uint64_data(), t, what, "uint64_data");
    case DType::kInt32:
      return copy_field<int32_t>(proto.int32_data(), t, what, "int32_data");
    case DType::kInt16:
      return copy_field<int16_t>(proto.int32_data(), t, what, "int32_data");
    case DType::kInt8:
      return copy_field<int8_t>(proto.int32_data(), t, what, "int32_data");
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      // float16 and bfloat16 travel as their bit patterns in int32_data.
      return copy_field<uint16_t>(proto.int32_data(), t, what, "int32_data");
    case DType::kUInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      // float8 values travel as their bit patterns.
      return copy_field<uint8_t>(proto.int32_data(), t, what, "int32_data");
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kFloat4E2M1:
    case DType::kInt2:
    case DType::kUInt2: {
      const auto& f = proto.int32_data();
      if (f.size() == t.numel()) {  // one value per entry
        auto* out = static_cast<uint8_t*>(t.raw_data());
        for (int i = 0; i < f.size(); ++i)
          out[i] = widen_packed(static_cast<uint8_t>(f.Get(i)), t.dtype());
        return ok_status();
      }
      // check_data_size has made sure the entries are exactly the packed bytes.
      std::vector<uint8_t> packed(static_cast<size_t>(f.size()));
      for (int i = 0; i < f.size(); ++i)
        packed[static_cast<size_t>(i)] = static_cast<uint8_t>(f.Get(i));
      unpack_bits(packed.data(), t.dtype(), t);
      return ok_status();
    }
    case DType::kBool: {
      const auto& f = proto.int32_data();
      if (f.size() != t.numel()) {
        return invalid_model(what + ": int32_data holds " + std::to_string(f.size()) +
                             " values but the shape needs " + std::to_string(t.numel()));
      }
      auto* out = static_cast<uint8_t*>(t.raw_data());
      for (int i = 0; i < f.size(); ++i) out[i] = f.Get(i) != 0;
      return ok_status();
    }
    default:
      return internal_error(what + ": unhandled dtype");
  }
}

}  // namespace

Result<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& proto,
                                        ExternalData* external, const std::string& what) {
  Shape shape;
  __int128 count = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0) return invalid_model(what + ": negative dimension " + std::to_string(d));
    shape.push_back(d);
    // Saturated, so that many large dimensions cannot overflow the product.
    count = std::min<__int128>(count * d, static_cast<__int128>(1) << 41);
  }
  RECUR_ASSIGN_OR_RETURN(Tensor values,
                         tensor_from_proto(proto.values(), external, what + " values"));
  // The dense form is what recur holds, and nothing in the file vouches for its size: a few
  // bytes could otherwise ask for terabytes.
  constexpr __int128 kMaxDenseBytes = static_cast<__int128>(4) << 30;
  if (count * static_cast<__int128>(dtype_size(values.dtype())) > kMaxDenseBytes) {
    return invalid_model(what + ": the dense form of shape " + shape_to_string(shape) +
                         " would take more than 4 GiB (recur holds sparse tensors dense)");
  }
  RECUR_ASSIGN_OR_RETURN(Tensor indices,
                         tensor_from_proto(proto.indices(), external, what + " indices"));
  const int64_t nnz = values.numel();
  const int64_t rank = static_cast<int64_t>(shape.size());
  const Shape& is = indices.shape();
  const bool linear = is.size() == 1 && is[0] == nnz;
  const bool coords = is.size() == 2 && is[0] == nnz && is[1] == rank;
  if (values.shape().size() != 1 || indices.dtype() != DType::kInt64 || !(linear || coords)) {
    return invalid_model(what + ": values must be 1-D [NNZ] and indices int64 [NNZ] or [NNZ, " +
                         std::to_string(rank) + "]; got values " + shape_to_string(values.shape()) +
                         " and indices " + std::string(dtype_name(indices.dtype())) +
                         shape_to_string(is));
  }
  Tensor dense = Tensor::zeros(values.dtype(), shape);
  const int64_t* ind = indices.data<int64_t>();
  const size_t esize = dtype_size(values.dtype());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t at = 0;
    bool inside = true;
    if (linear) {
      at = ind[k];
      inside = at >= 0 && at < dense.numel();
    } else {
      for (int64_t j = 0; j < rank && inside; ++j) {
        const int64_t c = ind[k * rank + j];
        inside = c >= 0 && c < shape[static_cast<size_t>(j)];
        at = at * shape[static_cast<size_t>(j)] + c;
      }
    }
    if (!inside) {
      return invalid_model(what + ": index " + std::to_string(k) + " lies outside the shape " +
                           shape_to_string(shape));
    }
    if (values.dtype() == DType::kString) {
      dense.data<std::string>()[at] = values.data<std::string>()[k];
    } else {
      copy_bytes(static_cast<char*>(dense.raw_data()) + static_cast<size_t>(at) * esize,
                 static_cast<const char*>(values.raw_data()) + static_cast<size_t>(k) * esize,
                 esize);
    }
  }
  return dense;
}

Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, ExternalData* external,
                                 const std::string& what) {
  if (proto.has_segment()) return not_implemented(what + ": segmented tensors are not supported");
  const int32_t dt = proto.data_type();
  if (!known_tensor_dtype(dt)) {
    return invalid_model(what + ": unknown or unsupported data_type " + std::to_string(dt));
  }
  const DType dtype = static_cast<DType>(dt);
  Shape shape;
  RECUR_ASSIGN_OR_RETURN(const int64_t count, read_dims(proto, what, &shape));
  const size_t nbytes = raw_bytes(dtype, count);

  if (dtype == DType::kString) return string_tensor(proto, shape, count, what);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (is_packed(dtype)) {
      return not_implemented(what + ": " + std::string(dtype_name(dtype)) +
                             " tensors in external data are not supported");
    }
    return external_tensor(proto, external, dtype, shape, what);
  }
  RECUR_RETURN_IF_ERROR(check_data_size(proto, dtype, shape, count, nbytes, what));
  Tensor t = Tensor::empty(dtype, shape);
  if (proto.has_raw_data()) {
    copy_raw_data(proto, nbytes, t);
  } else {
    RECUR_RETURN_IF_ERROR(copy_typed_field(proto, t, what));
  }
  return t;
}

RECUR_LOAD_PATH Result<Tensor> tensor_from_proto_taking(onnx::TensorProto* proto,
                                                        ExternalData* external,
                                                        const std::string& what) {
  // Small payloads are copied: a short string keeps its bytes inline, without the alignment
  // of a heap block. Bool is normalised and 4-bit unpacked, so both need their own copy.
  constexpr size_t kTakeFrom = 64;
  const int32_t dt = proto->data_type();
  if (!proto->has_raw_data() || proto->raw_data().size() < kTakeFrom || proto->has_segment() ||
      proto->data_location() == onnx::TensorProto::EXTERNAL || !known_tensor_dtype(dt)) {
    return tensor_from_proto(*proto, external, what);
  }
  const DType dtype = static_cast<DType>(dt);
  if (dtype == DType::kString || dtype == DType::kBool || is_packed(dtype)) {
    return tensor_from_proto(*proto, external, what);
  }
  Shape shape;
  RECUR_ASSIGN_OR_RETURN(const int64_t count, read_dims(*proto, what, &shape));
  const size_t nbytes = raw_bytes(dtype, count);
  RECUR_RETURN_IF_ERROR(check_data_size(*proto, dtype, shape, count, nbytes, what));
  std::unique_ptr<std::string> bytes(proto->release_raw_data());
  void* data = bytes->data();
  return Tensor::wrap(own_string(std::move(bytes)), data, dtype, std::move(shape));
}

Status tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  if (!t.is_cpu()) return invalid_argument("tensor_to_proto needs a host tensor");
  if (t.is_sequence()) return invalid_argument("tensor_to_proto: a sequence is a SequenceProto");
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  if (t.dtype() == DType::kString) {
    const auto* strings = t.data<std::string>();
    for (int64_t i = 0; i < t.numel(); ++i) proto->add_string_data(strings[i]);
    return ok_status();
  }
  if (is_packed(t.dtype())) {
    const auto* v = static_cast<const uint8_t*>(t.raw_data());
    const size_t bits = dtype_bits(t.dtype());
    const auto per = static_cast<int64_t>(8 / bits);
    const unsigned mask = (1u << bits) - 1;
    std::string packed(raw_bytes(t.dtype(), t.numel()), '\0');
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto shift = static_cast<unsigned>((i % per) * static_cast<int64_t>(bits));
      packed[static_cast<size_t>(i / per)] |= static_cast<char>((v[i] & mask) << shift);
    }
    proto->set_raw_data(packed);
    return ok_status();
  }
  proto->set_raw_data(static_cast<const char*>(t.raw_data()), t.nbytes());
  return ok_status();
}

namespace {

// A file holding one serialized message of type P (a backend test's input_K.pb).
template <class P>
Result<P> parse_pb_file(const std::string& path, const char* type_name) {
  RECUR_ASSIGN_OR_RETURN(const std::string bytes, read_regular_file(path, "tensor file"));
  P proto;
  if (!proto.ParseFromString(bytes)) {
    return invalid_argument("'" + path + "' is not a serialized " + type_name);
  }
  return proto;
}

Result<Tensor> sequence_from_protos(
    const google::protobuf::RepeatedPtrField<onnx::TensorProto>& protos, ExternalData* external,
    const std::string& path) {
  std::vector<Tensor> elements;
  for (const auto& tp : protos) {
    RECUR_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, external, "'" + path + "'"));
    elements.push_back(std::move(t));
  }
  try {
    return Tensor::sequence(std::move(elements));
  } catch (const Error& e) {
    return Status(e.code(), "'" + path + "': " + e.what());
  }
}

// A MapProto as a map value: its keys (int64 or string) and, in `values`, one single-element
// tensor per key, all of one dtype.
Result<Tensor> map_from_proto(const onnx::MapProto& mp, ExternalData* external,
                              const std::string& path) {
  const std::string where =
      "'" + path + "': map" + (mp.name().empty() ? "" : " '" + mp.name() + "'");
  Tensor keys;
  if (mp.key_type() == onnx::TensorProto::INT64) {
    keys = Tensor::from_vector<int64_t>({mp.keys_size()},
                                        std::vector<int64_t>(mp.keys().begin(), mp.keys().end()));
  } else if (mp.key_type() == onnx::TensorProto::STRING) {
    keys = Tensor::from_vector<std::string>(
        {mp.string_keys_size()},
        std::vector<std::string>(mp.string_keys().begin(), mp.string_keys().end()));
  } else {
    return not_implemented(where + " has key type " + std::to_string(mp.key_type()) +
                           "; recur's maps have int64 or string keys");
  }
  const onnx::SequenceProto& vs = mp.values();
  if (vs.tensor_values_size() != keys.numel()) {
    return invalid_argument(where + " has " + std::to_string(keys.numel()) + " keys and " +
                            std::to_string(vs.tensor_values_size()) + " tensor values");
  }
  std::vector<Tensor> scalars;
  for (const auto& tp : vs.tensor_values()) {
    RECUR_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, external, where));
    if (t.numel() != 1 || (!scalars.empty() && t.dtype() != scalars.front().dtype())) {
      return invalid_argument(where + ": each value must be one element of one dtype");
    }
    scalars.push_back(std::move(t));
  }
  const DType vt = scalars.empty() ? DType::kFloat32 : scalars.front().dtype();
  try {
    Tensor values = Tensor::empty(vt, {keys.numel()});
    for (size_t i = 0; i < scalars.size(); ++i) {
      if (vt == DType::kString) {
        values.data<std::string>()[i] = scalars[i].data<std::string>()[0];
      } else {
        copy_bytes(static_cast<char*>(values.raw_data()) + i * dtype_size(vt),
                   scalars[i].raw_data(), dtype_size(vt));
      }
    }
    return Tensor::map(std::move(keys), std::move(values));
  } catch (const Error& e) {
    return Status(e.code(), where + ": " + e.what());
  }
}

}  // namespace

Result<Tensor> read_map_pb(const std::string& path, std::string* name) {
  RECUR_ASSIGN_OR_RETURN(auto proto, parse_pb_file<onnx::MapProto>(path, "MapProto"));
  if (name) *name = proto.name();
  ExternalData external(std::filesystem::path(path).parent_path());
  return map_from_proto(proto, &external, path);
}

Result<Tensor> read_tensor_pb(const std::string& path, std::string* name) {
  RECUR_ASSIGN_OR_RETURN(auto proto, parse_pb_file<onnx::TensorProto>(path, "TensorProto"));
  if (name) *name = proto.name();
  ExternalData external(std::filesystem::path(path).parent_path());
  return tensor_from_proto(proto, &external, "'" + path + "'");
}

Result<Tensor> read_sequence_pb(const std::string& path, std::string* name) {
  RECUR_ASSIGN_OR_RETURN(auto proto, parse_pb_file<onnx::SequenceProto>(path, "SequenceProto"));
  if (name) *name = proto.name();
  ExternalData external(std::filesystem::path(path).parent_path());
  if (proto.elem_type() == onnx::SequenceProto::MAP) {
    std::vector<Tensor> maps;
    for (const auto& mp : proto.map_values()) {
      RECUR_ASSIGN_OR_RETURN(Tensor m, map_from_proto(mp, &external, path));
      maps.push_back(std::move(m));
    }
    try {
      return Tensor::sequence(std::move(maps), DType::kMap);
    } catch (const Error& e) {
      return Status(e.code(), "'" + path + "': " + e.what());
    }
  }
  if (proto.elem_type() != onnx::SequenceProto::TENSOR &&
      proto.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return not_implemented("'" + path + "': only sequences of tensors or maps are supported");
  }
  return sequence_from_protos(proto.tensor_values(), &external, path);
}

Result<Tensor> read_optional_pb(const std::string& path, std::string* name) {
  RECUR_ASSIGN_OR_RETURN(auto proto, parse_pb_file<onnx::OptionalProto>(path, "OptionalProto"));
  if (name) *name = proto.name();
  ExternalData external(std::filesystem::path(path).parent_path());
  if (proto.has_tensor_value()) {
    return tensor_from_proto(proto.tensor_value(), &external, "'" + path + "'");
  }
  if (proto.has_sequence_value()) {
    return sequence_from_protos(proto.sequence_value().tensor_values(), &external, path);
  }
  if (proto.elem_type() == onnx::OptionalProto::TENSOR ||
      proto.elem_type() == onnx::OptionalProto::SEQUENCE ||
      proto.elem_type() == onnx::OptionalProto::UNDEFINED) {
    return Tensor::none();
  }
  return not_implemented("'" + path + "': only optional tensors and sequences are supported");
}

Status write_tensor_pb(const Tensor& t, const std::string& name, const std::string& path) {
  onnx::TensorProto proto;
  RECUR_RETURN_IF_ERROR(tensor_to_proto(t, name, &proto));
  std::ofstream out(path, std::ios::binary);
  if (!out || !proto.SerializeToOstream(&out)) return io_error("cannot write '" + path + "'");
  return ok_status();
}

}  // namespace recur
