// Properties of the reference RNN kernels that the oracle-backed cases under tests/data/rnn do
// not cover: concurrent runs of one session, and empty sequences or batches.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"

namespace {

using recur::DType;
using recur::Shape;
using recur::Tensor;
using recur::testing::ModelBuilder;
using recur::testing::set_attr;

Tensor random_floats(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = normal(rng);
  return t;
}

// A bidirectional LSTM with peepholes and a sequence_lens input; X is [T, N, 3], H = 5.
recur::Session bilstm_session() {
  const int64_t I = 3, H = 5;
  ModelBuilder b(14);
  b.input("X", DType::kFloat32, {-1, -1, I}, {"T", "N"})
      .input("sequence_lens", DType::kInt32, {-1}, {"N"})
      .initializer("W", random_floats({2, 4 * H, I}, 1))
      .initializer("R", random_floats({2, 4 * H, H}, 2))
      .initializer("B", random_floats({2, 8 * H}, 3))
      .initializer("P", random_floats({2, 3 * H}, 4))
      .output("Y", DType::kFloat32)
      .output("Y_h", DType::kFloat32)
      .output("Y_c", DType::kFloat32);
  auto& n = b.node("LSTM", {"X", "W", "R", "B", "sequence_lens", "", "", "P"}, {"Y", "Y_h", "Y_c"},
                   "bilstm");
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", std::string("bidirectional"));
  const std::string bytes = b.bytes();
  return recur::Session::from_bytes(bytes.data(), bytes.size(),
                                    recur::SessionOptions{}.providers({"reference"}));
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(RnnKernel, ConcurrentRunsOfOneSessionAgreeWithSequentialOnes) {
  const recur::Session s = bilstm_session();
  constexpr int kThreads = 4;
  std::vector<recur::Feeds> feeds;
  std::vector<recur::Outputs> sequential;
  for (int k = 0; k < kThreads; ++k) {
    const int64_t T = 3 + k, N = 2 + k;
    std::vector<int32_t> lens;
    for (int64_t i = 0; i < N; ++i) lens.push_back(static_cast<int32_t>((i * 7 + k) % (T + 1)));
    feeds.push_back({{"X", random_floats({T, N, 3}, 100 + k)},
                     {"sequence_lens", Tensor::from_vector<int32_t>({N}, lens)}});
    sequential.push_back(s.run(feeds.back()));
  }
  std::vector<std::vector<recur::Outputs>> got(kThreads);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 20; ++rep) got[k].push_back(s.run(feeds[k]));
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < kThreads; ++k) {
    for (const auto& out : got[k]) {
      ASSERT_EQ(out.size(), 3u);
      for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_TRUE(same_bits(out[i], sequential[k][i])) << "thread " << k << " output " << i;
      }
    }
  }
}

TEST(RnnKernel, EmptySequenceGivesZeroStates) {
  // T = 0: every sequence has length 0, so Y is empty and Y_h / Y_c are zeros.
  const recur::Session s = bilstm_session();
  auto out = s.run({{"X", Tensor::empty(DType::kFloat32, {0, 2, 3})},
                    {"sequence_lens", Tensor::from_vector<int32_t>({2}, {0, 0})}});
  EXPECT_EQ(out[0].shape(), (Shape{0, 2, 2, 5}));
  for (size_t i : {1u, 2u}) {
    ASSERT_EQ(out[i].shape(), (Shape{2, 2, 5}));
    for (int64_t j = 0; j < out[i].numel(); ++j) EXPECT_EQ(out[i].data<float>()[j], 0.0f);
  }
}

TEST(RnnKernel, EmptyBatchGivesEmptyOutputs) {
  const recur::Session s = bilstm_session();
  auto out = s.run({{"X", Tensor::empty(DType::kFloat32, {4, 0, 3})},
                    {"sequence_lens", Tensor::empty(DType::kInt32, {0})}});
  EXPECT_EQ(out[0].shape(), (Shape{4, 2, 0, 5}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 0, 5}));
  EXPECT_EQ(out[2].shape(), (Shape{2, 0, 5}));
}

}  // namespace
