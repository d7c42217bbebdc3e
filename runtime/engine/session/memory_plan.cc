#include "runtime/engine/session/memory_plan.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <map>
#include <new>

namespace recur {

namespace {

constexpr size_t kAlign = 64;

size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Kernels of these operators hand out their input's memory under another shape.
bool is_view_op(const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  return n.op_type == "Identity" || n.op_type == "Reshape" || n.op_type == "Squeeze" ||
         n.op_type == "Unsqueeze" || n.op_type == "Flatten";
}

bool fixed_size(DType t) {
  return t != DType::kUndefined && t != DType::kString && t != DType::kSequence &&
         t != DType::kNone && dtype_size(t) > 0;
}

struct Interval {
  ValueId slot;
  int begin;
  int end;
  size_t bytes;
};

// The lifetimes placed so far, for finding those that meet a new one: the ones that contain
// its first step come from a segment tree over the steps (each lifetime is kept in the
// O(log steps) nodes that cover it, and a step lies in exactly one of them), the ones that
// begin later within it from an index by first step. Each is found once, and the cost is
// what is found plus a logarithm, whatever the lifetimes' lengths.
class Lifetimes {
 public:
  explicit Lifetimes(int last_step)
      : size_(std::bit_ceil(static_cast<size_t>(last_step) + 1)), nodes_(2 * size_) {}
  void add(uint32_t id, int begin, int end) {
    by_begin_.emplace(begin, id);
    for (size_t l = static_cast<size_t>(begin) + size_, r = static_cast<size_t>(end) + size_ + 1;
         l < r; l >>= 1, r >>= 1) {
      if (l & 1) nodes_[l++].push_back(id);
      if (r & 1) nodes_[--r].push_back(id);
    }
  }
  // Calls f(id) for each lifetime added that meets [begin, end]; returns how many it visited.
  template <class F>
  size_t meeting(int begin, int end, F&& f) const {
    size_t n = 0;
    for (size_t p = static_cast<size_t>(begin) + size_; p >= 1; p >>= 1) {
      for (uint32_t id : nodes_[p]) f(id);
      n += nodes_[p].size() + 1;
    }
    for (auto it = by_begin_.upper_bound(begin); it != by_begin_.end() && it->first <= end;
         ++it, ++n) {
      f(it->second);
    }
    return n;
  }

