// models/lstm_streaming run as a stream: chunks of different lengths, each run fed with the
// state (h_n, c_n) that recur itself returned for the previous chunk, against PyTorch running
// the same chunks in order (models/lstm_streaming/stream/, made by
// tools/models/export_lstm_streaming.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tools/common/npy.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

namespace fs = std::filesystem;

const std::string kModelDir = std::string(RECUR_SOURCE_DIR) + "/models/lstm_streaming";
constexpr int64_t kLayers = 2;
constexpr int64_t kHidden = 40;

struct Chunk {
  Tensor x, y, h_n, c_n;  // input and PyTorch's outputs after this chunk
};

Tensor read(const fs::path& p) {
  auto t = tools::read_tensor_file(p.string());
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : Tensor();
}

std::vector<Chunk> read_stream() {
  std::vector<Chunk> chunks;
  for (int k = 0;; ++k) {
    const fs::path d = fs::path(kModelDir) / "stream" / ("chunk_" + std::to_string(k));
    if (!fs::is_directory(d)) break;
    chunks.push_back({read(d / "x.pb"), read(d / "y.pb"), read(d / "h_n.pb"), read(d / "c_n.pb")});
  }
  return chunks;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  tools::Comparison c = tools::compare(got, want, tools::Tolerance{});
  EXPECT_TRUE(c.match) << what << ": " << c.reason << " (max abs error " << c.max_abs << ")";
}

// One stream's carried state.
struct Stream {
  Tensor h, c;
  explicit Stream(int64_t batch)
      : h(Tensor::zeros(DType::kFloat32, {kLayers, batch, kHidden})),
        c(Tensor::zeros(DType::kFloat32, {kLayers, batch, kHidden})) {}

  void step(const Session& session, const Chunk& chunk, const std::string& what) {
    Outputs out = session.run({{"x", chunk.x}, {"h0", h}, {"c0", c}});
    expect_close(out["y"], chunk.y, what + " y");
    expect_close(out["h_n"], chunk.h_n, what + " h_n");
    expect_close(out["c_n"], chunk.c_n, what + " c_n");
    // recur's own state, copied so that the next run cannot see memory the session reuses.
    h = out["h_n"].clone();
    c = out["c_n"].clone();
  }
};

class LstmStreaming : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(LstmStreaming, ChunksCarryTheirOwnState) {
  const std::vector<Chunk> chunks = read_stream();
  ASSERT_GE(chunks.size(), 3u);
  Session session(kModelDir + "/model.onnx", SessionOptions().providers(GetParam()));
  Stream s(chunks[0].x.dim(0));
  for (size_t k = 0; k < chunks.size(); ++k) {
    s.step(session, chunks[k], "chunk " + std::to_string(k));
    if (HasFatalFailure()) return;
  }
}

// The session keeps no state between runs: two streams interleaved chunk by chunk on one
// session each see what they would see alone.
TEST_P(LstmStreaming, InterleavedStreamsStayIndependent) {
  const std::vector<Chunk> chunks = read_stream();
  ASSERT_GE(chunks.size(), 3u);
  Session session(kModelDir + "/model.onnx", SessionOptions().providers(GetParam()));
  const int64_t batch = chunks[0].x.dim(0);
  Stream a(batch), b(batch);
  // b starts two chunks later than a.
  for (size_t k = 0; k < chunks.size() + 2; ++k) {
    if (k < chunks.size()) a.step(session, chunks[k], "stream a chunk " + std::to_string(k));
    if (k >= 2) b.step(session, chunks[k - 2], "stream b chunk " + std::to_string(k - 2));
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Providers, LstmStreaming,
                         ::testing::Values(std::vector<std::string>{},
                                           std::vector<std::string>{"reference"}),
                         [](const auto& info) {
                           return info.param.empty() ? std::string("Default") : info.param[0];
                         });

}  // namespace
}  // namespace recur
