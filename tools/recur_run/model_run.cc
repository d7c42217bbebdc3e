#include "tools/recur_run/model_run.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "recur/recur.h"
#include "tools/common/summary.h"
#include "tools/common/testdir.h"
#include "tools/recur_run/compare_fp32.h"
#include "tools/recur_run/feeds.h"
#include "tools/recur_run/json_text.h"
#include "tools/recur_run/output_files.h"
#include "tools/recur_run/perf.h"
#include "tools/recur_run/tune.h"

namespace recur::tools {

namespace {

namespace fs = std::filesystem;

Json json_value_infos(const std::vector<ValueInfo>& infos) {
  Json list = Json::array();
  for (const ValueInfo& v : infos) {
    Json shape = nullptr;
    if (v.shape) {
      shape = Json::array();
      for (const Dim& d : *v.shape) {
        shape.push_back(d.is_fixed()        ? Json(d.value)
                        : !d.symbol.empty() ? Json(d.symbol)
                                            : Json(nullptr));
      }
    }
    list.push_back({{"name", v.name},
                    {"dtype", dtype_name(v.dtype)},
                    {"optional", v.has_default},
                    {"shape", shape}});
  }
  return list;
}

// Subgraph nodes (If branches, Loop and Scan bodies) under "subgraphs", only where there are any.
Json json_assignment(const std::vector<NodeAssignment>& nodes) {
  Json assignment = Json::array();
  for (const NodeAssignment& n : nodes) {
    Json declined = Json::array();
    for (const auto& d : n.declined)
      declined.push_back({{"provider", d.provider}, {"reason", d.reason}});
    Json j = {{"node", n.node}, {"op", n.op}, {"provider", n.provider}, {"declined", declined}};
    if (!n.subgraphs.empty()) {
      Json subs = Json::array();
      for (const auto& sub : n.subgraphs)
        subs.push_back({{"attribute", sub.attribute}, {"nodes", json_assignment(sub.nodes)}});
      j["subgraphs"] = subs;
    }
    assignment.push_back(j);
  }
  return assignment;
}

// --plan-only --json: the inputs and outputs with their symbolic dimensions, and which
// provider takes each node and why the others before it declined (for tools such as
// recur-bench).
void print_plan_json(const Session& s, const std::string& model) {
  const Json assignment = json_assignment(s.assignment());
  Json j;
  j["model"] = model;
  j["providers"] = s.providers();
  j["inputs"] = json_value_infos(s.inputs());
  j["outputs"] = json_value_infos(s.outputs());
  j["assignment"] = assignment;
  const ModelMetadata& md = s.metadata();
  j["metadata"] = {{"producer_name", md.producer_name},
                   {"producer_version", md.producer_version},
                   {"domain", md.domain},
                   {"description", md.description},
                   {"version", md.version},
                   {"graph_name", md.graph_name},
                   {"graph_description", md.graph_description},
                   {"ir_version", md.ir_version},
                   {"opsets", md.opsets},
                   {"custom", md.custom}};
  std::cout << json_text(j) << "\n";
}

// With --explain: who made the model, and its metadata_props (labels, sample rates...).
void print_metadata(const ModelMetadata& md) {
  std::cout << "producer: " << (md.producer_name.empty() ? "(not given)" : md.producer_name);
  if (!md.producer_version.empty()) std::cout << " " << md.producer_version;
  std::cout << "; ir_version " << md.ir_version << "; opsets:";
  for (const auto& [domain, version] : md.opsets) {
    std::cout << " " << (domain.empty() ? "ai.onnx" : domain) << " " << version;
  }
  std::cout << "\n";
  if (!md.description.empty()) std::cout << "description: " << md.description << "\n";
  for (const auto& [key, value] : md.custom)
    std::cout << "metadata: " << key << " = " << value << "\n";
}

int compare_with_folder(const Args& a) {
  const TestResult r = run_test_dir(a.target, a.session, a.tol, &std::cout);
  switch (r.outcome) {
    case TestResult::Outcome::kPass:
      std::cout << "PASS\n";
      return kExitOk;
    case TestResult::Outcome::kMismatch:
      std::cout << "FAIL: " << r.reason << "\n";
      return kExitMismatch;
    case TestResult::Outcome::kError:
      break;
  }
  std::cerr << "recur-run: " << r.reason << "\n";
  return kExitError;
}

// A test folder's first data set, for --perf on a folder.
Feeds folder_feeds(const Session& session, const std::string& dir) {
  auto sets = read_data_sets(dir, &session);
  if (!sets.ok()) throw Error(sets.status().code(), sets.status().message());
  if (sets->empty()) throw Error(ErrorCode::kInvalidArgument, "no data set in " + dir);
  auto f = feeds_for(session, sets->front());
  if (!f.ok()) throw Error(f.status().code(), f.status().message());
  return std::move(f).value();
}

int run_once(const Session& session, const Feeds& feeds, double load_ms, const Args& a) {
  const Outputs outs = session.run(feeds, run_options(a));
  std::printf("load: %.3f ms\n", load_ms);
  std::fflush(stdout);
  for (size_t i = 0; i < outs.size(); ++i) {
    std::cout << outs.name(i) << ": " << summarize(outs[i]) << "\n";
  }
  if (!a.output_dir.empty()) write_outputs(outs, a.output_dir, a.overwrite, std::cout);
  return kExitOk;
}

}  // namespace

int run_model(const Args& a) {
  if (a.tune) return run_tune(a);
  const bool is_dir = fs::is_directory(a.target);
  // A folder brings its own inputs: these would be ignored without a word.
  if (is_dir && (!a.inputs.empty() || !a.shapes.empty() || !a.dims.empty())) {
    usage_error("--input, --shape and --dim need a MODEL.onnx, not a test folder");
  }
  if (is_dir && !a.run.outputs.empty() && !a.perf) {
    usage_error("--outputs needs a MODEL.onnx or --perf: a test folder compares every output");
  }
  const std::string model = is_dir ? (fs::path(a.target) / "model.onnx").string() : a.target;
  const bool compare = is_dir && !a.perf && !a.session.plan_only() && !a.compare_fp32;
  {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const Session session(model, a.session);
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (a.perf) note_load_memory();
    if (a.session.plan_only() && a.json) {
      print_plan_json(session, model);
      return kExitOk;
    }
    if (a.explain || a.session.plan_only()) {
      // Under the explanation's first line, which names the model.
      const std::string text = session.explain();
      const size_t first = text.find('\n') + 1;
      std::cout << text.substr(0, first);
      print_metadata(session.metadata());
      std::cout << text.substr(first) << "\n";
    }
    if (a.session.plan_only()) return kExitOk;
    // --explain of a model alone: the plan is what was asked for. Running it would need
    // inputs that were not given, and end in an error after a complete answer.
    if (a.explain && !is_dir && !a.perf && !a.compare_fp32 && !a.random_inputs &&
        a.inputs.empty() && !session.inputs().empty())
      return kExitOk;
    if (!compare) {
      const Feeds feeds = is_dir ? folder_feeds(session, a.target) : model_feeds(session, a);
      const int status = a.perf           ? run_perf(session, feeds, load_ms, a, model)
                         : a.compare_fp32 ? run_compare_fp32(session, feeds, load_ms, a, model)
                                          : run_once(session, feeds, load_ms, a);
      // On stderr, so that --json output stays one document. A run that throws skips this:
      // the session writes the file when it is destroyed.
      const std::string profile = session.end_profiling();
      if (!profile.empty()) std::cerr << "recur-run: profile written to " << profile << "\n";
      return status;
    }
  }
  // The comparison loads its own session. This one is gone by then, so that with --profile
  // the file ends up holding the comparison's runs, not this session's load alone.
  return compare_with_folder(a);
}

}  // namespace recur::tools
