#include "providers/cuda/ops/op_plans.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "runtime/graph/graph.h"

namespace recur::cuda::ops {

namespace {

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

std::string ints(const std::vector<int64_t>& v) { return shape_to_string(v); }

}  // namespace

Result<int64_t> axis_in(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    return invalid_argument(what + " " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Result<ClipBounds> clip_bounds(const Node& node, std::optional<double> lo,
                               std::optional<double> hi) {
  ClipBounds b;
  if (node.opset < 11) {
    AttrReader a(node);
    if (a.has("min")) b.lo = a.get_float("min", 0.0f);
    if (a.has("max")) b.hi = a.get_float("max", 0.0f);
    RECUR_RETURN_IF_ERROR(a.status());
    return b;
  }
  if (lo) b.lo = *lo;
  if (hi) b.hi = *hi;
  return b;
}

Result<Strided> make_strided(const Shape& dims, const std::vector<int64_t>& strides,
                             int64_t offset) {
  std::vector<int64_t> d, st;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && st.back() == strides[i] * dims[i]) {
      d.back() *= dims[i];
      st.back() = strides[i];
      continue;
    }
    d.push_back(dims[i]);
    st.push_back(strides[i]);
  }
  if (d.size() > static_cast<size_t>(kMaxRank)) {
    return not_implemented("more than " + std::to_string(kMaxRank) +
                           " dimensions remain after merging: " + ints(dims));
  }
  Strided s;
  s.rank = static_cast<int32_t>(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    s.dims[i] = d[i];
    s.strides[i] = st[i];
  }
  s.offset = offset;
  s.contiguous = d.empty() || (d.size() == 1 && st[0] == 1);
  return s;
}

Result<Shape> broadcast_shape(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t v = s[i];
      if (v == o || v == 1) continue;
      if (o != 1) {
        return invalid_argument("shapes " + ints(shapes.front()) + " and " + ints(s) +
                                " cannot broadcast");
      }
      o = v;
    }
  }
  return out;
}

Result<Strided> broadcast_strided(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) {
    return invalid_argument("cannot broadcast " + ints(in) + " to " + ints(out));
  }
  const std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<int64_t> st(out.size(), 0);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out[lead + i]) {
      st[lead + i] = in_strides[i];
    } else if (in[i] != 1) {
      return invalid_argument("cannot broadcast " + ints(in) + " to " + ints(out));
    }
  }
  return make_strided(out, st, 0);
}

Result<Strided> transpose_strided(const Shape& in, std::vector<int64_t> perm, Shape* out) {
  const size_t r = in.size();
  if (perm.empty()) {
    for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
  }
  if (perm.size() != r) {
    return invalid_argument("perm " + ints(perm) + " does not match rank " + std::to_string(r));
  }
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)]) {
      return invalid_argument("perm " + ints(perm) + " is not a permutation of 0.." +
                              std::to_string(r ? r - 1 : 0));
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const std::vector<int64_t> in_strides = row_major_strides(in);
  out->assign(r, 0);
  std::vector<int64_t> st(r);
  for (size_t i = 0; i < r; ++i) {
    (*out)[i] = in[static_cast<size_t>(perm[i])];
    st[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  return make_strided(*out, st, 0);
}

Result<Strided> slice_strided(const Shape& in, const std::vector<int64_t>& starts,
                              const std::vector<int64_t>& ends,
                              const std::optional<std::vector<int64_t>>& axes,
                              const std::optional<std::vector<int64_t>>& steps, Shape* out) {
  const size_t n = starts.size();
  const int64_t rank = static_cast<int64_t>(in.size());
  if (ends.size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
    return invalid_argument("starts, ends, axes and steps differ in length");
  }
  if (!axes && n > in.size()) {
    return invalid_argument(std::to_string(n) + " starts for rank " + std::to_string(rank));
  }
  std::vector<int64_t> first(in.size(), 0), step(in.size(), 1);
  *out = in;
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < n; ++i) {
    int64_t ax = static_cast<int64_t>(i);
    if (axes) {
      RECUR_ASSIGN_OR_RETURN(ax, axis_in((*axes)[i], rank, "slice axis"));
    }
    if (seen[static_cast<size_t>(ax)]) return invalid_argument("slice axes repeat an axis");
    seen[static_cast<size_t>(ax)] = true;
    const int64_t dim = in[static_cast<size_t>(ax)];
    const int64_t st = steps ? (*steps)[i] : 1;
    if (st == 0) return invalid_argument("slice step is 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count = 0;
    if (dim == 0) {
      // Nothing to take; and clamping into [0, dim - 1] below would have lo > hi (undefined).
    } else if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      if (e > s) count = (e - s - 1) / st + 1;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      if (s > e) count = st == std::numeric_limits<int64_t>::min() ? 1 : (s - e - 1) / -st + 1;
    }
    first[static_cast<size_t>(ax)] = count > 0 ? s : 0;
    step[static_cast<size_t>(ax)] = st;
    (*out)[static_cast<size_t>(ax)] = count;
  }
  const std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<int64_t> st(in.size());
  int64_t offset = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    st[d] = (*out)[d] > 1 ? in_strides[d] * step[d] : 0;
    offset += in_strides[d] * first[d];
  }
  return make_strided(*out, st, offset);
}

