// ConcatFromSequence: joins a sequence's tensors along `axis`, or stacks them along a new axis
// at `axis` when new_axis is 1 (then axis may be -rank-1 ... rank).
#include "providers/reference/sequence/sequence_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class ConcatFromSequenceKernel final : public Kernel {
 public:
  ConcatFromSequenceKernel(int64_t axis, bool new_axis) : axis_(axis), new_axis_(new_axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0));
    const std::vector<Tensor>& parts = seq->elements();
    if (parts.empty()) {
      return ctx.error(ErrorCode::kInvalidArgument, "cannot concatenate an empty sequence");
    }
    // With new_axis, each part is seen with a 1 inserted at the axis: then it is a concat.
    const int64_t rank = parts[0].rank() + (new_axis_ ? 1 : 0);
    if (rank == 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "cannot concatenate scalars without new_axis = 1");
    }
    auto axis = normalize_axis(axis_, rank, "axis");
    if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
    const auto ax = static_cast<size_t>(*axis);
    auto view_shape = [&](const Tensor& t) {
      Shape s = t.shape();
      if (new_axis_) s.insert(s.begin() + *axis, 1);
      return s;
    };
    const Shape first = view_shape(parts[0]);
    Shape out_shape = first;
    out_shape[ax] = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      // The rank before view_shape: the axis it inserts at is bounded by tensor 0's rank only.
      bool ok = parts[k].rank() == parts[0].rank();
      const Shape s = ok ? view_shape(parts[k]) : Shape{};
      for (size_t d = 0; ok && d < s.size(); ++d) ok = d == ax || s[d] == first[d];
      if (!ok) {
        return ctx.error(
            ErrorCode::kInvalidArgument,
            "tensor " + std::to_string(k) + " has shape " + shape_to_string(parts[k].shape()) +
                ", which does not match tensor 0's " + shape_to_string(parts[0].shape()));
      }
      if (__builtin_add_overflow(out_shape[ax], s[ax], &out_shape[ax])) {
        return ctx.error(ErrorCode::kOutOfRange, "the joined dimension overflows");
      }
    }
    const DType dtype = parts[0].dtype();
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, dtype, out_shape));
    if (out->numel() == 0) return ok_status();
    const int64_t outer = dims_product(out_shape, 0, ax);
    const int64_t inner = dims_product(out_shape, ax + 1, out_shape.size());
    const int64_t out_row = out_shape[ax] * inner;
    int64_t offset = 0;
    for (const Tensor& t : parts) {
      const int64_t row = (new_axis_ ? 1 : t.shape()[ax]) * inner;
      for (int64_t o = 0; o < outer; ++o)
        copy_elements(t, o * row, *out, o * out_row + offset, row);
      offset += row;
    }
    return ok_status();
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

}  // namespace

void register_concat_from_sequence(Registrar& r) {
  r.add({.op_type = "ConcatFromSequence",
         .since = 11,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const int64_t axis = attrs.require_int("axis");
           const int64_t new_axis = attrs.get_int("new_axis", 0);
           RECUR_RETURN_IF_ERROR(attrs.status());
           if (new_axis != 0 && new_axis != 1) {
             return c.error(ErrorCode::kInvalidModel, "new_axis must be 0 or 1");
           }
           return std::make_unique<ConcatFromSequenceKernel>(axis, new_axis == 1);
         },
         .takes_strings = true,
         .takes_sequences = true},
        [](InferContext& c) -> Status {
          TypeInfo t;
          t.dtype = c.input_type(0).element_dtype;
          c.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
