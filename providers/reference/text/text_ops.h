// Registration functions of text/: operators on strings and token ids.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_string_normalizer(KernelRegistry& r);
void register_tf_idf_vectorizer(KernelRegistry& r);

}  // namespace recur::reference
