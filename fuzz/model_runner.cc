#include "fuzz/model_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "recur/recur.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "tools/common/testdir.h"

namespace recur::fuzz {

namespace {

// Larger inputs only make each execution slower and risk the harness's own memory: a model
// whose declared inputs need more is skipped, not run.
constexpr int64_t kMaxInputElements = 1 << 20;
// What a symbolic or unknown dimension is set to.
constexpr int64_t kSymbolicDim = 2;

// The inputs' contents come from the model bytes, so that a crash replays exactly.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) / static_cast<float>(1 << 24); }
};

uint64_t hash_bytes(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

template <class T>
void fill_as(Tensor& t, Rng& rng, bool small_ints) {
  T* p = static_cast<T*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) {
    // Integers stay in [0, 3]: they are often indices, axes or shapes, and a large one would
    // only be refused (or make a legitimately large tensor) without testing more.
    if (small_ints) {
      p[i] = static_cast<T>(rng.next() % 4);
    } else {
      p[i] = T(rng.uniform() * 4.0f - 2.0f);
    }
  }
}

void fill(Tensor& t, Rng& rng) {
  switch (t.dtype()) {
    case DType::kFloat32:
      return fill_as<float>(t, rng, false);
    case DType::kFloat64:
      return fill_as<double>(t, rng, false);
    case DType::kFloat16:
      return fill_as<Float16>(t, rng, false);
    case DType::kBFloat16:
      return fill_as<BFloat16>(t, rng, false);
    case DType::kFloat8E4M3FN:
      return fill_as<Float8E4M3FN>(t, rng, false);
    case DType::kFloat8E4M3FNUZ:
      return fill_as<Float8E4M3FNUZ>(t, rng, false);
    case DType::kFloat8E5M2:
      return fill_as<Float8E5M2>(t, rng, false);
    case DType::kFloat8E5M2FNUZ:
      return fill_as<Float8E5M2FNUZ>(t, rng, false);
    case DType::kFloat8E8M0:
      return fill_as<Float8E8M0>(t, rng, false);
    case DType::kFloat4E2M1:
      return fill_as<Float4E2M1>(t, rng, false);
    case DType::kInt8:
      return fill_as<int8_t>(t, rng, true);
    case DType::kInt16:
      return fill_as<int16_t>(t, rng, true);
    case DType::kInt32:
      return fill_as<int32_t>(t, rng, true);
    case DType::kInt64:
      return fill_as<int64_t>(t, rng, true);
    case DType::kUInt8:
      return fill_as<uint8_t>(t, rng, true);
    case DType::kUInt16:
      return fill_as<uint16_t>(t, rng, true);
    case DType::kUInt32:
      return fill_as<uint32_t>(t, rng, true);
    case DType::kUInt64:
      return fill_as<uint64_t>(t, rng, true);
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kUInt2:
      return fill_as<uint8_t>(t, rng, true);
    case DType::kInt2: {  // sign-extended, in [-2, 1]
      auto* p = static_cast<int8_t*>(t.raw_data());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<int8_t>(rng.next() % 4) - 2;
      return;
    }
    case DType::kBool: {
      auto* p = static_cast<uint8_t*>(t.raw_data());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = rng.next() & 1;
      return;
    }
    case DType::kString: {
      auto* p = static_cast<std::string*>(t.raw_data());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::string(rng.next() % 3, 'a');
      return;
    }
    default:
      return;
  }
}

// Shape of a declared input, symbolic and unknown dimensions set small.
Shape shape_of(const ValueInfo& in) {
  if (!in.shape) return {kSymbolicDim};
  Shape s;
  for (const Dim& d : *in.shape) s.push_back(d.is_fixed() ? d.value : kSymbolicDim);
  return s;
}

// A tensor of `dtype` and `shape`; nullopt when it would be too large or the type cannot be
// made here (the model is then skipped).
std::optional<Tensor> make_tensor(DType dtype, const Shape& shape, int64_t* budget, Rng& rng) {
  if (dtype == DType::kUndefined || dtype == DType::kSequence || dtype == DType::kNone ||
      dtype == DType::kMap) {
    return std::nullopt;
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > *budget / d)) return std::nullopt;
    n *= d;
  }
  if (n > *budget) return std::nullopt;
  *budget -= n;
  Tensor t = Tensor::empty(dtype, shape);
  fill(t, rng);
  return t;
}

