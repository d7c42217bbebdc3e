// The memory plan (issue 13): arena offsets from liveness, views keeping their base alive,
// outputs kept out of the arena; and through a session, runs that reuse the arena agree with
// fresh runs, hand out outputs no later run overwrites, and run concurrently.
#include "runtime/engine/session/memory_plan.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "providers/reference/reference_provider.h"
#include "recur/recur.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/engine/session/executor.h"
#include "runtime/engine/session/partitioner.h"
#include "runtime/graph/shape_inference.h"
#include "tests/support/model_builder.h"
#include "tests/support/plan_run.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::set_attr;

class NoopKernel final : public Kernel {
 public:
  Status run(KernelContext&) const override { return ok_status(); }
};

class CpuProvider final : public ExecutionProvider {
 public:
  explicit CpuProvider(std::set<std::string> ops) : ExecutionProvider("cpu", Device::cpu()) {
    for (const std::string& op : ops) {
      mutable_registry().add(KernelDef{.op_type = op, .since = 1, .create = &CpuProvider::create});
    }
  }
  bool available(std::string*) const override { return true; }

 private:
  static Result<std::unique_ptr<Kernel>> create(CompileContext&) {
    return std::unique_ptr<Kernel>(std::make_unique<NoopKernel>());
  }
};

// 1 KiB float32 values, so that every planned value has the same size.
ValueId add_value(Graph& g, const std::string& name) {
  return g.add_value(name, TypeInfo::of(DType::kFloat32, {256}));
}

void add_node(Graph& g, const std::string& op, std::vector<ValueId> in, std::vector<ValueId> out) {
  Node n;
  n.name = op + std::to_string(g.nodes().size());
  n.op_type = op;
  n.opset = 17;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  g.add_node(std::move(n));
}

std::unique_ptr<SubgraphPlan> plan_of(const Graph& g, const ExecutionProvider& p) {
  SessionOptions so;
  PartitionOptions po;
  po.session = &so;
  auto plan = build_plan(g, {&p}, po);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return std::move(plan).value();
}

bool overlap(const PlannedSlot& a, const PlannedSlot& b) {
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

// x -> a -> b -> c -> d -> y, all Relu: each value dies when the next is made.
struct Chain {
  ValueId x, a, b, c, d, y;
};
Chain relu_chain(Graph& g) {
  Chain ch{add_value(g, "x"), add_value(g, "a"), add_value(g, "b"),
           add_value(g, "c"), add_value(g, "d"), add_value(g, "y")};
  g.add_input(ch.x);
  add_node(g, "Relu", {ch.x}, {ch.a});
  add_node(g, "Relu", {ch.a}, {ch.b});
  add_node(g, "Relu", {ch.b}, {ch.c});
  add_node(g, "Relu", {ch.c}, {ch.d});
  add_node(g, "Relu", {ch.d}, {ch.y});
  g.add_output(ch.y);
  EXPECT_TRUE(g.finalize().ok());
  return ch;
}

TEST(MemoryPlan, ValuesThatDoNotLiveTogetherShareMemory) {
  // Each value of the chain dies when the next is made, so two slots suffice.
  Graph g;
  const auto [x, a, b, c, d, y] = relu_chain(g);
  CpuProvider p({"Relu"});
  auto plan = plan_of(g, p);
  ASSERT_TRUE(plan->memory);
  const MemoryPlan& m = *plan->memory;
  for (ValueId v : {a, b, c, d}) EXPECT_NE(m.slots[static_cast<size_t>(v)].offset, kNotPlanned);
  // The graph's input and output are the caller's: never in the arena.
  EXPECT_EQ(m.slots[static_cast<size_t>(x)].offset, kNotPlanned);
  EXPECT_EQ(m.slots[static_cast<size_t>(y)].offset, kNotPlanned);
  EXPECT_EQ(m.arena_bytes, 2 * 1024u);
  // Neighbours are alive together (one is read while the other is written).
  EXPECT_FALSE(overlap(m.slots[static_cast<size_t>(a)], m.slots[static_cast<size_t>(b)]));
  EXPECT_FALSE(overlap(m.slots[static_cast<size_t>(c)], m.slots[static_cast<size_t>(d)]));
}

// Every pair of planned values alive at one step has bytes of its own, in random graphs of
// values of many sizes: the placement finds the values alive together through an index by
// step blocks, which this checks against every pair.
TEST(MemoryPlan, ValuesAliveTogetherNeverShareBytes) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    Graph g;
    std::vector<ValueId> values;
    const ValueId x = g.add_value("x", TypeInfo::of(DType::kFloat32, {64}));
    g.add_input(x);
    values.push_back(x);
    const int nodes = 50 + static_cast<int>(rng() % 250);
    for (int i = 0; i < nodes; ++i) {
      const int64_t n = 1 + static_cast<int64_t>(rng() % 300);
      const ValueId out = g.add_value("v" + std::to_string(i), TypeInfo::of(DType::kFloat32, {n}));
      // Mostly recent values, sometimes one from far back, so lifetimes cross step blocks.
      auto pick = [&] {
        const size_t back = rng() % 8 == 0 ? rng() % values.size() : rng() % 4;
        return values[values.size() - 1 - std::min(back, values.size() - 1)];
      };
      add_node(g, "Add", {pick(), pick()}, {out});
      values.push_back(out);
    }
    g.add_output(values.back());
    ASSERT_TRUE(g.finalize().ok());
    CpuProvider p({"Add"});
    auto plan = plan_of(g, p);
    ASSERT_TRUE(plan->memory);
    const MemoryPlan& m = *plan->memory;
    // Lifetimes from the steps: from the producer to the last reader.
    std::vector<int> begin(plan->num_slots, -1), end(plan->num_slots, -1);
    for (size_t k = 0; k < plan->steps.size(); ++k) {
      const Step& st = plan->steps[k];
      for (ValueId v : st.inputs) end[static_cast<size_t>(v)] = static_cast<int>(k);
      for (ValueId v : st.outputs) begin[static_cast<size_t>(v)] = static_cast<int>(k);
    }
    int planned = 0;
    for (size_t a = 0; a < m.slots.size(); ++a) {
      if (m.slots[a].offset == kNotPlanned) continue;
      ++planned;
      for (size_t b = a + 1; b < m.slots.size(); ++b) {
        if (m.slots[b].offset == kNotPlanned) continue;
        const bool together =
            begin[a] <= std::max(end[b], begin[b]) && begin[b] <= std::max(end[a], begin[a]);
        if (together) {
          EXPECT_FALSE(overlap(m.slots[a], m.slots[b]))
              << "trial " << trial << ": " << g.value(static_cast<ValueId>(a)).name << " and "
              << g.value(static_cast<ValueId>(b)).name;
        }
        // Segments say the same as byte ranges.
        const bool share =
            m.slots[a].seg_begin < m.slots[b].seg_end && m.slots[b].seg_begin < m.slots[a].seg_end;
        EXPECT_EQ(share, overlap(m.slots[a], m.slots[b]));
      }
    }
    EXPECT_EQ(planned, nodes - 1);  // all but the output
  }
}