 private:
  size_t size_;
  std::vector<std::vector<uint32_t>> nodes_;
  std::multimap<int, uint32_t> by_begin_;
};

// Greedy placement, largest first: each value takes the lowest offset free over its lifetime.
// The search has a budget: tens of thousands of values alive together (a fan-out into one
// Sum) need a quadratic one. Values left when it runs out are not planned: they take blocks
// from the cache at run time, as dynamic shapes do.
size_t assign_offsets(std::vector<Interval>& vals, std::vector<PlannedSlot>& slots) {
  std::sort(vals.begin(), vals.end(), [](const Interval& a, const Interval& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.slot < b.slot;
  });
  constexpr size_t kSearchBudget = size_t{1} << 24;
  int last_step = 0;
  for (const Interval& v : vals) last_step = std::max(last_step, v.end);
  Lifetimes placed(last_step);
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of those alive with it
  size_t total = 0;
  size_t work = 0;
  for (uint32_t i = 0; i < vals.size() && work < kSearchBudget; ++i) {
    const Interval& v = vals[i];
    busy.clear();
    work += placed.meeting(v.begin, v.end, [&](uint32_t j) {
      const size_t off = slots[static_cast<size_t>(vals[j].slot)].offset;
      busy.emplace_back(off, off + vals[j].bytes);
    });
    std::sort(busy.begin(), busy.end());
    work += busy.size() * std::bit_width(busy.size());  // the sort's share
    size_t off = 0;
    for (const auto& [b, e] : busy) {
      if (b >= off + v.bytes) break;
      off = std::max(off, round_up(e));
    }
    slots[static_cast<size_t>(v.slot)].offset = off;
    total = std::max(total, off + v.bytes);
    placed.add(i, v.begin, v.end);
  }
  return round_up(total);
}

// Cuts the arena at every planned slot's start and end, and gives each slot its segments.
size_t assign_segments(std::vector<PlannedSlot>& slots) {
  std::vector<size_t> cuts;
  for (const PlannedSlot& ps : slots) {
    if (ps.offset == kNotPlanned) continue;
    cuts.push_back(ps.offset);
    cuts.push_back(ps.offset + ps.bytes);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  auto index = [&](size_t at) {
    return static_cast<uint32_t>(std::lower_bound(cuts.begin(), cuts.end(), at) - cuts.begin());
  };
  for (PlannedSlot& ps : slots) {
    if (ps.offset == kNotPlanned) continue;
    ps.seg_begin = index(ps.offset);
    ps.seg_end = index(ps.offset + ps.bytes);
  }
  return cuts.empty() ? 0 : cuts.size() - 1;
}

// The bytes of value v where it could be planned (a static shape of a fixed-size type), else 0.
size_t static_bytes(const Graph& g, ValueId v) {
  if (static_cast<size_t>(v) >= g.num_values()) return 0;
  const TypeInfo& type = g.value(v).type;
  if (type.optional || !fixed_size(type.dtype) || !type.is_static()) return 0;
  const int64_t count = shape_numel(type.static_shape());
  if (count <= 0 || count == INT64_MAX) return 0;
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(count), dtype_size(type.dtype), &bytes)) return 0;
  return bytes;
}

// Puts output 0 of a host step over an input its kernel may write over
// (Kernel::overwritable_inputs): the output joins the input's root in `alias_of`, where the
// step reads that input last and nothing reads the root or a view of it later (`end`), neither
// leaves the run, and both are planned values of the same dtype and bytes. Steps in order, so
// that a chain of activations shares one root.
void write_over_inputs(const SubgraphPlan& plan, const std::vector<int>& produced,
                       const std::vector<char>& leaves, std::vector<int>& end,
                       std::vector<ValueId>& alias_of) {
  const Graph& g = *plan.graph;
  auto root = [&](ValueId v) {
    while (alias_of[static_cast<size_t>(v)] != v) v = alias_of[static_cast<size_t>(v)];
    return v;
  };
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& s = plan.steps[k];
    if (s.kind != Step::Kind::kKernel || !s.kernel || s.outputs.empty()) continue;
    const uint32_t mask = s.kernel->overwritable_inputs();
    const ValueId o = s.outputs[0];
    if (!mask || o == kNoValue || produced[static_cast<size_t>(o)] != static_cast<int>(k) ||
        leaves[static_cast<size_t>(o)] || alias_of[static_cast<size_t>(o)] != o)
      continue;
    const size_t bytes = static_bytes(g, o);
    if (bytes == 0) continue;
    for (size_t i = 0; i < s.inputs.size() && i < 32 && i < s.last_read.size(); ++i) {
      const ValueId v = s.inputs[i];
      if (!(mask >> i & 1u) || v == kNoValue || !s.last_read[i]) continue;
      const ValueId r = root(v);
      const size_t rs = static_cast<size_t>(r);
      if (produced[rs] < 0 || leaves[rs] || end[rs] != static_cast<int>(k) ||
          static_bytes(g, v) != bytes || static_bytes(g, r) != bytes ||
          g.value(v).type.dtype != g.value(o).type.dtype)
        continue;
      alias_of[static_cast<size_t>(o)] = r;
      end[rs] = std::max(end[rs], end[static_cast<size_t>(o)]);
      break;
    }
  }
  for (size_t v = 0; v < alias_of.size(); ++v) alias_of[v] = root(static_cast<ValueId>(v));
}

}  // namespace