Result<PadIndex> pad_plan(const Shape& in, const std::vector<int64_t>& pads,
                          const std::optional<std::vector<int64_t>>& axes, int32_t mode,
                          Shape* out) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank > kMaxRank) {
    return not_implemented("Pad of rank " + std::to_string(rank) + ": the GPU kernel takes up to " +
                           std::to_string(kMaxRank));
  }
  std::vector<int64_t> ax;
  if (axes) {
    for (int64_t a : *axes) {
      RECUR_ASSIGN_OR_RETURN(int64_t n, axis_in(a, rank, "axis"));
      ax.push_back(n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) ax.push_back(d);
  }
  if (pads.size() != 2 * ax.size()) {
    return invalid_argument("pads " + ints(pads) + " must have " + std::to_string(2 * ax.size()) +
                            " entries (a begin and an end for " + std::to_string(ax.size()) +
                            " axes)");
  }
  std::vector<int64_t> begin(in.size(), 0), end(in.size(), 0);
  for (size_t i = 0; i < ax.size(); ++i) {  // a repeated axis takes its last pads
    begin[static_cast<size_t>(ax[i])] = pads[i];
    end[static_cast<size_t>(ax[i])] = pads[ax.size() + i];
  }
  PadIndex p;
  p.rank = static_cast<int32_t>(rank);
  p.mode = mode;
  out->resize(in.size());
  const std::vector<int64_t> strides = row_major_strides(in);
  int64_t total = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const auto k = static_cast<size_t>(d);
    const int64_t n = in[k], pb = begin[k], pe = end[k];
    if (pb < -n || pe < -n || (pb < 0 && pe < 0 && -pb > n + pe)) {
      return invalid_argument("pads crop more than the " + std::to_string(n) +
                              " elements of dimension " + std::to_string(d));
    }
    p.lo[d] = pb < 0 ? -pb : 0;
    p.kept[d] = n - p.lo[d] - (pe < 0 ? -pe : 0);
    p.before[d] = pb > 0 ? pb : 0;
    p.stride[d] = strides[k];
    int64_t o = 0;
    if (__builtin_add_overflow(p.kept[d], p.before[d], &o) ||
        __builtin_add_overflow(o, pe > 0 ? pe : 0, &o) ||
        (o > 0 && __builtin_mul_overflow(total, o, &total))) {
      return out_of_range("pads overflow dimension " + std::to_string(d));
    }
    if (o == 0) total = 0;
    if (p.kept[d] == 0 && o > 0 && mode != kPadConstant) {
      return invalid_argument("cannot pad dimension " + std::to_string(d) +
                              " in this mode: no elements remain to repeat");
    }
    p.out[d] = o;
    (*out)[k] = o;
  }
  return p;
}

