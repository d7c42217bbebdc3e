#include "providers/reference/kernels.h"
#include "providers/reference/text/text_ops.h"

namespace recur::reference {

void register_text_kernels(Registrar& r) {
  register_string_normalizer(r);
  register_tf_idf_vectorizer(r);
}

}  // namespace recur::reference
