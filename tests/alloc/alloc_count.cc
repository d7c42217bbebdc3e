// Heap allocations in the steady state of a run (issue 13): after warm-up, the runs of every
// model in models/ and of tests/data/families/resnet_ocr (fed its first test data set again and
// again) make no allocation of recur's own, on either provider set and at 1 and 2 threads; the
// tensor buffers come from the run's arena, shapes live inside the tensors (recur::Shape), and the
// kernels keep what they need from run to run. What oneDNN allocates inside its own calls is held
// to a ceiling per model.
//
// What is counted: every call to malloc, calloc, realloc, memalign, aligned_alloc and
// posix_memalign (operator new and oneDNN's allocations go through them), on any thread
// (the calling thread, recur's job pool, OpenMP's team), from just before the session's runner
// starts to just after it returns (g_run_observer in runtime/engine/session/session_impl.h).
// So the run itself is counted: the executor, every kernel, the arena and the budget. What
// Session::run does around it is not: checking and placing the feeds, leasing the arena, and
// building the Outputs handed to the caller (their names and tensors, which the caller keeps).
//
// Whose an allocation is: oneDNN's when any frame of its call stack lies in libdnnl or in the
// OpenMP runtime (dladdr names the shared object of each frame), else recur's. recur is linked
// statically into this program, so its frames are the program's.
//
// This file is its own program (tests/CMakeLists.txt), not part of recur_unit_tests: it
// replaces the C allocator's entry points for the whole process.
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "recur/session.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/engine/session/session_impl.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_recur{0};        // allocations of recur's own
std::atomic<long> g_onednn{0};       // inside libdnnl or the OpenMP runtime
std::atomic<long> g_recur_bytes{0};  // the bytes of recur's own

// ALLOC_TRACE=1 prints where each counted allocation of at least ALLOC_TRACE_MIN bytes (0)
// comes from, to find them (addr2line -f -C -e recur_alloc_tests names the +0x offsets), and
// ALLOC_MODEL=name keeps only the models whose folder contains `name`. ALLOC_TRACE=recur
// prints only recur's own.
const char* const g_trace_env = std::getenv("ALLOC_TRACE");
const bool g_trace = g_trace_env != nullptr;
const bool g_trace_recur_only = g_trace && std::strcmp(g_trace_env, "recur") == 0;
const size_t g_trace_min =
    std::getenv("ALLOC_TRACE_MIN") ? std::strtoull(std::getenv("ALLOC_TRACE_MIN"), nullptr, 10) : 0;
thread_local bool t_in_hook = false;

bool in_onednn_or_openmp(void* const* frames, int n) {
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) == 0 || info.dli_fname == nullptr) continue;
    const char* base = std::strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (std::strncmp(base, "libdnnl", 7) == 0 || std::strncmp(base, "libgomp", 7) == 0 ||
        std::strncmp(base, "libiomp", 7) == 0 || std::strncmp(base, "libomp", 6) == 0)
      return true;
  }
  return false;
}

inline void note(size_t bytes) {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  // backtrace and dladdr may allocate themselves (not after the first call); those are not
  // the run's.
  if (t_in_hook) return;
  t_in_hook = true;
  void* frames[64];
  const int n = backtrace(frames, 64);
  const bool onednn = in_onednn_or_openmp(frames, n);
  (onednn ? g_onednn : g_recur).fetch_add(1, std::memory_order_relaxed);
  if (!onednn) g_recur_bytes.fetch_add(static_cast<long>(bytes), std::memory_order_relaxed);
  if (g_trace && bytes >= g_trace_min && !(g_trace_recur_only && onednn)) {
    char head[64];
    const int len = std::snprintf(head, sizeof head, "--- %zu bytes, %s\n", bytes,
                                  onednn ? "oneDNN's" : "recur's");
    if (write(2, head, static_cast<size_t>(len)) < 0) {
    }
    backtrace_symbols_fd(frames, n, 2);
  }
  t_in_hook = false;
}

// Loads what backtrace and dladdr need (libgcc's unwinder) before anything is counted.
[[maybe_unused]] const bool g_warm = [] {
  void* frames[4];
  Dl_info info;
  return backtrace(frames, 4) > 0 && dladdr(frames[0], &info) != 0;
}();

}  // namespace

extern "C" {
void* malloc(size_t n) {
  note(n);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  note(n * m);
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  note(n);
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  note(n);
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  note(n);
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, size_t a, size_t n) {
  note(n);
  *p = __libc_memalign(a, n);
  return *p ? 0 : 12;  // ENOMEM
}
}

