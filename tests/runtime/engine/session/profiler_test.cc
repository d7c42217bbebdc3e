// The profiler (SessionOptions::profile): one event per node per run, subgraph nodes nested
// under their If or Loop, concurrent runs on their own threads, the trace file; and
// Session::explain() listing subgraph nodes under their parent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::floats;
using testing::ModelBuilder;
using testing::TempDir;

void add_graph_input(onnx::GraphProto& g, const char* name, int elem_type) {
  auto* i = g.add_input();
  i->set_name(name);
  i->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

void add_graph_output(onnx::GraphProto& g, const char* name, int elem_type) {
  auto* o = g.add_output();
  o->set_name(name);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

onnx::GraphProto one_node_branch(const char* name, const char* op, const char* node,
                                 const char* out) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(node);
  n->add_input("v");  // captured from the outer graph
  n->add_output(out);
  add_graph_output(g, out, 1);
  return g;
}

// pre = Abs(x); v = Loop(m) { step: v + 1; keep: cond } (pre); out = If(c) then pos: Relu(v)
// else negate: Neg(v).
std::string loop_and_if(const TempDir& dir) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {1});
  m.input("m", DType::kInt64, {});
  m.input("c", DType::kBool, {});
  m.initializer("one", floats({1}, {1}));
  m.output("out", DType::kFloat32);
  m.node("Abs", {"x"}, {"pre"}, "pre");
  onnx::GraphProto body;
  body.set_name("body");
  add_graph_input(body, "iter", 7);
  add_graph_input(body, "cond_in", 9);
  add_graph_input(body, "v_in", 1);
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->set_name("step");
  add->add_input("v_in");
  add->add_input("one");
  add->add_output("v_out");
  auto* keep = body.add_node();
  keep->set_op_type("Identity");
  keep->set_name("keep");
  keep->add_input("cond_in");
  keep->add_output("cond_out");
  add_graph_output(body, "cond_out", 9);
  add_graph_output(body, "v_out", 1);
  testing::set_attr(m.node("Loop", {"m", "", "pre"}, {"v"}, "counter"), "body", body);
  auto& choose = m.node("If", {"c"}, {"out"}, "choose");
  testing::set_attr(choose, "then_branch", one_node_branch("then", "Relu", "pos", "t"));
  testing::set_attr(choose, "else_branch", one_node_branch("else", "Neg", "negate", "e"));
  return m.save(dir.path());
}

Feeds feeds(int64_t trips, bool cond) {
  Tensor c = Tensor::empty(DType::kBool, {});
  *c.data<bool>() = cond;
  return {{"x", floats({1}, {-2})}, {"m", Tensor::scalar<int64_t>(trips)}, {"c", c}};
}

SessionOptions profiled(std::string path = "") {
  // The reference provider alone and no optimisation: the nodes are exactly the model's.
  return SessionOptions().providers({"reference"}).optimize(false).profile(std::move(path));
}

std::vector<ProfileEvent> of(const std::vector<ProfileEvent>& all, const std::string& category,
                             int64_t run = -2) {
  std::vector<ProfileEvent> out;
  for (const auto& e : all)
    if (e.category == category && (run == -2 || e.run == run)) out.push_back(e);
  return out;
}

std::multiset<std::string> names(const std::vector<ProfileEvent>& events) {
  std::multiset<std::string> s;
  for (const auto& e : events) s.insert(e.name);
  return s;
}

// With 1 ns of slack for the rounding of microseconds as doubles.
bool within(const ProfileEvent& inner, const ProfileEvent& outer) {
  constexpr double kSlack = 1e-3;
  return inner.thread == outer.thread && inner.start_us >= outer.start_us - kSlack &&
         inner.start_us + inner.dur_us <= outer.start_us + outer.dur_us + kSlack;
}

