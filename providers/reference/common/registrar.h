// How reference kernel files register an operator: its kernel, and its shape rule. The
// reference kernels are where recur writes down what each operator means, so the rule is
// registered beside the kernel, into the session's OpRules, whichever provider runs the node.
#pragma once

#include "runtime/graph/op_rules.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

class Registrar {
 public:
  // Either may be null. The built-ins fill both in one pass (builtin_op_rules()).
  Registrar(KernelRegistry* kernels, OpRules* rules) : kernels_(kernels), rules_(rules) {}

  void add(KernelDef def, InferFn infer = {}) {
    if (rules_ && infer) {
      rules_->add({def.domain, def.op_type, def.since, def.until, std::move(infer)});
    }
    if (kernels_) kernels_->add(std::move(def));
  }

 private:
  KernelRegistry* kernels_;
  OpRules* rules_;
};

}  // namespace recur::reference
