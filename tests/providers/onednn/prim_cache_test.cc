// The plan cache of the oneDNN kernels (providers/onednn/common/prim_cache.h): full, it lets go
// of the plan used least recently, so that a model fed many sizes keeps those that come back.
// And the chunks of rows that products by a packed B run in at new row counts, and the
// scratch buffers the kernels share; make_primitive passing over an implementation.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "providers/onednn/common/layout.h"
#include "providers/onednn/common/prim_cache.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn {
namespace {

TEST(PrimCache, AFullCacheDropsTheLeastRecentlyUsed) {
  PrimCache<int, int> cache;
  int made = 0;
  auto get = [&](int key) {
    auto v = cache.get(key, [&]() -> Result<int> {
      ++made;
      return key * 10;
    });
    EXPECT_TRUE(v.ok());
    return v.ok() ? **v : -1;
  };
  const int n = static_cast<int>(PrimCache<int, int>::kCapacity);
  for (int k = 0; k < n; ++k) EXPECT_EQ(get(k), k * 10);
  EXPECT_EQ(made, n);
  EXPECT_EQ(get(0), 0);  // used again: now the most recent
  EXPECT_EQ(made, n);
  EXPECT_EQ(get(n), n * 10);  // full: key 1, the least recently used, goes
  EXPECT_EQ(made, n + 1);
  EXPECT_EQ(get(0), 0);  // kept
  EXPECT_EQ(made, n + 1);
  EXPECT_EQ(get(1), 10);  // made again
  EXPECT_EQ(made, n + 2);
}

// A failed make leaves nothing behind: the next get makes it again.
TEST(PrimCache, AFailedMakeIsNotKept) {
  PrimCache<int, int> cache;
  int made = 0;
  auto fail = [&]() -> Result<int> {
    ++made;
    return Status(ErrorCode::kInvalidArgument, "no");
  };
  EXPECT_FALSE(cache.get(3, fail).ok());
  EXPECT_FALSE(cache.get(3, fail).ok());
  EXPECT_EQ(made, 2);
}

// Every row is covered, in chunks of a few sizes: at most two chunks up to 512 rows where
// they may overlap (the second ends at row M), and without overlap each row exactly once.
// make_primitive(..., avoid) takes oneDNN's next implementation past one whose name starts
// with `avoid` (a channels-last first layer passes over brgconv), from a descriptor the maker
// returns as a temporary, as the kernels' makers do: oneDNN's iterator reads it at each step.
TEST(MakePrimitive, PassesOverTheImplementationToAvoid) {
  using dnnl::memory;
  const auto make = [] {
    const auto nhwc = [](memory::dims d) {
      return memory::desc(d, memory::data_type::f32, memory::format_tag::nhwc);
    };
    return dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        nhwc({2, 1, 40, 20}),
        memory::desc({32, 1, 3, 3}, memory::data_type::f32, memory::format_tag::any),
        memory::desc({32}, memory::data_type::f32, memory::format_tag::x), nhwc({2, 32, 19, 9}),
        {2, 2}, {0, 0}, {0, 0}, {0, 0});
  };
  const Threads one{1, false};
  Result<CachedPrimitive> first =
      make_primitive<dnnl::convolution_forward>(make, user_scratchpad_attr(), one, "first");
  ASSERT_TRUE(first.ok()) << first.status().message();
  if (generic_impl(first->impl)) GTEST_SKIP() << "oneDNN has only its generic kernel here";
  // Below AVX2 (ONEDNN_MAX_CPU_ISA=SSE41) its gemm-based convolution is the only other one.
  if (!cpu::has(cpu::Feature::kAvx2))
    GTEST_SKIP() << "oneDNN has one non-generic convolution here: " << first->impl;
  const std::string kind = first->impl.substr(0, first->impl.find(':'));
  Result<CachedPrimitive> other =
      make_primitive<dnnl::convolution_forward>(make, user_scratchpad_attr(), one, "other", kind);
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_FALSE(other->impl.starts_with(kind)) << other->impl;
  EXPECT_FALSE(generic_impl(other->impl)) << other->impl;
  Result<CachedPrimitive> again =
      make_primitive<dnnl::convolution_forward>(make, user_scratchpad_attr(), one, "again", "none");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->impl, first->impl);
}

