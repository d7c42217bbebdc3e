#include "tools/common/npy.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/utf8.h"
#include "runtime/engine/onnx/tensor_proto.h"

namespace recur::tools {

namespace {

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType kTypes[] = {
    {"f4", DType::kFloat32}, {"f8", DType::kFloat64}, {"f2", DType::kFloat16},
    {"i1", DType::kInt8},    {"i2", DType::kInt16},   {"i4", DType::kInt32},
    {"i8", DType::kInt64},   {"u1", DType::kUInt8},   {"u2", DType::kUInt16},
    {"u4", DType::kUInt32},  {"u8", DType::kUInt64},  {"b1", DType::kBool},
};

// The value of `key` in the header dict, as text up to the next top-level comma or brace.
std::string dict_value(const std::string& header, const std::string& key) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return {};
  auto p = header.find(':', k);
  if (p == std::string::npos) return {};
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p < header.size() && header[p] == '(') {
    const auto e = header.find(')', p);
    return e == std::string::npos ? std::string() : header.substr(p, e - p + 1);
  }
  auto e = p;
  while (e < header.size() && header[e] != ',' && header[e] != '}') ++e;
  return header.substr(p, e - p);
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The shape tuple "(8, 3, 10)", "(5,)" or "()": every dimension plain digits (a sign is not
// silently dropped), no overflow, and the whole array's size in bytes representable.
Result<Shape> parse_shape(const std::string& text, size_t elem_size, const std::string& path) {
  auto bad = [&](const std::string& why) {
    return invalid_argument("'" + path + "': shape " + text + ": " + why);
  };
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return bad("not a tuple");
  // Split at every comma: n commas give n + 1 items, so "(5,,)" keeps an empty one to refuse.
  std::vector<std::string> items;
  const std::string body = text.substr(1, text.size() - 2);
  for (size_t start = 0;;) {
    const size_t comma = body.find(',', start);
    items.push_back(trim(body.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // "()" is a scalar; "(5,)" ends in the one empty item that a 1-tuple's comma leaves, and a
  // trailing comma after more items ("(2, 3,)") is the same tuple to Python, which numpy reads
  // headers with.
  if (items.size() == 1 && items[0].empty()) items.clear();
  if (items.size() >= 2 && items.back().empty() && !items[items.size() - 2].empty()) {
    items.pop_back();
  }
  Shape shape;
  // The element count, in the order Tensor multiplies the dimensions, must not overflow; the
  // size in bytes only where there are elements, so that an empty array's element type does
  // not decide whether it is read ('S1' and 'U1' of shape (2000, 10^15, 0), say: the writer
  // stores an empty string array as 'U1').
  uint64_t count = 1;
  for (const std::string& item : items) {
    int64_t d = 0;
    const char* stop = item.data() + item.size();
    const auto [ptr, ec] = item.empty() || item[0] < '0' || item[0] > '9'
                               ? std::from_chars_result{item.data(), std::errc::invalid_argument}
                               : std::from_chars(item.data(), stop, d);
    if (ec == std::errc::result_out_of_range) return bad("dimension " + item + " is too large");
    if (ec != std::errc() || ptr != stop) {
      return bad("dimension '" + item + "' is not a non-negative integer");
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count) ||
        count > static_cast<uint64_t>(INT64_MAX)) {
      return bad("the array's element count overflows");
    }
    shape.push_back(d);
  }
  uint64_t bytes = 0;
  if (count > 0 && (__builtin_mul_overflow(count, static_cast<uint64_t>(elem_size), &bytes) ||
                    bytes > static_cast<uint64_t>(INT64_MAX))) {
    return bad("the array's size in bytes overflows");
  }
  return shape;
}

// numpy's fixed-width strings: 'U<n>' (n UTF-32LE code points, numpy's str) read as UTF-8, and
// 'S<n>' (n bytes, numpy's bytes) as they are. numpy pads each with NULs and drops trailing NULs
// when it reads one back; so does this.
Result<Tensor> read_strings(std::istringstream& in, const std::string& header,
                            const std::string& code, const std::string& path) {
  const bool unicode = code[0] == 'U';
  uint64_t width = 0;
  const char* stop = code.data() + code.size();
  const auto [ptr, ec] = std::from_chars(code.data() + 1, stop, width);
  if (ec != std::errc() || ptr != stop || width > (1u << 24)) {
    return invalid_argument("'" + path + "': bad string dtype '" + code + "'");
  }
  const uint64_t item = width * (unicode ? 4 : 1);
  RECUR_ASSIGN_OR_RETURN(const Shape shape, parse_shape(dict_value(header, "shape"),
                                                        std::max<uint64_t>(item, 1), path));
  const auto have = static_cast<uint64_t>(in.rdbuf()->in_avail());
  const auto numel = static_cast<uint64_t>(shape_numel(shape));
  if (numel * item > have) {
    return invalid_argument("'" + path + "': the data (" + std::to_string(have) +
                            " bytes) is shorter than the shape " + shape_to_string(shape) +
                            " needs");
  }
  // Zero-width strings take no bytes, so the file would not bound their number.
  if (item == 0 && numel > 0) {
    return invalid_argument("'" + path + "': string dtype '" + code + "' has no width");
  }
  Tensor t = Tensor::empty(DType::kString, shape);
  std::string raw(item, '\0');
  std::u32string cps;
  for (uint64_t i = 0; i < numel; ++i) {
    in.read(raw.data(), static_cast<std::streamsize>(item));
    std::string& out = t.data<std::string>()[i];
    if (!unicode) {
      out.assign(raw, 0, raw.find_last_not_of('\0') + 1);
      continue;
    }
    cps.clear();
    for (uint64_t k = 0; k < width; ++k) {
      const auto* b = reinterpret_cast<const unsigned char*>(raw.data() + 4 * k);
      cps.push_back(static_cast<char32_t>(b[0] | (b[1] << 8) | (b[2] << 16) |
                                          (static_cast<uint32_t>(b[3]) << 24)));
    }
    cps.erase(cps.find_last_not_of(U'\0') + 1);
    for (char32_t cp : cps) {
      if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return invalid_argument("'" + path + "': element " + std::to_string(i) +
                                " holds a code point that is not Unicode");
      }
    }
    encode_utf8(cps, &out);
  }
  return t;
}

// A string tensor as 'U<n>' when every string is UTF-8 (what numpy users expect), else as 'S<n>'
// bytes, so that no byte is lost.
std::string encode_strings(const Tensor& t, std::string* descr) {
  const std::string* strings = t.data<std::string>();
  std::vector<std::u32string> decoded(static_cast<size_t>(t.numel()));
  bool unicode = true;
  size_t width = 1;
  for (int64_t i = 0; i < t.numel() && unicode; ++i) {
    unicode = decode_utf8(strings[i], &decoded[static_cast<size_t>(i)]);
    width = std::max(width, decoded[static_cast<size_t>(i)].size());
  }
  std::string data;
  if (unicode) {
    *descr = "<U" + std::to_string(width);
    data.reserve(static_cast<size_t>(t.numel()) * width * 4);
    for (const std::u32string& cps : decoded) {
      for (size_t k = 0; k < width; ++k) {
        const uint32_t cp = k < cps.size() ? cps[k] : 0;
        for (int b = 0; b < 4; ++b) data += static_cast<char>((cp >> (8 * b)) & 0xFF);
      }
    }
    return data;
  }
  width = 1;
  for (int64_t i = 0; i < t.numel(); ++i) width = std::max(width, strings[i].size());
  *descr = "|S" + std::to_string(width);
  for (int64_t i = 0; i < t.numel(); ++i) {
    data += strings[i];
    data.append(width - strings[i].size(), '\0');
  }
  return data;
}

}  // namespace

Result<Tensor> read_npy(const std::string& path) {
  RECUR_ASSIGN_OR_RETURN(std::string bytes, read_regular_file(path, ".npy file"));
  return parse_npy(std::move(bytes), path);
}

Result<Tensor> parse_npy(std::string bytes, const std::string& path) {
  std::istringstream in(std::move(bytes));
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return invalid_argument("'" + path + "' is not a .npy file");
  }
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2))
      return invalid_argument("'" + path + "': short header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4))
      return invalid_argument("'" + path + "': short header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return invalid_argument("'" + path + "': unsupported .npy version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) return invalid_argument("'" + path + "': header too large");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return invalid_argument("'" + path + "': short header");

  std::string descr = dict_value(header, "descr");
  if (descr.size() < 4) return invalid_argument("'" + path + "': no dtype in header");
  descr = descr.substr(1, descr.size() - 2);  // strip quotes
  if (descr[0] == '>' && descr.substr(1) != "i1" && descr.substr(1) != "u1" &&
      descr.substr(1) != "b1") {
    return not_implemented("'" + path + "': big-endian arrays are not supported");
  }
  const std::string code = descr.substr(1);
  if (dict_value(header, "fortran_order").find("True") != std::string::npos) {
    return not_implemented("'" + path + "': Fortran-order arrays are not supported");
  }
  if (code[0] == 'U' || code[0] == 'S') return read_strings(in, header, code, path);
  DType dtype = DType::kUndefined;
  for (const auto& t : kTypes)
    if (code == t.descr) dtype = t.dtype;
  if (dtype == DType::kUndefined) {
    // numpy pickles object arrays, which this reader does not unpickle; strings are usually
    // what such a file holds.
    const std::string hint = code == "O" ? " (an object array, which numpy stores pickled: "
                                           "save strings with .astype(str) instead)"
                                         : "";
    return not_implemented("'" + path + "': unsupported dtype '" + descr + "'" + hint);
  }
  const std::string shape_text = dict_value(header, "shape");
  RECUR_ASSIGN_OR_RETURN(const Shape shape, parse_shape(shape_text, dtype_size(dtype), path));
  // Before allocating: a header may claim far more than the file holds.
  const auto have = static_cast<uint64_t>(in.rdbuf()->in_avail());
  if (static_cast<uint64_t>(shape_numel(shape)) * dtype_size(dtype) > have) {
    return invalid_argument("'" + path + "': the data (" + std::to_string(have) +
                            " bytes) is shorter than the shape " + shape_to_string(shape) +
                            " needs");
  }
  Tensor t = Tensor::empty(dtype, shape);
  if (!in.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()))) {
    return invalid_argument("'" + path + "': the data is shorter than the shape " +
                            shape_to_string(shape) + " needs");
  }
  if (dtype == DType::kBool) {
    auto* b = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) b[i] = b[i] != 0;
  }
  return t;
}

