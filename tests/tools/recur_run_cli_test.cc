// recur-run's command line (issue 17) and its output files (issue 16): --opt=value, the
// generated help, one-line argument errors, --dim and --shape names, --concurrency and
// --duration with --perf, --outputs, and --output-dir's escaping, symlink and overwrite rules.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "recur/recur.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "tests/support/fifo.h"
#include "tests/support/model_builder.h"
#include "tests/support/recur_run_cli.h"
#include "tools/common/npy.h"

namespace recur {
namespace {

using testing::floats;
using testing::make_test_dir;
using testing::ModelBuilder;
using testing::run_cli;
using testing::RunResult;
using testing::TempDir;
namespace fs = std::filesystem;

bool has(const RunResult& r, const std::string& s) { return r.output.find(s) != std::string::npos; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The JSON object recur-run printed (the one line that starts with '{').
nlohmann::json json_line(const RunResult& r) {
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '{') return nlohmann::json::parse(line);
  }
  ADD_FAILURE() << "no JSON in " << r.output;
  return {};
}

// y = Identity(x) with x [N, 4] and a second input z [T] (so two symbols to list).
std::string symbolic_model(const fs::path& dir) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {-1, 4}, {"N", ""});
  m.input("z", DType::kFloat32, {-1}, {"T"});
  m.output("y", DType::kFloat32);
  m.output("w", DType::kFloat32);
  m.node("Identity", {"x"}, {"y"});
  m.node("Identity", {"z"}, {"w"});
  return m.save(dir);
}

TEST(RecurRunCli, OptionEqualsValue) {
  TempDir dir;
  make_test_dir(dir.path() / "close", {2, 4, 6.01f});
  const std::string target = (dir.path() / "close").string();
  // 6 vs 6.01 fails at the default rtol 1e-3 and passes at 1e-2: the value after '=' counts.
  EXPECT_EQ(run_cli(target + " --providers=reference --threads=1").status, 1);
  RunResult r = run_cli(target + " --providers=reference --threads=1 --rtol=1e-2");
  EXPECT_EQ(r.status, 0) << r.output;
  // A repeatable NAME=VALUE option takes one argument, so the model may follow it.
  TempDir d2;
  const std::string model = symbolic_model(d2.path());
  RunResult after = run_cli("--random-inputs --dim=N=2 --dim T=5 " + model);
  EXPECT_EQ(after.status, 0) << after.output;
  EXPECT_TRUE(has(after, "y: float32[2,4]")) << after.output;
  EXPECT_TRUE(has(after, "w: float32[5]")) << after.output;
}

// --explain of a model alone answers and exits 0: it does not go on to a run that needs the
// inputs nobody gave. With inputs it still runs the model after the explanation.
TEST(RecurRunCli, ExplainAloneDoesNotRun) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path());
  RunResult alone = run_cli(model + " --explain --providers reference");
  EXPECT_EQ(alone.status, 0) << alone.output;
  EXPECT_TRUE(has(alone, "Identity")) << alone.output;
  EXPECT_FALSE(has(alone, "missing input")) << alone.output;
  RunResult ran = run_cli(model + " --explain --random-inputs --dim N=2 --dim T=5");
  EXPECT_EQ(ran.status, 0) << ran.output;
  EXPECT_TRUE(has(ran, "Identity")) << ran.output;
  EXPECT_TRUE(has(ran, "y: float32[2,4]")) << ran.output;
}

TEST(RecurRunCli, HelpListsEveryOption) {
  RunResult r = run_cli("--help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* opt : {"--suite",
                          "--expect-fail",
                          "--providers",
                          "--explain",
                          "--plan-only",
                          "--perf",
                          "--warmup",
                          "--repeat",
                          "--json",
                          "--threads",
                          "--rtol",
                          "--atol",
                          "--set",
                          "--seed",
                          "--no-optimize",
                          "--max-loop-iterations",
                          "--list-providers",
                          "--device-io",
                          "--cuda-graphs",
                          "--fusion",
                          "--input",
                          "--random-inputs",
                          "--shape",
                          "--output-dir",
                          "--outputs",
                          "--dim",
                          "--concurrency",
                          "--duration",
                          "--overwrite",
                          "Exit status"}) {
    EXPECT_TRUE(has(r, opt)) << opt << " in " << r.output;
  }
  EXPECT_EQ(run_cli("-h").output, r.output);
}