Result<EinsumGpuPlan> einsum_gpu_plan(const einsum::Parsed& p, const Shape& sa, const Shape& sb) {
  using Axis = einsum::GemmAxes::Axis;
  const std::vector<Shape> shapes = {sa, sb};
  RECUR_ASSIGN_OR_RETURN(einsum::Labels lb, einsum::label_dimensions(p.inputs, shapes));
  RECUR_ASSIGN_OR_RETURN(std::vector<int> out_labels, einsum::output_labels(p, lb));
  EinsumGpuPlan e;
  int64_t numel = 1;
  for (int l : out_labels) {
    const int64_t d = lb.size[static_cast<size_t>(l)];
    e.out.push_back(d);
    if (__builtin_mul_overflow(numel, d, &numel)) {
      return invalid_argument("the output shape " + ints(e.out) + " is too large");
    }
  }
  const einsum::LoopNest nest = einsum::build_loop_nest(shapes, lb, out_labels, e.out);
  const einsum::GemmAxes g = einsum::gemm_axes(nest, out_labels.size(), e.out);
  const auto bt = einsum::GemmAxes::total(g.batch), mt = einsum::GemmAxes::total(g.m),
             nt = einsum::GemmAxes::total(g.n), kt = einsum::GemmAxes::total(g.k);
  if (!bt || !mt || !nt || !kt) return invalid_argument("the Einsum's sizes overflow");
  e.bt = *bt, e.mt = *mt, e.nt = *nt, e.kt = *kt;
  if (numel == 0 || e.kt == 0) return e;
  // The dense operands' sizes.
  auto size = [](int64_t x, int64_t y, int64_t z) -> std::optional<int64_t> {
    const std::optional<int64_t> xy = checked_mul(x, y);
    return xy ? checked_mul(*xy, z) : std::nullopt;
  };
  if (!size(e.bt, e.mt, e.kt) || !size(e.bt, e.kt, e.nt) || !size(e.bt, e.mt, e.nt)) {
    return invalid_argument("the Einsum's dense operands are too large");
  }
  // The groups' axes in order (the last fastest), read through one operand's strides.
  auto view = [](std::initializer_list<const std::vector<Axis>*> groups,
                 int64_t Axis::*stride) -> Result<Strided> {
    Shape dims;
    std::vector<int64_t> strides;
    for (const auto* grp : groups)
      for (const Axis& a : *grp) {
        dims.push_back(a.extent);
        strides.push_back(a.*stride);
      }
    return make_strided(dims, strides, 0);
  };
  RECUR_ASSIGN_OR_RETURN(e.a, view({&g.batch, &g.m, &g.k}, &Axis::sa));
  RECUR_ASSIGN_OR_RETURN(e.b, view({&g.batch, &g.k, &g.n}, &Axis::sb));
  // The product is dense over batch, m, n. The output's dimensions of more than one element are
  // those axes in decreasing output stride (row-major strides of such dimensions strictly
  // decrease), each read at its stride in the product.
  struct Out {
    int64_t sy, extent, stride;
  };
  std::vector<Out> outs;
  int64_t dense = 1;
  for (const auto* grp : {&g.n, &g.m, &g.batch})
    for (size_t i = grp->size(); i-- > 0;) {
      const Axis& a = (*grp)[i];
      if (a.extent > 1) outs.push_back({a.sy, a.extent, dense});
      dense *= a.extent;
    }
  std::sort(outs.begin(), outs.end(), [](const Out& x, const Out& y) { return x.sy > y.sy; });
  Shape dims;
  std::vector<int64_t> strides;
  for (const Out& o : outs) {
    dims.push_back(o.extent);
    strides.push_back(o.stride);
  }
  RECUR_ASSIGN_OR_RETURN(e.y, make_strided(dims, strides, 0));
  return e;
}

Result<Col2ImArgs> col2im_plan(const ConvTransposeShape& s, bool has_bias) {
  const size_t dims = s.kernel.size();
  if (dims < 1 || dims > 3) {
    return not_implemented("ConvTranspose with " + std::to_string(dims) +
                           " spatial axes: the GPU kernel takes 1 to 3");
  }
  Col2ImArgs a;
  a.dims = static_cast<int32_t>(dims);
  a.has_bias = has_bias ? 1 : 0;
  a.m = s.m;
  a.taps = a.p_in = a.p_out = 1;
  for (size_t d = 0; d < dims; ++d) {
    a.x[d] = s.x_spatial[d];
    a.y[d] = s.y_spatial[d];
    a.k[d] = s.kernel[d];
    a.stride[d] = s.stride[d];
    a.dil[d] = s.dilation[d];
    a.pad[d] = s.pad_begin[d];
    const std::optional<int64_t> taps = checked_mul(a.taps, a.k[d]),
                                 p_in = checked_mul(a.p_in, a.x[d]),
                                 p_out = checked_mul(a.p_out, a.y[d]);
    if (!taps || !p_in || !p_out) return invalid_argument("ConvTranspose's sizes overflow");
    a.taps = *taps, a.p_in = *p_in, a.p_out = *p_out;
  }
  const std::optional<int64_t> nm = checked_mul(s.n, s.m),
                               cols = nm ? checked_mul(*nm, a.taps) : std::nullopt;
  if (!cols || !checked_mul(*cols, a.p_in)) {
    return invalid_argument("ConvTranspose's column buffer is too large");
  }
  return a;
}

