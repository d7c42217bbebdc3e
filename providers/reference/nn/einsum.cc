// Einsum (opset 12): explicit and implicit output, repeated labels (diagonals), ellipsis
// broadcasting. One loop nest over every label: output labels outside, summed labels inside.
#include <algorithm>
#include <map>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

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
    // Ellipsis rank, and each input dimension's label.
    int64_t ell = 0;
    std::vector<std::vector<int>> dim_label(n);
    for (size_t i = 0; i < n; ++i) {
      const Term& t = p_.inputs[i];
      const int64_t rank = xs[i]->rank();
      const int64_t e = rank - t.letters;
      if (e < 0 || (!t.has_ellipsis && e != 0)) {
        return invalid_argument("operand " + std::to_string(i) + " has rank " +
                                std::to_string(rank) + ", which its subscripts do not match");
      }
      ell = std::max(ell, e);
    }
    for (size_t i = 0; i < n; ++i) {
      const Term& t = p_.inputs[i];
      const int64_t e = xs[i]->rank() - t.letters;
      for (int item : t.items) {
        if (item >= 0) {
          dim_label[i].push_back(item);
        } else {
          for (int64_t j = 0; j < e; ++j)
            dim_label[i].push_back(kLetters + static_cast<int>(ell - e + j));
        }
      }
    }
    const int num_labels = kLetters + static_cast<int>(ell);
    std::vector<int64_t> size(static_cast<size_t>(num_labels), -1);
    std::vector<int> count(static_cast<size_t>(num_labels), 0);
    for (size_t i = 0; i < n; ++i) {
      for (size_t d = 0; d < dim_label[i].size(); ++d) {
        const int l = dim_label[i][d];
        const int64_t s = xs[i]->dim(static_cast<int64_t>(d));
        int64_t& cur = size[static_cast<size_t>(l)];
        ++count[static_cast<size_t>(l)];
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
    // Output labels.
    std::vector<int> out_labels;
    if (p_.explicit_output) {
      for (int item : p_.output.items) {
        if (item < 0) {
          for (int64_t j = 0; j < ell; ++j) out_labels.push_back(kLetters + static_cast<int>(j));
        } else {
          if (size[static_cast<size_t>(item)] < 0) {
            return invalid_argument("output subscript is not among the inputs'");
          }
          if (std::count(out_labels.begin(), out_labels.end(), item)) {
            return invalid_argument("output subscript appears twice");
          }
          out_labels.push_back(item);
        }
      }
    } else {
      for (int64_t j = 0; j < ell; ++j) out_labels.push_back(kLetters + static_cast<int>(j));
      // Letters used once, in alphabetical (ASCII: upper case first) order.
      for (int l = 26; l < 52; ++l)
        if (count[static_cast<size_t>(l)] == 1) out_labels.push_back(l);
      for (int l = 0; l < 26; ++l)
        if (count[static_cast<size_t>(l)] == 1) out_labels.push_back(l);
    }
    std::vector<int> loop = out_labels;
    for (int l = 0; l < num_labels; ++l) {
      if (size[static_cast<size_t>(l)] >= 0 &&
          std::find(out_labels.begin(), out_labels.end(), l) == out_labels.end()) {
        loop.push_back(l);
      }
    }
    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(size[static_cast<size_t>(l)]);
    RECUR_RETURN_IF_ERROR(checked_numel(out_shape, "the output shape").status());
    // Per loop label, each input's stride (summed over repeated labels; 0 where broadcast).
    const size_t L = loop.size();
    std::vector<std::vector<int64_t>> stride(n, std::vector<int64_t>(L, 0));
    for (size_t i = 0; i < n; ++i) {
      const std::vector<int64_t> cs = contiguous_strides(xs[i]->shape());
      for (size_t d = 0; d < dim_label[i].size(); ++d) {
        if (xs[i]->dim(static_cast<int64_t>(d)) == 1 &&
            size[static_cast<size_t>(dim_label[i][d])] != 1) {
          continue;
        }
        const auto pos = std::find(loop.begin(), loop.end(), dim_label[i][d]) - loop.begin();
        stride[i][static_cast<size_t>(pos)] += cs[d];
      }
    }
    std::vector<int64_t> extent(L);
    int64_t inner = 1;
    for (size_t k = 0; k < L; ++k) extent[k] = size[static_cast<size_t>(loop[k])];
    for (size_t k = out_labels.size(); k < L; ++k) inner *= extent[k];
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, xs[0]->dtype(), out_shape));
    const int64_t out_total = shape_numel(out_shape);
    auto run_loops = [&](auto&& body, auto&& emit) {
      std::vector<int64_t> idx(L, 0), off(n, 0);
      for (int64_t o = 0; o < out_total; ++o) {
        for (int64_t s = 0; s < inner; ++s) {
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
    };
    bool handled = visit_dtype(kNnFloatTypes, xs[0]->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      std::vector<const T*> ps(n);
      for (size_t i = 0; i < n; ++i) ps[i] = xs[i]->data<T>();
      T* yp = y->data<T>();
      double acc = 0;
      run_loops(
          [&](const std::vector<int64_t>& off) {
            double v = 1;
            for (size_t i = 0; i < n; ++i) v *= static_cast<double>(static_cast<C>(ps[i][off[i]]));
            acc += v;
          },
          [&](int64_t o) {
            yp[o] = static_cast<T>(static_cast<C>(acc));
            acc = 0;
          });
    });
    if (!handled) {
      handled = visit_dtype(kIntTypes, xs[0]->dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::vector<const T*> ps(n);
        for (size_t i = 0; i < n; ++i) ps[i] = xs[i]->data<T>();
        T* yp = y->data<T>();
        uint64_t acc = 0;  // wraps, as numpy's integer arithmetic
        run_loops(
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
