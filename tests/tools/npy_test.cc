// The .npy reader against hand-written files: shapes it must refuse rather than reinterpret,
// errors that name the file, and files that are not regular files.
#include "tools/common/npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/engine/onnx/tensor_proto.h"
#include "tests/support/fifo.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

// A version 1.0 .npy file with `shape` written verbatim into its header and `data_bytes` zero
// bytes of little-endian float32 data.
std::string write_npy_bytes(const fs::path& dir, const std::string& name, const std::string& shape,
                            size_t data_bytes) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  const auto path = (dir / name).string();
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xFF),
                       static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header << std::string(data_bytes, '\0');
  return path;
}

// The message of read_npy's error, or "" where it succeeded.
std::string npy_error(const std::string& path) {
  auto r = tools::read_npy(path);
  return r.ok() ? std::string() : r.status().message();
}

TEST(Npy, WellFormedShapesRead) {
  TempDir dir;
  for (const auto& [text, want] : std::vector<std::pair<std::string, Shape>>{{"(2, 3)", {2, 3}},
                                                                             {"(5,)", {5}},
                                                                             {"()", {}},
                                                                             {"(0, 4)", {0, 4}},
                                                                             {"(2, 3,)", {2, 3}}}) {
    const auto path =
        write_npy_bytes(dir.path(), "ok.npy", text, static_cast<size_t>(shape_numel(want)) * 4);
    auto t = tools::read_npy(path);
    ASSERT_TRUE(t.ok()) << text << ": " << t.status().message();
    EXPECT_EQ(t->shape(), want) << text;
  }
}

TEST(Npy, NegativeDimensionIsRefusedNotMadePositive) {
  TempDir dir;
  const auto path = write_npy_bytes(dir.path(), "neg.npy", "(8, -3, 10)", 8 * 3 * 10 * 4);
  const std::string e = npy_error(path);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("'-3' is not a non-negative integer"), std::string::npos) << e;
}

TEST(Npy, MalformedDimensionsNameTheFile) {
  TempDir dir;
  for (const std::string shape :
       {"(2, x)", "(+2,)", "(2, , 3)", "(2.5,)", "(1e3,)", "(5,,)", "(,)"}) {
    const auto path = write_npy_bytes(dir.path(), "bad.npy", shape, 64);
    const std::string e = npy_error(path);
    EXPECT_NE(e.find(path), std::string::npos) << shape << ": " << e;
    EXPECT_NE(e.find("not a non-negative integer"), std::string::npos) << shape << ": " << e;
  }
}

TEST(Npy, OverflowingDimensionIsAnErrorNotAnException) {
  TempDir dir;
  const auto path = write_npy_bytes(dir.path(), "big.npy", "(99999999999999999999999,)", 4);
  std::string e;
  EXPECT_NO_THROW(e = npy_error(path));
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("too large"), std::string::npos) << e;
}

TEST(Npy, HugeShapeNamesTheFileBeforeAllocating) {
  TempDir dir;
  // Each dimension fits in int64; the product of the bytes does not.
  const auto path = write_npy_bytes(dir.path(), "huge.npy", "(4294967296, 4294967296)", 4);
  std::string e;
  EXPECT_NO_THROW(e = npy_error(path));
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("overflows"), std::string::npos) << e;
  // Representable, but far more than the file holds: refused before allocating, naming it.
  const auto large = write_npy_bytes(dir.path(), "large.npy", "(1000000000000,)", 4);
  EXPECT_NO_THROW(e = npy_error(large));
  EXPECT_NE(e.find(large), std::string::npos) << e;
  EXPECT_NE(e.find("shorter than the shape"), std::string::npos) << e;
}

// A .npy file's bytes from its header dict (padded as numpy pads it) and hex data.
std::string npy_file(const std::string& dict, const std::string& hex) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// Written by numpy 1.24: np.save(f, np.array([['a', 'héllo'], ['', '中']])), dtype '<U5'.
const std::string kNumpyUnicode =
    npy_file("{'descr': '<U5', 'fortran_order': False, 'shape': (2, 2), }",
             "6100000000000000000000000000000000000000"
             "68000000e90000006c0000006c0000006f000000"
             "0000000000000000000000000000000000000000"
             "2d4e0000000000000000000000000000"
             "00000000");
// np.save(f, np.array([b'ab', b'\xff\x00c'])), dtype '|S3': bytes that are not UTF-8.
const std::string kNumpyBytes =
    npy_file("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }", "616200ff0063");

