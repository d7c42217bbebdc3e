#include "providers/onednn/nn/packed_b.h"

#include <algorithm>
#include <vector>

#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/layout.h"

namespace recur::onednn {

using dnnl::memory;

PackedB::PackedB(int64_t k, int64_t n, memory::desc desc,
                 std::shared_ptr<const AlignedBuffer> packed)
    : k_(k),
      n_(n),
      desc_(desc),
      packed_(packed ? std::move(packed) : std::make_shared<AlignedBuffer>(desc.get_size())) {
  loop_reads_ = avx512::have_avx512() &&
                desc_ == memory::desc({k, n}, memory::data_type::f32, memory::format_tag::BA16a64b);
}

void PackedB::multiply(const float* a, int64_t rows, const float* bias, float* y,
                       Threads threads) const {
  constexpr int64_t kBlock = avx512::kColBlock * avx512::kLanes;
  const int64_t blocks = (n_ + kBlock - 1) / kBlock, Kp = (k_ + 15) / 16 * 16;
  if (rows <= 0 || blocks == 0) return;
  const Threads want = threads_for(
      static_cast<double>(rows) * static_cast<double>(k_) * static_cast<double>(n_), threads);
  CoreLease lease;
  if (want.max > 1) lease.acquire(want.max, want.shrink);
  const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), blocks);
  const float* m = static_cast<const float*>(packed_->data);
  in_parts(blocks, jobs, [&](int64_t b0, int64_t b1) {
    avx512::multiply_panels(m, k_, Kp, n_, a, rows, bias, y, b0, b1);
  });
}

memory::desc PackedB::layout(int64_t K, int64_t N) {
  ThreadScope scope(1);
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(dense_desc({1, K}),
                         memory::desc({K, N}, memory::data_type::f32, memory::format_tag::any),
                         dense_desc({1, N})),
      cpu_engine());
  if (generic_impl(pd.impl_info_str())) return memory::desc();
  return pd.weights_desc();
}

Result<std::shared_ptr<const PackedB>> PackedB::make(const float* b, int64_t K, int64_t N,
                                                     bool trans, float scale,
                                                     const std::string& what, bool discard_source) {
  std::shared_ptr<PackedB> out;
  if (K <= 0 || N <= 0) return std::shared_ptr<const PackedB>();
  const int64_t b_dims[] = {K, N};
  Status st = dnnl_try(what, [&] {
    const memory::desc packed = layout(K, N);
    if (packed.is_zero()) return;
    const double plain_bytes = static_cast<double>(K) * static_cast<double>(N) * sizeof(float);
    if (static_cast<double>(packed.get_size()) > 1.5 * plain_bytes + 65536.0) return;
    const memory::desc panels({K, N}, memory::data_type::f32, memory::format_tag::BA16a64b);
    if (discard_source && packed == panels) {
      // Stored N x K (a Gemm's transB), B's rows fill the column blocks one after another, and
      // huge pages come in as they do. Stored K x N, each of its rows reaches every column
      // block: on huge pages the first rows would make the whole buffer resident, so it fills
      // on 4 KiB pages, then collapses to huge ones (a product reads all of B each run: on 4
      // KiB pages taco_step's Gemms ran 12% slower).
      auto buf = std::make_shared<AlignedBuffer>(packed.get_size());
      if (!trans) buf->hold_huge_pages(false);
      avx512::pack_panels(b, K, N, trans, scale, static_cast<float*>(buf->data), true);
      if (!trans) buf->hold_huge_pages(true);
      out.reset(new PackedB(K, N, packed, std::move(buf)));
      return;
    }
    out.reset(new PackedB(K, N, packed));
    const int64_t strides[] = {trans ? 1 : N, trans ? K : 1};
    memory from = make_memory(strided_desc(b_dims, strides), b);
    memory to = make_memory(packed, out->packed_->data);
    dnnl::primitive_attr attr;
    if (scale != 1.0f) attr.set_output_scales(0, {scale});
    ThreadScope scope(1);
    dnnl::reorder(dnnl::reorder::primitive_desc(from, to, attr)).execute(thread_stream(), from, to);
    thread_stream().wait();
  });
  if (!st.ok()) return st;
  return std::shared_ptr<const PackedB>(std::move(out));
}