// 20,000 values alive together (a fan-out read by one node at the end) used to take a
// quadratic search at load; the search now has a budget and plans the rest at run time. The
// values it planned still have bytes of their own.
TEST(MemoryPlan, AWideFanOutIsPlannedWithinItsBudget) {
  Graph g;
  const ValueId x = add_value(g, "x");
  g.add_input(x);
  std::vector<ValueId> fan;
  for (int i = 0; i < 20000; ++i) {
    fan.push_back(add_value(g, "r" + std::to_string(i)));
    add_node(g, "Relu", {x}, {fan.back()});
  }
  const ValueId y = add_value(g, "y");
  add_node(g, "Sum", fan, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  CpuProvider p({"Relu", "Sum"});
  auto plan = plan_of(g, p);
  const MemoryPlan& m = *plan->memory;
  std::set<size_t> offsets;
  size_t planned = 0;
  for (ValueId v : fan) {
    const size_t off = m.slots[static_cast<size_t>(v)].offset;
    if (off == kNotPlanned) continue;
    ++planned;
    EXPECT_TRUE(offsets.insert(off).second) << "two live values at offset " << off;
  }
  EXPECT_GT(planned, 1000u);
  EXPECT_EQ(m.arena_bytes, planned * 1024);
}

// A planned value still held after its planned end (here by the test; in a run, by a sequence
// or a caller) keeps the slots that share its bytes out of the arena until it is let go.
TEST(MemoryPlan, AHeldSlotKeepsOthersOffItsBytes) {
  Graph g;
  const auto [x, a, b, c, d, y] = relu_chain(g);
  CpuProvider p({"Relu"});
  auto plan = plan_of(g, p);
  const MemoryPlan& m = *plan->memory;
  // The slot that reuses a's bytes.
  ValueId twin = kNoValue;
  for (ValueId v : {b, c, d})
    if (overlap(m.slots[static_cast<size_t>(a)], m.slots[static_cast<size_t>(v)])) twin = v;
  ASSERT_NE(twin, kNoValue);

  RunArena runs;
  FrameArena& f = runs.frame_of(*plan);
  runs.begin_run(SIZE_MAX);
  ASSERT_TRUE(f.use_arena);
  const Shape shape{256};
  Tensor held;
  ASSERT_TRUE(f.place(a, DType::kFloat32, shape, Device::cpu(), held));
  ASSERT_TRUE(f.owns(held.raw_data()));
  Tensor t;
  ASSERT_TRUE(f.place(twin, DType::kFloat32, shape, Device::cpu(), t));
  EXPECT_FALSE(f.owns(t.raw_data())) << "the twin was given the bytes a held tensor still uses";
  t = Tensor();
  held = Tensor();
  ASSERT_TRUE(f.place(twin, DType::kFloat32, shape, Device::cpu(), t));
  EXPECT_TRUE(f.owns(t.raw_data())) << "let go, a's bytes are the twin's again";
  // And now a, sharing them, waits for the twin.
  ASSERT_TRUE(f.place(a, DType::kFloat32, shape, Device::cpu(), held));
  EXPECT_FALSE(f.owns(held.raw_data()));
  runs.end_run();
}

// The arena is made when a run's budget takes it, not with the frame: a model whose static
// shapes plan gigabytes (a fuzzed Tile) must fail on the memory limit without reserving them.
TEST(MemoryPlan, AnArenaOverTheLimitIsNeverMade) {
  Graph g;
  const ValueId x = add_value(g, "x"), a = add_value(g, "a"), b = add_value(g, "b"),
                y = add_value(g, "y");
  g.add_input(x);
  add_node(g, "Relu", {x}, {a});
  add_node(g, "Relu", {a}, {b});
  add_node(g, "Relu", {b}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  CpuProvider p({"Relu"});
  auto plan = plan_of(g, p);
  ASSERT_TRUE(plan->memory);
  const size_t planned = plan->memory->arena_bytes;
  ASSERT_EQ(planned, 2 * 1024u);

  RunArena runs;
  FrameArena& f = runs.frame_of(*plan);
  EXPECT_EQ(f.arena_bytes(), 0u);
  EXPECT_EQ(f.planned_bytes(), planned);
  MemoryBudget* budget = runs.begin_run(planned - 1);
  EXPECT_EQ(f.arena_bytes(), 0u);
  EXPECT_FALSE(f.use_arena);
  EXPECT_EQ(budget->used(), 0u);
  runs.end_run();

  budget = runs.begin_run(planned);
  EXPECT_EQ(f.arena_bytes(), planned);
  EXPECT_TRUE(f.use_arena);
  EXPECT_EQ(budget->used(), planned);
  runs.end_run();
  EXPECT_EQ(budget->used(), 0u);
}

TEST(MemoryPlan, AViewKeepsItsBaseAliveUntilTheViewIsRead) {
  // a is only read by the Reshape, but its memory lives on as v, read at the end: b, c and d,
  // made meanwhile, must not take a's bytes.
  Graph g;
  const ValueId x = add_value(g, "x"), a = add_value(g, "a"), v = add_value(g, "v"),
                b = add_value(g, "b"), c = add_value(g, "c"), d = add_value(g, "d"),
                y = add_value(g, "y");
  g.add_input(x);
  add_node(g, "Relu", {x}, {a});
  add_node(g, "Reshape", {a}, {v});
  add_node(g, "Relu", {x}, {b});
  add_node(g, "Relu", {b}, {c});
  add_node(g, "Relu", {c}, {d});
  add_node(g, "Add", {v, d}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  CpuProvider p({"Relu", "Reshape", "Add"});
  auto plan = plan_of(g, p);
  const MemoryPlan& m = *plan->memory;
  EXPECT_EQ(m.alias_of[static_cast<size_t>(v)], a);
  const PlannedSlot& sa = m.slots[static_cast<size_t>(a)];
  ASSERT_NE(sa.offset, kNotPlanned);
  // The view takes no memory of its own.
  EXPECT_EQ(m.slots[static_cast<size_t>(v)].offset, kNotPlanned);
  for (ValueId w : {b, c, d}) {
    EXPECT_FALSE(overlap(sa, m.slots[static_cast<size_t>(w)])) << g.value(w).name;
  }
}

TEST(MemoryPlan, AValueWhoseViewIsAnOutputStaysOutOfTheArena) {
  Graph g;
  const ValueId x = add_value(g, "x"), a = add_value(g, "a"), v = add_value(g, "v"),
                w = add_value(g, "w");
  g.add_input(x);
  add_node(g, "Relu", {x}, {a});
  add_node(g, "Squeeze", {a}, {v});
  add_node(g, "Identity", {v}, {w});
  g.add_output(w);
  ASSERT_TRUE(g.finalize().ok());
  CpuProvider p({"Relu", "Squeeze", "Identity"});
  auto plan = plan_of(g, p);
  const MemoryPlan& m = *plan->memory;
  EXPECT_EQ(m.alias_of[static_cast<size_t>(w)], a);
  EXPECT_EQ(m.slots[static_cast<size_t>(a)].offset, kNotPlanned);
  EXPECT_EQ(m.arena_bytes, 0u);
}

// Inside a run, the view operators hand out their input's memory: run the plan of a one-node
// graph on the reference provider and look at the frame.
TEST(Views, TheKernelsOutputIsItsInputsMemory) {
  const Tensor x = Tensor::from_vector<float>({2, 1, 3}, {0, 1, 2, 3, 4, 5});
  for (const char* op : {"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"}) {
    ModelBuilder m;
    m.input("x", DType::kFloat32, {2, 1, 3});
    m.output("y", DType::kFloat32);
    const std::string o = op;
    if (o == "Reshape") {
      m.initializer("s", Tensor::from_vector<int64_t>({2}, {3, -1}));
      m.node(op, {"x", "s"}, {"y"});
    } else if (o == "Unsqueeze") {
      m.initializer("a", Tensor::from_vector<int64_t>({1}, {0}));
      m.node(op, {"x", "a"}, {"y"});
    } else {
      m.node(op, {"x"}, {"y"});
    }
    auto run = testing::ReferencePlanRun::load(m.bytes());
    ASSERT_TRUE(run.ok()) << run.status().message();
    auto out = run.value()->run({x});
    ASSERT_TRUE(out.ok()) << op << ": " << out.status().message();
    const Tensor& y = out.value()[0];
    EXPECT_EQ(y.raw_data(), x.raw_data()) << op;
  }
}

Session session_of(const ModelBuilder& m, SessionOptions o = {}) {
  const std::string bytes = m.bytes();
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

// The model as two sessions: with the arena, and without (RECUR_ARENA=0 at load: no frame hands
// out memory, so every output is allocated anew).
struct ArenaPair {
  Session with, without;
};
ArenaPair with_and_without_arena(const ModelBuilder& m, const SessionOptions& o) {
  Session with = session_of(m, o);
  setenv("RECUR_ARENA", "0", 1);
  Session without = session_of(m, o);
  unsetenv("RECUR_ARENA");
  return {std::move(with), std::move(without)};
}

Tensor random_floats(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& f : v) f = dist(rng);
  return Tensor::from_vector<float>(shape, v);
}

std::vector<float> values(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

// y = Sigmoid(Tanh(Relu(x)) reshaped), z = Reshape(x) (a view of the caller's input).
ModelBuilder chain_model() {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {4, 8});
  m.initializer("shape", Tensor::from_vector<int64_t>({1}, {32}));
  m.output("y", DType::kFloat32);
  m.output("z", DType::kFloat32);
  m.node("Relu", {"x"}, {"a"});
  m.node("Tanh", {"a"}, {"b"});
  m.node("Reshape", {"b", "shape"}, {"v"});
  m.node("Sigmoid", {"v"}, {"y"});
  m.node("Reshape", {"x", "shape"}, {"z"});
  return m;
}

TEST(ArenaRuns, OutputsAreNotOverwrittenByLaterRuns) {
  for (const char* providers : {"reference", "onednn"}) {
    SessionOptions o;
    o.providers(std::string(providers) == "reference"
                    ? std::vector<std::string>{"reference"}
                    : std::vector<std::string>{providers, "reference"});
    Session s = session_of(chain_model(), o);
    const Tensor x1 = random_floats({4, 8}, 1);
    Outputs first = s.run({{"x", x1}});
    const std::vector<float> y1 = values(first["y"]);
    for (uint32_t seed = 2; seed < 6; ++seed) s.run({{"x", random_floats({4, 8}, seed)}});
    EXPECT_EQ(values(first["y"]), y1) << providers;
    Session fresh = session_of(chain_model(), o);
    EXPECT_EQ(values(fresh.run({{"x", x1}})["y"]), y1) << providers;
  }
}

TEST(ArenaRuns, AnOutputThatIsAViewOfAFeedIsACopy) {
  for (const char* op : {"Identity", "Flatten", "Reshape"}) {
    ModelBuilder m;
    m.input("x", DType::kFloat32, {4, 8});
    m.initializer("shape", Tensor::from_vector<int64_t>({1}, {32}));
    m.output("z", DType::kFloat32);
    if (std::string(op) == "Reshape") {
      m.node(op, {"x", "shape"}, {"z"});
    } else {
      m.node(op, {"x"}, {"z"});
    }
    Session s = session_of(m);
    Tensor x = random_floats({4, 8}, 7);
    const std::vector<float> want = values(x);
    Outputs out = s.run({{"x", x}});
    EXPECT_EQ(values(out["z"]), want) << op;
    EXPECT_NE(out["z"].raw_data(), x.raw_data()) << op;
    x.data<float>()[0] += 1.0f;  // the caller reuses its buffer
    EXPECT_EQ(values(out["z"]), want) << op;
  }
}

TEST(ArenaRuns, ConcurrentRunsOfModelsMatchSerialRuns) {
  for (const char* name : {"vad_streaming", "lstm_streaming", "crnn", "rnnoise_gru"}) {
    const std::string dir = std::string(RECUR_SOURCE_DIR) + "/models/" + name;
    Session s(dir + "/model.onnx", SessionOptions().threads(2));
    auto sets = tools::read_data_sets(dir, &s);
    ASSERT_TRUE(sets.ok()) << sets.status().message();
    std::vector<Feeds> feeds;
    std::vector<std::vector<std::vector<float>>> want;
    for (const auto& ds : sets.value()) {
      auto f = tools::feeds_for(s, ds);
      ASSERT_TRUE(f.ok()) << f.status().message();
      feeds.push_back(f.value());
      Outputs o = s.run(feeds.back());
      want.emplace_back();
      for (const Tensor& t : o.tensors()) want.back().push_back(values(t));
      // Each serial result is the expected one from the folder.
      for (size_t i = 0; i < ds.outputs.size() && i < o.size(); ++i) {
        EXPECT_TRUE(tools::compare(o[i], ds.outputs[i].second, {}).match) << name;
      }
    }
    // Bit for bit on AVX-512, where the RNN kernels sum in the same order whatever threads a
    // run gets; without it oneDNN's primitives run on the threads a concurrent run has, which
    // changes the order of their sums (an AVX2 Zen 3: rnnoise_gru's last bits), so there the
    // results must agree with the folder's expected outputs instead.
    const bool bits = cpu::has(cpu::Feature::kAvx512);
    std::vector<std::thread> threads;
    std::atomic<int> mismatches{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < 20; ++r) {
          const size_t k = static_cast<size_t>(t + r) % feeds.size();
          Outputs o = s.run(feeds[k]);
          for (size_t i = 0; i < o.size(); ++i) {
            const auto& expected = sets.value()[k].outputs;
            const bool same =
                bits ? values(o[i]) == want[k][i]
                     : i >= expected.size() || tools::compare(o[i], expected[i].second, {}).match;
            if (!same) ++mismatches;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0) << name;
  }
}

// An output in a cached block goes to the caller as it is (Session::run copies only what is
// in a frame's arena): the block is taken again only once the caller lets go of it, the cache
// keeps no more free blocks of a size than one of the last runs took, and a run is charged
// only for the blocks free when it begins or taken by it.
TEST(BlockCache, HeldBlocksAreSkippedAndFreeOnesBounded) {
  BlockCache cache;
  MemoryBudget budget(1 << 20);
  std::shared_ptr<void> a = *cache.take(1000, &budget);  // a new block of 1024 bytes, charged
  EXPECT_EQ(budget.used(), 1024u);
  std::shared_ptr<void> b = *cache.take(1000, &budget);  // `a` is held: another
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(cache.bytes(), 2048u);
  budget.release(cache.take_charged());
  cache.uncharge();
  a.reset();
  b.reset();
  cache.trim_excess();  // the last run took two: both stay
  EXPECT_EQ(cache.bytes(), 2048u);
  EXPECT_EQ(cache.charge_free(), 2048u);
  std::shared_ptr<void> c = *cache.take(1000, &budget);  // a free block, charged already
  EXPECT_EQ(cache.take_charged(), 0u);
  cache.uncharge();
  cache.trim_excess();  // this run took one; `c` is held, so one free block stays
  EXPECT_EQ(cache.bytes(), 2048u);
  c.reset();
  // The two the first run took stay while it is one of the last kKeepRuns runs.
  for (size_t run = 2; run < BlockCache::kKeepRuns; ++run) {
    cache.trim_excess();
    EXPECT_EQ(cache.bytes(), 2048u) << run;
  }
  cache.trim_excess();  // the second run's one
  EXPECT_EQ(cache.bytes(), 1024u);
  cache.trim_excess();  // none of the last runs took any: the free blocks go
  EXPECT_EQ(cache.bytes(), 0u);
  // A block held when the run began is not charged to it; taken once freed, it is.
  std::shared_ptr<void> d = *cache.take(1000, &budget);
  budget.release(cache.take_charged());
  cache.uncharge();
  EXPECT_EQ(cache.charge_free(), 0u);
  d.reset();
  ASSERT_NE(cache.take(1000, &budget), nullptr);
  EXPECT_EQ(cache.take_charged(), 1024u);
}

// A session fed inputs of varying size takes blocks of one size in a run and of another in
// the next: each size's blocks stay free for the runs to come rather than going back to the
// heap (and coming back as page faults) at the first run that did not take them.
TEST(BlockCache, BlocksOfSizesTakenInRecentRunsStay) {
  BlockCache cache;
  for (int run = 0; run < 40; ++run) {
    cache.trim_excess();
    const size_t bytes = run % 2 ? 3000 : 9000;  // 4 KiB and 16 KiB blocks, in turn
    std::shared_ptr<void> x = *cache.take(bytes, nullptr);
    std::shared_ptr<void> y = *cache.take(bytes, nullptr);
    if (run >= 2) {
      EXPECT_EQ(cache.bytes(), 2u * (4096 + 16384)) << run;
    }
  }
  // A size no run takes any more goes after kKeepRuns runs.
  for (size_t run = 0; run <= BlockCache::kKeepRuns; ++run) {
    cache.trim_excess();
    std::shared_ptr<void> x = *cache.take(3000, nullptr);
  }
  EXPECT_EQ(cache.bytes(), 4096u);
}

// A loop that keeps every step's block (a sequence it grows, scan outputs) beside temporaries
// it frees: the blocks kept make the bucket long, and the temporaries' blocks must still be
// found again rather than made anew each step, though a search looks at a window of it.
TEST(BlockCache, FreedBlocksAreFoundAmongManyHeldOnes) {
  BlockCache cache;
  std::vector<std::shared_ptr<void>> kept;
  std::shared_ptr<void> carried;  // like a Loop's state: freed one step after it is made
  for (int step = 0; step < 2000; ++step) {
    std::shared_ptr<void> temp = *cache.take(100, nullptr);
    std::shared_ptr<void> next = *cache.take(100, nullptr);
    kept.push_back(*cache.take(100, nullptr));
    EXPECT_NE(temp.get(), next.get());
    carried = std::move(next);
  }
  // 2000 kept blocks of 128 bytes, and three for the temporary and the carried state (a
  // cache that never found a freed block would hold 6000).
  EXPECT_LE(cache.bytes(), (2000u + 8u) * 128u);
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_NE(kept[i].get(), kept[i - 1].get());
}

TEST(ArenaRuns, TheMemoryLimitCountsTheArena) {
  // Eight 1 MiB intermediates in a chain: the arena holds two of them. A limit that leaves
  // no room for them fails naming the limit, with the arena or without.
  ModelBuilder m;
  m.input("x", DType::kFloat32, {512, 512});
  m.output("y", DType::kFloat32);
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    const std::string next = i == 7 ? "y" : std::string(1, 't').append(std::to_string(i));
    m.node("Relu", {prev}, {next});
    prev = next;
  }
  Session ok = session_of(m, SessionOptions().providers({"reference"}).memory_limit(8 << 20));
  for (int r = 0; r < 3; ++r) ok.run({{"x", random_floats({512, 512}, 3)}});
  Session tight = session_of(m, SessionOptions().providers({"reference"}).memory_limit(1 << 20));
  for (int r = 0; r < 2; ++r) {
    try {
      tight.run({{"x", random_floats({512, 512}, 3)}});
      ADD_FAILURE() << "a 1 MiB limit let a run with 1 MiB intermediates through";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
      EXPECT_NE(std::string(e.what()).find("memory_limit"), std::string::npos) << e.what();
    }
  }
}

// ---- Outputs over inputs (Kernel::overwritable_inputs) ----

// The pointers each kernel of a run read and wrote, in step order.
struct Access {
  const void* in;
  const void* out;
};
std::vector<Access>& accesses() {
  static std::vector<Access> log;
  return log;
}

// y = 2 x + 1 element by element ("Affine"), declaring X overwritable; "Add" adds two inputs
// of one shape out of place; "Identity" hands out X's memory as a Reshape does.
class AffineKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    const float* xp = x->data<float>();
    float* yp = y->data<float>();
    accesses().push_back({xp, yp});
    for (int64_t i = 0; i < x->numel(); ++i) yp[i] = 2.0f * xp[i] + 1.0f;
    return ok_status();
  }
  uint32_t overwritable_inputs() const override { return 1; }
};

class AddKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, a->shape()));
    for (int64_t i = 0; i < a->numel(); ++i)
      y->data<float>()[i] = a->data<float>()[i] + b->data<float>()[i];
    return ok_status();
  }
};

class ViewKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override { return ctx.set_output(0, *ctx.input(0)); }
};

class OverwritingProvider final : public ExecutionProvider {
 public:
  OverwritingProvider() : ExecutionProvider("cpu", Device::cpu()) {
    add("Affine", [] { return std::unique_ptr<Kernel>(std::make_unique<AffineKernel>()); });
    add("Add", [] { return std::unique_ptr<Kernel>(std::make_unique<AddKernel>()); });
    add("Identity", [] { return std::unique_ptr<Kernel>(std::make_unique<ViewKernel>()); });
  }
  bool available(std::string*) const override { return true; }

 private:
  template <class Make>
  void add(const char* op, Make make) {
    mutable_registry().add(KernelDef{
        .op_type = op,
        .since = 1,
        .create = [make](CompileContext&) -> Result<std::unique_ptr<Kernel>> { return make(); }});
  }
};

// Runs `plan` (one input, one output) in `runs` as a session does; the output's values.
std::vector<float> run_in(RunArena& runs, const SubgraphPlan& plan, const Tensor& x) {
  runs.begin_run(SIZE_MAX);
  std::vector<KernelContext::Env> envs(plan.providers.size());
  Executor ex(envs, &runs);
  FrameArena* f = runs.enter(plan);
  EXPECT_NE(f, nullptr);
  std::vector<Tensor> frame = f->frame;
  frame[static_cast<size_t>(plan.input_slots[0])] = x;
  accesses().clear();
  Status st = ex.execute(plan, frame, f);
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<float> y =
      st.ok() ? values(frame[static_cast<size_t>(plan.output_slots[0])]) : std::vector<float>{};
  frame.clear();
  runs.leave(f);
  runs.end_run();
  return y;
}

