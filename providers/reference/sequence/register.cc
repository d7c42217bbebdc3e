#include "providers/reference/kernels.h"
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

void register_sequence_kernels(Registrar& r) {
  register_sequence_empty(r);
  register_sequence_construct(r);
  register_sequence_insert(r);
  register_sequence_at(r);
  register_sequence_erase(r);
  register_sequence_length(r);
  register_split_to_sequence(r);
  register_concat_from_sequence(r);
  register_sequence_map(r);
  register_optional(r);
  register_optional_has_element(r);
  register_optional_get_element(r);
}

}  // namespace recur::reference