Result<std::shared_ptr<const PackedB>> PackedB::adopt(std::shared_ptr<const AlignedBuffer> panels,
                                                      int64_t K, int64_t N,
                                                      const std::string& what) {
  std::shared_ptr<PackedB> out;
  if (K <= 0 || N <= 0 || !panels) return std::shared_ptr<const PackedB>();
  Status st = dnnl_try(what, [&] {
    const memory::desc packed = layout(K, N);
    if (packed.is_zero()) return;
    const memory::desc given({K, N}, memory::data_type::f32, memory::format_tag::BA16a64b);
    if (packed == given) {
      out.reset(new PackedB(K, N, packed, std::move(panels)));
      return;
    }
    out.reset(new PackedB(K, N, packed));
    memory from = make_memory(given, panels->data);
    memory to = make_memory(packed, out->packed_->data);
    ThreadScope scope(1);
    dnnl::reorder(from, to).execute(thread_stream(), from, to);
    thread_stream().wait();
  });
  if (!st.ok()) return st;
  return std::shared_ptr<const PackedB>(std::move(out));
}

Result<PackedB::Plan> PackedB::plan(const memory::desc& a, const memory::desc& y,
                                    const memory::desc* bias, const dnnl::primitive_attr& attr,
                                    Threads threads, const std::string& what) const {
  auto make = [&](const memory::desc& bd) {
    return make_primitive<dnnl::matmul>(
        [&] { return bias ? dnnl::matmul::desc(a, bd, *bias, y) : dnnl::matmul::desc(a, bd, y); },
        attr, threads, what);
  };
  Plan p;
  Result<CachedPrimitive> blocked = make(desc_);
  if (blocked.ok() && !generic_impl(blocked->impl)) {
    p.prim = std::move(blocked).value();
    p.b = desc_;
    p.b_data = packed_->data;
    return p;
  }
  p.b = dense_desc({k_, n_});
  RECUR_ASSIGN_OR_RETURN(p.b_data, plain(what));
  RECUR_ASSIGN_OR_RETURN(p.prim, make(p.b));
  return p;
}

Status PackedB::execute(const Plan& p, const memory::desc& a, const void* a_data,
                        const memory::desc& y, void* y_data, const memory::desc* bias,
                        const void* bias_data, ScratchPool& scratch, const std::string& what) {
  if (bias) {
    return execute_primitive(p.prim,
                             {{DNNL_ARG_SRC, a, a_data},
                              {DNNL_ARG_WEIGHTS, p.b, p.b_data},
                              {DNNL_ARG_BIAS, *bias, bias_data},
                              {DNNL_ARG_DST, y, y_data}},
                             scratch, what);
  }
  return execute_primitive(
      p.prim,
      {{DNNL_ARG_SRC, a, a_data}, {DNNL_ARG_WEIGHTS, p.b, p.b_data}, {DNNL_ARG_DST, y, y_data}},
      scratch, what);
}

Result<const void*> PackedB::plain(const std::string& what) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (plain_) return static_cast<const void*>(plain_->data);
  std::unique_ptr<AlignedBuffer> buf;
  RECUR_RETURN_IF_ERROR(dnnl_try(what, [&] {
    buf = std::make_unique<AlignedBuffer>(static_cast<size_t>(k_ * n_) * sizeof(float));
    ThreadScope scope(1);
    memory from = make_memory(desc_, packed_->data);
    memory to = make_memory(dense_desc({k_, n_}), buf->data);
    dnnl::reorder(from, to).execute(thread_stream(), from, to);
    thread_stream().wait();
  }));
  plain_ = std::move(buf);
  return static_cast<const void*>(plain_->data);
}

