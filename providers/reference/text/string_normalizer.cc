// StringNormalizer (opset 10): removes `stopwords` from a [C] or [1, C] string tensor
// (compared exactly, or ignoring case when is_case_sensitive is 0) and then changes the case of
// what is left (case_change_action NONE, LOWER or UPPER). When every string is removed the
// output is one empty string, [1] or [1, 1], as ONNX specifies.
// Strings are UTF-8; case is changed per code point with the C++ library's ctype<wchar_t> of
// `locale` (with ".UTF-8" appended if needed), else of C.UTF-8, else ASCII only.
#include <locale>
#include <optional>
#include <string>
#include <unordered_set>

#include "providers/reference/common/util.h"
#include "providers/reference/text/text_ops.h"
#include "runtime/core/utf8.h"

namespace recur::reference {

namespace {

enum class CaseChange { kNone, kLower, kUpper };

std::locale find_locale(const std::string& name) {
  std::vector<std::string> names;
  if (!name.empty()) {
    names.push_back(name);
    if (name.find('.') == std::string::npos) names.push_back(name + ".UTF-8");
  }
  names.insert(names.end(), {"C.UTF-8", "C.utf8"});
  for (const std::string& n : names) {
    try {
      return std::locale(n);
    } catch (const std::runtime_error&) {
      // not installed: try the next
    }
  }
  return std::locale::classic();
}

class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(CaseChange change, bool case_sensitive,
                         const std::vector<std::string>& stopwords, std::locale locale)
      : change_(change), case_sensitive_(case_sensitive), locale_(std::move(locale)) {
    for (const std::string& w : stopwords) {
      // A stopword that is not UTF-8 can match no valid input: keep it as it is.
      std::optional<std::string> key = case_sensitive_ ? w : recase(w, CaseChange::kLower);
      stopwords_.insert(key ? *key : w);
    }
  }

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() != DType::kString) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be a string tensor, not " + std::string(dtype_name(x->dtype())));
    }
    if (!(x->rank() == 1 || (x->rank() == 2 && x->dim(0) == 1))) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must have shape [C] or [1, C], got " + shape_to_string(x->shape()));
    }
    const std::string* in = x->data<std::string>();
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x->numel(); ++i) {
      std::optional<std::string> key = in[i];
      if (!case_sensitive_) key = recase(in[i], CaseChange::kLower);
      if (!key) return bad_utf8(ctx, i);
      if (stopwords_.count(*key)) continue;
      std::optional<std::string> out = recase(in[i], change_);
      if (!out) return bad_utf8(ctx, i);
      kept.push_back(std::move(*out));
    }
    if (kept.empty()) kept.emplace_back();
    Shape shape = x->shape();
    shape.back() = static_cast<int64_t>(kept.size());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, shape));
    std::string* out = y->data<std::string>();
    for (size_t i = 0; i < kept.size(); ++i) out[i] = std::move(kept[i]);
    return ok_status();
  }

 private:
  static Status bad_utf8(const KernelContext& ctx, int64_t i) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "string " + std::to_string(i) + " is not valid UTF-8");
  }

  // `s` with its case changed; nullopt if it is not UTF-8.
  std::optional<std::string> recase(const std::string& s, CaseChange change) const {
    if (change == CaseChange::kNone) return s;
    std::u32string cps;
    if (!decode_utf8(s, &cps)) return std::nullopt;
    const auto& ct = std::use_facet<std::ctype<wchar_t>>(locale_);
    for (char32_t& cp : cps) {
      const auto w = static_cast<wchar_t>(cp);
      const wchar_t r = change == CaseChange::kLower ? ct.tolower(w) : ct.toupper(w);
      cp = static_cast<char32_t>(r);
    }
    std::string out;
    encode_utf8(cps, &out);
    return out;
  }

  CaseChange change_;
  bool case_sensitive_;
  std::locale locale_;
  std::unordered_set<std::string> stopwords_;
};

Result<std::unique_ptr<Kernel>> create_string_normalizer(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::string action = attrs.get_string("case_change_action", "NONE");
  const int64_t sensitive = attrs.get_int("is_case_sensitive", 0);
  const std::vector<std::string> stopwords = attrs.get_strings("stopwords");
  const std::string locale = attrs.get_string("locale", "");
  RECUR_RETURN_IF_ERROR(attrs.status());
  CaseChange change = CaseChange::kNone;
  if (action == "LOWER") {
    change = CaseChange::kLower;
  } else if (action == "UPPER") {
    change = CaseChange::kUpper;
  } else if (action != "NONE") {
    return ctx.error(ErrorCode::kInvalidModel,
                     "case_change_action '" + action + "' is not one of NONE, LOWER, UPPER");
  }
  return std::make_unique<StringNormalizerKernel>(change, sensitive != 0, stopwords,
                                                  find_locale(locale));
}

Status infer_string_normalizer(InferContext& ctx) {
  TypeInfo t;
  t.dtype = DType::kString;
  if (ctx.input_type(0).rank() > 0) {
    t.shape = ctx.input_type(0).shape;
    t.shape->back() = Dim{};  // the count of kept strings is known only when running
  }
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_string_normalizer(Registrar& r) {
  r.add({.op_type = "StringNormalizer",
         .since = 10,
         .create = create_string_normalizer,
         .takes_strings = true},
        infer_string_normalizer);
}

}  // namespace recur::reference