TEST(RecurRunCli, ArgumentErrorsAreOneLineNamingTheOption) {
  for (const std::string args :
       {"--threads=abc m.onnx", "--repeat 0 m.onnx", "--fusion maybe m.onnx", "--bogus m.onnx",
        "--input x m.onnx", "--shape x=2xq m.onnx", "--dim N=-1 m.onnx"}) {
    RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    const std::string opt = args.substr(0, args.find_first_of(" ="));
    EXPECT_TRUE(has(r, opt)) << args << ": " << r.output;
    EXPECT_TRUE(has(r, "--help")) << args << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

// Each integer option says what it needs: a value past int64 set --dim to 0 and was taken as
// "no limit" by --timeout; a negative --memory-limit wrapped to a huge one; --threads past an
// int said only "Could not convert"; --duration inf timed runs for ever.
TEST(RecurRunCli, IntegerOptionsNameTheirRange) {
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--dim N=99999999999999999999", "needs an integer <= 9223372036854775807"},
           {"--dim N=abc", "needs an integer, got 'abc'"},
           {"--dim N=-", "needs an integer, got '-'"},
           {"--threads 99999999999", "needs an integer <= 2147483647"},
           {"--repeat 3000000000", "needs an integer <= 2147483647"},
           {"--timeout 99999999999999999999", "needs an integer <= 9223372036854775807"},
           {"--memory-limit -5", "needs an integer >= 0"},
           {"--memory-limit 1e9", "needs an integer, got '1e9'"},
           {"--random-seed abc", "needs an integer, got 'abc'"},
           {"--seed -1", "needs an integer >= 0"},
           {"--duration inf", "needs a finite number, got inf"},
           {"--rtol nan", "needs a finite number, got nan"}}) {
    RunResult r = run_cli(args + " m.onnx");
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_TRUE(has(r, says)) << args << ": " << r.output;
  }
  TempDir dir;
  RunResult plus = run_cli(symbolic_model(dir.path()) + " --random-inputs --dim N=+3");
  EXPECT_EQ(plus.status, 0) << plus.output;
  EXPECT_TRUE(has(plus, "y: float32[3,4]")) << plus.output;  // was [0,4]
}

TEST(RecurRunCli, DimSetsSymbolsAndUnknownNamesAreErrors) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path());
  RunResult r = run_cli(model + " --random-inputs --dim N=3");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "y: float32[3,4]")) << r.output;
  EXPECT_TRUE(has(r, "w: float32[1]")) << r.output;  // symbols not given stay 1

  RunResult unknown = run_cli(model + " --random-inputs --dim batch=4");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_TRUE(has(unknown, "--dim batch")) << unknown.output;
  EXPECT_TRUE(has(unknown, "symbolic dimensions: N, T")) << unknown.output;
}

TEST(RecurRunCli, ShapeNamesAModelInput) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path());
  RunResult r = run_cli(model + " --random-inputs --shape x=2x4 --shape z=7");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "y: float32[2,4]")) << r.output;
  EXPECT_TRUE(has(r, "w: float32[7]")) << r.output;

  // A symbol's name given to --shape was silently ignored before.
  RunResult unknown = run_cli(model + " --random-inputs --shape N=4");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_TRUE(has(unknown, "--shape N")) << unknown.output;
  EXPECT_TRUE(has(unknown, "its inputs: x, z")) << unknown.output;
}

TEST(RecurRunCli, InputShapeAndDimNeedAModelNotAFolder) {
  TempDir dir;
  make_test_dir(dir.path() / "t", {2, 4, 6});
  RunResult r = run_cli((dir.path() / "t").string() + " --shape x=3");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "need a MODEL.onnx")) << r.output;
}

