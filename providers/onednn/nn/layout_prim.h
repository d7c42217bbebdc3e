// A weighted primitive (convolution, deconvolution) whose weights are constant, run in the
// layouts oneDNN prefers for it ("any"): the weights reordered once per layout (WeightPacks),
// and X and Y reordered between the plain layouts and the primitive's where they differ.
// For the audio front ends and vocoders recur serves this is brgemm on channels-last data
// instead of im2col + GEMM on the plain layout, several times faster at batch 1.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "providers/onednn/common/layout.h"
#include "providers/onednn/common/prim_cache.h"

namespace recur::onednn {

struct LayoutPrim {
  CachedPrimitive prim;  // empty where only oneDNN's reference implementation takes "any"
  dnnl::memory::desc src, weights, dst;
  // Null where the layout is the plain one, or where it is channels-last: that copy is
  // recur's transpose (channels_last.h), several times faster than oneDNN's reorder.
  std::shared_ptr<CachedPrimitive> to_src, from_dst;
  bool src_channels_last = false, dst_channels_last = false;
  std::shared_ptr<AlignedBuffer> packed_weights;
};

// A node's constant weights in each layout its primitives ask for, reordered once per layout.
// A kernel keeps a plan per input shape, and a model fed sequences or images of varying length
// makes one per length; their primitives mostly want the same layout of W, and share one copy
// of it here (each plan held its own before: a convolution stack of 16 MB grew by 20 MB with
// every new length, to 64 plans a node).
class WeightPacks {
 public:
  // `threads`: the kernel's, which a large reorder or transform takes (a CoreLease of them).
  explicit WeightPacks(Threads threads = {}) : threads_(threads) {}

  // `data`, described by `plain`, in the layout `packed`; `what` names the node for errors.
  Result<std::shared_ptr<AlignedBuffer>> get(const dnnl::memory::desc& plain, const void* data,
                                             const dnnl::memory::desc& packed,
                                             const std::string& what);

 private:
  struct Entry {
    dnnl::memory::desc plain, packed;
    const void* data;
    std::shared_ptr<AlignedBuffer> buf;
  };
  Threads threads_;
  std::mutex mu_;
  std::vector<Entry> entries_;
};

// Whether `md` is row-major `plain` laid out channels-last with more than one channel and one
// position: a copy that transpose_planes makes.
bool transposable_channels_last(const dnnl::memory::desc& plain, const dnnl::memory::desc& md);

// `make(src, weights, dst)` makes the primitive for the given descriptors; `plain_w` describes
// `constant_w` as the model holds it, and `packs` keeps it in the primitive's layout. With
// `fixed_io`, X and Y stay in the layouts `plain_x` and `plain_y` give (blocked ones), only W's
// is oneDNN's choice.
template <class Make>
Result<LayoutPrim> make_layout_prim(const dnnl::memory::desc& plain_x,
                                    const dnnl::memory::desc& plain_w,
                                    const dnnl::memory::desc& plain_y, const void* constant_w,
                                    WeightPacks& packs, const std::string& what, Make&& make,
                                    bool fixed_io = false) {
  LayoutPrim lp;
  auto any = [](const dnnl::memory::desc& md) {
    return dnnl::memory::desc(md.dims(), dnnl::memory::data_type::f32,
                              dnnl::memory::format_tag::any);
  };
  Result<CachedPrimitive> prim =
      make(fixed_io ? plain_x : any(plain_x), any(plain_w), fixed_io ? plain_y : any(plain_y));
  if (!prim.ok() || prim->impl.rfind("ref", 0) == 0) return lp;
  const_dnnl_primitive_desc_t pd = prim->primitive.get_primitive_desc();
  lp.src = dnnl::memory::desc(*dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0));
  lp.weights = dnnl::memory::desc(*dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
  lp.dst = dnnl::memory::desc(*dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0));
  lp.src_channels_last = transposable_channels_last(plain_x, lp.src);
  lp.dst_channels_last = transposable_channels_last(plain_y, lp.dst);
  if (!lp.src_channels_last) {
    RECUR_ASSIGN_OR_RETURN(lp.to_src, make_reorder(plain_x, lp.src, what));
  }
  if (!lp.dst_channels_last) {
    RECUR_ASSIGN_OR_RETURN(lp.from_dst, make_reorder(lp.dst, plain_y, what));
  }
  RECUR_ASSIGN_OR_RETURN(lp.packed_weights, packs.get(plain_w, constant_w, lp.weights, what));
  lp.prim = std::move(prim).value();
  return lp;
}

// Runs `lp` from plain X to plain Y; `bias` (described by `bias_md`) may be null. `buffers`
// lends X and Y in the primitive's layouts.
Status run_layout_prim(const LayoutPrim& lp, const dnnl::memory::desc& plain_x, const void* x,
                       const dnnl::memory::desc& plain_y, void* y,
                       const dnnl::memory::desc& bias_md, const void* bias, ScratchPool& buffers,
                       ScratchPool& scratch, const std::string& what);

}  // namespace recur::onednn
