// RNN nodes whose sizes overflow int64_t. hidden_size = 2^62 makes an LSTM's 4 * H wrap to 0,
// so zero-size W, R and B used to pass the shape checks and crash oneDNN's weight repacking;
// every such model must be refused at load, naming the node, under each provider.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "recur/recur.h"
#include "tests/support/model_builder.h"

namespace {

using recur::DType;
using recur::ErrorCode;
using recur::Tensor;
using recur::testing::ModelBuilder;

constexpr int64_t kHuge = int64_t{1} << 62;

// cell, bidirectional, with B, with the hidden_size attribute, provider.
using Case = std::tuple<const char*, bool, bool, bool, const char*>;

class RnnSizeLimits : public ::testing::TestWithParam<Case> {};

TEST_P(RnnSizeLimits, HugeHiddenSizeIsAnErrorNamingTheNode) {
  const auto [cell, bidirectional, with_b, with_attr, provider] = GetParam();
  const int64_t D = bidirectional ? 2 : 1;
  ModelBuilder b;
  b.input("X", DType::kFloat32, {1, 1, 1});
  // The gate dimensions are 0, what G * 2^62 wraps to for an LSTM; the node's other
  // sizes besides H are 1.
  b.initializer("W", Tensor::empty(DType::kFloat32, {D, 0, 1}));
  b.initializer("R", Tensor::empty(DType::kFloat32, {D, 0, kHuge}));
  if (with_b) b.initializer("B", Tensor::empty(DType::kFloat32, {D, 0}));
  b.output("Y", DType::kFloat32);
  auto& n = b.node(cell,
                   with_b ? std::vector<std::string>{"X", "W", "R", "B"}
                          : std::vector<std::string>{"X", "W", "R"},
                   {"Y"}, "huge_rnn");
  if (with_attr) recur::testing::set_attr(n, "hidden_size", kHuge);
  if (bidirectional) recur::testing::set_attr(n, "direction", std::string("bidirectional"));
  const std::string bytes = b.bytes();
  try {
    recur::Session::from_bytes(bytes.data(), bytes.size(),
                               recur::SessionOptions{}.providers({provider}));
    ADD_FAILURE() << "expected a recur::Error";
  } catch (const recur::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    const std::string m = e.what();
    EXPECT_NE(m.find("node 'huge_rnn'"), std::string::npos) << m;
    EXPECT_NE(m.find("too large"), std::string::npos) << m;
  }
}

INSTANTIATE_TEST_SUITE_P(All, RnnSizeLimits,
                         ::testing::Combine(::testing::Values("LSTM", "GRU", "RNN"),
                                            ::testing::Bool(), ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values("reference", "onednn")));

}  // namespace