TEST(RecurRunCli, ConcurrencyCountsEveryThreadsRuns) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path());
  RunResult r = run_cli(model +
                        " --random-inputs --threads=2 --dim N=4 --concurrency 4 --perf "
                        "--warmup 1 --repeat 3 --json --providers reference");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json j = json_line(r);
  EXPECT_EQ(j["runs"], 12);
  EXPECT_EQ(j["samples_ms"].size(), 12u);
  EXPECT_EQ(j["concurrency"], 4);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_TRUE(j["duration_s"].is_null());
  EXPECT_GT(j["wall_s"].get<double>(), 0.0);
  EXPECT_GT(j["throughput_per_s"].get<double>(), 0.0);
  for (const char* key : {"model", "providers", "assigned", "load_ms", "warmup"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"min", "p50", "p90", "p99", "mean"}) {
    EXPECT_TRUE(j["latency_ms"].contains(key)) << key;
  }

  // --concurrency implies --perf.
  RunResult text = run_cli(model + " --random-inputs --concurrency=2 --repeat 2");
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_TRUE(has(text, "over 4 runs")) << text.output;
  EXPECT_TRUE(has(text, "runs/s (2 threads")) << text.output;
}

// recur-bench reads the memory at load (issue 15): VmHWM and VmRSS right after the session
// is created, in KiB; the peak cannot be below the current size.
TEST(RecurRunCli, PerfJsonReportsTheMemoryAtLoad) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path());
  RunResult r = run_cli(model + " --random-inputs --dim N=2 --perf --warmup 0 --repeat 1 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json j = json_line(r);
  ASSERT_TRUE(j.contains("load_peak_rss_kib")) << r.output;
  ASSERT_TRUE(j.contains("load_rss_kib")) << r.output;
  const int64_t peak = j["load_peak_rss_kib"].get<int64_t>();
  const int64_t now = j["load_rss_kib"].get<int64_t>();
  // A process that has loaded libstdc++ and a model holds more than 1 MiB.
  EXPECT_GT(now, 1024);
  EXPECT_GE(peak, now);
}

TEST(RecurRunCli, DurationBoundsTheTimedPhase) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path());
  RunResult r = run_cli(model + " --random-inputs --perf --warmup 0 --duration 0.2 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json j = json_line(r);
  EXPECT_EQ(j["duration_s"], 0.2);
  // Runs start until the deadline has passed, so the phase lasts at least that long.
  EXPECT_GE(j["wall_s"].get<double>(), 0.2);
  EXPECT_GE(j["runs"].get<int>(), 1);
  EXPECT_EQ(j["runs"].get<size_t>(), j["samples_ms"].size());

  RunResult both = run_cli(model + " --random-inputs --perf --duration 1 --repeat 5");
  EXPECT_EQ(both.status, 2) << both.output;
  EXPECT_TRUE(has(both, "--duration")) << both.output;
}

// Outputs whose names differ only in bytes a file name cannot hold, or holds differently.
std::string awkward_names_model(const fs::path& dir) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("a/b", DType::kFloat32);
  m.output("a:b", DType::kFloat32);
  m.output("a_b", DType::kFloat32);
  m.output("a%2Fb", DType::kFloat32);
  m.node("Identity", {"x"}, {"a/b"});
  m.node("Neg", {"x"}, {"a:b"});
  m.node("Relu", {"x"}, {"a_b"});
  m.node("Abs", {"x"}, {"a%2Fb"});
  return m.save(dir);
}

TEST(RecurRunCli, OutputNamesAreEscapedWithoutCollisions) {
  TempDir dir;
  const std::string model = awkward_names_model(dir.path() / "m");
  const fs::path x = dir.path() / "x.pb";
  ASSERT_TRUE(write_tensor_pb(floats({2}, {-1, 2}), "x", x.string()).ok());
  const fs::path out = dir.path() / "out";
  RunResult r = run_cli(model + " --input x=" + x.string() + " --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(listing(out),
            (std::vector<std::string>{"a%252Fb.npy", "a%2Fb.npy", "a%3Ab.npy", "a_b.npy"}));
  const std::pair<const char*, std::vector<float>> want[] = {
      {"a%2Fb.npy", {-1, 2}}, {"a%3Ab.npy", {1, -2}}, {"a_b.npy", {0, 2}}, {"a%252Fb.npy", {1, 2}}};
  for (const auto& [file, values] : want) {
    auto t = tools::read_npy((out / file).string());
    ASSERT_TRUE(t.ok()) << file;
    EXPECT_EQ(t->data<float>()[0], values[0]) << file;
    EXPECT_EQ(t->data<float>()[1], values[1]) << file;
  }
}