std::optional<Tensor> make_input(const ValueInfo& in, int64_t* budget, Rng& rng) {
  if (in.optional && rng.next() % 4 == 0) return Tensor::none();
  if (in.dtype == DType::kSequence) {
    std::vector<Tensor> elems;
    const int64_t count = static_cast<int64_t>(rng.next() % 3);
    for (int64_t i = 0; i < count; ++i) {
      auto e = make_tensor(in.element_dtype, {kSymbolicDim}, budget, rng);
      if (!e) return std::nullopt;
      elems.push_back(*e);
    }
    return Tensor::sequence(std::move(elems), in.element_dtype);
  }
  if (in.dtype == DType::kMap) {
    // Up to 3 distinct keys; their values random.
    const int64_t count = static_cast<int64_t>(rng.next() % 4);
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    for (int64_t i = 0; i < count; ++i) {
      ints.push_back(i * 3 + static_cast<int64_t>(rng.next() % 3) - 2);
      strings.push_back(std::string(1, static_cast<char>('a' + i)));
    }
    auto values = make_tensor(in.map_value_dtype, {count}, budget, rng);
    if (!values || (in.map_key_dtype != DType::kInt64 && in.map_key_dtype != DType::kString)) {
      return std::nullopt;
    }
    return Tensor::map(in.map_key_dtype == DType::kInt64
                           ? Tensor::from_vector<int64_t>({count}, ints)
                           : Tensor::from_vector<std::string>({count}, strings),
                       *values);
  }
  return make_tensor(in.dtype, shape_of(in), budget, rng);
}

std::vector<std::string> provider_list(const char* env, const char* fallback) {
  std::vector<std::string> names;
  std::stringstream list(env ? env : fallback);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  return names;
}

// How a harness session is made: the fuzzed one, or the second session of a comparison
// (RECUR_FUZZ_COMPARE: its providers, then the reference provider; "no-optimize" loads the
// graph as it is).
struct Variant {
  std::vector<std::string> providers;
  bool optimize = true;
  int threads = 1;
};

SessionOptions options_for(const Variant& v) {
  SessionOptions options;
  // The fuzzers run with a 2 GiB malloc and RSS limit (tools/fuzz.sh): a model that asks for
  // more than 1 GiB at run time (a ConstantOfShape of 8 GiB) must meet the library's own
  // budget, which refuses it with an error, not the fuzzer's, which calls it a crash.
  // A fixed seed: a model's random operators must draw the same values when a crash replays,
  // and in both sessions of a comparison.
  options.providers(v.providers).threads(v.threads).max_loop_iterations(64);
  options.memory_limit(uint64_t{1} << 30).random_seed(0).optimize(v.optimize);
  return options;
}

Session load(const uint8_t* data, size_t size, const Variant& v) {
  // A folder that does not exist: external data in a fuzzed model must be refused, never read
  // from wherever the fuzzer runs.
  return Session::from_bytes(data, size, options_for(v), "/nonexistent/recur-fuzz-model-dir");
}

// Whether every float weight of the model's main graph is finite and at most kComparableMagnitude
// in size. The RNN mutator writes 3.4e38 and infinities into weights; sums of such terms
// overflow or cancel, and then the order of the sums, which is each provider's own, decides
// the result. Weights of other float types (float16, bfloat16) are not compared either.
constexpr double kComparableMagnitude = 1e3;

template <class T>
bool moderate(const Tensor& t) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!(std::fabs(p[i]) <= kComparableMagnitude)) return false;
  return true;
}

bool moderate(const onnx::TensorProto& proto) {
  auto t = tensor_from_proto(proto, nullptr, proto.name());
  if (!t.ok()) return false;
  switch (t->dtype()) {
    case DType::kFloat32:
      return moderate<float>(*t);
    case DType::kFloat64:
      return moderate<double>(*t);
    default:
      return !is_floating(t->dtype());
  }
}

