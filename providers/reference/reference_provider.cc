#include "providers/reference/reference_provider.h"

#include <memory>

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
  register_random_kernels(r);
}

}  // namespace reference

namespace {

// The reference kernels and the operators' shape rules come from the same registration calls,
// so one pass per process builds both. With the rules built apart, every kernel def was made
// only to be destroyed, which ran code next to every operator's kernel.
struct Builtins {
  KernelRegistry kernels;
  OpRules rules;
};

const std::shared_ptr<const Builtins>& builtins() {
  static const std::shared_ptr<const Builtins> b = [] {
    auto made = std::make_shared<Builtins>();
    reference::Registrar r(&made->kernels, &made->rules);
    reference::register_kernels(r);
    return std::shared_ptr<const Builtins>(std::move(made));
  }();
  return b;
}

class ReferenceProvider final : public ExecutionProvider {
 public:
  explicit ReferenceProvider(std::string name) : ExecutionProvider(std::move(name), Device::cpu()) {
    const auto& b = builtins();
    share_registry(std::shared_ptr<const KernelRegistry>(b, &b->kernels));
  }
};

}  // namespace

std::unique_ptr<ExecutionProvider> make_reference_provider(std::string name) {
  return std::make_unique<ReferenceProvider>(std::move(name));
}

const OpRules& builtin_op_rules() { return builtins()->rules; }

}  // namespace recur
