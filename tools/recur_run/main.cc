// recur-run: run ONNX models and backend-test folders, compare, time, and explain where each
// node runs. Exit status: 0 all good, 1 a mismatch (or an unexpected suite result), 2 an error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "recur/recur.h"
#include "tools/common/npy.h"
#include "tools/common/summary.h"
#include "tools/common/testdir.h"

namespace fs = std::filesystem;
using namespace recur;

namespace {

constexpr const char* kUsage = R"(usage:
  recur-run DIR                      run a backend-test folder (model.onnx + test_data_set_*)
  recur-run --suite ROOT [--expect-fail FILE]
                                     run every such folder under ROOT
  recur-run MODEL.onnx [--input NAME=FILE.npy|FILE.pb ...] [--random-inputs]
            [--shape NAME=2x16x64 ...] [--output-dir D]
                                     run a model once and summarise its outputs
options:
  --providers a,b,c    provider priority (default: every available provider)
  --explain            print which provider runs each node, and why others declined
  --plan-only          assign nodes as a machine with every device would; run nothing
                       (with --json: inputs, outputs and the assignment as JSON)
  --perf               time the run: --warmup N (3) --repeat N (20) --json
  --threads N          intra-op threads for CPU providers
  --rtol X --atol X    tolerance for comparisons (1e-3, 1e-5)
  --set KEY=VALUE      a provider setting, e.g. cudnn.tf32=1
  --seed N             seed for --random-inputs (0)
  --no-optimize        skip graph optimisations
  --max-loop-iterations N
  --list-providers     the providers of this build and whether each can run here
  --device-io          with --perf: inputs on cuda:0 before timing, outputs left there
  --cuda-graphs        record each input shape's run once and replay it (CUDA graphs)
  --fusion auto|on|off stacked RNN fusion (default auto: only where a GPU provider runs it)
)";

