#include "tools/common/testdir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "tools/common/summary.h"

namespace recur::tools {

namespace fs = std::filesystem;
using reference::visit_dtype;

namespace {

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> ||
                reference::is_float8_v<T> || reference::is_float4_v<T>) {
    return static_cast<double>(static_cast<float>(v));
  } else if constexpr (reference::is_int4_v<T> || reference::is_int2_v<T>) {
    return static_cast<double>(v.value);
  } else {
    return static_cast<double>(v);
  }
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Numeric suffix of "test_data_set_12" or "input_3.pb", for ordering.
int64_t index_of(const std::string& name) {
  int64_t v = 0;
  bool any = false;
  for (char c : name) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      any = true;
    } else if (any && c == '.') {
      break;
    }
  }
  return v;
}

// ONNX 1.12 wrote the data of its bfloat16 tests as uint16 tensors holding the same bits; such
// a tensor, where the model declares bfloat16, is read as bfloat16.
Tensor bfloat16_from_uint16(const Tensor& t, DType declared) {
  if (t.dtype() != DType::kUInt16 || declared != DType::kBFloat16) return t;
  Tensor owned = t.owner() ? t : t.clone();
  return Tensor::wrap(owned.owner(), owned.raw_data(), DType::kBFloat16, owned.shape());
}

DType declared_dtype(const std::vector<ValueInfo>& infos, const std::string& name) {
  for (const auto& vi : infos)
    if (vi.name == name) return vi.dtype;
  return DType::kUndefined;
}

}  // namespace

Tolerance precision_tolerance(SessionOptions::Precision p) {
  switch (p) {
    case SessionOptions::Precision::kBf16:
      // bf16 keeps 8 significant bits: each rounded operand errs by up to 2^-9, and an RNN
      // carries the error through its steps. atol covers the standard suite's LSTM/GRU cases
      // (largest: lstm_large, 0.047 on outputs of scale 1; docs/precision.md).
      return {2e-2, 5e-2};
    case SessionOptions::Precision::kInt8:
      // u8 activations and per-channel s8 weights: the unit tests' float LSTMs at int8 reach
      // 0.040 against fp32 (docs/precision.md, "Tolerances"), which atol 0.06 covers.
      return {5e-2, 6e-2};
    case SessionOptions::Precision::kFp32:
      break;
  }
  return {};
}

namespace {

// Maps match when they hold the same keys, in any order, with matching values.
Comparison compare_maps(const Tensor& got, const Tensor& want, const Tolerance& tol) {
  Comparison c;
  c.match = false;
  if (!got.is_map() || !want.is_map()) {
    c.reason = got.is_map() ? "a map, expected " + std::string(dtype_name(want.dtype()))
                            : "a " + std::string(dtype_name(got.dtype())) + ", expected a map";
    return c;
  }
  const Tensor& gk = got.map_keys();
  const Tensor& wk = want.map_keys();
  if (gk.dtype() != wk.dtype() || got.element_dtype() != want.element_dtype() ||
      gk.numel() != wk.numel()) {
    c.reason = "a map(" + std::string(dtype_name(gk.dtype())) + ", " +
               std::string(dtype_name(got.element_dtype())) + ") of " + std::to_string(gk.numel()) +
               " keys, expected a map(" + std::string(dtype_name(wk.dtype())) + ", " +
               std::string(dtype_name(want.element_dtype())) + ") of " + std::to_string(wk.numel());
    return c;
  }
  auto key_text = [](const Tensor& keys, int64_t i) {
    return keys.dtype() == DType::kString ? "'" + keys.data<std::string>()[i] + "'"
                                          : std::to_string(keys.data<int64_t>()[i]);
  };
  // Where each wanted key is in `got`: a map's keys are distinct, so a sort pairs them.
  std::map<std::string, int64_t> got_at;
  for (int64_t i = 0; i < gk.numel(); ++i) got_at[key_text(gk, i)] = i;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < wk.numel(); ++i) {
    const auto it = got_at.find(key_text(wk, i));
    if (it == got_at.end()) {
      c.reason = "the map has no key " + key_text(wk, i);
      return c;
    }
    order.push_back(it->second);
  }
  // The got values reordered as the wanted keys, then compared as tensors.
  const Tensor& gv = got.map_values();
  Tensor reordered = Tensor::empty(gv.dtype(), {gk.numel()});
  for (size_t i = 0; i < order.size(); ++i) {
    const auto from = static_cast<size_t>(order[i]);
    if (gv.dtype() == DType::kString) {
      reordered.data<std::string>()[i] = gv.data<std::string>()[from];
    } else {
      const size_t width = dtype_size(gv.dtype());
      std::memcpy(static_cast<char*>(reordered.raw_data()) + i * width,
                  static_cast<const char*>(gv.raw_data()) + from * width, width);
    }
  }
  Comparison v = compare(reordered, want.map_values(), tol);
  if (!v.match) v.reason = "map values: " + v.reason;
  return v;
}

}  // namespace

