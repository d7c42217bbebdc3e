// MaxUnpool (opsets 9, 11): scatters X into zeros at the flat indices MaxPool returned.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(WindowAttrs a) : a_(std::move(a)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* ind, required_input(ctx, 1));
    const Tensor* shape_t = ctx.input(2);
    if (x->rank() < 3) {
      return invalid_argument("X must have rank >= 3, got " + shape_to_string(x->shape()));
    }
    if (ind->shape() != x->shape() || ind->dtype() != DType::kInt64) {
      return invalid_argument("I must be int64 with the shape of X " + shape_to_string(x->shape()));
    }
    const size_t r = x->shape().size() - 2;
    if (a_.kernel_shape.size() != r || (!a_.strides.empty() && a_.strides.size() != r) ||
        (!a_.pads.empty() && a_.pads.size() != 2 * r)) {
      return invalid_argument("kernel_shape, strides and pads do not match the input rank");
    }
    // MaxPool's indices are flat positions in the unpooled shape; output_shape may enlarge it
    // (the pooled input was cropped), in which case each index keeps its coordinates.
    Shape out, natural;
    {
      natural = {x->dim(0), x->dim(1)};
      for (size_t i = 0; i < r; ++i) {
        const int64_t s = a_.strides.empty() ? 1 : a_.strides[i];
        const int64_t pb = a_.pads.empty() ? 0 : a_.pads[i],
                      pe = a_.pads.empty() ? 0 : a_.pads[i + r];
        if (s <= 0 || s > (int64_t{1} << 31) || a_.kernel_shape[i] <= 0 ||
            a_.kernel_shape[i] > (int64_t{1} << 31) || pb < 0 || pe < 0) {
          return invalid_argument("kernel_shape, strides and pads must be positive");
        }
        natural.push_back((x->dim(static_cast<int64_t>(i) + 2) - 1) * s + a_.kernel_shape[i] - pb -
                          pe);
      }
      RECUR_RETURN_IF_ERROR(checked_numel(natural, "the unpooled shape").status());
    }
    if (shape_t) {
      RECUR_ASSIGN_OR_RETURN(out, read_int_values(*shape_t, "output_shape"));
      if (out.size() != x->shape().size()) {
        return invalid_argument("output_shape must have " + std::to_string(x->rank()) + " values");
      }
      if (out[0] != x->dim(0) || out[1] != x->dim(1)) {
        return invalid_argument("output_shape " + shape_to_string(out) +
                                " must keep the batch and channel sizes of X");
      }
    } else {
      out = natural;
    }
    RECUR_ASSIGN_OR_RETURN(int64_t total, checked_numel(out, "the output shape"));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
    std::memset(y->raw_data(), 0, y->nbytes());
    const int64_t* ip = ind->data<int64_t>();
    const int64_t natural_total = shape_numel(natural);
    std::vector<int64_t> target(static_cast<size_t>(ind->numel()));
    const Shape ns = contiguous_strides(natural), os = contiguous_strides(out);
    for (int64_t i = 0; i < ind->numel(); ++i) {
      if (ip[i] < 0 || ip[i] >= natural_total) {
        return out_of_range("index " + std::to_string(ip[i]) + " is outside the unpooled shape " +
                            shape_to_string(natural));
      }
      int64_t rem = ip[i], t = 0;
      for (size_t d = 0; d < natural.size(); ++d) {
        const int64_t c = rem / ns[d];
        rem %= ns[d];
        if (c >= out[d]) {
          return out_of_range("index " + std::to_string(ip[i]) + " falls outside output_shape " +
                              shape_to_string(out));
        }
        t += c * os[d];
      }
      target[static_cast<size_t>(i)] = t;
    }
    (void)total;
    const size_t es = dtype_size(x->dtype());
    const auto* xp = static_cast<const char*>(x->raw_data());
    auto* yp = static_cast<char*>(y->raw_data());
    for (int64_t i = 0; i < x->numel(); ++i) {
      copy_bytes(yp + static_cast<size_t>(target[static_cast<size_t>(i)]) * es,
                 xp + static_cast<size_t>(i) * es, es);
    }
    return ok_status();
  }

 private:
  WindowAttrs a_;
};

}  // namespace

void register_max_unpool(Registrar& r) {
  r.add({.op_type = "MaxUnpool",
         .since = 9,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(ctx.node()));
           if (a.kernel_shape.empty()) {
             return ctx.error(ErrorCode::kInvalidModel, "kernel_shape is required");
           }
           return std::make_unique<MaxUnpoolKernel>(std::move(a));
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