// How closely the providers must agree on a model: nullopt where they need not (weights
// too large, above). Two fp32 implementations differ by rounding; random weights make sums that
// cancel, so the tolerance is absolute as well as relative, and a wrong gate order, direction
// or sequence length is off by far more. oneDNN runs DynamicQuantizeLSTM with its own int8
// scales (docs/precision.md: within 0.03 of ONNX Runtime on the test cases), and float16
// outputs round to 11 bits.
//
// A DynamicQuantizeLSTM's weights are int8 times their scales, so the magnitude bound is on
// the scales: at most kComparableInt8Scale (|weight| <= 2.5; the test cases' are near 0.006).
// The int8 error grows with the weights (a fuzzed R_scale of 950 left one output of 216 at
// -0.35 against -2.5e-5, where a huge sum cancelled to near 0).
constexpr double kComparableInt8Scale = 0.02;

// How closely two providers' outputs must agree on one model.
struct Agreement {
  tools::Tolerance tol;
  // The model rounds float results to integers (QuantizeLinear, the QLinear operators, ...):
  // where the exact value is a half step, two providers' float sums (in different orders) may
  // fall on either side of it, so its 8- and 16-bit outputs may differ by one step (a
  // QLinearReduceMean, oneDNN's ReduceMean against the reference's: 11 against 12).
  bool quantizes = false;
};

bool rounds_to_integers(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  return op == "QuantizeLinear" || op == "DynamicQuantizeLinear" || op == "QGemm" ||
         op.rfind("QLinear", 0) == 0;
}

std::optional<Agreement> comparison_tolerance(const uint8_t* data, size_t size) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) return std::nullopt;
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& init : model.graph().initializer()) {
    if (!moderate(init)) return std::nullopt;
    inits[init.name()] = &init;
  }
  // W_scale and R_scale of a DynamicQuantizeLSTM.
  auto small_scales = [&](const onnx::NodeProto& node) {
    for (const int i : {8, 10}) {
      if (i >= node.input_size() || !inits.count(node.input(i))) return false;
      auto t = tensor_from_proto(*inits[node.input(i)], nullptr, node.input(i));
      if (!t.ok() || t->dtype() != DType::kFloat32) return false;
      const std::span v(t->data<float>(), static_cast<size_t>(t->numel()));
      if (!std::all_of(v.begin(), v.end(),
                       [](float s) { return std::fabs(s) <= kComparableInt8Scale; }))
        return false;
    }
    return true;
  };
  bool int8 = false, quantizes = false;
  for (const auto& node : model.graph().node()) {
    quantizes = quantizes || rounds_to_integers(node);
    if (node.op_type() == "DynamicQuantizeLSTM") {
      if (!small_scales(node)) return std::nullopt;
      int8 = true;
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_t() && !moderate(attr.t())) return std::nullopt;
      if (attr.has_f() && !(std::fabs(attr.f()) <= kComparableMagnitude)) return std::nullopt;
      for (float f : attr.floats())
        if (!(std::fabs(f) <= kComparableMagnitude)) return std::nullopt;
    }
  }
  return Agreement{int8 ? tools::Tolerance{0.1, 0.1} : tools::Tolerance{1e-3, 1e-3}, quantizes};
}

// The largest |value| of a float32 tensor's finite elements (0 for other tensors).
double largest_finite(const Tensor& t) {
  if (t.dtype() != DType::kFloat32) return 0.0;
  double m = 0.0;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::isfinite(p[i])) m = std::max(m, static_cast<double>(std::fabs(p[i])));
  return m;
}

