// SequenceEmpty: an empty sequence whose element type is the `dtype` attribute (float if absent).
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

Result<DType> element_type(const Node& node) {
  AttrReader attrs(node);
  const int64_t code = attrs.get_int("dtype", static_cast<int64_t>(DType::kFloat32));
  RECUR_RETURN_IF_ERROR(attrs.status());
  const auto t = static_cast<DType>(code);
  if (t == DType::kSequence || t == DType::kUndefined || dtype_name(t) == "undefined") {
    return invalid_model(node.describe() + ": 'dtype' " + std::to_string(code) +
                         " is not a tensor element type");
  }
  return t;
}

class SequenceEmptyKernel final : public Kernel {
 public:
  explicit SequenceEmptyKernel(DType dtype) : dtype_(dtype) {}
  Status run(KernelContext& ctx) const override {
    return ctx.set_output(0, Tensor::sequence({}, dtype_));
  }

 private:
  DType dtype_;
};

}  // namespace

void register_sequence_empty(Registrar& r) {
  r.add({.op_type = "SequenceEmpty",
         .since = 11,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(DType t, element_type(c.node()));
           return std::make_unique<SequenceEmptyKernel>(t);
         }},
        [](InferContext& c) -> Status {
          RECUR_ASSIGN_OR_RETURN(DType t, element_type(c.node()));
          c.set_output(0, sequence_type(t));
          return ok_status();
        });
}

}  // namespace recur::reference
