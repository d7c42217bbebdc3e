// The constant right operand B [K, N] of a product (MatMul's, recur::MatMulBias's, Gemm's),
// packed once at load in the blocked layout oneDNN's matmul reads as it is. Given B in its plain
// layout, oneDNN's matmul packs it again on every call: for the few rows of A of a batch-1
// model (a decoder step, a stream) most of the call (a Gemm of [1,1536] by a transposed
// [4096,1536], 1.30 ms plain against 0.85 packed). The layout is the same for every number of
// rows (brgemm blocks B by 16 rows and 64 columns whatever M), so one copy serves every shape,
// and the kernel releases the ONNX copy: the weights are held once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include <dnnl.hpp>

#include "providers/onednn/common/avx2_panels.h"
#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/common/prim_cache.h"
#include "runtime/core/status.h"

namespace recur::onednn {

class PackedB {
 public:
  // B's K x N values, stored K x N row-major (or N x K when `trans`), each times `scale`.
  // Null where packing would not pay: oneDNN runs its generic matmul on this CPU, or the blocked
  // layout pads B to more than half as much again (a few columns padded to 64).
  // With `discard_source`, b is read for the last time (the caller frees it next, and no one
  // else reads it): where the layout is BA16a64b, recur packs it itself, reading b once from
  // front to back and giving its pages back to the kernel as it goes (DiscardBehind), so that
  // loading never holds B twice (word_lm's output projection, [1024, 30000]: 123 MB).
  static Result<std::shared_ptr<const PackedB>> make(const float* b, int64_t K, int64_t N,
                                                     bool trans, float scale,
                                                     const std::string& what,
                                                     bool discard_source = false);
  // B already in oneDNN's layout for it (BA16a64b, avx512.h's pack_matrix_panels): shared, not
  // copied, where the primitive reads that layout, else reordered into the one it reads. Null
  // where oneDNN runs its generic matmul on this CPU.
  static Result<std::shared_ptr<const PackedB>> adopt(std::shared_ptr<const AlignedBuffer> panels,
                                                      int64_t K, int64_t N,
                                                      const std::string& what);

  int64_t K() const { return k_; }
  int64_t N() const { return n_; }
  // The packed values and their layout (for tests).
  const AlignedBuffer& packed() const { return *packed_; }
  const dnnl::memory::desc& desc() const { return desc_; }

  // A matmul over this B for one number of rows: the primitive and the weights it reads, the
  // packed B where the primitive takes that layout, else a plain copy made from it at the first
  // such need.
  struct Plan {
    CachedPrimitive prim;
    dnnl::memory::desc b;
    const void* b_data = nullptr;
  };
  // A described by `a` ([M, K]), the output by `y` ([M, N]), `bias` ([1, N]) where not null.
  Result<Plan> plan(const dnnl::memory::desc& a, const dnnl::memory::desc& y,
                    const dnnl::memory::desc* bias, const dnnl::primitive_attr& attr,
                    Threads threads, const std::string& what) const;
  // Whether recur's own loop reads this B as it is (avx512::multiply_panels: oneDNN chose the
  // layout the loop reads, BA16a64b, and the loop is not capped off). For a few rows of A it
  // streams B at about the machine's bandwidth, where brgemm at one row does not; no second
  // copy of B is made.
  bool loop_reads() const { return loop_reads_; }
  // Y [rows, N] = A [rows, K] (rows K apart) by B, plus `bias` (N values) where not null,
  // through that loop, its column blocks split among up to `threads` threads.
  void multiply(const float* a, int64_t rows, const float* bias, float* y, Threads threads) const;
  // Whether a product of `rows` rows of A takes that loop rather than brgemm: up to 8. On a
  // Zen 4 (two threads, taco_step's Gemms, B [1536, 4096] and the like) the loop took 0.5x
  // brgemm's time at 1 and 2 rows, 0.8x at 4, 0.9x at 8, and about the same at 16 to 32;
  // brgemm's blocking over rows pays from there (docs/bench-cpu.md, "Few rows by a large B").
  static constexpr int64_t kLoopRows = 8;
  bool loop_takes(int64_t rows) const { return loop_reads_ && rows <= kLoopRows; }