Comparison compare(const Tensor& got, const Tensor& want, const Tolerance& tol) {
  Comparison c;
  if (got.is_none() || want.is_none()) {
    c.match = got.is_none() && want.is_none();
    if (!c.match)
      c.reason = got.is_none() ? "an empty optional, expected a value"
                               : "a value, expected an empty optional";
    return c;
  }
  if (got.is_map() || want.is_map()) return compare_maps(got, want, tol);
  if (got.is_sequence() || want.is_sequence()) {
    if (!got.is_sequence() || !want.is_sequence()) {
      c.match = false;
      c.reason =
          got.is_sequence() ? "a sequence, expected a tensor" : "a tensor, expected a sequence";
      return c;
    }
    if (got.elements().size() != want.elements().size()) {
      c.match = false;
      c.reason = "a sequence of " + std::to_string(got.elements().size()) + " elements, expected " +
                 std::to_string(want.elements().size());
      return c;
    }
    for (size_t i = 0; i < want.elements().size(); ++i) {
      Comparison e = compare(got.elements()[i], want.elements()[i], tol);
      c.max_abs = std::max(c.max_abs, e.max_abs);
      c.max_rel = std::max(c.max_rel, e.max_rel);
      c.mismatches += e.mismatches;
      c.nonfinite += e.nonfinite;
      if (!e.match && c.match) {
        c.match = false;
        c.reason = "sequence element " + std::to_string(i) + ": " + e.reason;
      }
    }
    return c;
  }
  if (got.dtype() == DType::kString && want.dtype() == DType::kString) {
    if (got.shape() != want.shape()) {
      c.match = false;
      c.reason =
          "shape " + shape_to_string(got.shape()) + ", expected " + shape_to_string(want.shape());
      return c;
    }
    const auto* g = got.data<std::string>();
    const auto* w = want.data<std::string>();
    for (int64_t i = 0; i < want.numel(); ++i) {
      if (g[i] == w[i]) continue;
      if (c.mismatches++ == 0) {
        c.reason =
            "element " + std::to_string(i) + " is \"" + g[i] + "\", expected \"" + w[i] + "\"";
      }
    }
    c.match = c.mismatches == 0;
    return c;
  }
  if (got.dtype() != want.dtype()) {
    c.match = false;
    c.reason = "dtype " + std::string(dtype_name(got.dtype())) + ", expected " +
               std::string(dtype_name(want.dtype()));
    return c;
  }
  if (got.shape() != want.shape()) {
    c.match = false;
    c.reason =
        "shape " + shape_to_string(got.shape()) + ", expected " + shape_to_string(want.shape());
    return c;
  }
  const bool exact = !is_floating(want.dtype());
  // float8, float4 and the 4- and 2-bit integers compare exactly, as the float or integer they
  // stand for.
  const auto types = reference::kAllTypes + reference::kFloat8Types + reference::kInt4Types +
                     reference::kInt2Types + reference::kMxFloatTypes;
  const bool ok = visit_dtype(types, want.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = got.data<T>();
    const T* w = want.data<T>();
    for (int64_t i = 0; i < want.numel(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        // In their own type: a double holds only 53 bits, so 2^60 and 2^60 + 1 would be equal.
        if (g[i] == w[i]) continue;
        const double gv = as_double(g[i]), wv = as_double(w[i]);
        c.max_abs = std::max(c.max_abs, std::fabs(gv - wv));
        if (wv != 0) c.max_rel = std::max(c.max_rel, std::fabs(gv - wv) / std::fabs(wv));
        if (c.mismatches++ == 0) {
          c.reason = "element " + std::to_string(i) + " is " + std::to_string(+g[i]) +
                     ", expected " + std::to_string(+w[i]);
        }
        continue;
      }
      const double gv = as_double(g[i]), wv = as_double(w[i]);
      if (!std::isfinite(wv) || !std::isfinite(gv)) ++c.nonfinite;
      bool good;
      if (std::isnan(wv) || std::isnan(gv)) {
        good = std::isnan(wv) && std::isnan(gv);
      } else if (std::isinf(wv) || std::isinf(gv)) {
        good = gv == wv;
      } else {
        const double diff = std::fabs(gv - wv);
        c.max_abs = std::max(c.max_abs, diff);
        if (wv != 0) c.max_rel = std::max(c.max_rel, diff / std::fabs(wv));
        good = exact ? diff == 0 : diff <= tol.atol + tol.rtol * std::fabs(wv);
      }
      if (!good) {
        if (c.mismatches == 0) {
          c.reason = "element " + std::to_string(i) + " is " + fmt(gv) + ", expected " + fmt(wv);
        }
        ++c.mismatches;
      }
    }
  });
  if (!ok) {
    c.match = false;
    c.reason = "cannot compare dtype " + std::string(dtype_name(want.dtype()));
    return c;
  }
  c.match = c.mismatches == 0;
  if (!c.match) {
    c.reason = std::to_string(c.mismatches) + " of " + std::to_string(want.numel()) +
               " elements differ; " + c.reason;
  }
  return c;
}