// x -> Affine -> a -> Affine -> b -> Affine -> c -> Affine -> y, of `shape`.
void affine_chain(Graph& g, const std::vector<Dim>& shape) {
  TypeInfo t;
  t.dtype = DType::kFloat32;
  t.shape = shape;
  std::vector<ValueId> v;
  for (const char* name : {"x", "a", "b", "c", "y"}) v.push_back(g.add_value(name, t));
  g.add_input(v[0]);
  for (size_t i = 0; i + 1 < v.size(); ++i) add_node(g, "Affine", {v[i]}, {v[i + 1]});
  g.add_output(v.back());
  EXPECT_TRUE(g.finalize().ok());
}

float affine4(float x) { return 2.0f * (2.0f * (2.0f * (2.0f * x + 1.0f) + 1.0f) + 1.0f) + 1.0f; }

TEST(OutputsOverInputs, AChainOfStaticShapeSharesOneArenaSlot) {
  Graph g;
  affine_chain(g, {Dim{256, {}}});
  OverwritingProvider p;
  auto plan = plan_of(g, p);
  const MemoryPlan& m = *plan->memory;
  // a, b and c are one value's memory; x and y are the caller's.
  const ValueId a = 1, b = 2, c = 3;
  EXPECT_EQ(m.alias_of[static_cast<size_t>(b)], a);
  EXPECT_EQ(m.alias_of[static_cast<size_t>(c)], a);
  EXPECT_EQ(m.alias_of[4], 4) << "the graph's output stays its own";
  EXPECT_EQ(m.arena_bytes, 1024u);
  RunArena runs;
  const Tensor x = random_floats({256}, 4);
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> y = run_in(runs, *plan, x);
    ASSERT_EQ(y.size(), 256u);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], affine4(values(x)[i])) << i;
    ASSERT_EQ(accesses().size(), 4u);
    EXPECT_NE(accesses()[0].out, accesses()[0].in) << "x is the caller's";
    EXPECT_EQ(accesses()[1].out, accesses()[1].in);
    EXPECT_EQ(accesses()[2].out, accesses()[2].in);
    EXPECT_NE(accesses()[3].out, accesses()[3].in) << "y leaves the run: not in the arena";
  }
}

