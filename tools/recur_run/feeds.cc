#include "tools/recur_run/feeds.h"

#include <random>
#include <set>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "runtime/core/memory_budget.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "tools/common/npy.h"

namespace recur::tools {

namespace {

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

std::set<std::string> symbols_of(const Session& s) {
  std::set<std::string> out;
  for (const auto& in : s.inputs()) {
    if (!in.shape) continue;
    for (const Dim& d : *in.shape)
      if (!d.is_fixed() && !d.symbol.empty()) out.insert(d.symbol);
  }
  return out;
}

// A name that matches nothing used to be ignored silently, leaving the user with shapes they
// did not ask for.
void check_names(const Session& s, const Args& a) {
  std::set<std::string> inputs;
  for (const auto& in : s.inputs()) inputs.insert(in.name);
  for (const auto& [name, shape] : a.shapes) {
    if (!inputs.count(name)) {
      throw Error(ErrorCode::kInvalidArgument, "--shape " + name + ": the model has no input '" +
                                                   name + "'; its inputs: " + joined(inputs));
    }
  }
  const std::set<std::string> symbols = symbols_of(s);
  for (const auto& [name, value] : a.dims) {
    if (!symbols.count(name)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--dim " + name + ": no input has a symbolic dimension '" + name +
                      "'; the model's symbolic dimensions: " + joined(symbols));
    }
  }
}

// Random data is refused past the memory a run may hold (--memory-limit, else the memory free
// on the machine): a --dim of 10^11 is a mistake to report, not an allocation to attempt.
void check_random_size(DType dtype, const Shape& shape, const Args& a) {
  const int64_t n = shape_numel(shape);
  size_t bytes = 0;
  // A shape whose size overflows is the tensor code's to report ("too large").
  if (n < 0 || n == INT64_MAX ||
      __builtin_mul_overflow(static_cast<size_t>(n), dtype_size(dtype), &bytes)) {
    return;
  }
  const uint64_t limit =
      a.session.memory_limit() ? a.session.memory_limit() : available_host_memory();
  if (bytes > limit) {
    throw Error(ErrorCode::kOutOfRange,
                "random data of shape " + shape_to_string(shape) + " would take " +
                    std::to_string(bytes) + " bytes, more than the " + std::to_string(limit) +
                    " a run may hold (--memory-limit, else the memory free on this machine)");
  }
}

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

// Three entries, keys 0, 1, 2 (or "0", "1", "2"): a map's keys are the model's vocabulary, which
// no declared type tells, so these only show that the model runs.
Tensor random_map(const ValueInfo& in, std::mt19937_64& rng) {
  if (in.map_key_dtype != DType::kInt64 && in.map_key_dtype != DType::kString) {
    throw Error(ErrorCode::kNotImplemented, "cannot make a random map of this type");
  }
  Tensor keys = in.map_key_dtype == DType::kInt64
                    ? Tensor::from_vector<int64_t>({3}, {0, 1, 2})
                    : Tensor::from_vector<std::string>({3}, {"0", "1", "2"});
  Tensor values = in.map_value_dtype == DType::kString
                      ? Tensor::from_vector<std::string>({3}, {"0", "1", "2"})
                      : random_tensor(in.map_value_dtype, {3}, rng);
  return Tensor::map(std::move(keys), std::move(values));
}

// --shape wins; else fixed dimensions as declared, symbolic ones from --dim, the rest 1.
Shape random_shape(const ValueInfo& in, const Args& a) {
  auto it = a.shapes.find(in.name);
  if (it != a.shapes.end()) return it->second;
  if (!in.shape) {
    throw Error(ErrorCode::kInvalidArgument,
                "input '" + in.name + "' has an unknown rank: give --shape " + in.name + "=AxB");
  }
  Shape shape;
  for (const Dim& d : *in.shape) {
    auto dim = a.dims.find(d.symbol);
    shape.push_back(d.is_fixed() ? d.value : dim != a.dims.end() ? dim->second : 1);
  }
  return shape;
}

}  // namespace

Feeds model_feeds(const Session& s, const Args& a) {
  check_names(s, a);
  Feeds feeds;
  std::set<std::string> given;
  for (const auto& [name, file] : a.inputs) {
    // A map or a sequence has no .npy form: its file is the ONNX message for its type.
    const ValueInfo* info = nullptr;
    for (const auto& in : s.inputs())
      if (in.name == name) info = &in;
    const bool npy = file.size() >= 4 && file.compare(file.size() - 4, 4, ".npy") == 0;
    auto t = info && !npy && info->dtype == DType::kMap        ? read_map_pb(file)
             : info && !npy && info->dtype == DType::kSequence ? read_sequence_pb(file)
                                                               : read_tensor_file(file);
    if (!t.ok()) {
      const std::string kind = info && !npy && info->dtype == DType::kMap        ? "a MapProto"
                               : info && !npy && info->dtype == DType::kSequence ? "a SequenceProto"
                                                                                 : "";
      throw Error(t.status().code(),
                  "--input " + name + ": " +
                      (kind.empty() ? "" : "the input is read from " + kind + ": ") +
                      t.status().message());
    }
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
    try {
      if (in.dtype == DType::kMap) {
        feeds.emplace_back(in.name, random_map(in, rng));
      } else {
        const Shape shape = random_shape(in, a);
        check_random_size(in.dtype, shape, a);
        feeds.emplace_back(in.name, random_tensor(in.dtype, shape, rng));
      }
    } catch (const Error& e) {
      // A bad --shape (negative, too large) is reported by the tensor code, which does not know
      // which input it was building.
      throw Error(e.code(), "input '" + in.name + "': " + e.what());
    }
  }
  return feeds;
}

}  // namespace recur::tools
