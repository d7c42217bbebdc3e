#include "providers/onednn/common/prim_cache.h"

#include <algorithm>

#include "providers/onednn/common/avx512.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

dnnl::memory::desc strided_desc(std::span<const int64_t> dims, std::span<const int64_t> strides) {
  // Through the C API with arrays on the stack: the C++ constructor takes std::vectors, which
  // kernels that describe their operands on every run would allocate.
  if (dims.size() > DNNL_MAX_NDIMS || strides.size() != dims.size()) {
    return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()),
                              dnnl::memory::data_type::f32,
                              dnnl::memory::dims(strides.begin(), strides.end()));
  }
  dnnl_dims_t d, s;
  std::copy(dims.begin(), dims.end(), d);
  std::copy(strides.begin(), strides.end(), s);
  dnnl_memory_desc_t md;
  dnnl::error::wrap_c_api(
      dnnl_memory_desc_init_by_strides(&md, static_cast<int>(dims.size()), d, dnnl_f32, s),
      "could not construct a memory descriptor");
  return dnnl::memory::desc(md);
}

dnnl::memory::desc dense_desc(const Shape& shape) {
  Shape dims = shape;
  if (dims.empty()) dims = {1};
  Shape strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return strided_desc(dims, strides);
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

Status execute_primitive(const CachedPrimitive& p, std::span<const Bind> binds, ScratchPool& pool,
                         const std::string& what) {
  ScratchPool::Lease scratch = pool.acquire(p.scratchpad.get_size());
  ArgsPool::Lease args = p.args->acquire();
  return dnnl_try(what, [&] {
    for (const Bind& b : binds) args.bind(b.arg, b.md, b.data);
    args.bind(DNNL_ARG_SCRATCHPAD, p.scratchpad, scratch.data());
    ThreadScope scope(p.threads);
    args.execute(p.primitive, thread_stream());
    thread_stream().wait();
  });
}

RECUR_LOAD_PATH Claim claim_float32_input(const Node& node, const Graph& graph, size_t i) {
  if (!node.has_input(i)) return Claim::accept();
  const DType dt = graph.value(node.inputs[i]).type.dtype;
  if (dt != DType::kFloat32 && dt != DType::kUndefined) {
    return Claim::decline("the oneDNN " + node.op_type + " kernel runs float32 only, input is " +
                          std::string(dtype_name(dt)));
  }
  return Claim::accept();
}

RECUR_LOAD_PATH Claim claim_last_axis_float32(const Node& node, const Graph& graph,
                                              int64_t default_axis) {
  if (!avx512::have_avx512()) return Claim::decline("this processor has no AVX-512");
  Claim c = claim_float32_input(node, graph);
  if (!c.yes) return c;
  const TypeInfo& t = graph.value(node.inputs[0]).type;
  if (!t.shape) return Claim::decline("the input's rank is not known at load");
  const auto rank = static_cast<int64_t>(t.shape->size());
  const Attribute* a = node.attr("axis");
  const int64_t axis = a ? a->i : default_axis;
  if (rank == 0 || (axis != -1 && axis != rank - 1)) {
    return Claim::decline("the oneDNN " + node.op_type + " kernel takes the last axis only");
  }
  return Claim::accept();
}

}  // namespace recur::onednn