MemoryPlan plan_memory(const SubgraphPlan& plan) {
  MemoryPlan m;
  const Graph& g = *plan.graph;
  const size_t n = plan.num_slots;
  m.slots.resize(n);
  m.alias_of.resize(n);
  for (size_t v = 0; v < n; ++v) m.alias_of[v] = static_cast<ValueId>(v);
  std::vector<int> produced(n, -1);
  std::vector<int> last(n, -1);
  std::vector<char> leaves(n, 0);  // read after the run (or the subgraph call) ends
  for (ValueId v : plan.output_slots) leaves[static_cast<size_t>(v)] = 1;
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& s = plan.steps[k];
    const int ks = static_cast<int>(k);
    if (s.kind == Step::Kind::kCopy) {
      last[static_cast<size_t>(s.src)] = ks;
      continue;
    }
    for (ValueId v : s.inputs)
      if (v != kNoValue) last[static_cast<size_t>(v)] = ks;
    for (ValueId v : s.implicit_inputs) last[static_cast<size_t>(v)] = ks;
    const bool host = plan.providers[static_cast<size_t>(s.provider)]->device().is_cpu();
    for (ValueId o : s.outputs)
      if (o != kNoValue && host) produced[static_cast<size_t>(o)] = ks;
    const Node& node = g.node(s.node);
    if (is_view_op(node) && !s.inputs.empty() && s.inputs[0] != kNoValue && !s.outputs.empty() &&
        s.outputs[0] != kNoValue) {
      m.alias_of[static_cast<size_t>(s.outputs[0])] = m.alias_of[static_cast<size_t>(s.inputs[0])];
    }
  }
  // A root lives as long as its last view is read, and leaves with any of them.
  std::vector<int> end(last);
  for (size_t v = 0; v < n; ++v) {
    const size_t r = static_cast<size_t>(m.alias_of[v]);
    if (r == v) continue;
    end[r] = std::max(end[r], last[v]);
    leaves[r] |= leaves[v];
  }
  write_over_inputs(plan, produced, leaves, end, m.alias_of);
  std::vector<Interval> vals;
  for (size_t v = 0; v < n && v < g.num_values(); ++v) {
    if (produced[v] < 0 || leaves[v] || m.alias_of[v] != static_cast<ValueId>(v)) continue;
    const size_t bytes = static_bytes(g, static_cast<ValueId>(v));
    if (bytes == 0) continue;
    const TypeInfo& type = g.value(static_cast<ValueId>(v)).type;
    const Shape shape = type.static_shape();
    PlannedSlot& ps = m.slots[v];
    ps.bytes = bytes;
    ps.dtype = type.dtype;
    ps.shape = shape;
    vals.push_back({static_cast<ValueId>(v), produced[v], std::max(end[v], produced[v]), bytes});
  }
  m.arena_bytes = assign_offsets(vals, m.slots);
  m.num_segments = assign_segments(m.slots);
  return m;
}

