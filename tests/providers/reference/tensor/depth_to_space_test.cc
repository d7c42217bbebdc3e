// DepthToSpace and SpaceToDepth: bad shapes, and SpaceToDepth undoing DepthToSpace (DCR).
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor arange_f32(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(DepthToSpace, SpaceToDepthInvertsDcr) {
  const Tensor x = arange_f32({2, 8, 3, 2});
  Outputs d = OpTester("DepthToSpace", 13)
                  .input("x", x)
                  .attr("blocksize", int64_t{2})
                  .output("y")
                  .run({{"x", x}});
  ASSERT_EQ(d[0].shape(), (Shape{2, 2, 6, 4}));
  Outputs s = OpTester("SpaceToDepth", 13)
                  .input("x", d[0])
                  .attr("blocksize", int64_t{2})
                  .output("y")
                  .run({{"x", d[0]}});
  EXPECT_EQ(s[0].shape(), x.shape());
  EXPECT_EQ(values<float>(s[0]), values<float>(x));
}

TEST(DepthToSpace, CrdOnFourChannels) {
  const Tensor x = arange_f32({1, 4, 1, 1});
  // CRD with one output channel: the channel index is (row % 2) * 2 + col % 2.
  Outputs d = OpTester("DepthToSpace", 13)
                  .input("x", x)
                  .attr("blocksize", int64_t{2})
                  .attr("mode", std::string("CRD"))
                  .output("y")
                  .run({{"x", x}});
  EXPECT_EQ(values<float>(d[0]), (std::vector<float>{0, 1, 2, 3}));
}

TEST(DepthToSpace, BadShapesAreErrors) {
  const Tensor x = arange_f32({1, 6, 2, 2});
  std::string msg = error_of([&] {
    OpTester("DepthToSpace", 13)
        .input("x", x)
        .attr("blocksize", int64_t{2})
        .output("y")
        .run({{"x", x}});
  });
  EXPECT_NE(msg.find("node 'node' (DepthToSpace)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a multiple"), std::string::npos) << msg;
  msg = error_of([&] {
    OpTester("SpaceToDepth", 13)
        .input("x", x)
        .attr("blocksize", int64_t{3})
        .output("y")
        .run({{"x", x}});
  });
  EXPECT_NE(msg.find("node 'node' (SpaceToDepth)"), std::string::npos) << msg;
  msg = error_of([&] {
    OpTester("DepthToSpace", 13)
        .input("x", x)
        .attr("blocksize", int64_t{0})
        .output("y")
        .run({{"x", x}});
  });
  EXPECT_NE(msg.find("blocksize"), std::string::npos) << msg;
  // A block past 2^31 (b * b overflows) is refused for its size, not called non-positive.
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    msg = error_of([&] {
      OpTester(op, 13)
          .input("x", x)
          .attr("blocksize", int64_t{1} << 40)
          .output("y")
          .run({{"x", x}});
    });
    EXPECT_NE(msg.find("blocksize 1099511627776 must be in [1, 2^31]"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace recur::test
