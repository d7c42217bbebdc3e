// The planner's passes, each against a small graph and fake providers whose claims, devices
// and kernels the test sets, so every decision the pass makes is visible.
#include "runtime/engine/session/plan_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace recur {
namespace {

class NoopKernel final : public Kernel {
 public:
  Status run(KernelContext&) const override { return ok_status(); }
};

// Claims the ops it is given. An op listed in `declines` is known but refused with that
// reason. "Pack" releases its input 1 (like an RNN kernel repacking W), "PackNow" releases it
// at once (release_input_now), first noting in dies_on_release() whether the context said that
// frees it; "Note" leaves a note; "Broken" fails to compile.
class FakeProvider final : public ExecutionProvider {
 public:
  FakeProvider(std::string name, Device device, std::set<std::string> ops,
               std::map<std::string, std::string> declines = {})
      : ExecutionProvider(std::move(name), device) {
    for (const std::string& op : ops) {
      KernelDef def{.op_type = op, .since = 1, .create = &FakeProvider::create};
      if (auto it = declines.find(op); it != declines.end()) {
        def.claim = [why = it->second](const Node&, const Graph&) { return Claim::decline(why); };
      }
      if (op == "Pack" || op == "PackNow") def.prepacked_inputs = {1};
      if (op == "HostLens") def.host_inputs = {1};
      if (op == "Shape") def.shape_only_inputs = {0};
      mutable_registry().add(std::move(def));
    }
  }
  bool available(std::string* why) const override { return true; }
  // Per "PackNow" node compiled: CompileContext::input_dies_on_release(1) before the release.
  static std::map<std::string, bool>& dies_on_release() {
    static std::map<std::string, bool> seen;
    return seen;
  }

 private:
  static Result<std::unique_ptr<Kernel>> create(CompileContext& ctx) {
    const std::string& op = ctx.node().op_type;
    if (op == "Broken") return ctx.error(ErrorCode::kInvalidArgument, "bad attribute");
    if (op == "Pack" && ctx.constant_input(1)) ctx.release_input(1);
    if (op == "PackNow" && ctx.constant_input(1)) {
      dies_on_release()[ctx.node().name] = ctx.input_dies_on_release(1);
      ctx.release_input_now(1);
    }
    if (op == "Note") ctx.note("prepared at load");
    return std::unique_ptr<Kernel>(std::make_unique<NoopKernel>());
  }
};

ValueId add_float(Graph& g, const std::string& name) {
  return g.add_value(name, TypeInfo::of(DType::kFloat32, {2}));
}

int add_node(Graph& g, const std::string& name, const std::string& op, std::vector<ValueId> inputs,
             std::vector<ValueId> outputs) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.opset = 17;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return g.add_node(std::move(n));
}

struct Fixture {
  SessionOptions session;
  PartitionOptions options;
  Fixture() { options.session = &session; }
};

