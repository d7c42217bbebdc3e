// Memory a run reuses instead of allocating (issue 13): the values of static shape get offsets
// in one arena, decided at load from the plan's liveness; the others get blocks from size
// buckets kept between runs. A RunArena holds both for one run at a time; a session keeps a
// small pool of them so that concurrent runs each lease their own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/core/huge_pages.h"
#include "runtime/core/memory_budget.h"
#include "runtime/engine/session/plan.h"
#include "runtime/provider/kernel.h"

namespace recur {

inline constexpr size_t kNotPlanned = static_cast<size_t>(-1);

struct PlannedSlot {
  size_t offset = kNotPlanned;  // byte offset in the arena; kNotPlanned: allocated at run time
  size_t bytes = 0;
  DType dtype = DType::kUndefined;
  Shape shape;
  // The arena cut at every planned slot's start and end gives segments; this slot covers
  // segments [seg_begin, seg_end). Two slots share bytes exactly when they share a segment.
  uint32_t seg_begin = 0;
  uint32_t seg_end = 0;
};

struct MemoryPlan {
  size_t arena_bytes = 0;
  size_t num_segments = 0;
  std::vector<PlannedSlot> slots;  // by slot
  // Slot -> the slot whose memory it is a view of (Identity, Reshape, Squeeze, Unsqueeze,
  // Flatten) or written over (Kernel::overwritable_inputs), or itself.
  std::vector<ValueId> alias_of;
};

// The arena layout of `plan`. A value is planned when a host kernel produces it with a static
// shape and a fixed-size type, and neither it nor a view of it is an output of the graph
// (outputs leave the run; a subgraph's outputs are read by the calling node after it).
// Its lifetime runs from its producer to the last reader of it or of any view of it.
MemoryPlan plan_memory(const SubgraphPlan& plan);

// Blocks of host memory by power-of-two size, kept between runs. A block is free when nothing
// but the cache holds it (its owner's use count is 1), so a tensor handed out needs no hook to
// give it back. A run is charged for the blocks free when it begins (charge_free) and for
// those it makes or takes later; a block that an output of an earlier run still holds is not
// the run's.
class BlockCache {
 public:
  // A block for `bytes`, charged to `budget` unless it is already; null when the budget cannot
  // take it (the caller allocates as usual and reports the limit).
  const std::shared_ptr<void>* take(size_t bytes, MemoryBudget* budget);
  size_t bytes() const { return total_; }
  // The bytes of the blocks free now, marked as charged to the run that begins.
  size_t charge_free();
  // Ends a run: no block is charged any more.
  void uncharge();
  // Frees the blocks not in use.
  void trim();
  // Frees the blocks not in use beyond as many per size as any of the last kKeepRuns runs took
  // (then starts counting again): a block handed out as an output stays the caller's while it
  // holds it, and the cache would otherwise keep every block that outputs held at once. Not
  // the last run's alone: a model fed inputs of varying size takes blocks of other sizes from
  // run to run, and freed each time, they came back as page faults and a fragmented heap (a
  // Conformer's stream: 200 faults a run, 105 MiB of the heap free but held).
  void trim_excess();
  static constexpr size_t kKeepRuns = 16;
  // The bytes of the blocks made (and charged) since the last call.
  size_t take_charged() { return std::exchange(charged_, 0); }
  // Whether `owner` is a block of a BlockCache (of any run's).
  static bool is_block(const std::shared_ptr<void>& owner) {
    return std::get_deleter<BlockFree>(owner) != nullptr;
  }

 private:
  // The blocks' deleter, a type of its own so that is_block can tell them from other memory.
  struct BlockFree {
    size_t size = 0, written = 0;  // as alloc_written_whole was given them
    void operator()(void* p) const { free_written_whole(p, size, written); }
  };
  struct Block {
    std::shared_ptr<void> owner;
    size_t bytes = 0;
    bool charged = false;  // to the run in progress
  };
  // The indices of the blocks of a bucket handed out last, newest at `next - 1`.
  struct Recent {
    std::array<size_t, 8> index;
    size_t next = 0;
    Recent() { index.fill(SIZE_MAX); }
    void add(size_t i) {
      index[next] = i;
      next = (next + 1) % index.size();
    }
  };
  // How many blocks of a bucket one take() looks at from the bucket's cursor, after the
  // recent ones, before it makes a new block.
  static constexpr size_t kSearchWindow = 16;
  std::vector<std::vector<Block>> buckets_;
  std::vector<size_t> taken_;  // blocks taken per size since the last trim_excess
  std::array<std::vector<size_t>, kKeepRuns> history_;  // taken_ of the last runs, a ring
  size_t runs_ = 0;
  std::vector<size_t> cursors_;  // per bucket, where the next search starts
  std::vector<Recent> recent_;
  size_t total_ = 0;
  size_t charged_ = 0;
};

// One SubgraphPlan's frame and arena inside a RunArena.
class FrameArena final : public OutputPlacer {
 public:
  FrameArena(const SubgraphPlan& plan, BlockCache* cache);