// Every node lies within its run, and every subgraph node within an event of its parent.
void expect_nested(const std::vector<ProfileEvent>& all) {
  for (const auto& n : of(all, "node")) {
    bool in_run = false, in_parent = n.parent.empty();
    for (const auto& r : of(all, "run", n.run)) in_run |= within(n, r);
    for (const auto& p : of(all, "node", n.run)) in_parent |= p.name == n.parent && within(n, p);
    EXPECT_TRUE(in_run) << n.name << " of run " << n.run;
    EXPECT_TRUE(in_parent) << n.name << " not within " << n.parent;
  }
}

TEST(Profiler, OneEventPerNodePerRunWithSubgraphNodesUnderTheirParent) {
  TempDir dir;
  Session s(loop_and_if(dir), profiled());
  s.run(feeds(3, true));
  s.run(feeds(2, false));
  const auto all = s.profile();
  ASSERT_EQ(of(all, "run").size(), 2u);
  EXPECT_EQ(names(of(all, "node", 0)),
            (std::multiset<std::string>{"pre", "counter", "step", "step", "step", "keep", "keep",
                                        "keep", "choose", "pos"}));
  EXPECT_EQ(names(of(all, "node", 1)),
            (std::multiset<std::string>{"pre", "counter", "step", "step", "keep", "keep", "choose",
                                        "negate"}));
  std::vector<int64_t> iterations;
  for (const auto& e : of(all, "node", 0)) {
    EXPECT_EQ(e.provider, "reference") << e.name;
    EXPECT_GE(e.dur_us, 0);
    if (e.name == "step") {
      EXPECT_EQ(e.op, "Add");
      EXPECT_EQ(e.parent, "counter");
      EXPECT_EQ(e.subgraph, "body");
      iterations.push_back(e.iteration);
      ASSERT_EQ(e.input_shapes.size(), 2u);
      EXPECT_EQ(e.input_shapes[0], std::vector<int64_t>{1});
    }
    if (e.name == "pos") {
      EXPECT_EQ(e.parent, "choose");
      EXPECT_EQ(e.subgraph, "then_branch");
      EXPECT_EQ(e.iteration, -1);  // an If has no iterations
    }
    if (e.name == "counter") {
      EXPECT_EQ(e.op, "Loop");
      EXPECT_TRUE(e.parent.empty());
      ASSERT_EQ(e.input_shapes.size(), 3u);  // m (a scalar), the omitted cond, pre
      EXPECT_EQ(e.input_shapes[0], std::vector<int64_t>{});
      EXPECT_FALSE(e.input_shapes[1].has_value());
      EXPECT_EQ(e.input_shapes[2], std::vector<int64_t>{1});
    }
  }
  std::sort(iterations.begin(), iterations.end());
  EXPECT_EQ(iterations, (std::vector<int64_t>{0, 1, 2}));
  for (const auto& e : of(all, "node", 1)) {
    if (e.name == "negate") {
      EXPECT_EQ(e.subgraph, "else_branch");
    }
  }
  expect_nested(all);
  EXPECT_EQ(names(of(all, "session")), (std::multiset<std::string>{"load", "optimize", "plan"}));
}

