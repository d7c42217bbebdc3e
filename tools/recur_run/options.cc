#include "tools/recur_run/options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>

namespace recur::tools {

namespace {

constexpr const char* kDescription =
    R"(recur-run: run ONNX models and backend-test folders, compare, time, and explain where each
node runs.
  recur-run DIR                      run a backend-test folder (model.onnx + test_data_set_*)
  recur-run --suite ROOT [--expect-fail FILE]
                                     run every such folder under ROOT
  recur-run MODEL.onnx [--input NAME=FILE.npy|FILE.pb ...] [--random-inputs]
            [--shape INPUT=2x16x64 ...] [--dim SYMBOL=N ...] [--output-dir D]
                                     run a model once and summarise its outputs
Every option also takes the form --opt=value.)";

constexpr const char* kFooter =
    R"(--output-dir D writes one OUTPUT.npy per output. OUTPUT is the output's name with every byte
other than A-Z a-z 0-9 . _ - written as %XX (so "a/b" is a%2Fb.npy, "a:b" a%3Ab.npy); an
existing file is an error unless --overwrite, and a symbolic link in D's place or an output's
is never followed nor replaced. Each file appears whole or not at all (written to a temporary
name in D, then renamed).

Exit status: 0 all good, 1 a mismatch (or an unexpected suite result), 2 an error.)";

// A leading '+' is taken too (from_chars alone refuses it).
template <class T>
bool parse_integer(const std::string& s, T* out) {
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+' && s[1] != '-' ? 1 : 0);
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(begin, end, *out);
  return begin != end && ec == std::errc() && ptr == end;
}

// What is wrong with `s` as an integer in [min, max], or "" where nothing is. Integer options
// check their text themselves: CLI11's range check would print its bound as a 300-digit
// double, its conversion of a value past an int says only "Could not convert", and "abc"
// should read as "not an integer", not "out of range".
std::string integer_problem(const std::string& s, int64_t min, int64_t max) {
  int64_t v = 0;
  bool past = false;  // digits beyond int64's range
  if (!parse_integer(s, &v)) {
    const size_t sign = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (s.size() == sign || s.find_first_not_of("0123456789", sign) != std::string::npos)
      return "needs an integer, got '" + s + "'";
    past = true;
    v = s[0] == '-' ? INT64_MIN : INT64_MAX;
  }
  if (v < min || (past && v < 0)) {
    return "needs an integer >= " + std::to_string(min) + ", got " + s;
  }
  if (v > max || past) return "needs an integer <= " + std::to_string(max) + ", got " + s;
  return {};
}

// For an option held in an int, `max` is INT_MAX.
CLI::Validator integer_at_least(int64_t min, int64_t max = INT64_MAX) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string { return integer_problem(s, min, max); }, "");
}

// `min` is a bound the value may equal, unless `strict`.
CLI::Validator number_from(double min, bool strict, const std::string& bound) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0') return "needs a number, got '" + s + "'";
        // strtod takes "inf" and "nan": --duration inf would time runs for ever.
        if (!std::isfinite(v)) return "needs a finite number, got " + s;
        if (strict ? !(v > min) : !(v >= min)) return "needs a number " + bound + ", got " + s;
        return {};
      },
      "");
}

std::pair<std::string, std::string> name_value(const std::string& flag, const std::string& v) {
  const auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw CLI::ValidationError(flag, "needs NAME=VALUE, got '" + v + "'");
  }
  return {v.substr(0, eq), v.substr(eq + 1)};
}

Shape parse_shape(const std::string& flag, const std::string& text) {
  Shape s;
  if (text.empty()) return s;  // a scalar
  for (size_t start = 0;;) {
    const size_t x = text.find('x', start);
    const std::string d = text.substr(start, x - start);
    int64_t v = 0;
    if (!parse_integer(d, &v) || v < 0) {
      throw CLI::ValidationError(
          flag, "dimension '" + d + "' in '" + text + "' is not a non-negative integer");
    }
    s.push_back(v);
    if (x == std::string::npos) return s;
    start = x + 1;
  }
}