// Found by the npy fuzzer: an empty 'S1' array of dimensions whose product in bytes fits only
// at one byte an element was read, but written back as 'U1' (4 bytes), which the reader then
// refused. An empty array's size in bytes is 0 whatever its element type.
TEST(Npy, AnEmptyArrayOfHugeDimensionsRoundTrips) {
  std::string header =
      "{'descr': '|S1', 'fortran_order': False, 'shape': (2000, 1200000000002000, 0), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  auto t = tools::parse_npy(bytes, "empty.npy");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->numel(), 0);
  auto written = tools::encode_npy(*t);
  ASSERT_TRUE(written.ok()) << written.status().message();
  auto back = tools::parse_npy(*written, "again.npy");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->shape(), t->shape());
}

TEST(Npy, NumpyStringsReadAsUtf8AndBytes) {
  auto u = tools::parse_npy(kNumpyUnicode, "u.npy");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->dtype(), DType::kString);
  EXPECT_EQ(u->shape(), (Shape{2, 2}));
  const std::string* s = u->data<std::string>();
  EXPECT_EQ(std::vector<std::string>(s, s + 4),
            (std::vector<std::string>{"a", "h\xc3\xa9llo", "", "\xe4\xb8\xad"}));
  auto b = tools::parse_npy(kNumpyBytes, "b.npy");
  ASSERT_TRUE(b.ok()) << b.status().message();
  const std::string* bs = b->data<std::string>();
  EXPECT_EQ(bs[0], "ab");
  EXPECT_EQ(bs[1], std::string("\xff\x00"
                               "c",
                               3));  // an inner NUL stays; trailing ones go
}

TEST(Npy, StringTensorsWriteAsNumpyWrites) {
  Tensor u = Tensor::empty(DType::kString, {2, 2});
  const std::vector<std::string> words = {"a", "h\xc3\xa9llo", "", "\xe4\xb8\xad"};
  std::copy(words.begin(), words.end(), u.data<std::string>());
  auto encoded = tools::encode_npy(u);
  ASSERT_TRUE(encoded.ok()) << encoded.status().message();
  EXPECT_EQ(*encoded, kNumpyUnicode);
  // Not UTF-8: written as bytes, so nothing is lost.
  Tensor b = Tensor::empty(DType::kString, {2});
  b.data<std::string>()[0] = "ab";
  b.data<std::string>()[1] = std::string(
      "\xff\x00"
      "c",
      3);
  encoded = tools::encode_npy(b);
  ASSERT_TRUE(encoded.ok()) << encoded.status().message();
  EXPECT_EQ(*encoded, kNumpyBytes);
}

TEST(Npy, BrokenStringArraysNameTheFile) {
  for (const auto& [bytes, part] : std::vector<std::pair<std::string, std::string>>{
           // U+110000 is beyond Unicode.
           {npy_file("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", "00001100"),
            "not Unicode"},
           // A lone surrogate.
           {npy_file("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", "00d80000"),
            "not Unicode"},
           {npy_file("{'descr': '<U0', 'fortran_order': False, 'shape': (1000000000,), }", ""),
            "has no width"},
           {npy_file("{'descr': '<Ux', 'fortran_order': False, 'shape': (1,), }", "61000000"),
            "bad string dtype"},
           {npy_file("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", "61000000"),
            "shorter than the shape"},
           // np.save of an object array (strings left as Python objects): a pickle.
           {npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "80049500"),
            "save strings with .astype(str)"}}) {
    auto r = tools::parse_npy(bytes, "s.npy");
    ASSERT_FALSE(r.ok()) << part;
    EXPECT_NE(r.status().message().find("'s.npy'"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(part), std::string::npos) << r.status().message();
  }
}

// A FIFO given as a tensor file is refused at once, by both readers, instead of blocking.
TEST(Npy, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  for (const char* name : {"in.npy", "in.pb"}) {
    const std::string fifo = (dir.path() / name).string();
    ASSERT_TRUE(testing::make_fifo(fifo));
    EXPECT_TRUE(testing::finishes_promptly(
        [&] {
          auto r = tools::read_tensor_file(fifo);
          ASSERT_FALSE(r.ok());
          EXPECT_NE(r.status().message().find(fifo), std::string::npos) << r.status().message();
          EXPECT_NE(r.status().message().find("FIFO"), std::string::npos) << r.status().message();
        },
        fifo));
  }
}

}  // namespace
}  // namespace recur