Result<const PackedB*> LatePackedB::get(const avx512::PackedMatrix& loop, const float* plain,
                                        bool trans, float scale, const std::string& what) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!tried_) {
    tried_ = true;
    if (loop.Kp > 0) {
      RECUR_ASSIGN_OR_RETURN(b_, PackedB::adopt(loop.m, loop.K, loop.N, what));
    } else if (plain) {
      RECUR_ASSIGN_OR_RETURN(b_, PackedB::make(plain, loop.K, loop.N, trans, scale, what));
    }
  }
  return b_.get();
}

Result<const PackedB*> LatePackedB::get(const avx2::PanelB& loop, const std::string& what) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!tried_) {
    tried_ = true;
    // Once, at the first product too large for the loop: not a run's steady state.
    std::vector<float> plain(static_cast<size_t>(loop.K * loop.N));
    avx2::unpack(loop, plain.data());
    RECUR_ASSIGN_OR_RETURN(b_, PackedB::make(plain.data(), loop.K, loop.N, false, 1.0f, what));
  }
  return b_.get();
}

Result<std::shared_ptr<const PackedB::Plan>> PackedPlans::plan(
    const PackedB& b, const Key& key, const float* bias, const dnnl::primitive_attr& attr,
    Threads threads, const std::string& what, PrimCache<Key, PackedB::Plan>& cache) const {
  return cache.get(key, [&] {
    const int64_t rows = std::get<0>(key), K = b.K(), N = b.N();
    const int64_t a_dims[] = {rows, K}, a_strides[] = {K, 1};
    const int64_t y_dims[] = {rows, N}, y_strides[] = {N, 1};
    const int64_t bias_dims[] = {1, N};
    const memory::desc bias_d = strided_desc(bias_dims, y_strides);
    return b.plan(
        strided_desc(a_dims, a_strides), strided_desc(y_dims, y_strides), bias ? &bias_d : nullptr,
        attr, threads_for(static_cast<double>(rows) * static_cast<double>(K * N), threads), what);
  });
}

Status PackedPlans::run(const PackedB& b, int64_t M, const float* a, float* y, const float* bias,
                        const dnnl::primitive_attr& attr, int variant, Threads threads,
                        ScratchPool& scratch, const std::string& what) const {
  const int64_t K = b.K(), N = b.N();
  const int64_t bias_dims[] = {1, N}, bias_strides[] = {N, 1};
  const memory::desc bias_d = strided_desc(bias_dims, bias_strides);
  auto run_rows = [&](const PackedB::Plan& p, int64_t r0, int64_t rows) {
    const int64_t a_dims[] = {rows, K}, a_strides[] = {K, 1};
    const int64_t y_dims[] = {rows, N}, y_strides[] = {N, 1};
    return PackedB::execute(p, strided_desc(a_dims, a_strides), a + r0 * K,
                            strided_desc(y_dims, y_strides), y + r0 * N, bias ? &bias_d : nullptr,
                            bias, scratch, what);
  };
  if (rows_.exact({M, variant})) {
    RECUR_ASSIGN_OR_RETURN(auto p, plan(b, {M, variant}, bias, attr, threads, what, exact_));
    return run_rows(*p, 0, M);
  }
  count_shared_plan_run();
  // A sum post-op (a Gemm's C, written into Y first) reads Y: its rows are done once each.
  const dnnl::post_ops ops = attr.get_post_ops();
  bool reads_y = false;
  for (int i = 0; i < ops.len(); ++i)
    reads_y = reads_y || ops.kind(i) == dnnl::primitive::kind::sum;
  return ExactPlans<Key>::for_each_chunk(M, !reads_y, [&](int64_t r0, int64_t rows) -> Status {
    RECUR_ASSIGN_OR_RETURN(auto p, plan(b, {rows, variant}, bias, attr, threads, what, chunk_));
    return run_rows(*p, r0, rows);
  });
}

}  // namespace recur::onednn