// Empty where `got` is `want` but for elements one apart (8- and 16-bit integers), else why not.
std::string one_step_apart(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return "dtype " + std::string(dtype_name(got.dtype())) + shape_to_string(got.shape()) +
           ", expected " + std::string(dtype_name(want.dtype())) + shape_to_string(want.shape());
  }
  const auto at = [](const Tensor& t, int64_t k) -> int64_t {
    switch (t.dtype()) {
      case DType::kInt8:
        return t.data<int8_t>()[k];
      case DType::kUInt8:
        return t.data<uint8_t>()[k];
      case DType::kInt16:
        return t.data<int16_t>()[k];
      default:
        return t.data<uint16_t>()[k];
    }
  };
  for (int64_t k = 0; k < want.numel(); ++k) {
    if (std::llabs(at(got, k) - at(want, k)) > 1) {
      return "element " + std::to_string(k) + " is " + std::to_string(at(got, k)) + ", expected " +
             std::to_string(at(want, k)) + " (more than one step)";
    }
  }
  return "";
}

[[noreturn]] void report_difference(const std::string& what) {
  std::fprintf(stderr, "recur-fuzz: the providers disagree: %s\n", what.c_str());
  std::abort();
}

// Outputs larger than this are not compared: comparing converts every element to double, and a
// 500M-element float8 output (within the 1 GiB limit) took 6 s of a 20 s timeout.
constexpr int64_t kMaxComparedElements = int64_t{1} << 22;

int64_t elements_in(const Tensor& t) {
  if (t.is_sequence()) {
    int64_t n = 0;
    for (const Tensor& e : t.elements()) n += elements_in(e);
    return n;
  }
  if (t.is_map()) return t.map_keys().numel();
  return t.is_tensor() ? t.numel() : 0;
}

// How many models a comparison ran on both sides, printed at exit: most fuzzed models are
// refused at load, and a comparison that never compares proves nothing.
struct CompareCounts {
  int64_t models = 0;
  int64_t outputs = 0;
  int64_t nonfinite = 0;  // outputs skipped for a NaN or infinity
  int64_t large = 0;      // outputs skipped for their size
  ~CompareCounts() {
    if (models > 0 || outputs > 0)
      std::fprintf(
          stderr,
          "recur-fuzz: compared %lld models, %lld outputs (skipped: %lld for a NaN or infinity, "
          "%lld for their size)\n",
          static_cast<long long>(models), static_cast<long long>(outputs),
          static_cast<long long>(nonfinite), static_cast<long long>(large));
  }
};
CompareCounts compare_counts;