TEST(Profiler, ConcurrentRunsEachOnTheirOwnThread) {
  TempDir dir;
  Session s(loop_and_if(dir), profiled());
  constexpr int kThreads = 4, kRuns = 5;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < kRuns; ++i) s.run(feeds(3, true));
      });
  }
  const auto all = s.profile();
  const auto runs = of(all, "run");
  ASSERT_EQ(runs.size(), size_t{kThreads * kRuns});
  std::set<int64_t> indices;
  std::map<int, int> runs_per_thread;
  for (const auto& r : runs) {
    indices.insert(r.run);
    runs_per_thread[r.thread]++;
    EXPECT_EQ(of(all, "node", r.run).size(), 10u) << "run " << r.run;
  }
  EXPECT_EQ(indices.size(), size_t{kThreads * kRuns});
  ASSERT_EQ(runs_per_thread.size(), size_t{kThreads});
  for (const auto& [thread, n] : runs_per_thread) EXPECT_EQ(n, kRuns) << "thread " << thread;
  expect_nested(all);
}

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Profiler, WritesAValidTraceAtEndProfilingAndAgainAfterAFailedRun) {
  TempDir dir;
  const auto trace = dir.path() / "trace.json";
  {
    Session s(loop_and_if(dir), profiled(trace.string()).max_loop_iterations(2));
    s.run(feeds(2, true));
    EXPECT_EQ(s.end_profiling(), trace.string());
    ASSERT_TRUE(std::filesystem::exists(trace));
    EXPECT_FALSE(std::filesystem::exists(trace.string() + ".tmp"));
    EXPECT_EQ(read(trace).find("\"failed\""), std::string::npos);
    // A third iteration fails in the Loop: the events up to it are kept and written when the
    // session goes.
    expect_error([&] { s.run(feeds(3, true)); }, ErrorCode::kOutOfRange, {"counter"});
  }
  const std::string text = read(trace);
  EXPECT_NE(text.find("\"failed\":true"), std::string::npos);
  // The format, checked by an independent reader: 2 runs; the failed one stopped inside the
  // loop, so no per-run node count is asked for.
  const std::string cmd = "/usr/bin/python3 " RECUR_SOURCE_DIR "/tools/checks/check_trace.py " +
                          trace.string() + " --runs 2 > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << text;
}

TEST(Profiler, OffByDefault) {
  TempDir dir;
  Session s(loop_and_if(dir), SessionOptions().providers({"reference"}));
  s.run(feeds(1, true));
  EXPECT_TRUE(s.profile().empty());
  EXPECT_EQ(s.end_profiling(), "");
}

TEST(Profiler, AnUnwritablePathIsAnErrorThatNamesIt) {
  TempDir dir;
  const std::string path = (dir.path() / "no-such-dir" / "trace.json").string();
  Session s(loop_and_if(dir), profiled(path));
  s.run(feeds(1, true));
  expect_error([&] { s.end_profiling(); }, ErrorCode::kInvalidArgument, {path});
}

// Each of `lines` starts a line of `text`, in this order.
void expect_lines_in_order(const std::string& text, const std::vector<std::string>& lines) {
  size_t at = 0;
  for (const auto& l : lines) {
    const size_t found = text.find("\n" + l, at);
    ASSERT_NE(found, std::string::npos) << "'" << l << "' not after offset " << at << " in:\n"
                                        << text;
    at = found + 1;
  }
}

TEST(Explain, ListsSubgraphNodesIndentedUnderTheirParent) {
  TempDir dir;
  for (bool plan_only : {false, true}) {
    Session s(loop_and_if(dir),
              SessionOptions().providers({"reference"}).optimize(false).plan_only(plan_only));
    const std::string text = s.explain();
    expect_lines_in_order(text, {"pre ", "counter ", "  body:\n", "    step ", "    keep ",
                                 "choose ", "  then:\n", "    pos ", "  else:\n", "    negate "});
    const size_t step = text.find("\n    step ");
    ASSERT_NE(step, std::string::npos);
    const std::string line = text.substr(step + 1, text.find('\n', step + 1) - step - 1);
    EXPECT_NE(line.find(" Add "), std::string::npos) << line;
    EXPECT_NE(line.find(" reference"), std::string::npos) << line;
    const auto& a = s.assignment();
    const auto loop = std::find_if(a.begin(), a.end(), [](auto& n) { return n.node == "counter"; });
    ASSERT_NE(loop, a.end());
    ASSERT_EQ(loop->subgraphs.size(), 1u);
    EXPECT_EQ(loop->subgraphs[0].attribute, "body");
    ASSERT_EQ(loop->subgraphs[0].nodes.size(), 2u);
    EXPECT_EQ(loop->subgraphs[0].nodes[0].provider, "reference");
  }
}

}  // namespace
}  // namespace recur
