// The .npy reader against hand-written files: shapes it must refuse rather than reinterpret,
// errors that name the file, and files that are not regular files.
#include "tools/common/npy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

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