namespace recur {
namespace {

std::atomic<long> g_faults_at_begin{0};
std::atomic<long> g_faults{0};  // minor page faults of the process during the run

long minor_faults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

void observe(bool begin) {
  if (begin) {
    g_faults_at_begin = minor_faults();
    g_counting.store(true, std::memory_order_relaxed);
  } else {
    g_counting.store(false, std::memory_order_relaxed);
    g_faults = minor_faults() - g_faults_at_begin;
  }
}

struct Count {
  long recur_max = 0;  // recur's own allocations: the most in any run
  long onednn = 0;     // oneDNN's and OpenMP's: the median run
  long faults = 0;     // minor page faults: the median run
  long faults_max = 0;
};

long median(std::vector<long> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Allocations per run of `dir`'s model on `providers` after warm-up, over 11 runs. recur's
// own are taken at their largest: none may happen in any run. oneDNN's at the median: with 2
// threads the OpenMP runtime now and then allocates while a run waits on its team.
Count count_model(const std::string& dir, const std::string& providers, int threads) {
  SessionOptions o;
  std::vector<std::string> names;
  for (size_t b = 0; b <= providers.size();) {
    const size_t e = std::min(providers.find(',', b), providers.size());
    names.push_back(providers.substr(b, e - b));
    b = e + 1;
  }
  o.providers(names);
  o.threads(threads);
  Session s(dir + "/model.onnx", o);
  Count c;
  auto sets = tools::read_data_sets(dir, &s);
  EXPECT_TRUE(sets.ok()) << sets.status().message();
  if (!sets.ok()) return c;
  auto feeds = tools::feeds_for(s, sets.value().front());
  EXPECT_TRUE(feeds.ok()) << feeds.status().message();
  for (int i = 0; i < 5; ++i) s.run(feeds.value());
  g_run_observer = observe;
  std::vector<long> onednn, faults;
  for (int i = 0; i < 11; ++i) {
    g_recur = 0;
    g_onednn = 0;
    s.run(feeds.value());
    c.recur_max = std::max(c.recur_max, g_recur.load());
    onednn.push_back(g_onednn.load());
    faults.push_back(g_faults.load());
    c.faults_max = std::max(c.faults_max, g_faults.load());
  }
  g_run_observer = nullptr;
  c.onednn = median(onednn);
  c.faults = median(faults);
  return c;
}

std::vector<std::string> model_dirs() {
  std::vector<std::string> out;
  const std::string root = std::string(RECUR_SOURCE_DIR) + "/models";
  if (DIR* d = opendir(root.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name[0] == '.') continue;
      const std::string dir = root + "/" + name;
      if (FILE* f = std::fopen((dir + "/model.onnx").c_str(), "rb")) {
        std::fclose(f);
        out.push_back(dir);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  // And a CNN whose chains of convolutions and pools run on channel-blocked tensors (none of
  // models/ has channel counts in whole blocks of 16).
  out.push_back(std::string(RECUR_SOURCE_DIR) + "/tests/data/families/resnet_ocr");
  return out;
}

// The hook itself: a run that allocates is seen, and an allocation from recur's code (this
// program's) is recur's. Fails if the counting or the classification does not work.
TEST(AllocCount, CountsAllocationsInsideTheRun) {
  g_recur = 0;
  g_onednn = 0;
  g_run_observer = observe;
  observe(true);
  void* volatile p = std::malloc(16);
  std::free(p);
  // What the run path used to do per tensor: a shape too long to live inside the Shape.
  Shape long_shape(Shape::inline_capacity + 1, 1);
  observe(false);
  g_run_observer = nullptr;
  EXPECT_EQ(g_recur.load(), 2);
  EXPECT_EQ(g_onednn.load(), 0);
}

// An allocation inside libdnnl is oneDNN's, not recur's: creating primitive attributes
// allocates them.
TEST(AllocCount, ClassifiesAllocationsInsideOnednnAsOnednns) {
  using Create = int (*)(void**);
  using Destroy = int (*)(void*);
  auto create = reinterpret_cast<Create>(dlsym(RTLD_DEFAULT, "dnnl_primitive_attr_create"));
  auto destroy = reinterpret_cast<Destroy>(dlsym(RTLD_DEFAULT, "dnnl_primitive_attr_destroy"));
  if (!create || !destroy) GTEST_SKIP() << "no libdnnl in this build";
  void* attr = nullptr;
  g_recur = 0;
  g_onednn = 0;
  observe(true);
  const int st = create(&attr);
  observe(false);
  ASSERT_EQ(st, 0);
  destroy(attr);
  EXPECT_GT(g_onednn.load(), 0);
  EXPECT_EQ(g_recur.load(), 0);
}

// A node's constant weights are repacked once per layout its primitives want, not once per
// input shape: a model fed sequences or images of a new length makes a new plan (primitive,
// buffers) per convolution, but its first run at that length allocates less than one copy of
// W. Before the plans shared their weights (WeightPacks, providers/onednn/nn/layout_prim.h)
// each held its own copy, and a 16 MB convolution stack grew by 20 MB with every new length.
// The warm-up runs take the longer length, so that the pools of buffers and scratchpads hold
// enough already and what is counted is the new plan's own. A 1-D convolution (brgemm on
// channels-last data) and a 3x3 one (Winograd's layout of W beside the direct primitive's).
TEST(AllocCount, ANewInputLengthRepacksNoWeights) {
  using testing::ModelBuilder;
  using testing::random_tensor;
  using testing::set_attr;
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  struct Case {
    std::vector<int64_t> x, w;  // X's dims with -1 for the length L, and W's
    int64_t first, next;        // L of the warm-up runs and of the counted run
  };
  for (const Case& k : {Case{{1, 512, -1}, {512, 512, 3}, 96, 64},
                        Case{{1, 256, 8, -1}, {256, 256, 3, 3}, 48, 32}}) {
    std::mt19937 rng(3);
    ModelBuilder mb(13);
    std::vector<std::string> symbols(k.x.size());
    symbols.back() = "L";
    mb.input("X", DType::kFloat32, k.x, symbols);
    Tensor w = random_tensor(Shape(k.w.begin(), k.w.end()), rng, 0.05f);
    const long w_bytes = static_cast<long>(w.nbytes());
    mb.initializer("W", w);
    mb.output("Y", DType::kFloat32);
    auto& n = mb.node("Conv", {"X", "W"}, {"Y"}, "conv");
    set_attr(n, "pads", std::vector<int64_t>(2 * (k.x.size() - 2), 1));
    const std::string bytes = mb.bytes();
    SessionOptions o;
    o.providers({"onednn"}).threads(1);
    Session s = Session::from_bytes(bytes.data(), bytes.size(), o);
    ASSERT_EQ(s.assignment()[0].provider, "onednn");
    auto feed = [&](int64_t L) {
      Shape shape(k.x.begin(), k.x.end());
      shape[shape.size() - 1] = L;
      Feeds f;
      f.emplace_back("X", random_tensor(shape, rng, 1.0f));
      return f;
    };
    const Feeds first = feed(k.first), next = feed(k.next);
    for (int i = 0; i < 2; ++i) s.run(first);
    g_recur_bytes = 0;
    g_run_observer = observe;
    s.run(next);
    g_run_observer = nullptr;
    const std::string what = "W " + shape_to_string(w.shape()) + ", length " +
                             std::to_string(k.first) + " then " + std::to_string(k.next);
    EXPECT_LT(g_recur_bytes.load(), w_bytes) << what << ": recur allocated " << g_recur_bytes.load()
                                             << " bytes at the new length, W is " << w_bytes;
  }
}

// A new number of rows through a MatMul + bias whose B [256, 1024] (1 MiB) also takes recur's
// small-product loop: products past the loop's bound use one B packed for oneDNN at the first
// of them, shared by every number of rows (each plan packed its own before: a Conformer's
// feed-forward layers held 0.9 GiB after 140 utterance lengths). The warm-up runs take more
// rows, so that the pools hold enough already; Y is at most 160 KiB.
TEST(AllocCount, ANewRowCountRepacksNoB) {
  using testing::ModelBuilder;
  using testing::random_tensor;
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  std::mt19937 rng(5);
  ModelBuilder mb(13);
  mb.input("X", DType::kFloat32, {1, -1, 256}, {"", "T"});
  Tensor b = random_tensor({256, 1024}, rng, 0.05f);
  const long b_bytes = static_cast<long>(b.nbytes());
  mb.initializer("B", b);
  mb.initializer("C", random_tensor({1024}, rng));
  mb.output("Y", DType::kFloat32);
  mb.node("MatMul", {"X", "B"}, {"P"});
  mb.node("Add", {"P", "C"}, {"Y"});
  const std::string bytes = mb.bytes();
  SessionOptions o;
  o.providers({"onednn"}).threads(1);
  Session s = Session::from_bytes(bytes.data(), bytes.size(), o);
  auto feed = [&](int64_t T) {
    Feeds f;
    f.emplace_back("X", random_tensor({1, T, 256}, rng, 1.0f));
    return f;
  };
  // 16 rows and more pass the loop's bound (4M multiply-adds); Y stays well under B.
  for (int i = 0; i < 2; ++i) s.run(feed(48));
  for (const int64_t T : {24, 32, 40, 20, 36}) {
    const Feeds next = feed(T);
    g_recur_bytes = 0;
    g_run_observer = observe;
    s.run(next);
    g_run_observer = nullptr;
    EXPECT_LT(g_recur_bytes.load(), b_bytes / 2)
        << T << " rows: recur allocated " << g_recur_bytes.load() << " bytes, B is " << b_bytes;
  }
}

class SteadyState : public ::testing::TestWithParam<const char*> {};

// The most oneDNN may allocate inside its own calls in a run of each model after warm-up
// (median of 11 runs, "onednn,reference", the same at 1 and 2 threads). What oneDNN 2.6 does
// there, behind its API whatever the caller passes:
//   - dnnl_primitive_execute copies the argument array into an exec_ctx_t whose arguments are
//     a std::unordered_map<int, memory_arg_t>: a heap node per argument and a bucket array, on
//     every call;
//   - the RNN primitives hand their per-step loops to parallel_nd / parallel as std::function
//     objects too large for std::function's inline storage (a heap block each, per call), and
//     their nested GEMMs and reorders build contexts of their own.
// recur passes its arguments as a flat array it keeps with the memory objects (no map, no
// vector of its own per call) and gives every primitive a user scratchpad from the kernel's
// pool, so oneDNN allocates no scratchpad per execute; calling fewer primitives per run is the
// only lever left. Measured with oneDNN 2.6 on an AVX-512 Xeon; another CPU may make oneDNN
// choose other implementations, with other counts. A change that makes a run call more
// primitives raises a count and fails here; lower a ceiling when a change removes some.
//
// recur itself allocates nothing per run, but for one kind of model: one that builds Sequence
// values in a Loop (greedy_seq2seq's decoder appends each step's token to a sequence). Each
// run makes its empty sequences anew, and SequenceInsert grows them in place (a vector that
// doubles, so log2(steps) allocations each); each Loop run holds its carried values, the
// iteration number and cond in objects of its own. Those counts are held here.
struct Ceiling {
  const char* model;
  long onednn;
  long recur = 0;
};
constexpr Ceiling kCeilings[] = {
    {"attention_lstm_classifier", 53},
    {"bigru_classifier", 53},
    {"bilstm_seqlens", 104},
    {"char_lstm_lm", 67},
    {"greedy_seq2seq", 84, 21},  // 7 iterations a run, 2 SequenceInserts each
    {"hifigan_vocoder", 114},    // 37 primitives a run (Conv, ConvTranspose, LeakyRelu, Tanh)
    {"crnn", 101},
    {"dynamic_lstm", 36},
    {"gru_basic", 17},
    {"lstm_basic", 19},
    {"lstm_streaming", 38},
    {"packed_bilstm_tagger", 121},
    {"relu_rnn_stack", 87},
    {"rnnoise_gru", 102},
    {"vad_streaming", 84},
    {"resnet_ocr", 82},  // 10 blocked convolutions, a BiLSTM, a MatMul (tests/data/families)
};

TEST_P(SteadyState, RecurAllocatesNothingPerRunAfterWarmUp) {
  const std::string providers = GetParam();
  const bool reference = providers == "reference";
  // The ceilings hold the oneDNN provider on AVX-512, where recur's own loops run most small
  // operations. Without it more nodes run on oneDNN's primitives and the reference (an AVX2 Zen
  // 3: 1-29 of recur's allocations a run, 3 more of oneDNN's), which these do not bound.
  if (!reference && !cpu::has(cpu::Feature::kAvx512))
    GTEST_SKIP() << "the oneDNN ceilings are AVX-512's: " << cpu::why_not(cpu::Feature::kAvx512);
  int checked = 0;
  for (const std::string& dir : model_dirs()) {
    if (std::getenv("ALLOC_MODEL") && dir.find(std::getenv("ALLOC_MODEL")) == std::string::npos)
      continue;
    const std::string name = dir.substr(dir.rfind('/') + 1);
    const Ceiling* ceiling = nullptr;
    for (const Ceiling& c : kCeilings)
      if (name == c.model) ceiling = &c;
    for (int threads : {1, 2}) {
      const Count c = count_model(dir, providers, threads);
      std::printf(
          "%-28s %-18s threads %d: recur %ld (most), oneDNN %ld (median) allocations per run; "
          "%ld minor page faults (median, most %ld)\n",
          name.c_str(), providers.c_str(), threads, c.recur_max, c.onednn, c.faults, c.faults_max);
      ++checked;
      const std::string what =
          name + " on " + providers + " with " + std::to_string(threads) + " threads";
      EXPECT_LE(c.recur_max, ceiling ? ceiling->recur : 0)
          << what << ": ALLOC_TRACE=recur ALLOC_MODEL=" << name << " shows where";
      // Every page the run touches was touched by the warm-up runs: arenas, caches and kept
      // buffers stay mapped. (The median: a run now and then faults in a page of a helper
      // thread's stack or of the allocator's own.)
      EXPECT_EQ(c.faults, 0) << what;
      if (reference) {
        EXPECT_EQ(c.onednn, 0) << what;
      } else if (ceiling) {  // a model added since: its oneDNN count is printed, not held
        EXPECT_LE(c.onednn, ceiling->onednn) << what;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Providers, SteadyState,
                         ::testing::Values("onednn,reference", "reference"));

}  // namespace
}  // namespace recur
