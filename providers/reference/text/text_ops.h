// Registration functions of text/: operators on strings and token ids.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_regex_full_match(Registrar& r);
void register_string_concat(Registrar& r);
void register_string_normalizer(Registrar& r);
void register_string_split(Registrar& r);
void register_tf_idf_vectorizer(Registrar& r);

}  // namespace recur::reference