// A string input given as numpy's 'U' .npy and a string output written back as one: what a
// classifier with string labels needs.
TEST(RecurRunCli, OutputsSelectsWhatIsPrintedAndWritten) {
  TempDir dir;
  const std::string model = awkward_names_model(dir.path() / "m");
  const fs::path out = dir.path() / "out";
  RunResult r = run_cli(model + " --random-inputs --outputs a_b --outputs a:b,a%2Fb --output-dir " +
                        out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(has(r, "a/b:")) << r.output;
  EXPECT_EQ(listing(out), (std::vector<std::string>{"a%252Fb.npy", "a%3Ab.npy", "a_b.npy"}));
  RunResult unknown = run_cli(model + " --random-inputs --outputs y");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_TRUE(has(unknown, "no output 'y'")) << unknown.output;
  make_test_dir(dir.path() / "t", {2, 4, 6});
  RunResult folder = run_cli((dir.path() / "t").string() + " --outputs y");
  EXPECT_EQ(folder.status, 2) << folder.output;
  EXPECT_TRUE(has(folder, "--outputs needs a MODEL.onnx or --perf")) << folder.output;
}

TEST(RecurRunCli, StringTensorsGoThroughNpy) {
  TempDir dir;
  ModelBuilder m;
  m.input("words", DType::kString, {2});
  m.output("same", DType::kString);
  m.node("Identity", {"words"}, {"same"});
  const std::string model = m.save(dir.path() / "m");
  Tensor words = Tensor::empty(DType::kString, {2});
  words.data<std::string>()[0] = "caf\xc3\xa9";
  words.data<std::string>()[1] = "";
  const fs::path in = dir.path() / "words.npy";
  ASSERT_TRUE(tools::write_npy(words, in.string()).ok());
  const fs::path out = dir.path() / "out";
  RunResult r = run_cli(model + " --input words=" + in.string() + " --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "string[2]  [\"caf\xc3\xa9\", \"\"]")) << r.output;
  auto back = tools::read_npy((out / "same.npy").string());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->data<std::string>()[0], "caf\xc3\xa9");
  EXPECT_EQ(back->data<std::string>()[1], "");
}

TEST(RecurRunCli, AnOutputListedTwiceIsAnErrorBeforeAnyWrite) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.output("y", DType::kFloat32);
  m.node("Relu", {"x"}, {"y"});
  const std::string model = m.save(dir.path());
  const fs::path out = dir.path() / "out";
  RunResult r = run_cli(model + " --random-inputs --output-dir " + out.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "would be written to 'y.npy'")) << r.output;
  EXPECT_FALSE(fs::exists(out) && !fs::is_empty(out)) << r.output;
}

TEST(RecurRunCli, ExistingFileNeedsOverwrite) {
  TempDir dir;
  make_test_dir(dir.path() / "t", {2, 4, 6});
  const std::string model = (dir.path() / "t" / "model.onnx").string();
  const fs::path out = dir.path() / "out";
  fs::create_directories(out);
  std::ofstream(out / "y.npy") << "old";
  RunResult r = run_cli(model + " --random-inputs --output-dir " + out.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, (out / "y.npy").string() + "' exists; pass --overwrite")) << r.output;
  EXPECT_EQ(slurp(out / "y.npy"), "old");

  RunResult over =
      run_cli(model + " --random-inputs --output-dir " + out.string() + " --overwrite");
  EXPECT_EQ(over.status, 0) << over.output;
  auto t = tools::read_npy((out / "y.npy").string());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->shape(), (Shape{3}));
  EXPECT_EQ(listing(out), std::vector<std::string>{"y.npy"});  // no temporary file left
}