TEST(OutputsOverInputs, AChainOfDynamicShapeWritesOverTheCachesBlocks) {
  Graph g;
  affine_chain(g, {Dim{-1, "n"}});
  OverwritingProvider p;
  auto plan = plan_of(g, p);
  RunArena runs;
  for (int64_t n : {300, 5000, 300}) {
    const Tensor x = random_floats({n}, 5);
    const std::vector<float> y = run_in(runs, *plan, x);
    ASSERT_EQ(y.size(), static_cast<size_t>(n));
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], affine4(values(x)[i])) << i;
    ASSERT_EQ(accesses().size(), 4u);
    EXPECT_NE(accesses()[0].out, accesses()[0].in) << "x is the caller's";
    for (size_t k = 1; k < 4; ++k) EXPECT_EQ(accesses()[k].out, accesses()[k].in) << k;
  }
}

TEST(OutputsOverInputs, NothingReadLaterIsWrittenOver) {
  // a = Affine(x); v = Identity(a), a view read after b = Affine(a): b must not take a's
  // memory, in the arena or in a cached block. Nor may y, where x is read after it.
  for (bool dynamic : {false, true}) {
    Graph g;
    TypeInfo t;
    t.dtype = DType::kFloat32;
    t.shape = std::vector<Dim>{dynamic ? Dim{-1, "n"} : Dim{64, {}}};
    const ValueId x = g.add_value("x", t), a = g.add_value("a", t), v = g.add_value("v", t),
                  b = g.add_value("b", t), c = g.add_value("c", t), y = g.add_value("y", t);
    g.add_input(x);
    add_node(g, "Affine", {x}, {a});
    add_node(g, "Identity", {a}, {v});
    add_node(g, "Affine", {a}, {b});
    add_node(g, "Add", {b, v}, {c});
    add_node(g, "Affine", {c}, {y});
    g.add_output(y);
    ASSERT_TRUE(g.finalize().ok());
    OverwritingProvider p;
    auto plan = plan_of(g, p);
    EXPECT_NE(plan->memory->alias_of[static_cast<size_t>(b)],
              plan->memory->alias_of[static_cast<size_t>(a)]);
    RunArena runs;
    const Tensor in = random_floats({64}, 6);
    for (int run = 0; run < 2; ++run) {
      const std::vector<float> out = run_in(runs, *plan, in);
      ASSERT_EQ(out.size(), 64u);
      for (size_t i = 0; i < out.size(); ++i) {
        const float av = 2.0f * values(in)[i] + 1.0f;
        ASSERT_EQ(out[i], 2.0f * ((2.0f * av + 1.0f) + av) + 1.0f) << i << " dynamic " << dynamic;
      }
      ASSERT_EQ(accesses().size(), 3u);
      EXPECT_NE(accesses()[1].out, accesses()[1].in) << "b over a, whose view is read later";
    }
  }
}