const std::shared_ptr<void>* BlockCache::take(size_t bytes, MemoryBudget* budget) {
  const size_t b = std::bit_width(std::max<size_t>(bytes, kAlign) - 1);
  if (b >= 48) return nullptr;
  if (buckets_.size() <= b) {
    buckets_.resize(b + 1);
    taken_.resize(b + 1, 0);
    cursors_.resize(b + 1, 0);
    recent_.resize(b + 1);
  }
  ++taken_[b];
  // Not a search of the whole bucket: blocks their holders keep (a Loop's scan outputs, a
  // sequence a decoder grows) would be passed over by every later search, O(n^2) over a loop
  // of n steps. First the blocks handed out last, which a loop's temporaries and carried
  // state free again a step later; then a window from where the last search stopped, which
  // goes round, so that any block freed is found again within a few searches.
  std::vector<Block>& bucket = buckets_[b];
  const size_t n = bucket.size();
  Recent& recent = recent_[b];
  auto usable = [&](Block& blk) {
    if (blk.owner.use_count() != 1) return false;
    if (!blk.charged) {  // freed by its holder since the run began
      if (budget && !budget->try_charge(blk.bytes)) return false;
      if (budget) charged_ += blk.bytes;
      blk.charged = true;
    }
    return true;
  };
  for (size_t i : recent.index) {
    if (i < n && usable(bucket[i])) {
      recent.add(i);
      return &bucket[i].owner;
    }
  }
  size_t& cursor = cursors_[b];
  for (size_t k = 0; k < std::min(n, kSearchWindow); ++k) {
    const size_t i = (cursor + k) % n;
    if (!usable(bucket[i])) continue;
    cursor = (i + 1) % n;
    recent.add(i);
    return &bucket[i].owner;
  }
  if (n > 0) cursor = (cursor + std::min(n, kSearchWindow)) % n;
  const size_t size = size_t{1} << b;
  if (budget) {
    if (!budget->try_charge(size)) return nullptr;
    charged_ += size;
  }
  // The value written into it fills `bytes` of it: those on huge pages (huge_pages.h).
  void* p = alloc_written_whole(size, bytes, kAlign);
  if (!p) {
    if (budget) {
      budget->release(size);
      charged_ -= size;
    }
    return nullptr;
  }
  buckets_[b].push_back({std::shared_ptr<void>(p, BlockFree{size, bytes}), size, true});
  recent_[b].add(n);
  total_ += size;
  return &buckets_[b].back().owner;
}

size_t BlockCache::charge_free() {
  size_t bytes = 0;
  for (auto& bucket : buckets_) {
    for (Block& blk : bucket) {
      blk.charged = blk.owner.use_count() == 1;
      if (blk.charged) bytes += blk.bytes;
    }
  }
  return bytes;
}

void BlockCache::uncharge() {
  for (auto& bucket : buckets_)
    for (Block& blk : bucket) blk.charged = false;
}

void BlockCache::trim_excess() {
  // Every slot of the ring is grown at once, when taken_ grows (a new size of block), so that
  // the runs after a warm-up allocate nothing here.
  if (history_[0].capacity() < taken_.size())
    for (std::vector<size_t>& h : history_) h.reserve(taken_.size());
  history_[runs_++ % kKeepRuns].assign(taken_.begin(), taken_.end());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    size_t keep = 0;
    for (const std::vector<size_t>& h : history_)
      if (b < h.size()) keep = std::max(keep, h[b]);
    size_t free_kept = 0;
    std::erase_if(buckets_[b], [&](const Block& blk) {
      if (blk.owner.use_count() != 1 || free_kept++ < keep) return false;
      total_ -= blk.bytes;
      return true;
    });
    taken_[b] = 0;
    cursors_[b] = 0;
    recent_[b] = Recent();
  }
}

void BlockCache::trim() {
  for (auto& bucket : buckets_) {
    std::erase_if(bucket, [&](const Block& blk) {
      if (blk.owner.use_count() != 1) return false;
      total_ -= blk.bytes;
      return true;
    });
  }
  std::fill(cursors_.begin(), cursors_.end(), 0);
  std::fill(recent_.begin(), recent_.end(), Recent());
}

FrameArena::FrameArena(const SubgraphPlan& p, BlockCache* cache)
    : plan(p),
      frame(p.num_slots),
      cache_(cache),
      prepared_(p.num_slots),
      holder_(p.memory ? p.memory->num_segments : 0, kNoValue),
      constant_(p.num_slots) {
  for (const auto& [slot, t] : plan.constants) {
    frame[static_cast<size_t>(slot)] = t;
    constant_[static_cast<size_t>(slot)] = 1;
  }
}

size_t FrameArena::planned_bytes() const {
  const MemoryPlan* m = plan.memory.get();
  return m ? m->arena_bytes : 0;
}

