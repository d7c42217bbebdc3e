// Helpers shared by the tensor/ kernels: checked sizes, dtype-agnostic element moves, reading
// small control inputs, and shape-inference utilities.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/provider/kernel.h"

namespace recur::reference {

// The largest tensor a tensor/ kernel allocates: the host's physical memory. A corrupt shape
// (ConstantOfShape of [1e6,1e6]) then fails with a clear error instead of an allocation the OS
// may grant lazily and kill the process for later.
size_t max_tensor_bytes();

// The element count of `shape`, or an error on a negative dimension, an int64 overflow, or a
// tensor of `dtype` larger than max_tensor_bytes().
Result<int64_t> checked_numel(const Shape& shape, DType dtype);

// ctx.allocate_output() after checked_numel(); errors name the node.
Result<Tensor*> allocate_checked(KernelContext& ctx, size_t i, DType dtype, const Shape& shape);

// The product of shape[begin, end), or 0 if any of them is 0: the other dimensions of an empty
// tensor may be huge, and their product could overflow. For a non-empty tensor the product is
// bounded by its element count.
int64_t dims_product(const Shape& shape, size_t begin, size_t end);

// Calls f(std::type_identity<U>{}) with the unsigned integer type of `size` bytes: moving
// elements does not depend on what their bits mean. False for sizes other than 1, 2, 4, 8.
template <class F>
bool visit_element_size(size_t size, F&& f) {
  switch (size) {
    case 1:
      f(std::type_identity<uint8_t>{});
      return true;
    case 2:
      f(std::type_identity<uint16_t>{});
      return true;
    case 4:
      f(std::type_identity<uint32_t>{});
      return true;
    case 8:
      f(std::type_identity<uint64_t>{});
      return true;
    default:
      return false;
  }
}

// out[i] = in[in_offset + sum_d idx_d(i) * in_strides[d]] for every element i of `out_shape`
// in row-major order. Strides are in elements and may be zero (broadcast) or negative.
void strided_copy(const void* in, void* out, size_t elem_size, const Shape& out_shape,
                  const Shape& in_strides, int64_t in_offset);

// `in` with its dimensions permuted (out dim i = in dim perm[i]) into `out`, which has the
// permuted shape already.
void permute_copy(const Tensor& in, Tensor& out, const Shape& perm);

// A one-element tensor of any numeric or bool dtype, as double / as int64 (floats truncated
// toward zero; NaN and out-of-range values are errors).
// Every element of `out` set to the one element of `value`, which has out's dtype.
void fill_elements(Tensor& out, const Tensor& value);

Result<double> read_scalar_double(const Tensor& t, const std::string& what);
Result<int64_t> read_scalar_int(const Tensor& t, const std::string& what);

// Input i read as int64 values (int32 or int64); absent -> nullopt.
Result<std::optional<Shape>> optional_int_input(const KernelContext& ctx, size_t i,
                                                const std::string& what);

// GatherElements / ScatterElements: for each element of `indices` (row-major), the flat offset
// into `data` it addresses along `axis`, after checking ranks, shapes and index ranges.
// Into `offsets`, whose capacity a kernel may keep from run to run.
Status element_offsets(const Shape& data, const Shape& indices,
                       std::span<const int64_t> index_values, int64_t axis,
                       std::vector<int64_t>& offsets);

// GatherND / ScatterND: for each index tuple (the last dimension of `indices`), the flat offset
// of the data slice it names, the slice's element count, and the gathered shape.
struct NdPlan {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
  Shape out_shape;
};
Result<NdPlan> nd_plan(const Shape& data, const Shape& indices,
                       const std::vector<int64_t>& index_values, int64_t batch_dims);

// Shape inference: the int values of constant input i, if it has one.
std::optional<std::vector<int64_t>> constant_ints(const InferContext& ctx, size_t i);
// A shape of `rank` unknown dimensions.
std::vector<Dim> unknown_dims(size_t rank);
// Fixed dims of a declared shape, or nullopt if any is not fixed.
std::optional<Shape> fixed_shape(const std::optional<std::vector<Dim>>& dims);
TypeInfo type_with_dims(DType dtype, std::vector<Dim> dims);
TypeInfo type_with_rank(DType dtype, size_t rank);

// "[1,2,3]" for error messages.
std::string ints_to_string(const std::vector<int64_t>& v);

}  // namespace recur::reference
