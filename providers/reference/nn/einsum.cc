// Einsum (opset 12): explicit and implicit output, repeated labels (diagonals), ellipsis
// broadcasting. One loop nest over every label: output labels outside, summed labels inside;
// two float operands run the same sums as a batched GEMM.
#include <algorithm>
#include <map>
#include <optional>

#include "providers/reference/common/gemm.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"
#include "runtime/core/checked_math.h"

namespace recur::reference {

namespace {

constexpr int kLetters = 52;  // a-z, A-Z; ellipsis dimensions get ids from 52 on

int letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// A term: letter ids with -1 standing for the ellipsis.
struct Term {
  std::vector<int> items;
  bool has_ellipsis = false;
  int letters = 0;
};

Result<Term> parse_term(const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.has_ellipsis) return invalid_argument("more than one ellipsis in '" + s + "'");
      t.has_ellipsis = true;
      t.items.push_back(-1);
      i += 3;
      continue;
    }
    const int id = letter_id(s[i]);
    if (id < 0)
      return invalid_argument("invalid character '" + std::string(1, s[i]) + "' in '" + s + "'");
    t.items.push_back(id);
    ++t.letters;
    ++i;
  }
  return t;
}

struct Parsed {
  std::vector<Term> inputs;
  bool explicit_output = false;
  Term output;
};

Result<Parsed> parse_equation(const std::string& eq) {
  std::string s;
  for (char c : eq)
    if (c != ' ') s += c;
  Parsed p;
  const auto arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const auto comma = lhs.find(',', start);
    RECUR_ASSIGN_OR_RETURN(Term t, parse_term(lhs.substr(start, comma - start)));
    p.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    p.explicit_output = true;
    RECUR_ASSIGN_OR_RETURN(p.output, parse_term(s.substr(arrow + 2)));
  }
  return p;
}

// Each input dimension's label, ellipsis dimensions numbered from kLetters on (right-aligned
// across the inputs, as they broadcast), and each label's size and number of uses.
struct Labels {
  int64_t ell = 0;                          // the ellipsis rank
  std::vector<std::vector<int>> dim_label;  // per input, per dimension
  std::vector<int64_t> size;                // per label; -1 for labels not used
  std::vector<int> count;                   // per label, its uses over all inputs
  int num_labels() const { return kLetters + static_cast<int>(ell); }
};

// Each label's size, checked to agree between its uses (ellipsis dimensions broadcast).
Status size_labels(const std::vector<const Tensor*>& xs, Labels* lb) {
  lb->size.assign(static_cast<size_t>(lb->num_labels()), -1);
  lb->count.assign(static_cast<size_t>(lb->num_labels()), 0);
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t d = 0; d < lb->dim_label[i].size(); ++d) {
      const int l = lb->dim_label[i][d];
      const int64_t s = xs[i]->dim(static_cast<int64_t>(d));
      int64_t& cur = lb->size[static_cast<size_t>(l)];
      ++lb->count[static_cast<size_t>(l)];
      if (cur < 0 || cur == s) {
        cur = s;
      } else if (l >= kLetters && (cur == 1 || s == 1)) {
        cur = std::max(cur, s);
      } else {
        return invalid_argument("dimension sizes " + std::to_string(cur) + " and " +
                                std::to_string(s) + " of one subscript do not match");
      }
    }
  }
  return ok_status();
}

Result<Labels> label_dimensions(const std::vector<Term>& terms,
                                const std::vector<const Tensor*>& xs) {
  const size_t n = xs.size();
  Labels lb;
  for (size_t i = 0; i < n; ++i) {
    const Term& t = terms[i];
    const int64_t rank = xs[i]->rank();
    const int64_t e = rank - t.letters;
    if (e < 0 || (!t.has_ellipsis && e != 0)) {
      return invalid_argument("operand " + std::to_string(i) + " has rank " + std::to_string(rank) +
                              ", which its subscripts do not match");
    }
    lb.ell = std::max(lb.ell, e);
  }
  lb.dim_label.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Term& t = terms[i];
    const int64_t e = xs[i]->rank() - t.letters;
    for (int item : t.items) {
      if (item >= 0) {
        lb.dim_label[i].push_back(item);
      } else {
        for (int64_t j = 0; j < e; ++j)
          lb.dim_label[i].push_back(kLetters + static_cast<int>(lb.ell - e + j));
      }
    }
  }
  RECUR_RETURN_IF_ERROR(size_labels(xs, &lb));
  return lb;
}