  bool place(ValueId slot, DType dtype, const Shape& shape, Device device, Tensor& out) override;
  // A block of the cache that only the cache and the frame's slot hold, or the arena's bytes
  // where the memory plan put `out` over `in`.
  bool reusable(const Tensor& x, ValueId in, ValueId out) const override;
  // Drops every value but the constants, keeping each slot's shape storage.
  void clear();
  bool owns(const void* p) const;
  // The bytes of the arena as made (0 before reserve()), and as planned.
  size_t arena_bytes() const;
  size_t planned_bytes() const;
  // Makes the planned arena if it is not made yet; false when the allocation fails.
  bool reserve();

  const SubgraphPlan& plan;
  std::vector<Tensor> frame;  // the plan's constants placed
  bool in_use = false;
  bool use_arena = true;           // false for a run whose budget could not take the arena
  MemoryBudget* budget = nullptr;  // the current run's

 private:
  bool slot_free(ValueId slot) const;

  BlockCache* cache_;
  std::shared_ptr<void> arena_;
  std::vector<Tensor> prepared_;  // planned slots, each with an owner of its own
  // Per segment of the arena, the slot last handed out over it (or kNoValue). A slot may be
  // handed out only while no other slot over its bytes is still held (a value a sequence or
  // an output kept past its planned end): the holders are checked, and cleared once free.
  std::vector<ValueId> holder_;
  std::vector<char> constant_;
};

// What one run reuses: a frame and arena per plan (made on first use), the block cache, the
// budget and the executor's environments.
class RunArena {
 public:
  // The FrameArena of `plan`, made on first use.
  FrameArena& frame_of(const SubgraphPlan& plan);
  // frame_of(plan) marked in use, or null when it is already in use higher up this run (the
  // caller then uses a fresh frame).
  FrameArena* enter(const SubgraphPlan& plan);
  void leave(FrameArena* f);
  // Whether `p` points into a frame's arena, which the next run overwrites whatever still
  // holds it. (A block of the cache is handed out again only once nothing else holds it, so
  // an output in one goes to the caller as it is.)
  bool in_arena(const void* p) const;
  // Sets up the budget for a run limited to `limit` bytes: the arenas and cached blocks are
  // counted whole; when they do not fit, the cache is trimmed and the arena left unused.
  MemoryBudget* begin_run(size_t limit);
  void end_run();

  std::vector<KernelContext::Env> envs;
  std::vector<std::unique_ptr<ProviderRunState>> states;
  std::vector<uint8_t> needed_steps;  // the run's step mask (Runner::run), kept for the next
  std::vector<uint32_t> needed_todo;  // OutputCones::mark's scratch, kept likewise

 private:
  std::vector<std::unique_ptr<FrameArena>> frames_;
  BlockCache cache_;
  std::shared_ptr<MemoryBudget> budget_;
  size_t charged_ = 0;
  bool arena_fits_ = true;
  bool in_run_ = false;
};

// RunArenas for concurrent runs of one session. A lease returns its arena when destroyed.
class ArenaPool {
 public:
  class Lease {
   public:
    Lease(ArenaPool* pool, std::unique_ptr<RunArena> a) : pool_(pool), arena_(std::move(a)) {}
    ~Lease();
    Lease(Lease&&) = default;
    RunArena* operator->() const { return arena_.get(); }
    RunArena& operator*() const { return *arena_; }

   private:
    ArenaPool* pool_;
    std::unique_ptr<RunArena> arena_;
  };
  Lease lease();

 private:
  // More runs than this at once get arenas that are dropped after them.
  static constexpr size_t kKeep = 8;
  std::mutex mu_;
  std::vector<std::unique_ptr<RunArena>> free_;
};

}  // namespace recur