struct Args {
  std::string target;
  std::string suite_root;
  std::string expect_fail;
  std::vector<std::string> providers;
  std::vector<std::pair<std::string, std::string>> inputs;
  std::map<std::string, Shape> shapes;
  std::vector<std::pair<std::string, std::string>> settings;
  std::string output_dir;
  bool random_inputs = false;
  bool explain = false;
  bool plan_only = false;
  bool perf = false;
  bool json = false;
  bool optimize = true;
  bool list_providers = false;
  bool device_io = false;
  bool cuda_graphs = false;
  SessionOptions::Fusion fusion = SessionOptions::Fusion::kAuto;
  int warmup = 3;
  int repeat = 20;
  int threads = 0;
  uint64_t seed = 0;
  int64_t max_loop = 0;
  tools::Tolerance tol;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "recur-run: " << msg << "\n" << kUsage;
  std::exit(2);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

template <class T>
T parse_number(const std::string& flag, const std::string& v) {
  try {
    size_t used = 0;
    T r;
    if constexpr (std::is_floating_point_v<T>) {
      r = static_cast<T>(std::stod(v, &used));
    } else {
      r = static_cast<T>(std::stoll(v, &used));
    }
    if (used != v.size()) throw std::invalid_argument(v);
    return r;
  } catch (const std::exception&) {
    usage_error(flag + " needs a number, got '" + v + "'");
  }
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    auto name_value = [&](const std::string& v) {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        usage_error(arg + " needs NAME=VALUE, got '" + v + "'");
      return std::make_pair(v.substr(0, eq), v.substr(eq + 1));
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--suite") {
      a.suite_root = next();
    } else if (arg == "--expect-fail") {
      a.expect_fail = next();
    } else if (arg == "--providers") {
      for (auto& p : split(next(), ','))
        if (!p.empty()) a.providers.push_back(p);
    } else if (arg == "--input") {
      a.inputs.push_back(name_value(next()));
    } else if (arg == "--shape") {
      auto [name, dims] = name_value(next());
      Shape s;
      if (!dims.empty()) {
        for (const auto& d : split(dims, 'x')) s.push_back(parse_number<int64_t>("--shape", d));
      }
      a.shapes[name] = s;
    } else if (arg == "--set") {
      a.settings.push_back(name_value(next()));
    } else if (arg == "--output-dir") {
      a.output_dir = next();
    } else if (arg == "--random-inputs") {
      a.random_inputs = true;
    } else if (arg == "--explain") {
      a.explain = true;
    } else if (arg == "--plan-only") {
      a.plan_only = true;
    } else if (arg == "--perf") {
      a.perf = true;
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--no-optimize") {
      a.optimize = false;
    } else if (arg == "--list-providers") {
      a.list_providers = true;
    } else if (arg == "--device-io") {
      a.device_io = true;
    } else if (arg == "--cuda-graphs") {
      a.cuda_graphs = true;
    } else if (arg == "--fusion") {
      const std::string v = next();
      if (v == "auto") {
        a.fusion = SessionOptions::Fusion::kAuto;
      } else if (v == "on") {
        a.fusion = SessionOptions::Fusion::kOn;
      } else if (v == "off") {
        a.fusion = SessionOptions::Fusion::kOff;
      } else {
        usage_error("--fusion takes auto, on or off");
      }
    } else if (arg == "--warmup") {
      a.warmup = parse_number<int>(arg, next());
    } else if (arg == "--repeat") {
      a.repeat = parse_number<int>(arg, next());
    } else if (arg == "--threads") {
      a.threads = parse_number<int>(arg, next());
    } else if (arg == "--seed") {
      a.seed = parse_number<uint64_t>(arg, next());
    } else if (arg == "--max-loop-iterations") {
      a.max_loop = parse_number<int64_t>(arg, next());
    } else if (arg == "--rtol") {
      a.tol.rtol = parse_number<double>(arg, next());
    } else if (arg == "--atol") {
      a.tol.atol = parse_number<double>(arg, next());
    } else if (!arg.empty() && arg[0] == '-') {
      usage_error("unknown option " + arg);
    } else if (a.target.empty()) {
      a.target = arg;
    } else {
      usage_error("more than one model or folder given");
    }
  }
  if (a.warmup < 0 || a.repeat < 1) usage_error("--warmup must be >= 0 and --repeat >= 1");
  if (a.threads < 0) usage_error("--threads must be >= 0");
  return a;
}

SessionOptions session_options(const Args& a) {
  SessionOptions o;
  o.providers(a.providers).threads(a.threads).plan_only(a.plan_only).optimize(a.optimize);
  o.cuda_graphs(a.cuda_graphs).rnn_layer_fusion(a.fusion);
  if (a.max_loop > 0) o.max_loop_iterations(a.max_loop);
  for (const auto& [k, v] : a.settings) o.set(k, v);
  return o;
}

// --- Suite -------------------------------------------------------------------------------

std::map<std::string, std::string> read_expect_fail(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::kIo, "cannot open expected-failures list '" + path + "'");
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    std::string body = line.substr(0, hash);
    std::istringstream ss(body);
    std::string name;
    if (!(ss >> name)) continue;
    std::string reason;
    std::getline(ss, reason);
    out[name] = reason;
  }
  return out;
}

