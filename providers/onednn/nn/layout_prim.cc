#include "providers/onednn/nn/layout_prim.h"

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/channels_last.h"
#include "providers/onednn/nn/winograd_weights.h"

namespace recur::onednn {

Result<std::shared_ptr<AlignedBuffer>> WeightPacks::get(const dnnl::memory::desc& plain,
                                                        const void* data,
                                                        const dnnl::memory::desc& packed,
                                                        const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.data == data && e.plain == plain && e.packed == packed) return e.buf;
  }
  const size_t bytes = packed.get_size();
  auto buf = std::make_shared<AlignedBuffer>(bytes);
  // Made at the first run of a shape, where its time is mostly the first touch of the new
  // buffer's pages (on the 2-vCPU EPYC 12 us a 4 KiB page, 3.6 ms for a 64 -> 128 channel
  // Winograd matrix of 1.2 MB), which the kernel's cores take in parallel from 256 KiB.
  constexpr size_t kMinSplitBytes = size_t{256} << 10;
  CoreLease lease;
  if (bytes >= kMinSplitBytes && threads_.max > 1) lease.acquire(threads_.max, threads_.shrink);
  const int jobs = std::max(1, lease.threads());
  // oneDNN's reorder into the Winograd layouts is scalar code, 16 ms a 256-channel matrix.
  if (winograd_weights(plain, static_cast<const float*>(data), packed,
                       static_cast<float*>(buf->data), jobs)) {
    entries_.push_back({plain, packed, data, buf});
    return buf;
  }
  RECUR_RETURN_IF_ERROR(dnnl_try(what, [&] {
    ThreadScope scope(jobs);
    dnnl::memory from = make_memory(plain, data);
    dnnl::memory to = make_memory(packed, buf->data);
    dnnl::reorder(from, to).execute(thread_stream(), from, to);
    thread_stream().wait();
  }));
  entries_.push_back({plain, packed, data, buf});
  return buf;
}

bool transposable_channels_last(const dnnl::memory::desc& plain, const dnnl::memory::desc& md) {
  const auto dims = plain.dims();
  if (dims.size() < 3 || dims.size() > 5 || plain.data_type() != dnnl::memory::data_type::f32 ||
      !avx512::have_avx512())
    return false;
  using tag = dnnl::memory::format_tag;
  const tag row_major = dims.size() == 3 ? tag::abc : dims.size() == 4 ? tag::abcd : tag::abcde;
  // One channel, or one position: the same bytes, which oneDNN reads as they are.
  int64_t spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  if (dims[1] == 1 || spatial == 1) return false;
  return plain == dnnl::memory::desc(dims, plain.data_type(), row_major) &&
         md == channels_last(plain);
}

namespace {

// [N, C, S] <-> [N, S, C] for the spatial size S of `plain`'s dims.
void channels_copy(const dnnl::memory::desc& plain, const void* from, void* to, bool to_last,
                   const CachedPrimitive& prim) {
  const auto dims = plain.dims();
  int64_t spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  const int64_t rows = to_last ? dims[1] : spatial, cols = to_last ? spatial : dims[1];
  transpose_planes(static_cast<const float*>(from), static_cast<float*>(to), dims[0], rows, cols,
                   prim.threads, prim.shrink);
}

}  // namespace

Status run_layout_prim(const LayoutPrim& lp, const dnnl::memory::desc& plain_x, const void* x,
                       const dnnl::memory::desc& plain_y, void* y,
                       const dnnl::memory::desc& bias_md, const void* bias, ScratchPool& buffers,
                       ScratchPool& scratch, const std::string& what) {
  const bool src_copy = lp.to_src || lp.src_channels_last;
  const bool dst_copy = lp.from_dst || lp.dst_channels_last;
  ScratchPool::Lease src_buf = src_copy ? buffers.acquire(lp.src.get_size()) : ScratchPool::Lease();
  ScratchPool::Lease dst_buf = dst_copy ? buffers.acquire(lp.dst.get_size()) : ScratchPool::Lease();
  const void* src = src_copy ? src_buf.data() : x;
  void* dst = dst_copy ? dst_buf.data() : y;
  if (lp.src_channels_last) channels_copy(plain_x, x, src_buf.data(), true, lp.prim);
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
  if (lp.dst_channels_last) channels_copy(plain_y, dst, y, false, lp.prim);
  if (!lp.from_dst) return ok_status();
  return execute_primitive(*lp.from_dst, {{DNNL_ARG_FROM, lp.dst, dst}, {DNNL_ARG_TO, plain_y, y}},
                           scratch, what);
}

}  // namespace recur::onednn