TEST(PlanBuilderAssign, FirstClaimingProviderWinsAndDeclinesAreKept) {
  Graph g;
  const ValueId x = add_float(g, "x"), y = add_float(g, "y");
  g.add_input(x);
  add_node(g, "n0", "Relu", {x}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider gpu("gpu", Device::cuda(0), {"Relu"}, {{"Relu", "no fast path for this shape"}});
  FakeProvider cpu("cpu", Device::cpu(), {"Relu"});
  FakeProvider ref("ref", Device::cpu(), {"Relu"});
  Fixture f;
  PlanBuilder b(g, {&gpu, &cpu, &ref}, f.options);
  ASSERT_TRUE(b.assign().ok());
  EXPECT_EQ(b.provider_of(0), 1);
  ASSERT_EQ(b.plan().assignment.size(), 1u);
  const NodeAssignment& a = b.plan().assignment[0];
  EXPECT_EQ(a.provider, "cpu");
  ASSERT_EQ(a.declined.size(), 1u);
  EXPECT_EQ(a.declined[0].provider, "gpu");
  EXPECT_EQ(a.declined[0].reason, "no fast path for this shape");
}

TEST(PlanBuilderAssign, ErrorNamesEveryUnclaimedNode) {
  Graph g;
  const ValueId x = add_float(g, "x"), v = add_float(g, "v"), y = add_float(g, "y");
  g.add_input(x);
  add_node(g, "first", "Foo", {x}, {v});
  add_node(g, "second", "Bar", {v}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider cpu("cpu", Device::cpu(), {"Relu"});
  Fixture f;
  PlanBuilder b(g, {&cpu}, f.options);
  const Status st = b.assign();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kNotImplemented);
  EXPECT_NE(st.message().find("node 'first' (Foo) cannot run on any provider: cpu: "),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("node 'second' (Bar)"), std::string::npos) << st.message();
}

TEST(PlanBuilderAssign, ShapeComputationsGoToTheHostProviderWhenOnlyAGpuIsListed) {
  Graph g;
  const ValueId x = add_float(g, "x");
  const ValueId s = g.add_value("s", TypeInfo::of(DType::kInt64, {1}));
  const ValueId y = add_float(g, "y");
  g.add_input(x);
  add_node(g, "shape", "Shape", {x}, {s});
  add_node(g, "use", "Reshape", {x, s}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider gpu("gpu", Device::cuda(0), {"Shape", "Reshape"});
  FakeProvider host("host", Device::cpu(), {"Shape"});
  Fixture f;
  f.options.host_provider = &host;
  PlanBuilder b(g, {&gpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  EXPECT_EQ(b.plan().assignment[0].provider, "host");
  EXPECT_EQ(b.plan().assignment[1].provider, "gpu");
  // The host provider joins the plan's providers after the listed ones.
  ASSERT_EQ(b.plan().providers.size(), 2u);
  EXPECT_EQ(b.plan().providers[1], &host);
  EXPECT_EQ(b.provider_of(0), 1);
}

TEST(PlanBuilderCompile, ReleasedInputsAndNotesAreRecorded) {
  Graph g;
  const ValueId x = add_float(g, "x"), w = add_float(g, "w"), v = add_float(g, "v");
  const ValueId y = add_float(g, "y");
  g.set_initializer(w, Tensor::from_vector<float>({2}, {1, 2}));
  g.add_input(x);
  add_node(g, "pack", "Pack", {x, w}, {v});
  add_node(g, "note", "Note", {v}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider cpu("cpu", Device::cpu(), {"Pack", "Note"});
  Fixture f;
  PlanBuilder b(g, {&cpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  ASSERT_TRUE(b.compile().ok());
  EXPECT_EQ(b.released_inputs(0), (std::set<size_t>{1}));
  EXPECT_TRUE(b.released_inputs(1).empty());
  ASSERT_EQ(b.plan().kernels.size(), 2u);
  const auto& notes = b.plan().assignment[1].notes;
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "prepared at load");
}

TEST(PlanBuilderCompile, ACompileErrorNamesTheNode) {
  Graph g;
  const ValueId x = add_float(g, "x"), y = add_float(g, "y");
  g.add_input(x);
  add_node(g, "bad", "Broken", {x}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider cpu("cpu", Device::cpu(), {"Broken"});
  Fixture f;
  PlanBuilder b(g, {&cpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  const Status st = b.compile();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "node 'bad' (Broken): bad attribute");
}

TEST(PlanBuilderCompile, PlanOnlyTrustsPrepackedInputsAndCompilesNothing) {
  Graph g;
  const ValueId x = add_float(g, "x"), w = add_float(g, "w"), y = add_float(g, "y");
  g.set_initializer(w, Tensor::from_vector<float>({2}, {1, 2}));
  g.add_input(x);
  add_node(g, "pack", "Pack", {x, w}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider gpu("gpu", Device::cuda(0), {"Pack"});
  Fixture f;
  f.options.plan_only = true;
  PlanBuilder b(g, {&gpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  ASSERT_TRUE(b.compile().ok());
  EXPECT_TRUE(b.plan().kernels.empty());
  EXPECT_EQ(b.released_inputs(0), (std::set<size_t>{1}));
}

// x (host) -> a on the GPU twice, then b on the CPU reads the GPU's output.
TEST(PlanBuilderPlace, OneCopyPerValueAndDeviceSharedByConsumers) {
  Graph g;
  const ValueId x = add_float(g, "x"), u = add_float(g, "u"), v = add_float(g, "v");
  const ValueId y = add_float(g, "y");
  g.add_input(x);
  add_node(g, "a1", "GpuOp", {x}, {u});
  add_node(g, "a2", "GpuOp", {x, u}, {v});
  add_node(g, "b", "CpuOp", {v}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider gpu("gpu", Device::cuda(0), {"GpuOp"});
  FakeProvider cpu("cpu", Device::cpu(), {"CpuOp"});
  Fixture f;
  PlanBuilder b(g, {&gpu, &cpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  ASSERT_TRUE(b.compile().ok());
  ASSERT_TRUE(b.place().ok());
  const SubgraphPlan& plan = b.plan();
  // x to the GPU once (shared by a1 and a2), v back to the host once.
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_EQ(plan.copies[0].value, "x");
  EXPECT_EQ(plan.copies[0].to, Device::cuda(0));
  EXPECT_EQ(plan.copies[0].consumer, "a1");
  EXPECT_FALSE(plan.copies[0].at_load);
  EXPECT_EQ(plan.copies[1].value, "v");
  EXPECT_EQ(plan.copies[1].to, Device::cpu());
  EXPECT_EQ(plan.num_slots, g.num_values() + 2);
  // Steps: copy x, a1, a2, copy v, b.
  ASSERT_EQ(plan.steps.size(), 5u);
  EXPECT_EQ(plan.steps[0].kind, Step::Kind::kCopy);
  const ValueId x_on_gpu = plan.steps[0].dst;
  EXPECT_EQ(plan.steps[1].inputs, (std::vector<ValueId>{x_on_gpu}));
  EXPECT_EQ(plan.steps[2].inputs, (std::vector<ValueId>{x_on_gpu, u}));
  EXPECT_EQ(plan.steps[3].kind, Step::Kind::kCopy);
  EXPECT_EQ(plan.steps[3].src, v);
  EXPECT_EQ(plan.steps[4].inputs, (std::vector<ValueId>{plan.steps[3].dst}));
}

TEST(PlanBuilderPlace, ShapeOnlyAndHostInputsAreNotCopied) {
  Graph g;
  const ValueId x = add_float(g, "x"), lens = add_float(g, "lens"), u = add_float(g, "u");
  const ValueId s = g.add_value("s", TypeInfo::of(DType::kInt64, {1}));
  g.add_input(x);
  g.add_input(lens);
  add_node(g, "run", "HostLens", {x, lens}, {u});
  add_node(g, "shape", "Shape", {u}, {s});
  g.add_output(s);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider gpu("gpu", Device::cuda(0), {"HostLens"});
  FakeProvider cpu("cpu", Device::cpu(), {"Shape"});
  Fixture f;
  PlanBuilder b(g, {&gpu, &cpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  ASSERT_TRUE(b.compile().ok());
  ASSERT_TRUE(b.place().ok());
  const SubgraphPlan& plan = b.plan();
  // Only x goes to the GPU: lens is read on the host, and Shape reads u where it lives.
  ASSERT_EQ(plan.copies.size(), 1u);
  EXPECT_EQ(plan.copies[0].value, "x");
  const Step& run = plan.steps[1];
  EXPECT_EQ(run.inputs[1], lens);
  EXPECT_EQ(run.input_devices[1], Device::cpu());
  const Step& shape = plan.steps[2];
  EXPECT_EQ(shape.inputs[0], u);
  EXPECT_EQ(shape.shape_only[0], 1);
  EXPECT_EQ(shape.input_devices[0], Device::cuda(0));
}

TEST(PlanBuilderPlace, RepackedConstantsAreReleasedAndOthersKept) {
  Graph g;
  const ValueId x = add_float(g, "x"), w = add_float(g, "w"), k = add_float(g, "k");
  const ValueId v = add_float(g, "v"), y = add_float(g, "y");
  g.set_initializer(w, Tensor::from_vector<float>({2}, {1, 2}));
  g.set_initializer(k, Tensor::from_vector<float>({2}, {3, 4}));
  g.add_input(x);
  add_node(g, "pack", "Pack", {x, w}, {v});
  add_node(g, "add", "Add", {v, k}, {y});
  g.add_output(y);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider cpu("cpu", Device::cpu(), {"Pack", "Add"});
  Fixture f;
  PlanBuilder b(g, {&cpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  ASSERT_TRUE(b.compile().ok());
  ASSERT_TRUE(b.place().ok());
  const SubgraphPlan& plan = b.plan();
  EXPECT_EQ(plan.released_constants, (std::vector<ValueId>{w}));
  EXPECT_EQ(plan.released_bytes, 2 * sizeof(float));
  ASSERT_EQ(plan.constants.size(), 1u);
  EXPECT_EQ(plan.constants[0].first, k);
  EXPECT_EQ(plan.steps[0].inputs, (std::vector<ValueId>{x, kNoValue}));
}

// release_input_now frees a constant during compile where its node is its only reader, in
// the graph the session owns; a shared one, an output, or any constant of a graph the builder
// does not own goes with the plan as before. Either way the plan counts it as released.
// The graph of the release tests, a chain of "PackNow" nodes: "own" reads w alone, "shared1"
// and "shared2" share s, "out" reads o, which is also a graph output. With `borrowed`, a last
// node "borrowed" reads k, an initializer whose memory the caller's tensor shares.
struct ReleaseGraph {
  ValueId x, w, s, o, k;
};
ReleaseGraph build_release_graph(Graph& g, const Tensor* borrowed) {
  ReleaseGraph r{add_float(g, "x"), add_float(g, "w"), add_float(g, "s"), add_float(g, "o"),
                 kNoValue};
  g.set_initializer(r.w, Tensor::from_vector<float>({2}, {1, 2}));
  g.set_initializer(r.s, Tensor::from_vector<float>({2}, {3, 4}));
  g.set_initializer(r.o, Tensor::from_vector<float>({2}, {5, 6}));
  g.add_input(r.x);
  const ValueId a = add_float(g, "a"), b = add_float(g, "b"), c = add_float(g, "c");
  const ValueId y = add_float(g, "y");
  add_node(g, "own", "PackNow", {r.x, r.w}, {a});
  add_node(g, "shared1", "PackNow", {a, r.s}, {b});
  add_node(g, "shared2", "PackNow", {b, r.s}, {c});
  if (borrowed) {
    const ValueId d = add_float(g, "d");
    r.k = add_float(g, "k");
    g.set_initializer(r.k, *borrowed);
    add_node(g, "out", "PackNow", {c, r.o}, {d});
    add_node(g, "borrowed", "PackNow", {d, r.k}, {y});
  } else {
    add_node(g, "out", "PackNow", {c, r.o}, {y});
  }
  g.add_output(y);
  g.add_output(r.o);
  return r;
}

TEST(PlanBuilderPlace, ReleasedNowFreesASoleReadersConstantDuringCompile) {
  for (const bool owned : {true, false}) {
    SCOPED_TRACE(owned ? "owned graph" : "graph not owned");
    Graph g;
    const auto [x, w, s, o, k] = build_release_graph(g, nullptr);
    ASSERT_TRUE(g.finalize().ok());
    FakeProvider cpu("cpu", Device::cpu(), {"PackNow"});
    Fixture f;
    if (owned) f.options.owned_graph = &g;
    PlanBuilder builder(g, {&cpu}, f.options);
    ASSERT_TRUE(builder.assign().ok());
    ASSERT_TRUE(builder.compile().ok());
    EXPECT_EQ(g.initializer(w) == nullptr, owned);
    EXPECT_NE(g.initializer(s), nullptr);
    EXPECT_NE(g.initializer(o), nullptr);
    for (int n = 0; n < 4; ++n) EXPECT_EQ(builder.released_inputs(n), (std::set<size_t>{1}));
    ASSERT_TRUE(builder.place().ok());
    const SubgraphPlan& plan = builder.plan();
    std::vector<ValueId> released = plan.released_constants;
    std::sort(released.begin(), released.end());
    EXPECT_EQ(released, (std::vector<ValueId>{w, s}));
    EXPECT_EQ(plan.released_bytes, 4 * sizeof(float));
    EXPECT_EQ(plan.steps[0].inputs, (std::vector<ValueId>{x, kNoValue}));
  }
}

// A kernel may give a constant's pages back while it repacks it only where the release that
// follows frees the memory: the node is its only reader in the session's own graph, and no
// other tensor shares the memory.
TEST(PlanBuilderPlace, AConstantDiesOnReleaseOnlyWhereItsMemoryIsFreed) {
  for (const bool owned : {true, false}) {
    SCOPED_TRACE(owned ? "owned graph" : "graph not owned");
    Graph g;
    // Its memory is also the test's: releasing the initializer does not free it.
    const Tensor kept = Tensor::from_vector<float>({2}, {7, 8});
    const ValueId k = build_release_graph(g, &kept).k;
    ASSERT_TRUE(g.finalize().ok());
    FakeProvider cpu("cpu", Device::cpu(), {"PackNow"});
    Fixture f;
    if (owned) f.options.owned_graph = &g;
    FakeProvider::dies_on_release().clear();
    PlanBuilder builder(g, {&cpu}, f.options);
    ASSERT_TRUE(builder.assign().ok());
    ASSERT_TRUE(builder.compile().ok());
    const std::map<std::string, bool> expected = {{"own", owned},
                                                  {"shared1", false},
                                                  {"shared2", false},
                                                  {"out", false},
                                                  {"borrowed", false}};
    EXPECT_EQ(FakeProvider::dies_on_release(), expected);
    // The borrowed initializer left the graph all the same, and its memory is intact.
    EXPECT_EQ(g.initializer(k) == nullptr, owned);
    EXPECT_EQ(kept.data<float>()[1], 8.0f);
  }
}

TEST(PlanBuilderLiveness, EachSlotIsFreedAfterItsLastReaderAndOutputsNever) {
  Graph g;
  const ValueId x = add_float(g, "x"), u = add_float(g, "u"), v = add_float(g, "v");
  const ValueId y = add_float(g, "y");
  g.add_input(x);
  add_node(g, "a", "Op", {x}, {u});
  add_node(g, "b", "Op", {u}, {v});
  add_node(g, "c", "Op", {u, v}, {y});
  g.add_output(y);
  g.add_output(v);
  ASSERT_TRUE(g.finalize().ok());
  FakeProvider cpu("cpu", Device::cpu(), {"Op"});
  Fixture f;
  PlanBuilder b(g, {&cpu}, f.options);
  ASSERT_TRUE(b.assign().ok());
  ASSERT_TRUE(b.compile().ok());
  ASSERT_TRUE(b.place().ok());
  b.liveness();
  const SubgraphPlan& plan = b.plan();
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].release, (std::vector<ValueId>{x}));
  EXPECT_TRUE(plan.steps[1].release.empty());
  // u's last reader is c; v is a graph output and is never freed.
  EXPECT_EQ(plan.steps[2].release, (std::vector<ValueId>{u}));
  std::unique_ptr<SubgraphPlan> done = b.finish();
  EXPECT_EQ(done->output_slots, (std::vector<ValueId>{y, v}));
  EXPECT_EQ(done->input_slots, (std::vector<ValueId>{x}));
}

}  // namespace
}  // namespace recur