Result<std::vector<BlockCopy>> concat_blocks(const std::vector<Shape>& inputs, int64_t axis,
                                             Shape* out) {
  if (inputs.empty()) return invalid_argument("Concat needs at least one input");
  const int64_t rank = static_cast<int64_t>(inputs.front().size());
  RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis, rank, "axis"));
  *out = inputs.front();
  (*out)[static_cast<size_t>(a)] = 0;
  for (const Shape& s : inputs) {
    if (static_cast<int64_t>(s.size()) != rank) {
      return invalid_argument("Concat inputs differ in rank: " + ints(inputs.front()) + " and " +
                              ints(s));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != a && s[static_cast<size_t>(d)] != inputs.front()[static_cast<size_t>(d)]) {
        return invalid_argument("Concat inputs " + ints(inputs.front()) + " and " + ints(s) +
                                " differ outside axis " + std::to_string(a));
      }
    }
    (*out)[static_cast<size_t>(a)] += s[static_cast<size_t>(a)];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= (*out)[static_cast<size_t>(d)];
  for (int64_t d = a + 1; d < rank; ++d) inner *= (*out)[static_cast<size_t>(d)];
  const int64_t pitch = (*out)[static_cast<size_t>(a)] * inner;
  std::vector<BlockCopy> blocks;
  int64_t at = 0;
  for (const Shape& s : inputs) {
    BlockCopy b;
    b.outer = outer;
    b.width = s[static_cast<size_t>(a)] * inner;
    b.src_pitch = b.width;
    b.dst_offset = at;
    b.dst_pitch = pitch;
    at += b.width;
    blocks.push_back(b);
  }
  return blocks;
}

Result<std::vector<BlockCopy>> split_blocks(const Shape& in, int64_t axis,
                                            const std::vector<int64_t>& sizes,
                                            std::vector<Shape>* outs) {
  const int64_t rank = static_cast<int64_t>(in.size());
  RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis, rank, "axis"));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return invalid_argument("split sizes must not be negative: " + ints(sizes));
    total += s;
  }
  if (total != in[static_cast<size_t>(a)]) {
    return invalid_argument("split sizes " + ints(sizes) + " do not add up to dimension " +
                            std::to_string(in[static_cast<size_t>(a)]));
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= in[static_cast<size_t>(d)];
  for (int64_t d = a + 1; d < rank; ++d) inner *= in[static_cast<size_t>(d)];
  const int64_t pitch = in[static_cast<size_t>(a)] * inner;
  std::vector<BlockCopy> blocks;
  outs->clear();
  int64_t at = 0;
  for (int64_t s : sizes) {
    Shape o = in;
    o[static_cast<size_t>(a)] = s;
    outs->push_back(o);
    BlockCopy b;
    b.outer = outer;
    b.width = s * inner;
    b.src_offset = at;
    b.src_pitch = pitch;
    b.dst_pitch = b.width;
    at += b.width;
    blocks.push_back(b);
  }
  return blocks;
}

Result<Shape> flatten_shape(const Shape& in, int64_t axis) {
  // Not axis_in(axis, rank + 1): rank itself is valid, but -1 still means rank - 1.
  const int64_t rank = static_cast<int64_t>(in.size());
  if (axis < -rank || axis > rank) {
    return invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  // Each side multiplied on its own: when one side holds a 0, numel / outer says nothing of the
  // other. An empty tensor's other side may overflow; then there is no shape.
  Shape out = {1, 1};
  for (size_t k = 0; k < 2; ++k) {
    const auto first = in.begin() + (k ? axis : 0), last = k ? in.end() : in.begin() + axis;
    if (std::find(first, last, 0) != last) {
      out[k] = 0;
      continue;
    }
    for (auto d = first; d != last; ++d) {
      if (__builtin_mul_overflow(out[k], *d, &out[k])) {
        return invalid_argument("the flattened shape of " + ints(in) + " overflows");
      }
    }
  }
  return out;
}

Result<GatherIndex> gather_plan(const Shape& data, const Shape& indices, int64_t axis, Shape* out,
                                int64_t* outer) {
  const int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) return invalid_argument("Gather's data must have rank >= 1");
  RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis, rank, "axis"));
  GatherIndex g;
  g.axis_dim = data[static_cast<size_t>(a)];
  g.count = shape_numel(indices);
  *outer = 1;
  for (int64_t d = 0; d < a; ++d) *outer *= data[static_cast<size_t>(d)];
  for (int64_t d = a + 1; d < rank; ++d) g.inner *= data[static_cast<size_t>(d)];
  out->assign(data.begin(), data.begin() + a);
  out->insert(out->end(), indices.begin(), indices.end());
  out->insert(out->end(), data.begin() + a + 1, data.end());
  return g;
}

