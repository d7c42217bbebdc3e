// Min, Max, Sum, Mean over any number of inputs: numpy broadcasting from opset 8, equal shapes
// before. Min and Max propagate NaN (numpy's minimum/maximum); Sum and Mean accumulate floats
// in double.
#include <vector>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

enum class Variadic { kMin, kMax, kSum, kMean };

template <class T, class A, class Init, class Combine>
void accumulate(const std::vector<const Tensor*>& in, const Shape& out_shape, std::vector<A>& acc,
                Init&& init, Combine&& combine) {
  for (size_t k = 0; k < in.size(); ++k) {
    const T* p = in[k]->data<T>();
    for_each_broadcast<1>(
        out_shape, {&in[k]->shape()}, [&](int64_t i, const std::array<int64_t, 1>& off) {
          acc[static_cast<size_t>(i)] =
              k == 0 ? init(p[off[0]]) : combine(acc[static_cast<size_t>(i)], p[off[0]]);
        });
  }
}

class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(Variadic op) : op_(op) {}

  Status run(KernelContext& ctx) const override {
    std::vector<const Tensor*> in;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
      if (!in.empty() && t->dtype() != in[0]->dtype()) {
        return dtype_mismatch(ctx, "input 0", in[0]->dtype(),
                              ("input " + std::to_string(i)).c_str(), t->dtype());
      }
      in.push_back(t);
    }
    if (in.empty()) return ctx.error(ErrorCode::kInvalidArgument, "at least one input is needed");
    Shape out_shape = in[0]->shape();
    if (ctx.node().opset < 8) {
      for (const Tensor* t : in) {
        if (t->shape() != out_shape) {
          return ctx.error(ErrorCode::kInvalidArgument,
                           "inputs must have equal shapes before opset 8, got " +
                               shape_to_string(out_shape) + " and " + shape_to_string(t->shape()));
        }
      }
    } else {
      std::vector<Shape> shapes;
      for (const Tensor* t : in) shapes.push_back(t->shape());
      auto b = broadcast_shapes(shapes);
      if (!b.ok()) return ctx.error(b.status().code(), b.status().message());
      out_shape = *b;
    }
    const DType dtype = in[0]->dtype();
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, out_shape));
    const size_t n = static_cast<size_t>(out->numel());
    bool handled = false;
    if (op_ == Variadic::kMin || op_ == Variadic::kMax) {
      handled = visit_dtype(kNumericTypes, dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = compute_t<T>;
        std::vector<C> acc(n);
        const bool is_max = op_ == Variadic::kMax;
        accumulate<T>(
            in, out_shape, acc, [](T v) { return to_compute(v); },
            [is_max](C a, T v) {
              return is_max ? nan_max(a, to_compute(v)) : nan_min(a, to_compute(v));
            });
        T* po = out->data<T>();
        for (size_t i = 0; i < n; ++i) po[i] = from_compute<T>(acc[i]);
      });
    } else {
      handled = visit_dtype(kFloatTypes, dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::vector<double> acc(n);
        accumulate<T>(
            in, out_shape, acc, [](T v) { return static_cast<double>(to_compute(v)); },
            [](double a, T v) { return a + static_cast<double>(to_compute(v)); });
        const double count = op_ == Variadic::kMean ? static_cast<double>(in.size()) : 1.0;
        T* po = out->data<T>();
        for (size_t i = 0; i < n; ++i) po[i] = convert<T>(acc[i] / count);
      });
    }
    if (!handled) return unsupported_dtype(ctx, dtype);
    return ok_status();
  }

 private:
  Variadic op_;
};

void add_variadic(Registrar& r, const char* name, Variadic op) {
  r.add({.op_type = name,
         .since = 1,
         .create = [op](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<VariadicKernel>(op);
         }},
        infer_broadcast_all(0, 8));
}

}  // namespace

void register_variadic(Registrar& r) {
  add_variadic(r, "Min", Variadic::kMin);
  add_variadic(r, "Max", Variadic::kMax);
  add_variadic(r, "Sum", Variadic::kSum);
  add_variadic(r, "Mean", Variadic::kMean);
}

}  // namespace recur::reference