// The oneDNN provider's kernels that write over their inputs give the bits they give without
// the arena (with_and_without_arena):
// Mul, Softmax (recur's loop under 4M elements, oneDNN's primitive past it), LayerNormalization,
// Exp, Add of a broadcast C and Relu, with static and with symbolic shapes.
TEST(OutputsOverInputs, OnednnKernelsGiveTheBitsTheyGiveWithoutTheArena) {
  if (!testing::have_onednn_avx512())
    GTEST_SKIP() << "needs the oneDNN provider and AVX-512 (recur's own loops)";
  for (const Shape& shape : {Shape{4, 6, 50}, Shape{8, 8, 65536}}) {
    for (bool symbolic : {false, true}) {
      ModelBuilder m;
      const std::vector<int64_t> dims(shape.begin(), shape.end());
      m.input("x", DType::kFloat32, symbolic ? std::vector<int64_t>{-1, -1, shape[2]} : dims,
              symbolic ? std::vector<std::string>{"n", "t", ""} : std::vector<std::string>{});
      m.input("x2", DType::kFloat32, symbolic ? std::vector<int64_t>{-1, -1, shape[2]} : dims,
              symbolic ? std::vector<std::string>{"n", "t", ""} : std::vector<std::string>{});
      m.initializer("scale", random_floats({shape[2]}, 1));
      m.initializer("bias", random_floats({shape[2]}, 2));
      m.initializer("c", random_floats({shape[2]}, 3));
      m.output("y", DType::kFloat32);
      m.node("Mul", {"x", "x2"}, {"a"});
      m.node("Softmax", {"a"}, {"b"});
      m.node("LayerNormalization", {"b", "scale", "bias"}, {"d"});
      m.node("Exp", {"d"}, {"e"});
      m.node("Add", {"c", "e"}, {"f"});
      m.node("Relu", {"f"}, {"y"});
      const SessionOptions o = SessionOptions().providers({"onednn", "reference"}).threads(2);
      auto [with, without] = with_and_without_arena(m, o);
      for (const auto& as : with.assignment()) EXPECT_EQ(as.provider, "onednn") << as.node;
      for (uint32_t seed = 10; seed < 12; ++seed) {
        const Tensor x = random_floats(shape, seed), x2 = random_floats(shape, seed + 100);
        EXPECT_EQ(values(with.run({{"x", x}, {"x2", x2}})["y"]),
                  values(without.run({{"x", x}, {"x2", x2}})["y"]))
            << shape_to_string(shape) << (symbolic ? " symbolic" : " static");
      }
    }
  }
}