Result<ReducePlan> reduce_plan(const Shape& in, std::vector<int64_t> axes, bool keepdims,
                               bool noop_with_empty_axes) {
  const int64_t rank = static_cast<int64_t>(in.size());
  ReducePlan p;
  if (axes.empty()) {
    if (noop_with_empty_axes) {
      p.identity = true;
      p.out = in;
      p.index.outer = shape_numel(in);
      return p;
    }
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<bool> red(in.size(), false);
  for (int64_t& a : axes) {
    RECUR_ASSIGN_OR_RETURN(a, axis_in(a, rank, "reduction axis"));
    red[static_cast<size_t>(a)] = true;
  }
  for (size_t d = 0; d < in.size(); ++d) {
    if (red[d]) {
      if (keepdims) p.out.push_back(1);
    } else {
      p.out.push_back(in[d]);
    }
  }
  // Adjacent (ignoring dimensions of size 1)? Then no transpose.
  int64_t first = -1, last = -1;
  bool adjacent = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (!red[static_cast<size_t>(d)] || in[static_cast<size_t>(d)] == 1) continue;
    if (first < 0) first = d;
    last = d;
  }
  for (int64_t d = first; first >= 0 && d <= last; ++d) {
    if (!red[static_cast<size_t>(d)] && in[static_cast<size_t>(d)] != 1) adjacent = false;
  }
  if (adjacent) {
    int64_t outer = 1, reduced = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t n = in[static_cast<size_t>(d)];
      if (red[static_cast<size_t>(d)]) {
        reduced *= n;
      } else if (first < 0 || d < first) {
        outer *= n;
      } else {
        inner *= n;
      }
    }
    p.index = {outer, reduced, inner};
    return p;
  }
  int64_t kept = 1, reduced = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!red[static_cast<size_t>(d)]) {
      p.perm.push_back(d);
      kept *= in[static_cast<size_t>(d)];
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (red[static_cast<size_t>(d)]) {
      p.perm.push_back(d);
      reduced *= in[static_cast<size_t>(d)];
    }
  }
  p.index = {kept, reduced, 1};
  return p;
}

ReduceIndex around_axis(const Shape& in, int64_t axis) {
  ReduceIndex r;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    const int64_t n = in[static_cast<size_t>(d)];
    if (d < axis) {
      r.outer *= n;
    } else if (d == axis) {
      r.reduced = n;
    } else {
      r.inner *= n;
    }
  }
  return r;
}

Result<MatMulPlan> matmul_plan(const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) return invalid_argument("MatMul inputs must have rank >= 1");
  Shape a = a_in, b = b_in;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  MatMulPlan p;
  p.M = a[a.size() - 2];
  p.K = a.back();
  p.N = b.back();
  if (b[b.size() - 2] != p.K) {
    return invalid_argument("MatMul shapes " + ints(a_in) + " and " + ints(b_in) +
                            " do not agree on K");
  }
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  RECUR_ASSIGN_OR_RETURN(Shape batch, broadcast_shape({a_batch, b_batch}));
  p.batch = shape_numel(batch);
  p.out = batch;
  if (!a_vec) p.out.push_back(p.M);
  if (!b_vec) p.out.push_back(p.N);
  // Offsets of each batch's matrices, through broadcasting.
  Shape ab = a_batch, bb = b_batch;
  while (ab.size() < batch.size()) ab.insert(ab.begin(), 1);
  while (bb.size() < batch.size()) bb.insert(bb.begin(), 1);
  const std::vector<int64_t> as = row_major_strides(ab), bs = row_major_strides(bb);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t q = 0; q < p.batch; ++q) {
    int64_t ao = 0, bo = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      if (ab[d] != 1) ao += idx[d] * as[d];
      if (bb[d] != 1) bo += idx[d] * bs[d];
    }
    p.a_offsets.push_back(ao * p.M * p.K);
    p.b_offsets.push_back(bo * p.K * p.N);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  if (p.batch > 1) {
    p.a_stride = p.a_offsets[1] - p.a_offsets[0];
    p.b_stride = p.b_offsets[1] - p.b_offsets[0];
    for (int64_t q = 0; q < p.batch; ++q) {
      if (p.a_offsets[static_cast<size_t>(q)] != q * p.a_stride ||
          p.b_offsets[static_cast<size_t>(q)] != q * p.b_stride)
        p.strided = false;
    }
  }
  return p;
}

}  // namespace recur::cuda::ops
