#include "providers/reference/kernels.h"
#include "providers/reference/text/text_ops.h"

namespace recur::reference {

void register_text_kernels(Registrar& r) {
  register_regex_full_match(r);
  register_string_concat(r);
  register_string_normalizer(r);
  register_string_split(r);
  register_tf_idf_vectorizer(r);
}

}  // namespace recur::reference
