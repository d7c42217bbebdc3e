#include "providers/onednn/common/prim_cache.h"

namespace recur::onednn {

dnnl::memory::desc dense_desc(const Shape& shape) {
  dnnl::memory::dims dims(shape.begin(), shape.end());
  if (dims.empty()) dims = {1};
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
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
    p.primitive.execute(thread_stream(), args.args());
    thread_stream().wait();
  });
}

Claim claim_float32_input(const Node& node, const Graph& graph, size_t i) {
  if (!node.has_input(i)) return Claim::accept();
  const DType dt = graph.value(node.inputs[i]).type.dtype;
  if (dt != DType::kFloat32 && dt != DType::kUndefined) {
    return Claim::decline("the oneDNN " + node.op_type + " kernel runs float32 only, input is " +
                          std::string(dtype_name(dt)));
  }
  return Claim::accept();
}

}  // namespace recur::onednn