int run_suite(const Args& a) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(a.suite_root, ec);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file() && it->path().filename() == "model.onnx") {
      dirs.push_back(it->path().parent_path());
    }
  }
  if (ec) throw Error(ErrorCode::kIo, "cannot read suite root '" + a.suite_root + "'");
  std::sort(dirs.begin(), dirs.end());
  std::map<std::string, std::string> expected;
  if (!a.expect_fail.empty()) expected = read_expect_fail(a.expect_fail);

  int passed = 0, failed = 0;
  std::vector<std::string> unexpected_fail, unexpected_pass;
  std::set<std::string> seen;
  const SessionOptions opts = session_options(a);
  for (const auto& d : dirs) {
    std::string name = fs::relative(d, a.suite_root).string();
    if (name == ".") name = d.filename().string();
    seen.insert(name);
    tools::TestResult r = tools::run_test_dir(d.string(), opts, a.tol, nullptr);
    const bool listed = expected.count(name) > 0;
    if (r.outcome == tools::TestResult::Outcome::kPass) {
      ++passed;
      std::cout << "PASS " << name << (listed ? "  (listed as expected to fail)" : "") << "\n";
      if (listed) unexpected_pass.push_back(name);
    } else {
      ++failed;
      std::string reason = r.reason;
      std::replace(reason.begin(), reason.end(), '\n', ' ');
      if (reason.size() > 300) reason = reason.substr(0, 300) + "...";
      std::cout << "FAIL " << name << ": " << reason << (listed ? "  (expected)" : "") << "\n";
      if (!listed) unexpected_fail.push_back(name);
    }
    std::cout.flush();
  }
  int status = failed == 0 ? 0 : 1;
  if (!a.expect_fail.empty()) {
    std::vector<std::string> missing;
    for (const auto& [n, why] : expected)
      if (!seen.count(n)) missing.push_back(n);
    for (const auto& n : unexpected_fail) std::cout << "unexpected failure: " << n << "\n";
    for (const auto& n : unexpected_pass) std::cout << "stale entry (now passes): " << n << "\n";
    for (const auto& n : missing) std::cout << "stale entry (no such test): " << n << "\n";
    status = unexpected_fail.empty() && unexpected_pass.empty() && missing.empty() ? 0 : 1;
    std::cout << "expected failures: " << (failed - static_cast<int>(unexpected_fail.size()))
              << " of " << expected.size() << " listed\n";
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return status;
}

// --- Inputs ------------------------------------------------------------------------------

Tensor random_tensor(DType dtype, const Shape& shape, std::mt19937_64& rng) {
  Tensor t = Tensor::empty(dtype, shape);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  const bool ok = reference::visit_dtype(reference::kAllTypes, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = small(rng) & 1;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(small(rng));
      } else {
        p[i] = static_cast<T>(static_cast<float>(normal(rng)));
      }
    }
  });
  if (!ok)
    throw Error(ErrorCode::kNotImplemented,
                "cannot make random " + std::string(dtype_name(dtype)) + " data");
  return t;
}

Feeds model_feeds(const Session& s, const Args& a) {
  Feeds feeds;
  std::set<std::string> given;
  for (const auto& [name, file] : a.inputs) {
    auto t = tools::read_tensor_file(file);
    if (!t.ok()) throw Error(t.status().code(), "--input " + name + ": " + t.status().message());
    feeds.emplace_back(name, std::move(t).value());
    given.insert(name);
  }
  std::mt19937_64 rng(a.seed);
  for (const auto& in : s.inputs()) {
    if (given.count(in.name) || in.has_default) continue;
    if (!a.random_inputs) {
      throw Error(ErrorCode::kInvalidArgument, "missing input '" + in.name + "' (" +
                                                   std::string(dtype_name(in.dtype)) +
                                                   in.shape_string() + "): give --input " +
                                                   in.name + "=FILE or --random-inputs");
    }
    Shape shape;
    auto it = a.shapes.find(in.name);
    if (it != a.shapes.end()) {
      shape = it->second;
    } else if (!in.shape) {
      throw Error(ErrorCode::kInvalidArgument,
                  "input '" + in.name + "' has an unknown rank: give --shape " + in.name + "=AxB");
    } else {
      for (const Dim& d : *in.shape) shape.push_back(d.is_fixed() ? d.value : 1);
    }
    feeds.emplace_back(in.name, random_tensor(in.dtype, shape, rng));
  }
  return feeds;
}

// --- Output ------------------------------------------------------------------------------

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (c == '\n') {
      o += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}

