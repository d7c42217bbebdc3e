#include "providers/onednn/common/layout.h"

namespace recur::onednn {

Result<std::shared_ptr<CachedPrimitive>> make_reorder(const dnnl::memory::desc& from,
                                                      const dnnl::memory::desc& to,
                                                      const std::string& what) {
  if (from == to) return std::shared_ptr<CachedPrimitive>();
  auto out = std::make_shared<CachedPrimitive>();
  Status st = dnnl_try(what, [&] {
    ThreadScope scope(1);
    dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratchpad_attr());
    out->scratchpad = pd.scratchpad_desc();
    out->impl = pd.impl_info_str();
    out->primitive = dnnl::reorder(pd);
  });
  if (!st.ok()) return st;
  return out;
}

dnnl::memory::desc channels_last(const dnnl::memory::desc& plain) {
  using tag = dnnl::memory::format_tag;
  const auto dims = plain.dims();
  const tag t = dims.size() == 3 ? tag::acb : dims.size() == 4 ? tag::acdb : tag::acdeb;
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, t);
}

}  // namespace recur::onednn