Result<std::vector<DataSet>> read_data_sets(const std::string& dir, const Session* session) {
  // Which files hold sequences: by position among the inputs without defaults, and outputs.
  // What each file holds, from the declared type at its position: 0 tensor, 1 sequence,
  // 2 optional, 3 map.
  auto kind_of = [](const ValueInfo& vi) {
    return vi.optional ? 2 : vi.dtype == DType::kSequence ? 1 : vi.dtype == DType::kMap ? 3 : 0;
  };
  std::vector<int> input_kind, output_kind;
  if (session) {
    for (const auto& in : session->inputs())
      if (!in.has_default) input_kind.push_back(kind_of(in));
    for (const auto& out : session->outputs()) output_kind.push_back(kind_of(out));
  }
  auto read_value = [](const fs::path& p, int kind, std::string* name) {
    return kind == 3   ? read_map_pb(p.string(), name)
           : kind == 2 ? read_optional_pb(p.string(), name)
           : kind == 1 ? read_sequence_pb(p.string(), name)
                       : read_tensor_pb(p.string(), name);
  };
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  if (ec) return io_error("cannot list '" + dir + "'");
  std::sort(sets.begin(), sets.end(), [](const fs::path& a, const fs::path& b) {
    return index_of(a.filename().string()) < index_of(b.filename().string());
  });
  std::vector<DataSet> out;
  for (const auto& s : sets) {
    DataSet ds;
    ds.dir = s.string();
    std::vector<fs::path> ins, outs;
    for (const auto& e : fs::directory_iterator(s)) {
      const std::string f = e.path().filename().string();
      if (f.rfind("input_", 0) == 0 && e.path().extension() == ".pb") ins.push_back(e.path());
      if (f.rfind("output_", 0) == 0 && e.path().extension() == ".pb") outs.push_back(e.path());
    }
    auto by_index = [](const fs::path& a, const fs::path& b) {
      return index_of(a.filename().string()) < index_of(b.filename().string());
    };
    std::sort(ins.begin(), ins.end(), by_index);
    std::sort(outs.begin(), outs.end(), by_index);
    for (size_t k = 0; k < ins.size(); ++k) {
      std::string name;
      const int kind = k < input_kind.size() ? input_kind[k] : 0;
      RECUR_ASSIGN_OR_RETURN(Tensor t, read_value(ins[k], kind, &name));
      ds.inputs.emplace_back(name, std::move(t));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      std::string name;
      const int kind = k < output_kind.size() ? output_kind[k] : 0;
      RECUR_ASSIGN_OR_RETURN(Tensor t, read_value(outs[k], kind, &name));
      ds.outputs.emplace_back(name, std::move(t));
    }
    out.push_back(std::move(ds));
  }
  return out;
}