// The second session of a comparison must give what the first gave: the same outputs, within
// the tolerance two fp32 implementations need, or the same refusal. An error the first run did
// not have counts too, except for running out of memory, which the two providers reach at
// different sizes. Half of the time the second run asks for some of the outputs only, which
// runs only the nodes they need: those outputs must not change.
void compare_with(const Variant& variant, const uint8_t* data, size_t size, const Feeds& feeds,
                  const Outputs& want, const Agreement& agreement) {
  const tools::Tolerance& tol = agreement.tol;
  std::vector<size_t> picked;  // got[j] is want[picked[j]]
  RunOptions options;
  std::string asked;
  Rng rng{hash_bytes(data, size) ^ 0x9E3779B97F4A7C15ull};
  if (want.size() > 1 && rng.next() % 2) {
    for (size_t i = 0; i < want.size(); ++i)
      if (rng.next() % 2) picked.push_back(i);
    if (picked.empty()) picked.push_back(rng.next() % want.size());
    for (size_t i : picked) options.outputs.push_back(want.name(i));
    asked = " (the second run asked for " + std::to_string(picked.size()) + " of " +
            std::to_string(want.size()) + " outputs)";
  } else {
    for (size_t i = 0; i < want.size(); ++i) picked.push_back(i);
  }
  Outputs got;
  try {
    got = load(data, size, variant).run(feeds, options);
  } catch (const Error& e) {
    if (std::string_view(e.what()).find("memory limit") != std::string_view::npos) return;
    report_difference(std::string("the reference provider ran the model, but ") + e.what() + asked);
  }
  if (got.size() != picked.size()) report_difference("a different number of outputs");
  ++compare_counts.models;
  const tools::Tolerance half_tol{std::max(tol.rtol, 2e-2), std::max(tol.atol, 2e-2)};
  for (size_t j = 0; j < picked.size(); ++j) {
    const size_t i = picked[j];
    if (elements_in(want[i]) > kMaxComparedElements) {
      ++compare_counts.large;
      continue;
    }
    const DType d = want[i].dtype();
    const bool half = d == DType::kFloat16 || d == DType::kBFloat16;
    tools::Tolerance t = half ? half_tol : tol;
    // Float32 sums carry rounding in proportion to their terms, not to their result: where an
    // output spans a wide range (a Relu RNN whose fuzzed R of 148 grew h to 2e4 over nine
    // steps), an element near 0 beside it is off by a few float32 steps of that range
    // (0.205 against 0.203 in such an h_n, 1e-7 of its largest value). The absolute tolerance
    // covers 100 steps of the output's largest finite value.
    if (d == DType::kFloat32) t.atol = std::max(t.atol, 1e-5 * largest_finite(want[i]));
    const bool small_int =
        d == DType::kInt8 || d == DType::kUInt8 || d == DType::kInt16 || d == DType::kUInt16;
    if (agreement.quantizes && small_int) {
      // tools::compare takes integers exactly.
      ++compare_counts.outputs;
      const std::string why = one_step_apart(got[j], want[i]);
      if (!why.empty()) report_difference("output " + want.name(i) + ": " + why + asked);
      continue;
    }
    const tools::Comparison c = tools::compare(got[j], want[i], t);
    // NaN and infinity come from weights near the float limits; how they spread depends on
    // each provider's order of sums and its activations (0 * inf after a sigmoid that gives 0
    // in one and a denormal in the other), so an output where either side has one is not
    // compared.
    if (c.nonfinite > 0) {
      ++compare_counts.nonfinite;
      continue;
    }
    ++compare_counts.outputs;
    if (!c.match) report_difference("output " + want.name(i) + ": " + c.reason + asked);
  }
}

}  // namespace

void run_model_bytes(const uint8_t* data, size_t size) {
  // The reference provider alone by default, so that a replay behaves the same in every build
  // (the gcc build has oneDNN and CUDA, the fuzz build does not). RECUR_FUZZ_PROVIDERS
  // ("onednn,reference") fuzzes others. RECUR_FUZZ_COMPARE runs each model on the reference
  // provider and again on a variant, and compares: "onednn" (the oneDNN provider first),
  // "no-optimize" (the graph as loaded, no rewrites), or both (docs/fuzzing.md).
  static const Variant kFuzzed{provider_list(std::getenv("RECUR_FUZZ_PROVIDERS"), "reference")};
  static const char* const kCompare = std::getenv("RECUR_FUZZ_COMPARE");
  static const Variant kCompared = [] {
    Variant v;
    for (std::string& name : provider_list(kCompare, "")) {
      if (name == "no-optimize") {
        v.optimize = false;
      } else {
        v.providers.push_back(std::move(name));
      }
    }
    v.providers.push_back("reference");  // for the nodes the compared provider does not take
    // Two threads: the oneDNN provider splits batches and directions over its job pool then,
    // which is the path a user's session with the default thread count takes.
    v.threads = 2;
    return v;
  }();
  Feeds feeds;
  Outputs outputs;
  try {
    const Session session = load(data, size, kCompare ? Variant{{"reference"}} : kFuzzed);
    Rng rng{hash_bytes(data, size)};
    int64_t budget = kMaxInputElements;
    for (const ValueInfo& in : session.inputs()) {
      // An input with an initializer behind it is left out half of the time, so that both the
      // default and a fed value are tried.
      if (in.has_default && rng.next() % 2 == 0) continue;
      auto t = make_input(in, &budget, rng);
      if (!t) return;
      feeds.emplace_back(in.name, *t);
    }
    outputs = session.run(feeds);
  } catch (const Error&) {
    // A refusal: the library did its job.
    return;
  }
  if (!kCompare) return;
  if (const auto agreement = comparison_tolerance(data, size))
    compare_with(kCompared, data, size, feeds, outputs, *agreement);
}

}  // namespace recur::fuzz