// A repeatable NAME=VALUE option: each occurrence takes one argument (so a model path after it
// stays the positional argument), and `take` sees every occurrence in order.
CLI::Option* name_value_option(CLI::App& app, const std::string& flag,
                               std::function<void(std::string, std::string)> take,
                               const std::string& type, const std::string& help) {
  auto* o = app.add_option_function<std::vector<std::string>>(
      flag,
      [flag, take](const std::vector<std::string>& all) {
        for (const std::string& v : all) {
          auto [name, value] = name_value(flag, v);
          take(std::move(name), std::move(value));
        }
      },
      help);
  return o->type_name(type)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
}

// Flags and values that only set a SessionOptions setting: adding one is a single call.
void session_flag(CLI::App& app, Args& a, const std::string& flag,
                  SessionOptions& (SessionOptions::*set)(bool), bool value,
                  const std::string& help) {
  app.add_flag_callback(
      flag, [&a, set, value] { (a.session.*set)(value); }, help);
}

template <class T>
CLI::Option* session_value(CLI::App& app, Args& a, const std::string& flag,
                           SessionOptions& (SessionOptions::*set)(T), const std::string& help) {
  using V = std::decay_t<T>;
  return app.add_option_function<V>(
      flag, [&a, set](const V& v) { (a.session.*set)(v); }, help);
}

void add_mode_options(CLI::App& app, Args& a) {
  app.add_option("target", a.target, "MODEL.onnx or a backend-test folder")->type_name("");
  app.add_option("--suite", a.suite_root, "run every backend-test folder under ROOT")
      ->type_name("ROOT");
  app.add_option("--expect-fail", a.expect_fail,
                 "with --suite: tests expected to fail, a name a line")
      ->type_name("FILE");
  app.add_flag("--list-providers", a.list_providers,
               "the providers of this build and whether each can run here");
  app.add_flag("--explain", a.explain,
               "print which provider runs each node, and why others declined");
  app.add_flag("--tune", a.tune,
               "fill the tuning cache: run MODEL once on random inputs (--shape, --dim) with\n"
               "timing on, and print what was recorded");
  session_flag(app, a, "--plan-only", &SessionOptions::plan_only, true,
               "assign nodes as a machine with every device would; run nothing\n"
               "(with --json: inputs, outputs and the assignment as JSON)");
}

void add_input_options(CLI::App& app, Args& a) {
  name_value_option(
      app, "--input", [&a](std::string n, std::string f) { a.inputs.emplace_back(n, f); },
      "NAME=FILE", "an input from a .npy or .pb (TensorProto) file; repeatable");
  app.add_flag("--random-inputs", a.random_inputs, "random data for every input not given");
  name_value_option(
      app, "--shape",
      [&a](std::string n, std::string v) { a.shapes[n] = parse_shape("--shape " + n, v); },
      "INPUT=AxBxC", "a random input's shape (INPUT names a model input); repeatable");
  name_value_option(
      app, "--dim",
      [&a](std::string n, std::string v) {
        const std::string problem = integer_problem(v, 0, INT64_MAX);
        if (!problem.empty()) throw CLI::ValidationError("--dim", n + ": " + problem);
        int64_t d = 0;
        parse_integer(v, &d);
        a.dims[n] = d;
      },
      "SYMBOL=N",
      "a symbolic dimension's size in every random input that uses\n"
      "it (default 1); repeatable");
  app.add_option("--seed", a.seed, "seed for --random-inputs")
      ->type_name("N")
      ->capture_default_str()
      ->check(integer_at_least(0));
  app.add_option("--output-dir", a.output_dir, "write each output as a .npy file in D")
      ->type_name("D");
  app.add_option("--outputs", a.run.outputs,
                 "only these outputs (comma-separated or repeated): the run\n"
                 "runs only the nodes they need")
      ->type_name("NAME,...")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  app.add_flag("--overwrite", a.overwrite, "with --output-dir: replace existing files");
  app.add_option("--rtol", a.tol.rtol, "relative tolerance for comparisons")
      ->type_name("X")
      ->capture_default_str()
      ->check(number_from(0, false, ">= 0"));
  app.add_option("--atol", a.tol.atol, "absolute tolerance for comparisons")
      ->type_name("X")
      ->capture_default_str()
      ->check(number_from(0, false, ">= 0"));
}