Result<Feeds> feeds_for(const Session& session, const DataSet& ds) {
  std::vector<std::string> positional;
  for (const auto& in : session.inputs())
    if (!in.has_default) positional.push_back(in.name);
  Feeds feeds;
  for (size_t k = 0; k < ds.inputs.size(); ++k) {
    // Not a structured binding: clang before 16 (the fuzz build's) cannot capture one.
    const std::string& name = ds.inputs[k].first;
    const Tensor& t = ds.inputs[k].second;
    const bool named = std::any_of(session.inputs().begin(), session.inputs().end(),
                                   [&](const ValueInfo& vi) { return vi.name == name; });
    if (named) {
      feeds.emplace_back(name, bfloat16_from_uint16(t, declared_dtype(session.inputs(), name)));
    } else if (k < positional.size()) {
      feeds.emplace_back(positional[k],
                         bfloat16_from_uint16(t, declared_dtype(session.inputs(), positional[k])));
    } else {
      return invalid_argument(ds.dir + ": input_" + std::to_string(k) +
                              ".pb matches no model input");
    }
  }
  return feeds;
}

TestResult run_test_dir(const std::string& dir, const SessionOptions& options, const Tolerance& tol,
                        std::ostream* log) {
  TestResult r;
  auto fail = [&](TestResult::Outcome o, std::string why) {
    if (r.outcome == TestResult::Outcome::kPass) {
      r.outcome = o;
      r.reason = std::move(why);
    }
  };
  try {
    const std::string model = (fs::path(dir) / "model.onnx").string();
    // A comparison must repeat: random operators draw with seed 0 unless one is given.
    SessionOptions seeded = options;
    if (!seeded.random_seed()) seeded.random_seed(0);
    Session session(model, seeded);
    auto sets = read_data_sets(dir, &session);
    if (!sets.ok()) {
      fail(TestResult::Outcome::kError, sets.status().message());
      return r;
    }
    if (sets->empty()) {
      fail(TestResult::Outcome::kError, "no test_data_set_* folder in '" + dir + "'");
      return r;
    }
    for (const DataSet& ds : *sets) {
      if (ds.outputs.empty()) {
        // Otherwise the folder would pass having compared nothing.
        fail(TestResult::Outcome::kError, "no expected outputs in '" + ds.dir + "'");
        return r;
      }
      auto feeds = feeds_for(session, ds);
      if (!feeds.ok()) {
        fail(TestResult::Outcome::kError, feeds.status().message());
        return r;
      }
      Outputs outs = session.run(*feeds);
      if (log) *log << fs::path(ds.dir).filename().string() << ":\n";
      for (size_t k = 0; k < ds.outputs.size(); ++k) {
        const auto& [name, want] = ds.outputs[k];
        size_t idx = k;
        for (size_t j = 0; j < outs.size(); ++j)
          if (!name.empty() && outs.name(j) == name) idx = j;
        if (idx >= outs.size()) {
          fail(TestResult::Outcome::kMismatch,
               "expected output " + std::to_string(k) + " ('" + name + "') was not produced");
          continue;
        }
        Comparison c = compare(
            outs[idx],
            bfloat16_from_uint16(want, declared_dtype(session.outputs(), outs.name(idx))), tol);
        if (log) {
          *log << "  " << outs.name(idx) << ": max abs err " << fmt(c.max_abs) << ", max rel err "
               << fmt(c.max_rel) << "  " << (c.match ? "ok" : "MISMATCH (" + c.reason + ")")
               << "\n    " << summarize(outs[idx]) << "\n";
        }
        if (!c.match)
          fail(TestResult::Outcome::kMismatch, "output '" + outs.name(idx) + "': " + c.reason);
      }
    }
  } catch (const Error& e) {
    fail(TestResult::Outcome::kError, e.what());
  } catch (const std::exception& e) {
    fail(TestResult::Outcome::kError, std::string("unexpected error: ") + e.what());
  }
  return r;
}

}  // namespace recur::tools
