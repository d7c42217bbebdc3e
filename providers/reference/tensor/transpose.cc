// Transpose: output dimension i is input dimension perm[i]; no perm reverses the dimensions.
#include <numeric>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

Result<Shape> resolve_perm(const std::optional<Shape>& perm, size_t rank) {
  Shape p(rank);
  if (!perm) {
    for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
    return p;
  }
  if (perm->size() != rank) {
    return invalid_argument("perm " + ints_to_string(*perm) + " has " +
                            std::to_string(perm->size()) + " entries for an input of rank " +
                            std::to_string(rank));
  }
  SmallVector<bool, 8> seen(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = (*perm)[i];
    const int64_t ax = a < 0 ? a + static_cast<int64_t>(rank) : a;
    if (ax < 0 || ax >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(ax)]) {
      return invalid_argument("perm " + ints_to_string(*perm) + " is not a permutation of the " +
                              std::to_string(rank) + " input dimensions");
    }
    seen[static_cast<size_t>(ax)] = true;
    p[i] = ax;
  }
  return p;
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(std::optional<Shape> perm) : perm_(std::move(perm)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    auto perm = resolve_perm(perm_, static_cast<size_t>(x->rank()));
    if (!perm.ok()) return perm.status().with_context(ctx.node().describe());
    Shape out_shape(perm->size());
    // The bytes stay in place where the dimensions longer than 1 keep their order (an RNN
    // state [1, N, H] to [N, 1, H]): the output is a view, as Reshape's is.
    bool in_order = true;
    int64_t last = -1;
    for (size_t i = 0; i < perm->size(); ++i) {
      out_shape[i] = x->shape()[static_cast<size_t>((*perm)[i])];
      if (out_shape[i] == 1) continue;
      in_order = in_order && (*perm)[i] > last;
      last = (*perm)[i];
    }
    if (in_order) return ctx.set_output(0, x->reshaped(out_shape));
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), out_shape));
    permute_copy(*x, *out, *perm);
    return ok_status();
  }

 private:
  std::optional<Shape> perm_;
};

Result<std::unique_ptr<Kernel>> create_transpose(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::optional<std::vector<int64_t>> perm;
  if (attrs.has("perm")) perm = attrs.get_ints("perm");
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<TransposeKernel>(std::move(perm));
}

Status infer_transpose(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  AttrReader attrs(ctx.node());
  std::optional<std::vector<int64_t>> perm;
  if (attrs.has("perm")) perm = attrs.get_ints("perm");
  // A perm of the wrong type reads as empty: say so, not that [] has too few entries.
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (!in.shape) {
    if (perm) {
      ctx.set_output(0, type_with_rank(in.dtype, perm->size()));
    } else {
      ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    }
    return ok_status();
  }
  auto p = resolve_perm(perm, in.shape->size());
  if (!p.ok()) return ctx.error(p.status().message());
  std::vector<Dim> out;
  for (int64_t a : *p) out.push_back((*in.shape)[static_cast<size_t>(a)]);
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_transpose(Registrar& r) {
  r.add({.op_type = "Transpose", .since = 1, .create = create_transpose}, infer_transpose);
}

}  // namespace recur::reference
