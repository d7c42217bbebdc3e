// Small helpers shared by reference kernels.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/provider/execution_provider.h"
#include "runtime/provider/kernel.h"

namespace recur::reference {

// The values of an int32 or int64 tensor (shapes, axes, indices, pads). Up to 8 of them need
// no heap memory: kernels read these on every run.
Result<Shape> read_int_values(const Tensor& t, std::string_view what);
// The same into `out`, for index lists of any length: a kernel keeps `out` from run to run.
Status read_int_values_into(const Tensor& t, std::string_view what, std::vector<int64_t>& out);

// Maps a possibly negative axis into [0, rank), or an error naming `what`.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what);

// Input i, or an error naming the node and the input if it is absent.
Result<const Tensor*> required_input(const KernelContext& ctx, size_t i);

// Row-major strides of `shape`, in elements.
Shape contiguous_strides(const Shape& shape);

// A KernelFactory for a kernel type that needs nothing from compilation.
template <class K>
KernelFactory make_simple() {
  return [](CompileContext&) -> Result<std::unique_ptr<Kernel>> { return std::make_unique<K>(); };
}

// Copies n elements of `src` from element src_off into `dst` at element dst_off; both have the
// same dtype. String elements are assigned one by one (they are objects), the others are moved
// as bytes.
void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n);

// Inference rule: output 0 has the type of input 0.
Status infer_same_as_input0(InferContext& ctx);

}  // namespace recur::reference