TEST(ExactPlans, ChunksCoverEveryRowWithFewSizes) {
  std::set<int64_t> sizes;
  for (int64_t M = 1; M <= 1500; ++M) {
    for (bool overlap : {true, false}) {
      std::vector<int> done(static_cast<size_t>(M), 0);
      int calls = 0;
      ASSERT_TRUE(ExactPlans<int>::for_each_chunk(M, overlap, [&](int64_t r0, int64_t rows) {
                    EXPECT_GE(r0, 0);
                    EXPECT_LE(r0 + rows, M);
                    EXPECT_LE(rows, ExactPlans<int>::kMaxChunk);
                    for (int64_t r = r0; r < r0 + rows; ++r) ++done[static_cast<size_t>(r)];
                    sizes.insert(rows);
                    ++calls;
                    return ok_status();
                  }).ok());
      for (int64_t r = 0; r < M; ++r) {
        ASSERT_GE(done[static_cast<size_t>(r)], 1) << "M " << M << " row " << r;
        if (!overlap) {
          ASSERT_EQ(done[static_cast<size_t>(r)], 1) << "M " << M << " row " << r;
        }
      }
      if (overlap) {
        EXPECT_LE(calls, (M + 511) / 512 + 1) << M;
        if (M <= 512) {
          EXPECT_LE(calls, 2) << M;
        }
      }
    }
  }
  // 1, 2, 3, 4, 6, 8, ..., 384, 512.
  EXPECT_EQ(sizes.size(), 18u);
  for (int64_t m = 1; m <= 512; ++m) {
    const int64_t below = ExactPlans<int>::chunk_below(m), above = ExactPlans<int>::chunk_above(m);
    EXPECT_TRUE(sizes.count(below) && sizes.count(above)) << m;
    EXPECT_LE(below, m);
    EXPECT_GE(above, m);
    EXPECT_LE(3 * (m - below), m) << "the size below covers at least two thirds of a count";
  }
}

// The kernels' scratch pools share their free buffers (dnnl_util.h): a buffer one kernel gave
// back serves another's lease of the same size (the smallest free buffer that fits, as before
// the first lease), and leases out at the same time get buffers of their own.
TEST(ScratchPool, KernelsShareFreeBuffers) {
  constexpr size_t kBytes = (size_t{1} << 20) + 4096;
  ScratchPool a, b;
  void* first = nullptr;
  {
    ScratchPool::Lease l = a.acquire(kBytes);
    first = l.data();
    ASSERT_NE(first, nullptr);
  }
  ScratchPool::Lease l = b.acquire(kBytes);  // another kernel's pool
  EXPECT_EQ(l.data(), first);
  ScratchPool::Lease m = a.acquire(kBytes);  // out at the same time
  ASSERT_NE(m.data(), nullptr);
  EXPECT_NE(m.data(), first);
}

// A dense lease (a Winograd convolution's tiles, written whole) gets a buffer on huge pages,
// which a sparse one (an RNN primitive's scratchpad) does not take while one of its own kind
// fits: each 2 MiB page it touched would be resident whole. Each kind reuses its own free
// buffers.
TEST(ScratchPool, DenseAndSparseLeasesKeepTheirOwnBuffers) {
  constexpr size_t kSmall = size_t{4} << 20, kLarge = size_t{6} << 20;
  ScratchPool pool;
  // Both out at once, so that the pool keeps both once they are back: the dense buffer is the
  // smaller, the one "the smallest that fits" would pick for either kind.
  void *dense = nullptr, *sparse = nullptr;
  {
    ScratchPool::Lease d = pool.acquire(kSmall, /*dense=*/true);
    ScratchPool::Lease s = pool.acquire(kLarge);
    dense = d.data();
    sparse = s.data();
    ASSERT_NE(dense, nullptr);
    ASSERT_NE(sparse, nullptr);
    // Huge pages need the buffer on a 2 MiB boundary.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dense) % (uintptr_t{2} << 20), 0u);
  }
  {
    ScratchPool::Lease s = pool.acquire(kSmall);
    EXPECT_EQ(s.data(), sparse) << "a sparse lease took the dense buffer";
  }
  {
    ScratchPool::Lease d = pool.acquire(kSmall, /*dense=*/true);
    EXPECT_EQ(d.data(), dense);
  }
}

// Where only a buffer of the other kind fits, a lease takes it rather than a new one: the pool
// keeps the largest free buffers, and a sparse lease that found only the dense one (the
// scratchpad of the widest input so far) allocated and freed a buffer of its own every run.
TEST(ScratchPool, ALeaseTakesTheOtherKindRatherThanAllocating) {
  constexpr size_t kSmall = size_t{1} << 20, kLarge = size_t{8} << 20;
  for (bool first_dense : {true, false}) {
    ScratchPool pool;
    void* kept = nullptr;
    {
      ScratchPool::Lease l = pool.acquire(kLarge, first_dense);
      kept = l.data();
      ASSERT_NE(kept, nullptr);
    }
    const size_t held = aligned_bytes_in_use();
    for (int run = 0; run < 3; ++run) {
      ScratchPool::Lease l = pool.acquire(run == 0 ? kSmall : kLarge, !first_dense);
      EXPECT_EQ(l.data(), kept) << (first_dense ? "sparse" : "dense") << " lease, run " << run;
      EXPECT_EQ(aligned_bytes_in_use(), held);
    }
  }
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
