// Einsum's equation and loop nest, shared by the reference provider (which runs any equation)
// and oneDNN (two float operands as one batched matrix product): the parsed subscripts, each
// label's size, the output's labels, and per operand the stride of every label.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recur/small_vector.h"
#include "recur/tensor.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur::einsum {

constexpr int kLetters = 52;  // a-z, A-Z; ellipsis dimensions get ids from 52 on

// A term: letter ids with -1 standing for the ellipsis.
struct Term {
  std::vector<int> items;
  bool has_ellipsis = false;
  int letters = 0;
};

struct Parsed {
  std::vector<Term> inputs;
  bool explicit_output = false;
  Term output;
};

Result<Parsed> parse_equation(const std::string& eq);
// The node's `equation` attribute parsed; kInvalidModel naming the equation where it does not.
Result<Parsed> parse_node_equation(const Node& node);

// Each input dimension's label, ellipsis dimensions numbered from kLetters on (right-aligned
// across the inputs, as they broadcast), and each label's size and number of uses.
struct Labels {
  int64_t ell = 0;                          // the ellipsis rank
  std::vector<std::vector<int>> dim_label;  // per input, per dimension
  std::vector<int64_t> size;                // per label; -1 for labels not used
  std::vector<int> count;                   // per label, its uses over all inputs
  int num_labels() const { return kLetters + static_cast<int>(ell); }
};

// Whether some label is summed over (not in the output) but appears in one operand only, or an
// ellipsis is summed away: as a batched GEMM, the other operand would be copied once for each of
// its values. Decided from the equation alone.
bool sums_a_label_of_one_operand(const Parsed& p);

// Each dimension's label and each label's size for operands of the given shapes.
Result<Labels> label_dimensions(const std::vector<Term>& terms, const std::vector<Shape>& xs);

// The output's labels: the explicit output term's, or numpy's implicit choice (the ellipsis,
// then the letters used once).
Result<std::vector<int>> output_labels(const Parsed& p, const Labels& lb);

// The loop nest over every label, output labels outside and summed labels inside.
struct LoopNest {
  std::vector<int> loop;
  // Per input, per loop label: its stride, summed over repeated labels; 0 where broadcast.
  std::vector<std::vector<int64_t>> stride;
  std::vector<int64_t> extent;  // per loop label
  int64_t inner = 1;            // iterations of the summed labels per output element
  int64_t out_total = 0;
};

LoopNest build_loop_nest(const std::vector<Shape>& xs, const Labels& lb,
                         const std::vector<int>& out_labels, const Shape& out_shape);

// Two operands' nest as one batched GEMM: every label is a batch label (kept, in both operands
// or in neither), M (kept, in A only), N (kept, in B only) or K (summed). The strides carry
// diagonals (a repeated label's strides add up) and broadcasting (stride 0), so every
// two-operand equation takes this form.
struct GemmAxes {
  struct Axis {
    int64_t extent, sa, sb, sy;  // sy: the output's stride (0 for K)
  };
  std::vector<Axis> batch, m, n, k;
  // A group's size, or nullopt where it overflows.
  static std::optional<int64_t> total(const std::vector<Axis>& v);
};
GemmAxes gemm_axes(const LoopNest& nest, size_t num_out, const Shape& y_shape);

// Walks the axes of `groups` in order (the last fastest), with a call for each run of the last
// axis of extent more than 1: f(offset, n, step) for the n elements at offset, offset + step,
// ..., the offsets the chosen stride gives, so that a copy takes a contiguous run at once (one
// call of one element where no axis is longer than 1, none where an axis is empty). Allocates
// nothing for up to 16 axes.
template <class F>
void walk_rows(std::initializer_list<const std::vector<GemmAxes::Axis>*> groups,
               int64_t GemmAxes::Axis::*stride, F&& f) {
  SmallVector<const GemmAxes::Axis*, 16> axes;
  for (const auto* g : groups)
    for (const GemmAxes::Axis& a : *g) {
      if (a.extent == 0) return;
      if (a.extent > 1) axes.push_back(&a);
    }
  if (axes.empty()) {
    f(int64_t{0}, int64_t{1}, int64_t{1});
    return;
  }
  const GemmAxes::Axis& row = *axes[axes.size() - 1];
  const size_t outer = axes.size() - 1;
  SmallVector<int64_t, 16> idx(outer, 0);
  int64_t off = 0;
  while (true) {
    f(off, row.extent, row.*stride);
    size_t d = outer;
    while (d-- > 0) {
      off += axes[d]->*stride;
      if (++idx[d] < axes[d]->extent) break;
      off -= axes[d]->*stride * axes[d]->extent;
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

// walk_rows an element at a time: f(offset).
template <class F>
void walk(std::initializer_list<const std::vector<GemmAxes::Axis>*> groups,
          int64_t GemmAxes::Axis::*stride, F&& f) {
  walk_rows(groups, stride, [&f](int64_t off, int64_t n, int64_t step) {
    for (int64_t i = 0; i < n; ++i) f(off + i * step);
  });
}

}  // namespace recur::einsum
