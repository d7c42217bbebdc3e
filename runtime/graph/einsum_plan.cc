#include "runtime/graph/einsum_plan.h"

#include <algorithm>

namespace recur::einsum {

namespace {

int letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

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

// Each label's size, checked to agree between its uses (ellipsis dimensions broadcast).
Status size_labels(const std::vector<Shape>& xs, Labels* lb) {
  lb->size.assign(static_cast<size_t>(lb->num_labels()), -1);
  lb->count.assign(static_cast<size_t>(lb->num_labels()), 0);
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t d = 0; d < lb->dim_label[i].size(); ++d) {
      const int l = lb->dim_label[i][d];
      const int64_t s = xs[i][d];
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

Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

}  // namespace

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

Result<Parsed> parse_node_equation(const Node& node) {
  AttrReader a(node);
  const std::string eq = a.get_string("equation");
  RECUR_RETURN_IF_ERROR(a.status());
  auto p = parse_equation(eq);
  if (!p.ok()) return invalid_model("equation '" + eq + "': " + p.status().message());
  return p;
}

Result<Labels> label_dimensions(const std::vector<Term>& terms, const std::vector<Shape>& xs) {
  const size_t n = xs.size();
  Labels lb;
  for (size_t i = 0; i < n; ++i) {
    const Term& t = terms[i];
    const auto rank = static_cast<int64_t>(xs[i].size());
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
    const int64_t e = static_cast<int64_t>(xs[i].size()) - t.letters;
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

LoopNest build_loop_nest(const std::vector<Shape>& xs, const Labels& lb,
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
    const Shape cs = contiguous_strides(xs[i]);
    for (size_t d = 0; d < lb.dim_label[i].size(); ++d) {
      if (xs[i][d] == 1 && lb.size[static_cast<size_t>(lb.dim_label[i][d])] != 1) {
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

bool sums_a_label_of_one_operand(const Parsed& p) {
  std::vector<int> uses(kLetters, 0), operands(kLetters, 0);
  bool ellipsis = false;
  for (const Term& t : p.inputs) {
    std::vector<bool> seen(kLetters, false);
    for (int item : t.items) {
      if (item < 0) {
        ellipsis = true;
        continue;
      }
      ++uses[static_cast<size_t>(item)];
      if (!seen[static_cast<size_t>(item)]) ++operands[static_cast<size_t>(item)];
      seen[static_cast<size_t>(item)] = true;
    }
  }
  std::vector<bool> kept(kLetters, false);
  if (p.explicit_output) {
    if (ellipsis && !p.output.has_ellipsis) return true;
    for (int item : p.output.items)
      if (item >= 0) kept[static_cast<size_t>(item)] = true;
  } else {
    for (int l = 0; l < kLetters; ++l)
      kept[static_cast<size_t>(l)] = uses[static_cast<size_t>(l)] == 1;
  }
  for (int l = 0; l < kLetters; ++l) {
    if (uses[static_cast<size_t>(l)] > 0 && !kept[static_cast<size_t>(l)] &&
        operands[static_cast<size_t>(l)] == 1) {
      return true;
    }
  }
  return false;
}

GemmAxes gemm_axes(const LoopNest& nest, size_t num_out, const Shape& y_shape) {
  GemmAxes g;
  const Shape ys = contiguous_strides(y_shape);
  for (size_t i = 0; i < nest.loop.size(); ++i) {
    const GemmAxes::Axis a{nest.extent[i], nest.stride[0][i], nest.stride[1][i],
                           i < num_out ? ys[i] : 0};
    if (i >= num_out) {
      g.k.push_back(a);
    } else if (a.sa != 0 && a.sb == 0) {
      g.m.push_back(a);
    } else if (a.sa == 0 && a.sb != 0) {
      g.n.push_back(a);
    } else {
      g.batch.push_back(a);
    }
  }
  return g;
}

std::optional<int64_t> GemmAxes::total(const std::vector<Axis>& v) {
  int64_t t = 1;
  for (const Axis& a : v) {
    const auto next = checked_mul(t, a.extent);
    if (!next) return std::nullopt;
    t = *next;
  }
  return t;
}

}  // namespace recur::einsum