  // Runs `p` on A's and Y's data, with N bias values where `bias` is not null (as planned).
  static Status execute(const Plan& p, const dnnl::memory::desc& a, const void* a_data,
                        const dnnl::memory::desc& y, void* y_data, const dnnl::memory::desc* bias,
                        const void* bias_data, ScratchPool& scratch, const std::string& what);

 private:
  PackedB(int64_t k, int64_t n, dnnl::memory::desc desc,
          std::shared_ptr<const AlignedBuffer> packed = nullptr);
  Result<const void*> plain(const std::string& what) const;
  // The layout the matmul reads B in, for one row of A (the same for every number of rows);
  // empty where oneDNN has only its generic implementation.
  static dnnl::memory::desc layout(int64_t K, int64_t N);

  int64_t k_, n_;
  dnnl::memory::desc desc_;  // [K, N], blocked
  bool loop_reads_ = false;
  std::shared_ptr<const AlignedBuffer> packed_;
  mutable std::mutex mu_;
  mutable std::unique_ptr<AlignedBuffer> plain_;  // [K, N] row-major, at the first need
};

// A constant B of recur's own loop, for oneDNN at the first product too large for the loop:
// once for every number of rows (MatMul's and Gemm's). The loop's copy itself where it is in
// oneDNN's layout (avx512.h, pack_matrix_panels), so that it is the only one; else packed from
// `plain` ([K, N], or [N, K] when `trans`, times `scale`).
class LatePackedB {
 public:
  // Null where oneDNN has only its generic matmul, or no layout that pays: the loop then
  // takes every product.
  Result<const PackedB*> get(const avx512::PackedMatrix& loop, const float* plain, bool trans,
                             float scale, const std::string& what) const;
  // The same for recur's AVX2 loop (avx2_panels.h): B unpacked from its panels, then packed.
  Result<const PackedB*> get(const avx2::PanelB& loop, const std::string& what) const;

 private:
  mutable std::mutex mu_;
  mutable bool tried_ = false;
  mutable std::shared_ptr<const PackedB> b_;
};

// One kernel's plans of products by its PackedB, by number of rows M: an exact plan for the
// numbers ExactPlans picks (prim_cache.h), chunks of rows otherwise. Each output row's sum is the
// same whatever the chunk (brgemm's reduction over K does not depend on the number of rows).
class PackedPlans {
 public:
  explicit PackedPlans(bool shared) : rows_(shared) {}

  // Y [M, N] (dense) = A [M, K] (row m at a + m * K) by `b`, plus `bias` (N values) where
  // not null; `attr` and `variant` (a Gemm's with or without C) key the plans with M.
  Status run(const PackedB& b, int64_t M, const float* a, float* y, const float* bias,
             const dnnl::primitive_attr& attr, int variant, Threads threads, ScratchPool& scratch,
             const std::string& what) const;

  // Plans made: of exact numbers of rows, and of chunks.
  size_t exact_plans() const { return exact_.size(); }
  size_t chunk_plans() const { return chunk_.size(); }

 private:
  using Key = std::tuple<int64_t, int>;  // rows, variant
  Result<std::shared_ptr<const PackedB::Plan>> plan(const PackedB& b, const Key& key,
                                                    const float* bias,
                                                    const dnnl::primitive_attr& attr,
                                                    Threads threads, const std::string& what,
                                                    PrimCache<Key, PackedB::Plan>& cache) const;

  mutable ExactPlans<Key> rows_;
  mutable PrimCache<Key, PackedB::Plan> exact_, chunk_;
};

}  // namespace recur::onednn