std::string json_value_infos(const std::vector<ValueInfo>& infos) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < infos.size(); ++i) {
    const ValueInfo& v = infos[i];
    os << (i ? ", " : "") << "{\"name\": \"" << json_escape(v.name) << "\", \"dtype\": \""
       << dtype_name(v.dtype) << "\", \"optional\": " << (v.has_default ? "true" : "false")
       << ", \"shape\": ";
    if (!v.shape) {
      os << "null";
    } else {
      os << "[";
      for (size_t k = 0; k < v.shape->size(); ++k) {
        const Dim& d = (*v.shape)[k];
        os << (k ? ", " : "");
        if (d.is_fixed()) {
          os << d.value;
        } else if (!d.symbol.empty()) {
          os << "\"" << json_escape(d.symbol) << "\"";
        } else {
          os << "null";
        }
      }
      os << "]";
    }
    os << "}";
  }
  os << "]";
  return os.str();
}

// --plan-only --json: the inputs and outputs with their symbolic dimensions, and which
// provider takes each node and why the others before it declined (for tools such as
// recur-bench).
void print_plan_json(const Session& s, const std::string& model) {
  std::cout << "{\"model\": \"" << json_escape(model) << "\", \"providers\": [";
  for (size_t i = 0; i < s.providers().size(); ++i)
    std::cout << (i ? ", " : "") << "\"" << json_escape(s.providers()[i]) << "\"";
  std::cout << "], \"inputs\": " << json_value_infos(s.inputs())
            << ", \"outputs\": " << json_value_infos(s.outputs()) << ", \"assignment\": [";
  for (size_t i = 0; i < s.assignment().size(); ++i) {
    const NodeAssignment& n = s.assignment()[i];
    std::cout << (i ? ", " : "") << "{\"node\": \"" << json_escape(n.node) << "\", \"op\": \""
              << json_escape(n.op) << "\", \"provider\": \"" << json_escape(n.provider)
              << "\", \"declined\": [";
    for (size_t k = 0; k < n.declined.size(); ++k) {
      std::cout << (k ? ", " : "") << "{\"provider\": \"" << json_escape(n.declined[k].provider)
                << "\", \"reason\": \"" << json_escape(n.declined[k].reason) << "\"}";
    }
    std::cout << "]}";
  }
  std::cout << "]}\n";
}

int perf(const Session& s, const Feeds& feeds, double load_ms, const Args& a,
         const std::string& model) {
  using clock = std::chrono::steady_clock;
  // --device-io: what a caller that keeps its tensors on the GPU sees (no host copies).
  Feeds dev_feeds;
  RunOptions ro;
  if (a.device_io) {
    for (const auto& [name, t] : feeds) dev_feeds.emplace_back(name, t.to(Device::cuda(0)));
    ro.outputs_on_device = true;
  }
  const Feeds& f = a.device_io ? dev_feeds : feeds;
  for (int i = 0; i < a.warmup; ++i) s.run(f, ro);
  std::vector<double> ms;
  for (int i = 0; i < a.repeat; ++i) {
    const auto t0 = clock::now();
    s.run(f, ro);
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  const double mn = *std::min_element(ms.begin(), ms.end());
  double mean = 0;
  for (double v : ms) mean += v;
  mean /= static_cast<double>(ms.size());
  if (a.json) {
    std::cout << "{\"model\": \"" << json_escape(model) << "\", \"providers\": [";
    for (size_t i = 0; i < s.providers().size(); ++i)
      std::cout << (i ? ", " : "") << "\"" << s.providers()[i] << "\"";
    std::cout << "], \"assigned\": {";
    std::map<std::string, int> counts;
    for (const auto& n : s.assignment()) counts[n.provider]++;
    bool first = true;
    for (const auto& [p, c] : counts) {
      std::cout << (first ? "" : ", ") << "\"" << p << "\": " << c;
      first = false;
    }
    std::cout << "}, \"threads\": " << a.threads << ", \"load_ms\": " << load_ms
              << ", \"warmup\": " << a.warmup << ", \"runs\": " << a.repeat
              << ", \"latency_ms\": {\"min\": " << mn << ", \"p50\": " << percentile(ms, 0.5)
              << ", \"p90\": " << percentile(ms, 0.9) << ", \"p99\": " << percentile(ms, 0.99)
              << ", \"mean\": " << mean << "}, \"samples_ms\": [";
    for (size_t i = 0; i < ms.size(); ++i) std::cout << (i ? ", " : "") << ms[i];
    std::cout << "]}\n";
  } else {
    std::printf("load: %.3f ms\n", load_ms);
    std::printf(
        "run latency over %d runs after %d warm-up: min %.4f ms  p50 %.4f  p90 %.4f  "
        "p99 %.4f  mean %.4f\n",
        a.repeat, a.warmup, mn, percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 0.99),
        mean);
  }
  return 0;
}

