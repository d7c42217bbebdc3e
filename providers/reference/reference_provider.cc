#include "providers/reference/reference_provider.h"

#include "providers/reference/kernels.h"

namespace recur {

namespace reference {

void register_kernels(Registrar& r) {
  register_rnn_kernels(r);
  register_math_kernels(r);
  register_tensor_kernels(r);
  register_nn_kernels(r);
  register_reduce_kernels(r);
  register_control_kernels(r);
  register_quant_kernels(r);
  register_sequence_kernels(r);
  register_text_kernels(r);
  register_signal_kernels(r);
  register_training_kernels(r);
  register_ml_kernels(r);
}

}  // namespace reference

namespace {

class ReferenceProvider final : public ExecutionProvider {
 public:
  explicit ReferenceProvider(std::string name) : ExecutionProvider(std::move(name), Device::cpu()) {
    reference::Registrar r(&mutable_registry(), nullptr);
    reference::register_kernels(r);
  }
};

}  // namespace

std::unique_ptr<ExecutionProvider> make_reference_provider(std::string name) {
  return std::make_unique<ReferenceProvider>(std::move(name));
}

const OpRules& builtin_op_rules() {
  static const OpRules rules = [] {
    OpRules r;
    reference::Registrar registrar(nullptr, &r);
    reference::register_kernels(registrar);
    return r;
  }();
  return rules;
}

}  // namespace recur