Result<std::string> encode_npy(const Tensor& t) {
  if (!t.is_cpu()) return invalid_argument("encode_npy needs a host tensor");
  std::string descr, strings;
  if (t.dtype() == DType::kString) {
    strings = encode_strings(t, &descr);
  } else {
    const char* code = nullptr;
    for (const auto& k : kTypes)
      if (k.dtype == t.dtype()) code = k.descr;
    if (!code)
      return not_implemented("cannot write " + std::string(dtype_name(t.dtype())) + " as .npy");
    const bool single_byte = std::strcmp(code, "b1") == 0 || std::strcmp(code, "i1") == 0 ||
                             std::strcmp(code, "u1") == 0;
    descr = (single_byte ? "|" : "<") + std::string(code);
  }
  std::string shape = "(";
  // As numpy writes it: "(2, 3)", "(5,)", "()".
  for (size_t i = 0; i < t.shape().size(); ++i) {
    shape += (i > 0 ? ", " : "") + std::to_string(t.shape()[i]);
  }
  if (t.shape().size() == 1) shape += ",";
  shape += ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary, as numpy does.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<uint16_t>(header.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>(len >> 8);
  out += header;
  if (t.dtype() == DType::kString) {
    out += strings;
  } else {
    out.append(static_cast<const char*>(t.raw_data()), t.nbytes());
  }
  return out;
}

Status write_npy(const Tensor& t, const std::string& path) {
  RECUR_ASSIGN_OR_RETURN(const std::string bytes, encode_npy(t));
  std::ofstream out(path, std::ios::binary);
  if (!out) return io_error("cannot write '" + path + "'");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return io_error("error writing '" + path + "'");
  return ok_status();
}

Result<Tensor> read_tensor_file(const std::string& path) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return read_npy(path);
  return read_tensor_pb(path);
}

}  // namespace recur::tools