// The arena is made once a run's budget has taken it, not with the frame: a plan whose static
// shapes ask for more than the memory limit (a Tile to gigabytes) must not reserve it first.
bool FrameArena::reserve() {
  if (arena_ || planned_bytes() == 0) return true;
  const MemoryPlan* m = plan.memory.get();
  void* base = alloc_written_whole(m->arena_bytes, m->arena_bytes, kAlign);
  if (!base) return false;  // the run goes on without it, each value allocated on its own
  arena_ = std::shared_ptr<void>(
      base, [bytes = m->arena_bytes](void* q) { free_written_whole(q, bytes, bytes); });
  for (size_t v = 0; v < m->slots.size(); ++v) {
    const PlannedSlot& ps = m->slots[v];
    if (ps.offset == kNotPlanned) continue;
    void* data = static_cast<char*>(base) + ps.offset;
    // An owner per slot, so that its use count says whether a view of it is still alive; it
    // keeps the arena alive too.
    std::shared_ptr<void> owner(data, [arena = arena_](void*) {});
    prepared_[v] = Tensor::wrap(std::move(owner), data, ps.dtype, ps.shape);
  }
  return true;
}

bool FrameArena::reusable(const Tensor& x, ValueId in, ValueId out) const {
  if (!x.is_cpu() || x.owner().use_count() != 2) return false;
  // A block of the cache: its holders are the cache and the frame's slot the kernel reads.
  if (BlockCache::is_block(x.owner())) return true;
  // The arena's bytes only where the plan put the output over the input (memory.alias_of):
  // the slots placed later over them were planned from that, and check its holder. Its
  // holders are the slot's own owner and the frame's slot the kernel reads.
  const MemoryPlan* m = plan.memory.get();
  const size_t i = static_cast<size_t>(in), o = static_cast<size_t>(out);
  if (!use_arena || !arena_ || i >= m->alias_of.size() || o >= m->alias_of.size()) return false;
  const size_t root = static_cast<size_t>(m->alias_of[i]);
  if (static_cast<size_t>(m->alias_of[o]) != root || o == root) return false;
  const std::shared_ptr<void>& own = prepared_[root].owner();
  return own && !own.owner_before(x.owner()) && !x.owner().owner_before(own);
}

bool FrameArena::slot_free(ValueId slot) const {
  return prepared_[static_cast<size_t>(slot)].owner().use_count() == 1;
}

bool FrameArena::place(ValueId slot, DType dtype, const Shape& shape, Device device, Tensor& out) {
  if (!device.is_cpu() || !fixed_size(dtype)) return false;
  const size_t v = static_cast<size_t>(slot);
  const MemoryPlan* m = plan.memory.get();
  if (use_arena && arena_ && v < m->slots.size() && m->slots[v].offset != kNotPlanned) {
    const PlannedSlot& ps = m->slots[v];
    // The shape inferred at load may differ from the run's (a symbolic input fed another
    // size): then the value is not the planned one.
    if (ps.dtype == dtype && ps.shape == shape && slot_free(slot)) {
      bool free = true;
      for (uint32_t k = ps.seg_begin; k < ps.seg_end && free; ++k) {
        const ValueId h = holder_[k];
        if (h == kNoValue || h == slot) continue;
        if (slot_free(h)) {
          holder_[k] = kNoValue;
        } else {
          free = false;
        }
      }
      if (free) {
        for (uint32_t k = ps.seg_begin; k < ps.seg_end; ++k) holder_[k] = slot;
        out = prepared_[v];  // a copy assignment: the slot's shape storage is reused
        return true;
      }
    }
  }
  const int64_t count = shape_numel(shape);
  if (count <= 0 || count == INT64_MAX) return false;
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(count), dtype_size(dtype), &bytes)) return false;
  const std::shared_ptr<void>* owner = cache_->take(bytes, budget);
  if (!owner) return false;
  out = Tensor::wrap(*owner, owner->get(), dtype, shape);
  return true;
}

