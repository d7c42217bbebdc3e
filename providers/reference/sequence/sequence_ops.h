// Registration functions of sequence/, and helpers shared by the sequence operators.
#pragma once

#include <cstdint>

#include "providers/reference/common/registrar.h"
#include "providers/reference/common/util.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_sequence_empty(Registrar& r);
void register_sequence_construct(Registrar& r);
void register_sequence_insert(Registrar& r);
void register_sequence_at(Registrar& r);
void register_sequence_erase(Registrar& r);
void register_sequence_length(Registrar& r);
void register_split_to_sequence(Registrar& r);
void register_concat_from_sequence(Registrar& r);
void register_sequence_map(Registrar& r);
void register_optional(Registrar& r);
void register_optional_has_element(Registrar& r);
void register_optional_get_element(Registrar& r);

// Input i, which must be present and a sequence.
Result<const Tensor*> sequence_input(const KernelContext& ctx, size_t i);

// Input i, which must be present and a tensor (not a sequence).
Result<const Tensor*> tensor_input(const KernelContext& ctx, size_t i);

// A position input: a single int32 or int64. `size` is the sequence's length; positions in
// [-size, size + extra) are valid (extra is 1 for SequenceInsert, which may append), and a
// negative one counts from the back. Returns the position in [0, size + extra).
Result<int64_t> read_position(const KernelContext& ctx, const Tensor& t, int64_t size,
                              int64_t extra);

// The static type of a sequence of `element` tensors.
TypeInfo sequence_type(DType element);

}  // namespace recur::reference
