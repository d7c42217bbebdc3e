#include "providers/onednn/nn/layout_prim.h"

namespace recur::onednn {

Status run_layout_prim(const LayoutPrim& lp, const dnnl::memory::desc& plain_x, const void* x,
                       const dnnl::memory::desc& plain_y, void* y,
                       const dnnl::memory::desc& bias_md, const void* bias, ScratchPool& buffers,
                       ScratchPool& scratch, const std::string& what) {
  ScratchPool::Lease src_buf =
      lp.to_src ? buffers.acquire(lp.src.get_size()) : ScratchPool::Lease();
  ScratchPool::Lease dst_buf =
      lp.from_dst ? buffers.acquire(lp.dst.get_size()) : ScratchPool::Lease();
  const void* src = lp.to_src ? src_buf.data() : x;
  void* dst = lp.from_dst ? dst_buf.data() : y;
  if (lp.to_src) {
    RECUR_RETURN_IF_ERROR(execute_primitive(
        *lp.to_src, {{DNNL_ARG_FROM, plain_x, x}, {DNNL_ARG_TO, lp.src, src}}, scratch, what));
  }
  const Bind args[] = {{DNNL_ARG_SRC, lp.src, src},
                       {DNNL_ARG_WEIGHTS, lp.weights, lp.packed_weights->data},
                       {DNNL_ARG_DST, lp.dst, dst},
                       {DNNL_ARG_BIAS, bias_md, bias}};
  RECUR_RETURN_IF_ERROR(
      execute_primitive(lp.prim, std::span<const Bind>(args, bias ? 4 : 3), scratch, what));
  if (!lp.from_dst) return ok_status();
  return execute_primitive(*lp.from_dst, {{DNNL_ARG_FROM, lp.dst, dst}, {DNNL_ARG_TO, plain_y, y}},
                           scratch, what);
}

}  // namespace recur::onednn
