// RegexFullMatch (opset 20): Y[i] is true when the whole of X[i] matches `pattern`.
// ONNX specifies RE2 syntax; this kernel compiles the pattern with std::regex's ECMAScript
// grammar, which agrees with RE2 on the common subset (literals, classes, \d \w \s, anchors,
// groups, alternation, greedy and lazy quantifiers). Where they differ: RE2's (?i) style flags,
// named groups (?P<name>...), \pN Unicode classes and [[:alpha:]] outside brackets are refused
// by ECMAScript (a load error naming the node), ECMAScript's backreferences and lookaheads
// are accepted though RE2 refuses them, and matching is per byte rather than per UTF-8 code
// point, so "." matches one byte of a multi-byte character.
#include <regex>
#include <string>

#include "providers/reference/common/util.h"
#include "providers/reference/text/text_ops.h"

namespace recur::reference {

namespace {

class RegexFullMatchKernel final : public Kernel {
 public:
  explicit RegexFullMatchKernel(std::regex re) : re_(std::move(re)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() != DType::kString) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be a string tensor, not " + std::string(dtype_name(x->dtype())));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kBool, x->shape()));
    const std::string* in = x->data<std::string>();
    bool* out = y->data<bool>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      try {
        out[i] = std::regex_match(in[i], re_);
      } catch (const std::regex_error& e) {
        // std::regex gives up on inputs that exhaust its backtracking budget.
        return ctx.error(ErrorCode::kInvalidArgument,
                         "matching string " + std::to_string(i) + " failed: " + e.what());
      }
    }
    return ok_status();
  }

 private:
  std::regex re_;
};

Result<std::unique_ptr<Kernel>> create_regex_full_match(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  if (!attrs.has("pattern")) {
    return ctx.error(ErrorCode::kInvalidModel, "the 'pattern' attribute is required");
  }
  const std::string pattern = attrs.get_string("pattern", "");
  RECUR_RETURN_IF_ERROR(attrs.status());
  try {
    return std::make_unique<RegexFullMatchKernel>(std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return ctx.error(ErrorCode::kNotImplemented,
                     "pattern '" + pattern +
                         "' is not accepted by the ECMAScript regex grammar this kernel uses "
                         "in place of RE2: " +
                         e.what());
  }
}

Status infer_regex_full_match(InferContext& ctx) {
  TypeInfo t;
  t.dtype = DType::kBool;
  t.shape = ctx.input_type(0).shape;
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_regex_full_match(Registrar& r) {
  r.add({.op_type = "RegexFullMatch",
         .since = 20,
         .create = create_regex_full_match,
         .takes_strings = true},
        infer_regex_full_match);
}

}  // namespace recur::reference
