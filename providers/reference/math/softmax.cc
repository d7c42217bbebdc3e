// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2D at `axis` (default
// 1) and the function applies to each row of the flattened [d0*..*d(axis-1), d(axis)*..*dn];
// from opset 13 it applies along `axis` alone (default -1). Computed in double.
#include <cmath>
#include <limits>
#include <vector>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(SoftmaxKind kind, int64_t axis) : kind_(kind), axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const Shape& shape = x->shape();
    auto axis = normalize_axis(axis_, x->rank(), "axis");
    if (!axis.ok()) return ctx.error(axis.status().code(), axis.status().message());
    // Rows of n elements, `inner` apart, in `outer` blocks.
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < x->rank(); ++d) {
      const int64_t v = shape[static_cast<size_t>(d)];
      if (d < *axis) {
        outer *= v;
      } else if (d == *axis || ctx.node().opset < 13) {
        n *= v;
      } else {
        inner *= v;
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), shape));
    const bool handled = visit_dtype(kFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x->data<T>();
      T* po = out->data<T>();
      thread_local std::vector<double> row;  // kept from run to run
      row.resize(static_cast<size_t>(n));
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t in = 0; in < inner; ++in) {
          const int64_t base = o * n * inner + in;
          for (int64_t k = 0; k < n; ++k) {
            row[static_cast<size_t>(k)] = static_cast<double>(to_compute(px[base + k * inner]));
          }
          compute_row(row);
          for (int64_t k = 0; k < n; ++k) {
            po[base + k * inner] = convert<T>(row[static_cast<size_t>(k)]);
          }
        }
      }
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }

 private:
  void compute_row(std::vector<double>& row) const {
    if (row.empty()) return;
    size_t arg = 0;
    double mx = row[0];
    for (size_t k = 1; k < row.size(); ++k) {
      if (row[k] > mx || (std::isnan(row[k]) && !std::isnan(mx))) {
        mx = row[k];
        arg = k;
      }
    }
    if (kind_ == SoftmaxKind::kHardmax) {  // the first maximum gets the 1
      for (size_t k = 0; k < row.size(); ++k) row[k] = k == arg ? 1.0 : 0.0;
      return;
    }
    if (std::isinf(mx)) mx = mx > 0 ? mx : 0.0;  // all -inf: exp(x) is 0 everywhere
    double sum = 0;
    for (double& v : row) {
      v -= mx;
      sum += std::exp(v);
    }
    if (kind_ == SoftmaxKind::kLogSoftmax) {
      const double log_sum = std::log(sum);
      for (double& v : row) v -= log_sum;
    } else {
      for (double& v : row) v = std::exp(v) / sum;
    }
  }

  SoftmaxKind kind_;
  int64_t axis_;
};

void add_softmax(Registrar& r, const char* name, SoftmaxKind kind) {
  r.add({.op_type = name,
         .since = 1,
         .create = [kind](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const int64_t axis = attrs.get_int("axis", c.opset() < 13 ? 1 : -1);
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<SoftmaxKernel>(kind, axis);
         }},
        infer_same_as_input0);
}

}  // namespace

void register_softmax(Registrar& r) {
  add_softmax(r, "Softmax", SoftmaxKind::kSoftmax);
  add_softmax(r, "LogSoftmax", SoftmaxKind::kLogSoftmax);
  add_softmax(r, "Hardmax", SoftmaxKind::kHardmax);
}

}  // namespace recur::reference