void add_perf_options(CLI::App& app, Args& a) {
  app.add_flag("--perf", a.perf, "time the run (see --warmup, --repeat, --concurrency)");
  app.add_flag("--json", a.json, "with --perf, --plan-only or --compare-fp32: print JSON");
  app.add_option("--warmup", a.warmup, "with --perf: untimed runs first (per thread)")
      ->type_name("N")
      ->capture_default_str()
      ->check(integer_at_least(0, INT_MAX));
  auto* repeat = app.add_option("--repeat", a.repeat, "with --perf: timed runs (per thread)")
                     ->type_name("N")
                     ->capture_default_str()
                     ->check(integer_at_least(1, INT_MAX));
  app.add_option("--concurrency", a.concurrency,
                 "threads that run the one session at once (implies --perf)")
      ->type_name("N")
      ->capture_default_str()
      ->check(integer_at_least(1, INT_MAX));
  app.add_option("--duration", a.duration_s,
                 "time runs for this long instead of --repeat runs (implies --perf)")
      ->type_name("SECONDS")
      ->check(number_from(0, true, "> 0"))
      ->excludes(repeat);
  app.add_flag("--by-op", a.by_op,
               "with --perf: the top nodes and every op type by total time\n"
               "over the timed runs (implies --perf)");
  session_value(app, a, "--profile", &SessionOptions::profile,
                "write a Chrome trace (Perfetto, chrome://tracing) of every\n"
                "run's nodes to FILE")
      ->type_name("FILE");
  app.add_flag("--device-io", a.device_io,
               "with --perf: inputs on cuda:0 before timing, outputs left there");
}

