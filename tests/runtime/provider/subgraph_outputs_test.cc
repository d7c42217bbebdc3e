// SubgraphOutputs: the vectors If keeps for its branches' outputs from run to run (issue 13).
#include <gtest/gtest.h>

#include <vector>

#include "runtime/provider/kernel.h"

namespace recur {
namespace {

TEST(SubgraphOutputs, NestedOnesGetVectorsOfTheirOwn) {
  SubgraphOutputs outer;
  outer.tensors().push_back(Tensor::scalar<float>(1.0f));
  {
    SubgraphOutputs inner;  // a subgraph run inside the outer one's (If in an If branch)
    EXPECT_NE(&inner.tensors(), &outer.tensors());
    EXPECT_TRUE(inner.tensors().empty());
    inner.tensors().push_back(Tensor::scalar<float>(2.0f));
  }
  ASSERT_EQ(outer.tensors().size(), 1u);
  EXPECT_EQ(*outer.tensors()[0].data<float>(), 1.0f);
}

TEST(SubgraphOutputs, KeepsItsCapacityAndDropsItsTensors) {
  const std::vector<Tensor>* first = nullptr;
  size_t capacity = 0;
  Tensor t = Tensor::scalar<float>(3.0f);
  {
    SubgraphOutputs held;
    for (int i = 0; i < 5; ++i) held.tensors().push_back(t);
    first = &held.tensors();
    capacity = held.tensors().capacity();
  }
  EXPECT_EQ(t.owner().use_count(), 1);  // the vector no longer holds the tensor
  SubgraphOutputs again;                // the next run at the same depth
  EXPECT_EQ(&again.tensors(), first);
  EXPECT_TRUE(again.tensors().empty());
  EXPECT_GE(again.tensors().capacity(), capacity);
}

}  // namespace
}  // namespace recur
