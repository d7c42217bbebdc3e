// StringSplit (opset 20): splits every string of X on `delimiter` (at most `maxsplit` times,
// from the left; negative or unset: no limit). Y has X's shape plus one dimension, as long as
// the most pieces any string gave, padded with empty strings; Z holds each string's count.
// With no delimiter (or ""), runs of whitespace separate the pieces and leading and trailing
// whitespace gives none, as Python's str.split() does; whitespace here is ASCII (space, \t, \n,
// \v, \f, \r and \x1c-\x1f), so Unicode spaces such as U+00A0 are kept inside the pieces.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/text/text_ops.h"

namespace recur::reference {

namespace {

bool is_space(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= '\t' && u <= '\r') || (u >= 0x1c && u <= 0x1f);
}

std::vector<std::string> split_on(const std::string& s, const std::string& delim,
                                  int64_t maxsplit) {
  std::vector<std::string> out;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t at = s.find(delim, start);
    if (at == std::string::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + delim.size();
  }
  out.push_back(s.substr(start));
  return out;
}

std::vector<std::string> split_on_whitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = 0;
  const size_t n = s.size();
  while (true) {
    while (i < n && is_space(s[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      // The remainder is one piece that keeps its trailing whitespace, as in Python.
      out.push_back(s.substr(i));
      break;
    }
    size_t j = i;
    while (j < n && !is_space(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

class StringSplitKernel final : public Kernel {
 public:
  StringSplitKernel(std::string delimiter, int64_t maxsplit)
      : delimiter_(std::move(delimiter)), maxsplit_(maxsplit) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() != DType::kString) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be a string tensor, not " + std::string(dtype_name(x->dtype())));
    }
    const std::string* in = x->data<std::string>();
    std::vector<std::vector<std::string>> pieces(static_cast<size_t>(x->numel()));
    int64_t width = 0;
    for (int64_t i = 0; i < x->numel(); ++i) {
      auto& p = pieces[static_cast<size_t>(i)];
      p = delimiter_.empty() ? split_on_whitespace(in[i], maxsplit_)
                             : split_on(in[i], delimiter_, maxsplit_);
      width = std::max(width, static_cast<int64_t>(p.size()));
    }
    Shape y_shape = x->shape();
    y_shape.push_back(width);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, y_shape));
    std::string* py = y->data<std::string>();
    int64_t* pz = nullptr;
    if (ctx.num_outputs() > 1) {
      RECUR_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DType::kInt64, x->shape()));
      pz = z->data<int64_t>();
    }
    for (int64_t i = 0; i < x->numel(); ++i) {
      auto& p = pieces[static_cast<size_t>(i)];
      if (pz) pz[i] = static_cast<int64_t>(p.size());
      for (size_t k = 0; k < p.size(); ++k)
        py[i * width + static_cast<int64_t>(k)] = std::move(p[k]);
    }
    return ok_status();
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

Result<std::unique_ptr<Kernel>> create_string_split(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::string delimiter = attrs.get_string("delimiter", "");
  const int64_t maxsplit = attrs.get_int("maxsplit", -1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<StringSplitKernel>(delimiter, maxsplit);
}

Status infer_string_split(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  TypeInfo y;
  y.dtype = DType::kString;
  if (in.shape) {
    y.shape = in.shape;
    y.shape->push_back(Dim{});  // the most pieces is known only when running
  }
  ctx.set_output(0, y);
  if (ctx.num_outputs() > 1) ctx.set_output(1, TypeInfo{DType::kInt64, in.shape});
  return ok_status();
}

}  // namespace

void register_string_split(Registrar& r) {
  r.add(
      {.op_type = "StringSplit", .since = 20, .create = create_string_split, .takes_strings = true},
      infer_string_split);
}

}  // namespace recur::reference