// The output's labels: the explicit output term's, or numpy's implicit choice (the ellipsis,
// then the letters used once).
Result<std::vector<int>> output_labels(const Parsed& p, const Labels& lb) {
  std::vector<int> out_labels;
  if (p.explicit_output) {
    for (int item : p.output.items) {
      if (item < 0) {
        for (int64_t j = 0; j < lb.ell; ++j) out_labels.push_back(kLetters + static_cast<int>(j));
      } else {
        if (lb.size[static_cast<size_t>(item)] < 0) {
          return invalid_argument("output subscript is not among the inputs'");
        }
        if (std::count(out_labels.begin(), out_labels.end(), item)) {
          return invalid_argument("output subscript appears twice");
        }
        out_labels.push_back(item);
      }
    }
  } else {
    for (int64_t j = 0; j < lb.ell; ++j) out_labels.push_back(kLetters + static_cast<int>(j));
    // Letters used once, in alphabetical (ASCII: upper case first) order.
    for (int l = 26; l < 52; ++l)
      if (lb.count[static_cast<size_t>(l)] == 1) out_labels.push_back(l);
    for (int l = 0; l < 26; ++l)
      if (lb.count[static_cast<size_t>(l)] == 1) out_labels.push_back(l);
  }
  return out_labels;
}

// The loop nest over every label, output labels outside and summed labels inside.
struct LoopNest {
  std::vector<int> loop;
  // Per input, per loop label: its stride, summed over repeated labels; 0 where broadcast.
  std::vector<std::vector<int64_t>> stride;
  std::vector<int64_t> extent;  // per loop label
  int64_t inner = 1;            // iterations of the summed labels per output element
  int64_t out_total = 0;
};

LoopNest build_loop_nest(const std::vector<const Tensor*>& xs, const Labels& lb,
                         const std::vector<int>& out_labels, const Shape& out_shape) {
  const size_t n = xs.size();
  LoopNest nest;
  nest.loop = out_labels;
  for (int l = 0; l < lb.num_labels(); ++l) {
    if (lb.size[static_cast<size_t>(l)] >= 0 &&
        std::find(out_labels.begin(), out_labels.end(), l) == out_labels.end()) {
      nest.loop.push_back(l);
    }
  }
  const size_t L = nest.loop.size();
  nest.stride.assign(n, std::vector<int64_t>(L, 0));
  for (size_t i = 0; i < n; ++i) {
    const Shape cs = contiguous_strides(xs[i]->shape());
    for (size_t d = 0; d < lb.dim_label[i].size(); ++d) {
      if (xs[i]->dim(static_cast<int64_t>(d)) == 1 &&
          lb.size[static_cast<size_t>(lb.dim_label[i][d])] != 1) {
        continue;
      }
      const auto pos =
          std::find(nest.loop.begin(), nest.loop.end(), lb.dim_label[i][d]) - nest.loop.begin();
      nest.stride[i][static_cast<size_t>(pos)] += cs[d];
    }
  }
  nest.extent.resize(L);
  for (size_t k = 0; k < L; ++k) nest.extent[k] = lb.size[static_cast<size_t>(nest.loop[k])];
  for (size_t k = out_labels.size(); k < L; ++k) nest.inner *= nest.extent[k];
  nest.out_total = shape_numel(out_shape);
  return nest;
}

// Walks the nest over n inputs: body(offsets) at every point, emit(o) after output element o's
// summed labels.
template <class Body, class Emit>
void run_loops(const LoopNest& nest, size_t n, Body&& body, Emit&& emit) {
  const size_t L = nest.loop.size();
  const auto& stride = nest.stride;
  const auto& extent = nest.extent;
  std::vector<int64_t> idx(L, 0), off(n, 0);
  for (int64_t o = 0; o < nest.out_total; ++o) {
    for (int64_t s = 0; s < nest.inner; ++s) {
      body(off);
      for (size_t k = L; k-- > 0;) {
        ++idx[k];
        for (size_t i = 0; i < n; ++i) off[i] += stride[i][k];
        if (idx[k] < extent[k]) break;
        for (size_t i = 0; i < n; ++i) off[i] -= stride[i][k] * extent[k];
        idx[k] = 0;
      }
    }
    emit(o);
  }
}

