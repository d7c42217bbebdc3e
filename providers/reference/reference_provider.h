// The reference provider: every operator, in plain loops. The oracle for the other providers
// and the last fallback.
#pragma once

#include <memory>
#include <string>

#include "runtime/graph/op_rules.h"
#include "runtime/provider/execution_provider.h"

namespace recur {

// `name` is "reference", or "host" for the instance a session keeps for shape computations.
std::unique_ptr<ExecutionProvider> make_reference_provider(std::string name = "reference");

// The shape rule of every operator recur knows, registered beside its reference kernel. Built
// once per process; shape inference reads it whichever providers a session uses.
const OpRules& builtin_op_rules();

}  // namespace recur