void FrameArena::clear() {
  static const Tensor kEmpty;
  for (size_t v = 0; v < frame.size(); ++v) {
    if (!constant_[v] && frame[v].defined()) frame[v] = kEmpty;
  }
  // The run released the constants after their last reader: they come back for the next.
  for (const auto& [slot, t] : plan.constants) {
    if (!frame[static_cast<size_t>(slot)].defined()) frame[static_cast<size_t>(slot)] = t;
  }
}

bool FrameArena::owns(const void* p) const {
  if (!arena_) return false;
  const auto* c = static_cast<const char*>(p);
  const auto* base = static_cast<const char*>(arena_.get());
  return c >= base && c < base + plan.memory->arena_bytes;
}

size_t FrameArena::arena_bytes() const { return arena_ ? plan.memory->arena_bytes : 0; }

FrameArena& RunArena::frame_of(const SubgraphPlan& plan) {
  for (const auto& fa : frames_)
    if (&fa->plan == &plan) return *fa;
  frames_.push_back(std::make_unique<FrameArena>(plan, &cache_));
  FrameArena& f = *frames_.back();
  // A frame made during a run (a subgraph's, on its first call) is counted from now on.
  if (in_run_) {
    f.budget = budget_.get();
    f.use_arena = arena_fits_ && budget_->try_charge(f.planned_bytes());
    if (f.use_arena && !f.reserve()) {
      budget_->release(f.planned_bytes());
      f.use_arena = false;
    }
    if (f.use_arena) charged_ += f.planned_bytes();
  }
  return f;
}

FrameArena* RunArena::enter(const SubgraphPlan& plan) {
  FrameArena& f = frame_of(plan);
  if (f.in_use) return nullptr;
  f.in_use = true;
  return &f;
}

void RunArena::leave(FrameArena* f) {
  f->clear();
  f->in_use = false;
}

bool RunArena::in_arena(const void* p) const {
  for (const auto& f : frames_)
    if (f->owns(p)) return true;
  return false;
}

MemoryBudget* RunArena::begin_run(size_t limit) {
  // A budget still held by an output of an earlier run cannot be reused: its count goes down
  // when that output is freed.
  if (!budget_ || budget_.use_count() != 1 || budget_->limit() != limit || budget_->used() != 0)
    budget_ = std::make_shared<MemoryBudget>(limit);
  cache_.trim_excess();
  size_t arenas = 0;
  for (const auto& f : frames_) arenas += f->planned_bytes();
  const size_t free_blocks = cache_.charge_free();
  bool arenas_charged = true;
  if (!budget_->try_charge(arenas + free_blocks)) {
    cache_.trim();
    cache_.uncharge();
    arenas_charged = budget_->try_charge(arenas);
    charged_ = arenas_charged ? arenas : 0;
  } else {
    charged_ = arenas + free_blocks;
  }
  // Taken by the budget, the arenas are made now (once); where one cannot be, none is used.
  arena_fits_ = arenas_charged;
  for (const auto& f : frames_) arena_fits_ = arena_fits_ && f->reserve();
  if (arenas_charged && !arena_fits_) {
    budget_->release(arenas);
    charged_ -= arenas;
  }
  for (const auto& f : frames_) {
    f->use_arena = arena_fits_;
    f->budget = budget_.get();
  }
  in_run_ = true;
  return budget_.get();
}

void RunArena::end_run() {
  // Blocks made during the run were charged as they were made; all are released together.
  budget_->release(charged_ + cache_.take_charged());
  cache_.uncharge();
  charged_ = 0;
  in_run_ = false;
}

ArenaPool::Lease::~Lease() {
  if (!pool_ || !arena_) return;
  std::lock_guard lock(pool_->mu_);
  if (pool_->free_.size() < kKeep) pool_->free_.push_back(std::move(arena_));
}

ArenaPool::Lease ArenaPool::lease() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      std::unique_ptr<RunArena> a = std::move(free_.back());
      free_.pop_back();
      return Lease(this, std::move(a));
    }
  }
  return Lease(this, std::make_unique<RunArena>());
}

}  // namespace recur