// Floating types sum their products in double.
template <class T>
void einsum_float(const std::vector<const Tensor*>& xs, const LoopNest& nest, Tensor* y) {
  using C = compute_t<T>;
  const size_t n = xs.size();
  std::vector<const T*> ps(n);
  for (size_t i = 0; i < n; ++i) ps[i] = xs[i]->data<T>();
  T* yp = y->data<T>();
  double acc = 0;
  run_loops(
      nest, n,
      [&](const std::vector<int64_t>& off) {
        double v = 1;
        for (size_t i = 0; i < n; ++i) v *= static_cast<double>(static_cast<C>(ps[i][off[i]]));
        acc += v;
      },
      [&](int64_t o) {
        yp[o] = static_cast<T>(static_cast<C>(acc));
        acc = 0;
      });
}

// Two float operands as one batched GEMM over gathered copies in double: every label of the
// nest is a batch label (kept, in both operands or in neither), M (kept, in A only), N (kept, in
// B only) or K (summed). The strides carry diagonals (a repeated label's strides add up) and
// broadcasting (stride 0), so every two-operand equation takes this form. The GEMM adds the
// products of each output element in the order the loop nest does, so the result is the same;
// it is only much faster (a nest step per product costs more than the product). Returns false,
// having done nothing, where the copies would exceed `limit` doubles (an operand broadcast along
// a long summed label): the nest then runs.
template <class T>
bool einsum_gemm(const std::vector<const Tensor*>& xs, const LoopNest& nest, size_t num_out,
                 Tensor* y, int64_t limit) {
  using C = compute_t<T>;
  struct Axis {
    int64_t extent, sa, sb, sy;
  };
  std::vector<Axis> batch, m, n, k;
  const Shape ys = contiguous_strides(y->shape());
  for (size_t i = 0; i < nest.loop.size(); ++i) {
    const Axis a{nest.extent[i], nest.stride[0][i], nest.stride[1][i], i < num_out ? ys[i] : 0};
    if (i >= num_out) {
      k.push_back(a);
    } else if (a.sa != 0 && a.sb == 0) {
      m.push_back(a);
    } else if (a.sa == 0 && a.sb != 0) {
      n.push_back(a);
    } else {
      batch.push_back(a);
    }
  }
  // Each group's size, then the copies' total, or nullopt where they overflow.
  auto total = [](const std::vector<Axis>& v) -> std::optional<int64_t> {
    int64_t t = 1;
    for (const Axis& a : v) {
      const auto next = checked_mul(t, a.extent);
      if (!next) return std::nullopt;
      t = *next;
    }
    return t;
  };
  const auto obt = total(batch), omt = total(m), ont = total(n), okt = total(k);
  if (!obt || !omt || !ont || !okt) return false;
  const int64_t bt = *obt, mt = *omt, nt = *ont, kt = *okt;
  const auto mk = checked_mul(mt, kt), kn = checked_mul(kt, nt), mn = checked_mul(mt, nt);
  if (!mk || !kn || !mn) return false;
  const auto sum = checked_add(*mk, *kn);
  const auto per_batch = sum ? checked_add(*sum, *mn) : std::nullopt;
  const auto need = per_batch ? checked_mul(bt, *per_batch) : std::nullopt;
  if (!need || *need > limit) return false;
  // Walks the axes of `groups` in order (the last fastest), calling f(offset) with the offset
  // the chosen stride gives.
  auto walk = [](std::initializer_list<const std::vector<Axis>*> groups, int64_t Axis::*stride,
                 auto&& f) {
    std::vector<const Axis*> axes;
    for (const auto* g : groups)
      for (const Axis& a : *g) {
        if (a.extent == 0) return;  // nothing to walk (a summed label of size 0)
        axes.push_back(&a);
      }
    std::vector<int64_t> idx(axes.size(), 0);
    int64_t off = 0;
    while (true) {
      f(off);
      size_t d = axes.size();
      while (d-- > 0) {
        off += axes[d]->*stride;
        if (++idx[d] < axes[d]->extent) break;
        off -= axes[d]->*stride * axes[d]->extent;
        idx[d] = 0;
      }
      if (d == static_cast<size_t>(-1)) return;
    }
  };
  std::vector<double> a2(static_cast<size_t>(bt * mt * kt)), b2(static_cast<size_t>(bt * kt * nt)),
      c2(static_cast<size_t>(bt * mt * nt));
  const T* pa = xs[0]->data<T>();
  const T* pb = xs[1]->data<T>();
  size_t at = 0;
  walk({&batch, &m, &k}, &Axis::sa,
       [&](int64_t off) { a2[at++] = static_cast<double>(static_cast<C>(pa[off])); });
  at = 0;
  walk({&batch, &k, &n}, &Axis::sb,
       [&](int64_t off) { b2[at++] = static_cast<double>(static_cast<C>(pb[off])); });
  for (int64_t b = 0; b < bt; ++b) {
    gemm<double>(false, false, mt, nt, kt, 1.0, a2.data() + b * mt * kt, kt,
                 b2.data() + b * kt * nt, nt, 0.0, c2.data() + b * mt * nt, nt);
  }
  T* py = y->data<T>();
  at = 0;
  walk({&batch, &m, &n}, &Axis::sy,
       [&](int64_t off) { py[off] = static_cast<T>(static_cast<C>(c2[at++])); });
  return true;
}