void add_session_options(CLI::App& app, Args& a) {
  app.add_option_function<std::string>(
         "--providers",
         [&a](const std::string& list) {
           std::vector<std::string> names;
           for (size_t start = 0; start <= list.size();) {
             const size_t comma = std::min(list.find(',', start), list.size());
             if (comma > start) names.push_back(list.substr(start, comma - start));
             start = comma + 1;
           }
           a.session.providers(names);
         },
         "provider priority (default: every available provider)")
      ->type_name("a,b,c");
  session_value(app, a, "--threads", &SessionOptions::threads,
                "intra-op threads for CPU providers (0: the provider's choice)")
      ->type_name("N")
      ->check(integer_at_least(0, INT_MAX));
  session_flag(app, a, "--no-optimize", &SessionOptions::optimize, false,
               "skip graph optimisations");
  session_flag(app, a, "--cuda-graphs", &SessionOptions::cuda_graphs, true,
               "record each input shape's run once and replay it (CUDA graphs)");
  session_flag(app, a, "--deterministic", &SessionOptions::deterministic, true,
               "choose implementations by a fixed rule, never by timing: bitwise-repeatable");
  session_value(app, a, "--random-seed", &SessionOptions::random_seed,
                "seed of the model's random operators (RandomNormal, Bernoulli,\n"
                "Dropout in training mode, ...): every run then draws the same values")
      ->type_name("N")
      ->check(integer_at_least(0));
  session_flag(app, a, "--no-strict-schema", &SessionOptions::strict_schema, false,
               "an attribute the operator's schema lacks is a warning, not an error");
  app.add_option_function<std::string>(
         "--tuning-cache", [&a](const std::string& v) { a.session.set("onednn.tuning_cache", v); },
         "where timed choices are kept (default $XDG_CACHE_HOME/recur/; off: none)")
      ->type_name("FILE|off");
  session_value(app, a, "--memory-limit", &SessionOptions::memory_limit,
                "host bytes one run may hold (0: the memory available at load)")
      ->type_name("BYTES")
      ->check(integer_at_least(0));
  app.add_option("--timeout", a.timeout_ms,
                 "end each run that takes longer than MS milliseconds (cancelled, exit 2)")
      ->type_name("MS")
      ->check(integer_at_least(0));
  app.add_option_function<int64_t>(
         "--max-loop-iterations",
         [&a](int64_t n) {
           if (n > 0) a.session.max_loop_iterations(n);  // 0 keeps the library's bound
         },
         "upper bound on Loop iterations")
      ->type_name("N")
      ->check(integer_at_least(0));
  name_value_option(
      app, "--set", [&a](std::string k, std::string v) { a.session.set(k, v); }, "KEY=VALUE",
      "a provider setting, e.g. cudnn.tf32=1; repeatable");
  app.add_option_function<std::string>(
         "--fusion",
         [&a](const std::string& v) {
           a.session.rnn_layer_fusion(v == "on"    ? SessionOptions::Fusion::kOn
                                      : v == "off" ? SessionOptions::Fusion::kOff
                                                   : SessionOptions::Fusion::kAuto);
         },
         "stacked RNN fusion (auto: only where a GPU provider runs it)")
      ->type_name("auto|on|off")
      ->default_str("auto")
      ->check(CLI::IsMember({"auto", "on", "off"}).description(""));
  app.add_option_function<std::string>(
         "--precision",
         [&a](const std::string& v) {
           a.session.cpu_precision(v == "bf16"   ? SessionOptions::Precision::kBf16
                                   : v == "int8" ? SessionOptions::Precision::kInt8
                                                 : SessionOptions::Precision::kFp32);
         },
         "CPU precision of the oneDNN RNNs (--explain tells which nodes took it)")
      ->type_name("fp32|bf16|int8")
      ->default_str("fp32")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}).description(""));
  app.add_flag("--compare-fp32", a.compare_fp32,
               "run the inputs at --precision and in fp32 too; print each output's max\n"
               "abs and rel error against fp32 (exit 1 past --rtol/--atol)");
}

}  // namespace

RunOptions run_options(const Args& a) {
  RunOptions ro = a.run;
  if (a.timeout_ms > 0) ro.timeout(std::chrono::milliseconds(a.timeout_ms));
  return ro;
}

void usage_error(const std::string& message) {
  std::cerr << "recur-run: " << message << " (see recur-run --help)\n";
  std::exit(kExitError);
}

Args parse_args(int argc, char** argv) {
  Args a;
  CLI::App app(kDescription, "recur-run");
  app.footer(kFooter);
  // As before CLI11: a single-valued option given twice keeps the last value.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(34);
  // Each group's options are added after its name is made the default.
  add_mode_options(app, a);
  app.option_defaults()->group("Inputs and outputs");
  add_input_options(app, a);
  app.option_defaults()->group("Timing");
  add_perf_options(app, a);
  app.option_defaults()->group("Session");
  add_session_options(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) std::exit(app.exit(e));
    usage_error(e.what());
  }
  // Asking for threads or a time only makes sense when timing: ignoring it would be silent.
  if (app.count("--concurrency") > 0 || app.count("--duration") > 0 || a.by_op) a.perf = true;
  if (a.compare_fp32 && a.perf) usage_error("--compare-fp32 does not time: drop --perf");
  // A reduced precision is judged by its agreed tolerance (docs/precision.md), against fp32
  // (--compare-fp32) or a folder's expected outputs, unless told otherwise.
  if (app.count("--rtol") == 0 && app.count("--atol") == 0)
    a.tol = precision_tolerance(a.session.cpu_precision());
  if (app.count("--profile") > 0 && a.session.profile_path().empty()) {
    usage_error("--profile needs a file name");
  }
  // --by-op reads the profile in memory; with no --profile nothing is written.
  if (a.by_op && !a.session.profiling()) a.session.profile("");
  return a;
}

}  // namespace recur::tools