int run_main(const Args& a) {
  if (a.list_providers) {
    for (const auto& p : list_providers()) {
      std::cout << p.name << ": " << (p.available ? "available" : "unavailable (" + p.reason + ")")
                << "\n";
    }
    if (a.target.empty() && a.suite_root.empty()) return 0;
  }
  if (!a.suite_root.empty()) return run_suite(a);
  if (a.target.empty()) usage_error("no model or folder given");

  const bool is_dir = fs::is_directory(a.target);
  const std::string model = is_dir ? (fs::path(a.target) / "model.onnx").string() : a.target;
  const SessionOptions opts = session_options(a);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  Session session(model, opts);
  const double load_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  if (a.plan_only && a.json) {
    print_plan_json(session, model);
    return 0;
  }
  if (a.explain || a.plan_only) std::cout << session.explain() << "\n";
  if (a.plan_only) return 0;

  if (is_dir && !a.perf) {
    tools::TestResult r = tools::run_test_dir(a.target, opts, a.tol, &std::cout);
    switch (r.outcome) {
      case tools::TestResult::Outcome::kPass:
        std::cout << "PASS\n";
        return 0;
      case tools::TestResult::Outcome::kMismatch:
        std::cout << "FAIL: " << r.reason << "\n";
        return 1;
      case tools::TestResult::Outcome::kError:
        std::cerr << "recur-run: " << r.reason << "\n";
        return 2;
    }
  }

  Feeds feeds;
  if (is_dir) {
    auto sets = tools::read_data_sets(a.target, &session);
    if (!sets.ok()) throw Error(sets.status().code(), sets.status().message());
    if (sets->empty()) throw Error(ErrorCode::kInvalidArgument, "no data set in " + a.target);
    auto f = tools::feeds_for(session, sets->front());
    if (!f.ok()) throw Error(f.status().code(), f.status().message());
    feeds = std::move(f).value();
  } else {
    feeds = model_feeds(session, a);
  }
  if (a.perf) return perf(session, feeds, load_ms, a, model);

  Outputs outs = session.run(feeds);
  std::printf("load: %.3f ms\n", load_ms);
  for (size_t i = 0; i < outs.size(); ++i) {
    std::cout << outs.name(i) << ": " << tools::summarize(outs[i]) << "\n";
  }
  if (!a.output_dir.empty()) {
    fs::create_directories(a.output_dir);
    for (size_t i = 0; i < outs.size(); ++i) {
      std::string file = outs.name(i);
      std::replace_if(
          file.begin(), file.end(), [](char c) { return c == '/' || c == ':'; }, '_');
      const std::string path = (fs::path(a.output_dir) / (file + ".npy")).string();
      if (outs[i].is_sequence()) {
        std::cout << "skipped " << outs.name(i) << ": a sequence has no .npy form\n";
        continue;
      }
      Status st = tools::write_npy(outs[i], path);
      if (!st.ok()) throw Error(st.code(), st.message());
      std::cout << "wrote " << path << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  try {
    return run_main(args);
  } catch (const Error& e) {
    std::cerr << "recur-run: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "recur-run: error: " << e.what() << "\n";
    return 2;
  }
}
