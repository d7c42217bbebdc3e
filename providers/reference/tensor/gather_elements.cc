// GatherElements: out[i][j][k] = data[i][indices[i][j][k]][k] (for axis 1); the output has the
// shape of indices.
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1));
    // Kept by each thread from run to run: a repeated shape allocates nothing.
    thread_local std::vector<int64_t> idx, offsets;
    Status st = read_int_values_into(*indices, "indices", idx);
    if (st.ok()) st = element_offsets(data->shape(), indices->shape(), idx, axis_, offsets);
    if (!st.ok()) return st.with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), indices->shape()));
    visit_element_size(dtype_size(data->dtype()), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* src = static_cast<const U*>(data->raw_data());
      U* dst = static_cast<U*>(out->raw_data());
      for (size_t n = 0; n < offsets.size(); ++n) dst[n] = src[offsets[n]];
    });
    return ok_status();
  }

 private:
  int64_t axis_;
};

Result<std::unique_ptr<Kernel>> create_gather_elements(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<GatherElementsKernel>(axis);
}

Status infer_gather_elements(InferContext& ctx) {
  ctx.set_output(0, TypeInfo{ctx.input_type(0).dtype, ctx.input_type(1).shape});
  return ok_status();
}

}  // namespace

void register_gather_elements(Registrar& r) {
  r.add({.op_type = "GatherElements", .since = 11, .create = create_gather_elements},
        infer_gather_elements);
}

}  // namespace recur::reference