// A random graph of the elementwise, normalising and view operators around a model's RNNs:
// nodes that fork (a value read by several later nodes), views (Reshape, Slice), copies
// (Transpose, Concat) and graph outputs taken from the middle of chains, the class the
// write-over rules must get right, not only the chains above.
struct RandomGraph {
  ModelBuilder model;
  Shape shape;
};

RandomGraph random_graph(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  // Past 512K elements the binary kernels split the work among threads.
  static const Shape kShapes[] = {{1, 4, 5}, {2, 8, 16}, {3, 33, 64}, {2, 16, 1024}, {8, 4, 65536}};
  RandomGraph g;
  g.shape = kShapes[pick(seed % 4 == 0 ? 5 : 4)];
  const bool symbolic = pick(2) == 1;
  ModelBuilder& m = g.model;
  m.input("x", DType::kFloat32,
          symbolic ? std::vector<int64_t>{-1, g.shape[1], -1}
                   : std::vector<int64_t>(g.shape.begin(), g.shape.end()),
          symbolic ? std::vector<std::string>{"n", "", "t"} : std::vector<std::string>{});
  struct Value {
    std::string name;
    Shape shape;
  };
  std::vector<Value> pool{{"x", g.shape}};
  int count = 0;
  auto fresh = [&] { return "v" + std::to_string(++count); };
  auto constant = [&](const Shape& s) {
    const std::string name = fresh();
    m.initializer(name, random_floats(s, seed * 131u + static_cast<uint32_t>(count)));
    return name;
  };
  auto ints = [&](std::vector<int64_t> v) {
    const std::string name = fresh();
    m.initializer(name, Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
    return name;
  };
  const int nodes = 3 + pick(12);
  for (int k = 0; k < nodes; ++k) {
    // Mostly the newest values (chains), sometimes any (forks and late reads).
    const Value a = pool[pick(3) > 0 ? pool.size() - 1 -
                                           static_cast<size_t>(pick(std::min<int>(4, pool.size())))
                                     : static_cast<size_t>(pick(static_cast<int>(pool.size())))];
    std::vector<const Value*> alike;
    for (const Value& v : pool)
      if (v.shape == a.shape) alike.push_back(&v);
    const Value& b = *alike[static_cast<size_t>(pick(static_cast<int>(alike.size())))];
    const int64_t last = a.shape.back();
    std::string out = fresh();
    Shape shape = a.shape;
    switch (pick(13)) {
      case 0: {
        static const char* kUnary[] = {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Identity"};
        m.node(kUnary[pick(6)], {a.name}, {out});
        break;
      }
      case 1: {  // Exp and Sqrt of values they take without overflow or NaN
        const std::string t = fresh();
        const bool exp = pick(2) == 0;
        m.node(exp ? "Tanh" : "Abs", {a.name}, {t});
        m.node(exp ? "Exp" : "Sqrt", {t}, {out});
        break;
      }
      case 2:
      case 3: {
        static const char* kBinary[] = {"Add", "Mul", "Sub"};
        const bool swap = pick(2) == 0;
        m.node(kBinary[pick(3)], {swap ? b.name : a.name, swap ? a.name : b.name}, {out});
        break;
      }
      case 4: {  // a denominator in (0, 1)
        const std::string t = fresh();
        m.node("Sigmoid", {b.name}, {t});
        m.node("Div", {a.name, t}, {out});
        break;
      }
      case 5: {  // a broadcast constant on either side
        Shape cs = pick(2) == 0 ? Shape{last} : Shape{1, 1, last};
        if (a.shape.size() == 3 && pick(2) == 0) cs = Shape{1, a.shape[1], 1};
        const std::string c = constant(cs);
        const bool swap = pick(2) == 0;
        m.node(pick(2) == 0 ? "Add" : "Mul", {swap ? c : a.name, swap ? a.name : c}, {out});
        break;
      }
      case 6:
        set_attr(m.node("Softmax", {a.name}, {out}), "axis", int64_t{-1});
        break;
      case 7:
        set_attr(m.node("LayerNormalization", {a.name, constant({last}), constant({last})}, {out}),
                 "axis", int64_t{-1});
        break;
      case 8: {
        if (a.shape.size() != 3) continue;
        const Shape cs{a.shape[1]};
        const std::string var = fresh();
        m.node("Abs", {constant(cs)}, {var});
        m.node("BatchNormalization", {a.name, constant(cs), constant(cs), constant(cs), var},
               {out});
        break;
      }
      case 9:
        if (a.shape.size() != 3) continue;
        set_attr(m.node("Transpose", {a.name}, {out}), "perm", std::vector<int64_t>{0, 2, 1});
        shape = {a.shape[0], a.shape[2], a.shape[1]};
        break;
      case 10:
        if (a.shape.size() != 3) continue;
        m.node("Reshape", {a.name, ints({0, -1})}, {out});
        shape = {a.shape[0], a.shape[1] * a.shape[2]};
        break;
      case 11: {
        const int64_t start = pick(static_cast<int>(last / 2) + 1);
        m.node("Slice", {a.name, ints({start}), ints({last}), ints({-1})}, {out});
        shape.back() = last - start;
        break;
      }
      default:
        set_attr(m.node("Concat", {a.name, b.name}, {out}), "axis", int64_t{-1});
        shape.back() = 2 * last;
        break;
    }
    pool.push_back({out, shape});
  }
  // The last value, and up to three others from the middle of the graph.
  std::set<std::string> outputs{pool.back().name};
  for (int i = pick(4); i > 0 && pool.size() > 2; --i)
    outputs.insert(pool[1 + static_cast<size_t>(pick(static_cast<int>(pool.size()) - 1))].name);
  for (const std::string& o : outputs) m.output(o, DType::kFloat32);
  return g;
}

std::string bits(const Tensor& t) {
  return std::string(static_cast<const char*>(t.raw_data()), t.nbytes());
}

// Random graphs on the oneDNN provider give, bit for bit, what the same session gives without
// the arena (RECUR_ARENA=0: every output allocated anew), over two runs of different inputs,
// and leave the caller's input as it was. Fails with either the last-read check
// (KernelContext::output_over_input) or the use-count check (FrameArena::reusable) removed, each
// alone, where the fixed chain above passes.
TEST(OutputsOverInputs, RandomGraphsGiveTheBitsTheyGiveWithoutTheArena) {
  const SessionOptions o = SessionOptions().providers({"onednn", "reference"}).threads(2);
  for (uint32_t seed = 1; seed <= 48; ++seed) {
    const RandomGraph g = random_graph(seed);
    auto [with, without] = with_and_without_arena(g.model, o);
    for (uint32_t run = 0; run < 2; ++run) {
      const Tensor x = random_floats(g.shape, seed * 7u + run);
      const std::string before = bits(x);
      auto a = with.run({{"x", x}});
      auto b = without.run({{"x", x}});
      EXPECT_EQ(bits(x), before) << "seed " << seed << ": the caller's input was written over";
      ASSERT_EQ(a.names(), b.names()) << "seed " << seed;
      for (size_t i = 0; i < b.names().size(); ++i) {
        EXPECT_EQ(a[i].shape(), b[i].shape()) << "seed " << seed << ": " << b.name(i);
        EXPECT_TRUE(bits(a[i]) == bits(b[i]))
            << "seed " << seed << ", run " << run << ": " << b.name(i);
      }
    }
  }
}

}  // namespace
}  // namespace recur
