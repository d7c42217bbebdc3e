// Multinomial: `sample_size` class indices per row of a [batch, classes] input of unnormalized
// log-probabilities, drawn with replacement. Class c of a row is drawn with probability
// exp(x_c) / sum exp(x): -inf is never drawn, and where a row has +inf entries only they are
// drawn, evenly. A row with a NaN, or with every entry -inf, is an error naming the row.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/random/random_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

bool index_type(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

class MultinomialKernel final : public Kernel {
 public:
  MultinomialKernel(DType dtype, int64_t samples, std::optional<uint64_t> seed)
      : dtype_(dtype), samples_(samples), seed_(seed) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 2 || !is_draw_float(x->dtype())) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       std::string("the input must be a 2-D [batch, classes] tensor of ") +
                           kDrawFloats + ", not " + std::string(dtype_name(x->dtype())) +
                           shape_to_string(x->shape()));
    }
    const int64_t batch = x->dim(0), classes = x->dim(1);
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, dtype_, {batch, samples_}));
    if (out->numel() == 0) return ok_status();
    if (classes == 0) {
      return ctx.error(ErrorCode::kInvalidArgument, "there are no classes to draw from");
    }
    const RandomDraw draw = next_draw(ctx, seed_);
    std::vector<double> cdf(static_cast<size_t>(classes));
    Status st;
    visit_dtype(kFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t b = 0; b < batch && st.ok(); ++b) {
        const T* row = x->data<T>() + b * classes;
        double top = -INFINITY;
        bool nan = false;
        for (int64_t c = 0; c < classes; ++c) {
          const double v = static_cast<double>(to_compute(row[c]));
          nan |= std::isnan(v);
          top = std::max(top, v);
        }
        if (nan || top == -INFINITY) {
          st = ctx.error(ErrorCode::kInvalidArgument,
                         "row " + std::to_string(b) + " of the input " +
                             (nan ? "holds NaN" : "has every log-probability -inf") +
                             ": it defines no distribution to draw from");
          return;
        }
        // Weights relative to the largest entry, so exp cannot overflow; with +inf present,
        // only the +inf entries carry weight.
        double total = 0;
        for (int64_t c = 0; c < classes; ++c) {
          const double v = static_cast<double>(to_compute(row[c]));
          total += std::isinf(top) ? (v == top ? 1.0 : 0.0) : std::exp(v - top);
          cdf[static_cast<size_t>(c)] = total;
        }
        for (int64_t s = 0; s < samples_; ++s) {
          const double u = draw.uniform(static_cast<uint64_t>(b * samples_ + s)) * total;
          auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
          // u < total, but rounding may put it on the last step: take the last class that has
          // weight, never one past the end or a class of weight 0 after it.
          if (it == cdf.end()) it = std::lower_bound(cdf.begin(), cdf.end(), total);
          const auto idx = static_cast<int64_t>(it - cdf.begin());
          if (dtype_ == DType::kInt32) {
            out->data<int32_t>()[b * samples_ + s] = static_cast<int32_t>(idx);
          } else {
            out->data<int64_t>()[b * samples_ + s] = idx;
          }
        }
      }
    });
    return st;
  }

 private:
  DType dtype_;
  int64_t samples_;
  std::optional<uint64_t> seed_;
};

struct MultinomialAttrs {
  DType dtype = DType::kInt32;
  int64_t samples = 1;
};

Result<MultinomialAttrs> read_attrs(const Node& node) {
  RECUR_ASSIGN_OR_RETURN(std::optional<DType> dtype,
                         dtype_attr(node, index_type, "int32 or int64"));
  AttrReader attrs(node);
  const int64_t samples = attrs.get_int("sample_size", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (samples < 0) {
    return invalid_model(node.describe() + ": sample_size " + std::to_string(samples) +
                         " is negative");
  }
  return MultinomialAttrs{dtype.value_or(DType::kInt32), samples};
}

Result<std::unique_ptr<Kernel>> create_multinomial(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(MultinomialAttrs a, read_attrs(ctx.node()));
  RECUR_ASSIGN_OR_RETURN(std::optional<uint64_t> seed, seed_attr(ctx.node()));
  return std::make_unique<MultinomialKernel>(a.dtype, a.samples, seed);
}

Status infer_multinomial(InferContext& ctx) {
  auto a = read_attrs(ctx.node());
  if (!a.ok()) return a.status();
  const TypeInfo& in = ctx.input_type(0);
  if (in.shape && in.shape->size() != 2) {
    return ctx.error("the input must be 2-D [batch, classes], not of rank " +
                     std::to_string(in.shape->size()));
  }
  std::vector<Dim> dims = {in.shape ? (*in.shape)[0] : Dim{}, Dim{a->samples, {}}};
  ctx.set_output(0, TypeInfo{a->dtype, std::move(dims)});
  return ok_status();
}

}  // namespace

void register_multinomial(Registrar& r) {
  r.add({.op_type = "Multinomial", .since = 7, .create = create_multinomial}, infer_multinomial);
}

}  // namespace recur::reference