// Integer types sum in uint64, wrapping as numpy's integer arithmetic does.
template <class T>
void einsum_int(const std::vector<const Tensor*>& xs, const LoopNest& nest, Tensor* y) {
  const size_t n = xs.size();
  std::vector<const T*> ps(n);
  for (size_t i = 0; i < n; ++i) ps[i] = xs[i]->data<T>();
  T* yp = y->data<T>();
  uint64_t acc = 0;
  run_loops(
      nest, n,
      [&](const std::vector<int64_t>& off) {
        uint64_t v = 1;
        for (size_t i = 0; i < n; ++i) {
          if constexpr (std::is_signed_v<T>) {
            v *= static_cast<uint64_t>(static_cast<int64_t>(ps[i][off[i]]));
          } else {
            v *= static_cast<uint64_t>(ps[i][off[i]]);
          }
        }
        acc += v;
      },
      [&](int64_t o) {
        yp[o] = static_cast<T>(acc);
        acc = 0;
      });
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(Parsed p) : p_(std::move(p)) {}

  Status run(KernelContext& ctx) const override {
    const size_t n = p_.inputs.size();
    if (ctx.num_inputs() != n) {
      return invalid_argument("the equation has " + std::to_string(n) + " operands, the node " +
                              std::to_string(ctx.num_inputs()) + " inputs");
    }
    std::vector<const Tensor*> xs(n);
    for (size_t i = 0; i < n; ++i) {
      RECUR_ASSIGN_OR_RETURN(xs[i], required_input(ctx, i));
      if (xs[i]->dtype() != xs[0]->dtype()) return invalid_argument("inputs have different dtypes");
    }
    RECUR_ASSIGN_OR_RETURN(const Labels lb, label_dimensions(p_.inputs, xs));
    RECUR_ASSIGN_OR_RETURN(const std::vector<int> out_labels, output_labels(p_, lb));
    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(lb.size[static_cast<size_t>(l)]);
    RECUR_RETURN_IF_ERROR(checked_numel(out_shape, "the output shape").status());
    const LoopNest nest = build_loop_nest(xs, lb, out_labels, out_shape);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, xs[0]->dtype(), out_shape));
    if (y->numel() == 0) return ok_status();
    // The GEMM's copies may take as much as the inputs and output twice over, in double.
    const int64_t limit =
        2 * (xs[0]->numel() + (n > 1 ? xs[1]->numel() : 0) + y->numel()) + (int64_t{1} << 20);
    bool handled = visit_dtype(kNnFloatTypes, xs[0]->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (n != 2 || !einsum_gemm<T>(xs, nest, out_labels.size(), y, limit)) {
        einsum_float<T>(xs, nest, y);
      }
    });
    if (!handled) {
      handled = visit_dtype(kIntTypes, xs[0]->dtype(), [&](auto tag) {
        einsum_int<typename decltype(tag)::type>(xs, nest, y);
      });
    }
    if (!handled)
      return not_implemented("dtype " + dtype_str(xs[0]->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  Parsed p_;
};

}  // namespace

void register_einsum(Registrar& r) {
  r.add({.op_type = "Einsum",
         .since = 12,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const std::string eq = r.get_string("equation");
           RECUR_RETURN_IF_ERROR(r.status());
           auto p = parse_equation(eq);
           if (!p.ok()) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "equation '" + eq + "': " + p.status().message());
           }
           return std::make_unique<EinsumKernel>(std::move(p).value());
         }},
        [](InferContext& ctx) {
          // The dtype of the first input; the shape is left to run time.
          TypeInfo t;
          t.dtype = ctx.input_type(0).dtype;
          ctx.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
