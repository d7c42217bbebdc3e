// SplitToSequence: splits a tensor along `axis` into a sequence. Without `split`, into pieces
// of length 1 (the axis dropped when keepdims is 0); with a scalar `split`, into pieces of that
// length (the last one shorter if needed); with a 1-D `split`, into pieces of those lengths.
#include "providers/reference/sequence/sequence_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class SplitToSequenceKernel final : public Kernel {
 public:
  SplitToSequenceKernel(int64_t axis, bool keepdims) : axis_(axis), keepdims_(keepdims) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0));
    if (x->rank() == 0) return ctx.error(ErrorCode::kInvalidArgument, "cannot split a scalar");
    auto axis = normalize_axis(axis_, x->rank(), "axis");
    if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
    const auto ax = static_cast<size_t>(*axis);
    const int64_t dim = x->shape()[ax];
    std::vector<int64_t> lengths;
    bool drop_axis = false;
    if (const Tensor* s = ctx.input(1)) {
      if (s->is_sequence() || s->rank() > 1) {
        return ctx.error(ErrorCode::kInvalidArgument, "split must be a scalar or a 1-D tensor");
      }
      auto v = read_int_values(*s, "split");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      if (s->rank() == 0) {
        const int64_t k = (*v)[0];
        if (k <= 0) {
          return ctx.error(ErrorCode::kInvalidArgument,
                           "split " + std::to_string(k) + " must be positive");
        }
        for (int64_t start = 0; start < dim; start += k)
          lengths.push_back(std::min(k, dim - start));
      } else {
        int64_t sum = 0;
        for (int64_t l : *v) {
          if (l < 0 || __builtin_add_overflow(sum, l, &sum)) {
            return ctx.error(ErrorCode::kInvalidArgument,
                             "split " + ints_to_string(*v) + " has a negative length");
          }
        }
        if (sum != dim) {
          return ctx.error(ErrorCode::kInvalidArgument, "split " + ints_to_string(*v) +
                                                            " sums to " + std::to_string(sum) +
                                                            " but axis " + std::to_string(*axis) +
                                                            " has length " + std::to_string(dim));
        }
        lengths = std::move(v).value();
      }
    } else {
      lengths.assign(static_cast<size_t>(dim), 1);
      drop_axis = !keepdims_;
    }
    const int64_t outer = dims_product(x->shape(), 0, ax);
    const int64_t inner = dims_product(x->shape(), ax + 1, x->shape().size());
    std::vector<Tensor> pieces;
    int64_t start = 0;
    for (int64_t len : lengths) {
      Shape shape = x->shape();
      shape[ax] = len;
      Tensor piece = Tensor::empty(x->dtype(), shape);
      for (int64_t o = 0; o < outer; ++o) {
        copy_elements(*x, (o * dim + start) * inner, piece, o * len * inner, len * inner);
      }
      if (drop_axis) {
        shape.erase(shape.begin() + *axis);
        piece = piece.reshaped(shape);
      }
      pieces.push_back(std::move(piece));
      start += len;
    }
    return ctx.set_output(0, Tensor::sequence(std::move(pieces), x->dtype()));
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

}  // namespace

void register_split_to_sequence(Registrar& r) {
  r.add({.op_type = "SplitToSequence",
         .since = 11,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const int64_t axis = attrs.get_int("axis", 0);
           const int64_t keepdims = attrs.get_int("keepdims", 1);
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<SplitToSequenceKernel>(axis, keepdims != 0);
         },
         .takes_strings = true},
        [](InferContext& c) -> Status {
          c.set_output(0, sequence_type(c.input_type(0).dtype));
          return ok_status();
        });
}

}  // namespace recur::reference
