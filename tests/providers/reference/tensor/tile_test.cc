// Tile and Expand against an index-by-index oracle written here (out[i] = x[i_d mod x_d] for
// every dimension d), on the shapes whose copies the strided copy merges or fills: single
// elements repeated, columns repeated, repeats in the middle, zero repeats; and the strided
// copy itself, including negative strides, against the same kind of oracle.
#include <random>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_util.h"
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

template <class T>
Tensor counting(const Shape& shape) {
  std::vector<T> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i % 113 + 1);
  return Tensor::from_vector<T>(shape, v);
}

// np.tile(x, reps) for x of the same rank as reps, index by index.
template <class T>
std::vector<T> tile_oracle(const Tensor& x, const std::vector<int64_t>& reps) {
  const Shape& in = x.shape();
  Shape out(in.size());
  for (size_t d = 0; d < in.size(); ++d) out[d] = in[d] * reps[d];
  std::vector<T> y(static_cast<size_t>(shape_numel(out)));
  const T* px = x.data<T>();
  for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
    int64_t rest = i, src = 0, in_stride = 1;
    for (size_t d = in.size(); d-- > 0;) {
      const int64_t idx = rest % out[d];
      rest /= out[d];
      src += (idx % in[d]) * in_stride;
      in_stride *= in[d];
    }
    y[static_cast<size_t>(i)] = px[src];
  }
  return y;
}

template <class T>
void check_tile(const Shape& shape, const std::vector<int64_t>& reps) {
  const Tensor x = counting<T>(shape);
  Outputs o =
      OpTester("Tile", 13)
          .input("x", x)
          .constant("r", Tensor::from_vector<int64_t>({static_cast<int64_t>(reps.size())}, reps))
          .output("y")
          .run({{"x", x}});
  Shape want(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) want[d] = shape[d] * reps[d];
  ASSERT_EQ(o[0].shape(), want) << shape_to_string(shape) << " by "
                                << reference::ints_to_string(reps);
  EXPECT_EQ(values<T>(o[0]), tile_oracle<T>(x, reps))
      << shape_to_string(shape) << " by " << reference::ints_to_string(reps);
}

TEST(Tile, MatchesTheIndexOracleWhereRowsMergeOrFill) {
  check_tile<float>({1}, {1000});           // one element: a fill
  check_tile<float>({300, 1}, {1, 7});      // a column, each element repeated
  check_tile<int8_t>({1, 1}, {33, 65});     // one byte over two dimensions
  check_tile<float>({3, 1, 5}, {1, 9, 1});  // a repeat between two kept dimensions
  check_tile<double>({2, 3}, {4, 1});       // row blocks
  check_tile<uint16_t>({2, 1, 3, 1}, {2, 3, 1, 4});
  check_tile<int64_t>({4, 5}, {1, 1});      // nothing repeated
  check_tile<bool>({1, 2}, {3, 2});         // bool elements
  check_tile<float>({1, 1, 1}, {1, 1, 1});  // a single element, all dimensions merged away
  check_tile<float>({3, 2}, {0, 2});        // zero repeats: an empty output
}

TEST(Expand, MatchesTheIndexOracleWhereRowsMergeOrFill) {
  // Expand to a shape of the input's rank is a Tile by out_d / x_d.
  struct Case {
    Shape x;
    std::vector<int64_t> to;
  };
  for (const Case& c : {Case{{1}, {500}}, Case{{40, 1}, {40, 6}}, Case{{1, 7}, {9, 7}},
                        Case{{2, 1, 3}, {2, 5, 3}}, Case{{1, 1}, {1, 1}}}) {
    const Tensor x = counting<float>(c.x);
    Outputs o =
        OpTester("Expand", 13)
            .input("x", x)
            .constant("s", Tensor::from_vector<int64_t>({static_cast<int64_t>(c.to.size())}, c.to))
            .output("y")
            .run({{"x", x}});
    std::vector<int64_t> reps(c.to.size());
    for (size_t d = 0; d < reps.size(); ++d) reps[d] = c.to[d] / c.x[d];
    EXPECT_EQ(values<float>(o[0]), tile_oracle<float>(x, reps)) << shape_to_string(c.x);
  }
}

// out[i] = in[offset + sum_d idx_d(i) * strides[d]], index by index.
std::vector<uint32_t> strided_oracle(const std::vector<uint32_t>& in, const Shape& shape,
                                     const Shape& strides, int64_t offset) {
  std::vector<uint32_t> out(static_cast<size_t>(shape_numel(shape)));
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    int64_t rest = i, src = offset;
    for (size_t d = shape.size(); d-- > 0;) {
      src += (rest % shape[d]) * strides[d];
      rest /= shape[d];
    }
    out[static_cast<size_t>(i)] = in[static_cast<size_t>(src)];
  }
  return out;
}

TEST(StridedCopy, MatchesTheIndexOracleOnRandomViews) {
  std::mt19937 rng(7);
  std::vector<uint32_t> in(4096);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
  for (int trial = 0; trial < 2000; ++trial) {
    const size_t rank = rng() % 6;
    Shape shape(rank), strides(rank);
    for (size_t d = 0; d < rank; ++d) shape[d] = static_cast<int64_t>(rng() % 4);
    for (size_t d = rank; d-- > 0;) {
      // Strides that merge with the dimension inside (a third of the time), 0 (broadcast),
      // negative ones, and others.
      static constexpr int64_t kChoices[] = {0, 1, -1, 2, 3, -4, 7, 12, -12};
      strides[d] = kChoices[rng() % std::size(kChoices)];
      if (d + 1 < rank && rng() % 3 == 0) strides[d] = strides[d + 1] * shape[d + 1];
    }
    int64_t lo = 0, hi = 0;  // the range of offsets the view reaches from its first element
    for (size_t d = 0; d < rank; ++d) {
      const int64_t reach = (std::max<int64_t>(shape[d], 1) - 1) * strides[d];
      (reach < 0 ? lo : hi) += reach;
    }
    // The contiguous case, which must come out as one memcpy: strides of a row-major shape.
    if (trial % 5 == 0) {
      strides = reference::contiguous_strides(shape);
      lo = 0;
      hi = std::max<int64_t>(shape_numel(shape), 1) - 1;
    }
    const int64_t offset = -lo;
    ASSERT_LT(offset + hi, static_cast<int64_t>(in.size()));
    std::vector<uint32_t> got(static_cast<size_t>(shape_numel(shape)), 0);
    reference::strided_copy(in.data(), got.data(), sizeof(uint32_t), shape, strides, offset);
    EXPECT_EQ(got, strided_oracle(in, shape, strides, offset))
        << "shape " << shape_to_string(shape) << " strides " << shape_to_string(strides);
  }
}

}  // namespace
}  // namespace recur::test