TEST(RecurRunCli, SymlinksAreNeverFollowed) {
  TempDir dir;
  make_test_dir(dir.path() / "t", {2, 4, 6});
  const std::string model = (dir.path() / "t" / "model.onnx").string();
  const fs::path precious = dir.path() / "precious.txt";
  std::ofstream(precious) << "keep me";
  const fs::path out = dir.path() / "out";
  fs::create_directories(out);
  fs::create_symlink(precious, out / "y.npy");
  for (const char* extra : {"", " --overwrite"}) {
    RunResult r = run_cli(model + " --random-inputs --output-dir " + out.string() + extra);
    EXPECT_EQ(r.status, 2) << extra << ": " << r.output;
    EXPECT_TRUE(has(r, "symbolic link")) << r.output;
    EXPECT_EQ(slurp(precious), "keep me");
    EXPECT_TRUE(fs::is_symlink(out / "y.npy"));
  }
  // The directory itself a link: files would land wherever it points.
  const fs::path elsewhere = dir.path() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, dir.path() / "linked");
  RunResult linked =
      run_cli(model + " --random-inputs --output-dir " + (dir.path() / "linked").string());
  EXPECT_EQ(linked.status, 2) << linked.output;
  EXPECT_TRUE(has(linked, "is a symbolic link")) << linked.output;
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

// A write that fails midway (here: past the file-size limit, with SIGXFSZ ignored so write()
// returns EFBIG) must leave neither a partial output nor its temporary file.
TEST(RecurRunCli, AFailedWriteLeavesNoFile) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path() / "m");
  const fs::path out = dir.path() / "out";
  fs::create_directories(out);
  RunResult r = run_cli(model + " --random-inputs --dim N=100000 --output-dir " + out.string(),
                        "trap '' XFSZ; ulimit -f 8; ");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "cannot write '" + (out / "y.npy").string() + "'")) << r.output;
  EXPECT_EQ(listing(out), std::vector<std::string>{}) << r.output;
}

// A suite root may be a selection of another suite's tests, as links to their folders.
TEST(RecurRunCli, SuiteFollowsLinkedFolders) {
  TempDir dir;
  make_test_dir(dir.path() / "tests" / "a", {2, 4, 6});
  make_test_dir(dir.path() / "tests" / "b", {2, 4, 6});
  fs::create_directories(dir.path() / "picked");
  fs::create_directory_symlink(dir.path() / "tests" / "a", dir.path() / "picked" / "a");
  RunResult r = run_cli("--suite " + (dir.path() / "picked").string() + " --providers reference");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "1 passed, 0 failed")) << r.output;
}

TEST(RecurRunCli, AFifoAsInputFailsFast) {
  TempDir dir;
  const std::string model = symbolic_model(dir.path() / "m");
  const std::string fifo = (dir.path() / "x.npy").string();
  ASSERT_TRUE(testing::make_fifo(fifo));
  RunResult r;
  EXPECT_TRUE(testing::finishes_promptly(
      [&] { r = run_cli(model + " --random-inputs --input x=" + fifo); }, fifo));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "'" + fifo + "' is a FIFO")) << r.output;

  RunResult list;
  EXPECT_TRUE(testing::finishes_promptly(
      [&] { list = run_cli("--suite " + dir.path().string() + " --expect-fail " + fifo); }, fifo));
  EXPECT_EQ(list.status, 2) << list.output;
  EXPECT_TRUE(has(list, "is a FIFO")) << list.output;

  // A test folder's input_0.pb.
  const fs::path t = dir.path() / "t";
  make_test_dir(t, {2, 4, 6});
  const std::string pb = (t / "test_data_set_0" / "input_0.pb").string();
  fs::remove(pb);
  ASSERT_TRUE(testing::make_fifo(pb));
  RunResult folder;
  EXPECT_TRUE(testing::finishes_promptly([&] { folder = run_cli(t.string()); }, pb));
  EXPECT_EQ(folder.status, 2) << folder.output;
  EXPECT_TRUE(has(folder, "'" + pb + "' is a FIFO")) << folder.output;
}

}  // namespace
}  // namespace recur
