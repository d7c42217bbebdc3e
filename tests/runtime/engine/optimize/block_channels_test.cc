// The blocking pass (runtime/engine/optimize/optimizer.h, block_conv_chains) run on the
// reference provider, which takes any block: the rewritten graph (recur::ToBlocked,
// recur::BlockedConv, pools of kernel [kh, kw, 1], recur::FromBlocked) gives the outputs of the
// graph as written, for blocks of 4, 8 and 16 and channels-last, with a chain's first
// convolution reading plain X or blocked; which chains the pass takes and which it leaves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/graph/blocked.h"
#include "tests/support/model_builder.h"
#include "tests/support/plan_run.h"

namespace recur::testing {
namespace {

struct Counts {
  int to = 0, from = 0, conv = 0, pools_5d = 0;
};

Counts count(const Graph& g) {
  Counts c;
  for (const Node& n : g.nodes()) {
    c.to += n.op_type == kToBlockedOp;
    c.from += n.op_type == kFromBlockedOp;
    c.conv += n.op_type == kBlockedConvOp;
    if (n.op_type == "MaxPool" || n.op_type == "AveragePool") {
      c.pools_5d += n.attr("kernel_shape")->ints.size() == 3;
    }
  }
  return c;
}

// X [2, c0, 13, 18] -> Conv(c0 -> 16, 3x3, pad 1) -> Relu ("r", also a graph output)
// -> MaxPool(2x2, stride 2, ceil_mode) -> Conv(16 -> 32, 3x3, stride 2, pads 0 1 1 0, bias)
// -> Clip(-0.5, 0.5) -> AveragePool(3x3, pad 1, count_include_pad) -> Y.
std::string chain_model(int64_t c0, std::mt19937& rng) {
  ModelBuilder m(17);
  m.input("X", DType::kFloat32, {2, c0, 13, 18});
  m.initializer("W1", random_tensor({16, c0, 3, 3}, rng));
  m.initializer("W2", random_tensor({32, 16, 3, 3}, rng));
  m.initializer("B2", random_tensor({32}, rng));
  m.initializer("lo", Tensor::scalar(-0.5f));
  m.initializer("hi", Tensor::scalar(0.5f));
  m.output("Y", DType::kFloat32);
  m.output("r", DType::kFloat32);
  set_attr(m.node("Conv", {"X", "W1"}, {"c1"}, "conv1"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r"}, "relu");
  auto& mp = m.node("MaxPool", {"r"}, {"p1"}, "maxpool");
  set_attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(mp, "strides", std::vector<int64_t>{2, 2});
  set_attr(mp, "ceil_mode", int64_t{1});
  auto& c2 = m.node("Conv", {"p1", "W2", "B2"}, {"c2"}, "conv2");
  set_attr(c2, "strides", std::vector<int64_t>{2, 2});
  set_attr(c2, "pads", std::vector<int64_t>{0, 1, 1, 0});
  m.node("Clip", {"c2", "lo", "hi"}, {"k"}, "clip");
  auto& ap = m.node("AveragePool", {"k"}, {"Y"}, "avgpool");
  set_attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(ap, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(ap, "count_include_pad", int64_t{1});
  return m.bytes();
}

std::function<Status(Graph&)> blocking(int64_t block, bool* changed) {
  return [block, changed](Graph& g) {
    return block_conv_chains(
        g, block, [](const Node&, const Node&, const Graph&) { return true; }, changed);
  };
}

void expect_near(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape()) << what << " output " << i;
    for (int64_t k = 0; k < want[i].numel(); ++k) {
      const float a = got[i].data<float>()[k], b = want[i].data<float>()[k];
      ASSERT_NEAR(a, b, 1e-5f * std::max(1.0f, std::fabs(b)))
          << what << " output " << i << " @ " << k;
    }
  }
}

// The outputs of the graph as written (no pass) on the reference provider; none on an error.
std::vector<Tensor> written_outputs(const std::string& bytes, const Tensor& x) {
  auto plain = ReferencePlanRun::load(bytes);
  EXPECT_TRUE(plain.ok()) << plain.status().message();
  if (!plain.ok()) return {};
  auto want = (*plain)->run({x});
  EXPECT_TRUE(want.ok()) << want.status().message();
  return want.ok() ? std::move(want).value() : std::vector<Tensor>{};
}

TEST(BlockConvChains, TheReferenceRunsTheBlockedGraphAsWritten) {
  std::mt19937 rng(3);
  for (const int64_t c0 : {1, 3, 16, 32}) {
    const std::string bytes = chain_model(c0, rng);
    const Tensor x = random_tensor({2, c0, 13, 18}, rng, 1.0f);
    const std::vector<Tensor> want = written_outputs(bytes, x);
    ASSERT_FALSE(want.empty());
    for (const int64_t block : {4, 8, 16}) {
      const std::string what = "c0 " + std::to_string(c0) + ", block " + std::to_string(block);
      bool changed = false;
      auto blocked = ReferencePlanRun::load(bytes, blocking(block, &changed));
      ASSERT_TRUE(blocked.ok()) << what << ": " << blocked.status().message();
      ASSERT_TRUE(changed) << what;
      const Counts c = count((*blocked)->graph());
      // A first convolution of up to 4 channels reads X plain; one of whole blocks reads it
      // blocked, after a copy in. The side output and Y are copied out.
      const bool head = c0 <= 4;
      EXPECT_EQ(c.to, head ? 0 : 1) << what;
      EXPECT_EQ(c.from, 2) << what;
      EXPECT_EQ(c.conv, 2) << what;
      EXPECT_EQ(c.pools_5d, 2) << what;
      auto got = (*blocked)->run({x});
      ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
      expect_near(*got, want, what);
    }
  }
}

// A chain the layout filter makes channels-last: every value in one block of all its channels
// ([N, 1, H, W, C]), the first convolution reading a copy of X in that form too (one ToBlocked
// of block c0), each BlockedConv's block its own output channels; the reference gives the
// graph's outputs. The filter sees the chain's nodes as written.
TEST(BlockConvChains, AChainChannelsLastHoldsEachValueInOneBlock) {
  std::mt19937 rng(7);
  for (const int64_t c0 : {1, 3, 16}) {
    const std::string bytes = chain_model(c0, rng);
    const Tensor x = random_tensor({2, c0, 13, 18}, rng, 1.0f);
    const std::vector<Tensor> want = written_outputs(bytes, x);
    ASSERT_FALSE(want.empty());
    const std::string what = "c0 " + std::to_string(c0);
    bool changed = false;
    std::vector<std::string> asked;
    auto nhwc = ReferencePlanRun::load(bytes, [&](Graph& g) {
      return block_conv_chains(
          g, 16, [](const Node&, const Node&, const Graph&) { return true; }, &changed,
          [&asked](const std::vector<const Node*>& chain, const Graph&) {
            for (const Node* n : chain) asked.push_back(n->op_type);
            return true;
          });
    });
    ASSERT_TRUE(nhwc.ok()) << what << ": " << nhwc.status().message();
    ASSERT_TRUE(changed) << what;
    EXPECT_EQ(asked,
              (std::vector<std::string>{"Conv", "Relu", "MaxPool", "Conv", "Clip", "AveragePool"}))
        << what;
    std::vector<int64_t> to_blocks, conv_blocks;
    for (const Node& n : (*nhwc)->graph().nodes()) {
      if (n.op_type == kToBlockedOp) to_blocks.push_back(n.attr(kBlockAttr)->i);
      if (n.op_type == kBlockedConvOp) conv_blocks.push_back(n.attr(kBlockAttr)->i);
    }
    EXPECT_EQ(to_blocks, std::vector<int64_t>{c0}) << what;
    EXPECT_EQ(conv_blocks, (std::vector<int64_t>{16, 32})) << what;
    auto got = (*nhwc)->run({x});
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    expect_near(*got, want, what);
  }
}

// The blocked form's order, element by element against its definition (runtime/graph/
// blocked.h), and FromBlocked undoing it: the reference kernels the other providers' blocked
// tensors are checked against.
TEST(BlockConvChains, TheBlockedFormHoldsEachChannelInItsBlock) {
  std::mt19937 rng(6);
  ModelBuilder m(17);
  m.input("X", DType::kFloat32, {2, 12, 3, 5});
  m.output("B", DType::kFloat32);
  m.output("Y", DType::kFloat32);
  m.node("Identity", {"X"}, {"B"}, "to");
  m.node("Identity", {"B"}, {"Y"}, "from");
  auto run = ReferencePlanRun::load(m.bytes(), [](Graph& g) {
    for (int i = 0; i < 2; ++i) {
      Node& n = g.mutable_node(i);
      n.domain = kBlockedDomain;
      n.opset = 1;
      n.op_type = n.name == "to" ? kToBlockedOp : kFromBlockedOp;
      if (n.name == "to") {
        Attribute a;
        a.type = AttrType::kInt;
        a.i = 4;
        n.attributes[kBlockAttr] = a;
      }
    }
    return ok_status();
  });
  ASSERT_TRUE(run.ok()) << run.status().message();
  const Tensor x = random_tensor({2, 12, 3, 5}, rng, 1.0f);
  auto out = (*run)->run({x});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Tensor& b = (*out)[0];
  ASSERT_EQ(b.shape(), (Shape{2, 3, 3, 5, 4}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 12; ++c)
      for (int64_t s = 0; s < 15; ++s) {
        EXPECT_EQ(b.data<float>()[((n * 3 + c / 4) * 15 + s) * 4 + c % 4],
                  x.data<float>()[(n * 12 + c) * 15 + s]);
      }
  ASSERT_EQ((*out)[1].shape(), x.shape());
  EXPECT_EQ(std::memcmp((*out)[1].raw_data(), x.raw_data(), 4 * static_cast<size_t>(x.numel())), 0);
}

// A convolution alone (with its activation) copies X in and Y out either way: left as it is,
// as are grouped convolutions and those whose W is a graph input.
TEST(BlockConvChains, LeavesChainsThatSaveNoCopy) {
  std::mt19937 rng(4);
  ModelBuilder m(17);
  m.input("X", DType::kFloat32, {1, 16, 8, 8});
  m.input("Wi", DType::kFloat32, {16, 16, 3, 3});
  m.initializer("W", random_tensor({16, 16, 3, 3}, rng));
  m.initializer("Wg", random_tensor({16, 8, 3, 3}, rng));
  m.output("Y", DType::kFloat32);
  m.output("Z", DType::kFloat32);
  m.node("Conv", {"X", "W"}, {"a"}, "alone");
  m.node("Relu", {"a"}, {"Y"}, "relu");
  set_attr(m.node("Conv", {"X", "Wg"}, {"g"}, "grouped"), "group", int64_t{2});
  auto& mp = m.node("MaxPool", {"g"}, {"p"}, "pool");
  set_attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  m.node("Conv", {"p", "Wi"}, {"Z"}, "fed_w");
  bool changed = true;
  auto run = ReferencePlanRun::load(m.bytes(), blocking(16, &changed));
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_FALSE(changed);
  const Counts c = count((*run)->graph());
  EXPECT_EQ(c.to + c.from + c.conv + c.pools_5d, 0);
}

// A filter that refuses the pool leaves the chain at one convolution: nothing changes.
TEST(BlockConvChains, AsksTheFilterForEachNode) {
  std::mt19937 rng(5);
  const std::string bytes = chain_model(16, rng);
  bool changed = true;
  auto run = ReferencePlanRun::load(bytes, [&changed](Graph& g) {
    return block_conv_chains(
        g, 16,
        [](const Node& original, const Node&, const Graph&) {
          return original.op_type != "MaxPool";
        },
        &changed);
  });
  ASSERT_TRUE(run.ok()) << run.status().message();
  // conv2, the Clip and the AveragePool still make a chain of a convolution and a pool.
  EXPECT_TRUE(changed);
  const Counts c = count((*run)->graph());
  EXPECT_EQ(c.conv, 1);
  EXPECT_EQ(c.pools_5d, 1);
  EXPECT_EQ(c.to, 1);
  EXPECT_EQ(c.from, 1);
}

}  // namespace
}  // namespace recur::testing
