// recur._recur: the C++ session for Python, with numpy arrays in and out. The onnxruntime-like
// surface (InferenceSession, NodeArg) is pure Python in recur/__init__.py on top of this.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recur/error.h"
#include "recur/session.h"
#include "recur/tensor.h"

namespace py = pybind11;

namespace {

[[noreturn]] void throw_invalid(const std::string& message) {
  throw recur::Error(recur::ErrorCode::kInvalidArgument, message);
}

// numpy spells the types recur can exchange as dtype_name() does; the others (bfloat16, the
// float8 types, the 4- and 2-bit types, strings) have no numpy dtype of that name.
py::dtype numpy_dtype(recur::DType dtype, const std::string& what) {
  const bool plain = dtype != recur::DType::kString && !recur::is_float8(dtype) &&
                     dtype != recur::DType::kBFloat16 && recur::dtype_bits(dtype) >= 8;
  if (!plain) {
    throw recur::Error(recur::ErrorCode::kNotImplemented,
                       what + " is " + std::string(recur::dtype_name(dtype)) +
                           ", which has no numpy dtype in the Python binding");
  }
  return py::dtype(std::string(recur::dtype_name(dtype)));
}

// A numpy array of str (dtype <U, or object holding str) as a string tensor, its strings
// encoded as UTF-8, which is what ONNX Runtime takes for a string input.
recur::Tensor string_array(const std::string& name, const py::array& arr) {
  recur::Shape shape(arr.shape(), arr.shape() + arr.ndim());
  recur::Tensor t = recur::Tensor::empty(recur::DType::kString, shape);
  py::list flat = arr.attr("ravel")().attr("tolist")();
  std::string* out = t.data<std::string>();
  for (size_t i = 0; i < flat.size(); ++i) {
    if (!py::isinstance<py::str>(flat[i])) {
      throw_invalid("input '" + name + "' is an object array whose element " + std::to_string(i) +
                    " is not a str");
    }
    out[i] = flat[i].cast<std::string>();
  }
  return t;
}

// A C-contiguous numpy array as a tensor over its memory. The array must outlive the run;
// the caller keeps it in `keep`.
recur::Tensor borrow_array(const std::string& name, py::handle value,
                           std::vector<py::array>& keep) {
  py::array arr = py::array::ensure(value, py::array::c_style);
  if (!arr) throw_invalid("input '" + name + "' is not convertible to a numpy array");
  const char kind = arr.dtype().kind();
  if (kind == 'U' || kind == 'O') return string_array(name, arr);
  const std::string numpy_name = py::str(arr.dtype()).cast<std::string>();
  std::optional<recur::DType> dtype = recur::dtype_from_name(numpy_name);
  if (!dtype || *dtype == recur::DType::kString) {
    throw_invalid("input '" + name + "' has numpy dtype " + numpy_name +
                  ", which recur cannot take (numeric and bool arrays only)");
  }
  recur::Shape shape(arr.shape(), arr.shape() + arr.ndim());
  keep.push_back(arr);
  // Read-only arrays (np.frombuffer, broadcast views) are fine: a run never writes its inputs.
  return recur::Tensor::borrow(const_cast<void*>(arr.data()), *dtype, std::move(shape));
}

py::object to_python(const recur::Tensor& t, const std::string& name) {
  if (t.is_none()) return py::none();
  if (t.is_sequence()) {
    py::list items;
    for (const recur::Tensor& e : t.elements()) items.append(to_python(e, name));
    return items;
  }
  if (t.is_map()) {
    // A dict of Python scalars, as ONNX Runtime returns ZipMap's maps.
    py::list keys = to_python(t.map_keys(), name).attr("tolist")();
    py::list values = to_python(t.map_values(), name).attr("tolist")();
    py::dict d;
    for (size_t i = 0; i < keys.size(); ++i) d[keys[i]] = values[i];
    return d;
  }
  if (t.dtype() == recur::DType::kString) {
    // An object array of str, as ONNX Runtime returns string outputs. Bytes that are not UTF-8
    // stay bytes rather than failing the run.
    py::list items;
    const std::string* p = t.data<std::string>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      PyObject* u =
          PyUnicode_DecodeUTF8(p[i].data(), static_cast<py::ssize_t>(p[i].size()), "strict");
      if (u) {
        items.append(py::reinterpret_steal<py::object>(u));
      } else {
        PyErr_Clear();
        items.append(py::bytes(p[i]));
      }
    }
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
    py::array out = py::module_::import("numpy").attr("empty")(shape, "object");
    out.attr("reshape")(-1).attr("__setitem__")(py::slice(0, t.numel(), 1), items);
    return out;
  }
  py::dtype dtype = numpy_dtype(t.dtype(), "output '" + name + "'");
  // The array views the tensor's memory; the capsule keeps that memory alive. An output with
  // no owner is borrowed memory, a fed array passed through (Identity, Reshape): it is copied,
  // as the array may be freed or changed after the run.
  auto* held = new recur::Tensor(t.owner() == nullptr && t.raw_data() != nullptr ? t.clone() : t);
  py::capsule owner(held, [](void* p) { delete static_cast<recur::Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array(dtype, shape, {}, held->raw_data(), owner);
}

py::tuple value_info(const recur::ValueInfo& v) {
  py::object shape = py::none();
  if (v.shape) {
    py::list dims;
    for (const recur::Dim& d : *v.shape) {
      if (d.is_fixed()) {
        dims.append(d.value);
      } else if (!d.symbol.empty()) {
        dims.append(d.symbol);
      } else {
        dims.append(py::none());
      }
    }
    shape = dims;
  }
  return py::make_tuple(v.name, std::string(recur::dtype_name(v.dtype)), shape,
                        std::string(recur::dtype_name(v.element_dtype)), v.has_default,
                        std::string(recur::dtype_name(v.map_key_dtype)),
                        std::string(recur::dtype_name(v.map_value_dtype)));
}

// The ErrorCode enum below must list every recur::ErrorCode: a code added to error.h and not
// here fails this switch's build (-Wswitch made an error), as the C API's mapping does.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
[[maybe_unused]] constexpr bool listed_in_python(recur::ErrorCode code) {
  switch (code) {
    case recur::ErrorCode::kOk:
    case recur::ErrorCode::kInvalidArgument:
    case recur::ErrorCode::kInvalidModel:
    case recur::ErrorCode::kNotImplemented:
    case recur::ErrorCode::kOutOfRange:
    case recur::ErrorCode::kFailedPrecondition:
    case recur::ErrorCode::kIo:
    case recur::ErrorCode::kDevice:
    case recur::ErrorCode::kInternal:
    case recur::ErrorCode::kCancelled:
      return true;
  }
  return false;
}
#pragma GCC diagnostic pop

// A run's options as Python holds them. terminate can be set and cleared, as onnxruntime's
// can: clearing gives later runs a new flag, while a run already given the old one still ends.
// The timeout starts when a run starts, so one object serves many runs.
struct PyRunOptions {
  recur::RunOptions flag;  // only its terminate flag is used
  double timeout_ms = 0;
  bool cancellable = false;

  bool terminate() const { return flag.terminated(); }
  void set_terminate(bool on) {
    if (on) {
      flag.terminate();
    } else if (flag.terminated()) {
      flag = recur::RunOptions();
    }
  }
  recur::RunOptions for_run() const {
    recur::RunOptions o = flag;  // shares the flag
    o.cancellable(cancellable);
    if (timeout_ms > 0) o.timeout(std::chrono::duration<double, std::milli>(timeout_ms));
    return o;
  }
};

struct PySession {
  recur::Session session;

  py::list inputs() const {
    py::list out;
    for (const auto& v : session.inputs()) out.append(value_info(v));
    return out;
  }
  py::list outputs() const {
    py::list out;
    for (const auto& v : session.outputs()) out.append(value_info(v));
    return out;
  }

  py::list run(const std::optional<std::vector<std::string>>& output_names, const py::dict& feeds,
               const PyRunOptions* run_options) const {
    std::vector<py::array> keep;
    recur::Feeds tensors;
    for (const auto& [key, value] : feeds) {
      if (!py::isinstance<py::str>(key)) throw_invalid("feed names must be strings");
      const std::string name = key.cast<std::string>();
      const recur::ValueInfo* info = input_info(name);
      // numpy would make None an object array, and the error would then speak of its element.
      if (value.is_none()) throw_invalid("input '" + name + "' is None, not an array");
      if (py::isinstance<py::dict>(value)) {
        tensors.emplace_back(name, map_feed(name, info, value.cast<py::dict>()));
      } else if (info && info->dtype == recur::DType::kSequence &&
                 (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value))) {
        tensors.emplace_back(name, sequence_feed(name, *info, value.cast<py::sequence>(), keep));
      } else {
        tensors.emplace_back(name, borrow_array(name, value, keep));
      }
    }
    recur::RunOptions options = run_options ? run_options->for_run() : recur::RunOptions();
    if (output_names) options.outputs = *output_names;
    recur::Outputs got;
    {
      // Session::run is const and thread-safe: other Python threads may run meanwhile.
      py::gil_scoped_release unlocked;
      got = session.run(tensors, options);
    }
    py::list out;
    for (size_t i = 0; i < got.size(); ++i) out.append(to_python(got[i], got.name(i)));
    return out;
  }

  const recur::ValueInfo* input_info(const std::string& name) const {
    for (const auto& v : session.inputs())
      if (v.name == name) return &v;
    return nullptr;
  }

  // A list (or tuple) fed to a sequence input, as onnxruntime takes one: each item an array,
  // or a dict where the sequence holds maps. The arrays are borrowed, as for a tensor input.
  recur::Tensor sequence_feed(const std::string& name, const recur::ValueInfo& info,
                              const py::sequence& items, std::vector<py::array>& keep) const {
    std::vector<recur::Tensor> elements;
    elements.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      py::object item = items[i];
      if (info.element_dtype == recur::DType::kMap) {
        if (!py::isinstance<py::dict>(item)) {
          throw_invalid("input '" + name + "' is a sequence of maps, but its item " +
                        std::to_string(i) + " is not a dict");
        }
        elements.push_back(map_from_dict(name, info, item.cast<py::dict>()));
      } else {
        elements.push_back(borrow_array(name + "[" + std::to_string(i) + "]", item, keep));
      }
    }
    try {
      return recur::Tensor::sequence(std::move(elements), info.element_dtype);
    } catch (const recur::Error& e) {
      throw_invalid("input '" + name + "': " + e.what());
    }
  }

  // A dict fed to a map input, its keys and values converted to the types the model declares
  // (Python's ints and floats have no width of their own).
  recur::Tensor map_feed(const std::string& name, const recur::ValueInfo* info,
                         const py::dict& d) const {
    if (!info || info->dtype != recur::DType::kMap) {
      throw_invalid("input '" + name + "' is a dict, but the model does not declare it a map");
    }
    return map_from_dict(name, *info, d);
  }

  // `info` declares the map's key and value types (a map input, or a sequence of maps).
  recur::Tensor map_from_dict(const std::string& name, const recur::ValueInfo& info,
                              const py::dict& d) const {
    const auto n = static_cast<int64_t>(d.size());
    auto column = [&](const py::list& items, recur::DType dtype, const char* what) {
      if (dtype == recur::DType::kString) {
        std::vector<std::string> out;
        for (const auto& item : items) {
          if (!py::isinstance<py::str>(item)) {
            throw_invalid("input '" + name + "': the map's " + what + " must be str");
          }
          out.push_back(item.cast<std::string>());
        }
        return recur::Tensor::from_vector<std::string>({n}, out);
      }
      py::array arr;
      try {
        arr = py::module_::import("numpy").attr("ascontiguousarray")(
            items, numpy_dtype(dtype, "input '" + name + "'"));
      } catch (const py::error_already_set&) {
        throw_invalid("input '" + name + "': the map's " + what + " are not " +
                      std::string(recur::dtype_name(dtype)) + " numbers");
      }
      recur::Tensor t = recur::Tensor::empty(dtype, {n});
      std::memcpy(t.raw_data(), arr.data(), t.nbytes());
      return t;
    };
    py::list keys, values;
    for (const auto& [k, v] : d) {
      keys.append(k);
      values.append(v);
    }
    try {
      return recur::Tensor::map(column(keys, info.map_key_dtype, "keys"),
                                column(values, info.map_value_dtype, "values"));
    } catch (const recur::Error& e) {
      throw_invalid("input '" + name + "': " + e.what());
    }
    return {};
  }

  py::list assignment() const {
    py::list out;
    for (const recur::NodeAssignment& a : session.assignment()) {
      py::list declined;
      for (const auto& d : a.declined) declined.append(py::make_tuple(d.provider, d.reason));
      py::dict node;
      node["node"] = a.node;
      node["op"] = a.op;
      node["provider"] = a.provider;
      node["declined"] = declined;
      node["notes"] = a.notes;
      out.append(node);
    }
    return out;
  }
};

// The session's options as recur/__init__.py passes them, a dict with every key present (the
// Python side owns the defaults): one place for both ways to make a session.
recur::SessionOptions make_options(const py::dict& d) {
  recur::SessionOptions o;
  if (!d["providers"].is_none()) o.providers(d["providers"].cast<std::vector<std::string>>());
  if (!d["random_seed"].is_none()) o.random_seed(d["random_seed"].cast<uint64_t>());
  if (!d["profile"].is_none()) o.profile(d["profile"].cast<std::string>());
  o.threads(d["threads"].cast<int>())
      .optimize(d["optimize"].cast<bool>())
      .plan_only(d["plan_only"].cast<bool>())
      .deterministic(d["deterministic"].cast<bool>());
  for (const auto& [k, v] : d["settings"].cast<std::map<std::string, std::string>>()) o.set(k, v);
  return o;
}

}  // namespace

PYBIND11_MODULE(_recur, m) {
  m.doc() = "recur's C++ session; use the recur package, not this module";

  py::enum_<recur::ErrorCode>(m, "ErrorCode")
      .value("OK", recur::ErrorCode::kOk)
      .value("INVALID_ARGUMENT", recur::ErrorCode::kInvalidArgument)
      .value("INVALID_MODEL", recur::ErrorCode::kInvalidModel)
      .value("NOT_IMPLEMENTED", recur::ErrorCode::kNotImplemented)
      .value("OUT_OF_RANGE", recur::ErrorCode::kOutOfRange)
      .value("FAILED_PRECONDITION", recur::ErrorCode::kFailedPrecondition)
      .value("IO", recur::ErrorCode::kIo)
      .value("DEVICE", recur::ErrorCode::kDevice)
      .value("INTERNAL", recur::ErrorCode::kInternal)
      .value("CANCELLED", recur::ErrorCode::kCancelled);

  // recur.Error is a RuntimeError, as onnxruntime's exceptions are, with the code attached.
  static py::exception<recur::Error> error_type(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const recur::Error& e) {
      // error_type(...) would raise at once; the instance is made first to carry the code.
      py::object exc = py::handle(error_type.ptr())(e.what());
      exc.attr("code") = py::cast(e.code());
      PyErr_SetObject(error_type.ptr(), exc.ptr());
    }
  });

  py::class_<PySession>(m, "Session")
      .def(py::init([](const std::string& path, const py::dict& options) {
             auto o = make_options(options);
             py::gil_scoped_release unlocked;
             return PySession{recur::Session(path, o)};
           }),
           py::arg("path"), py::arg("options"))
      .def_static(
          "from_bytes",
          [](const py::bytes& model, const py::dict& options) {
            auto o = make_options(options);
            std::string data = model;
            py::gil_scoped_release unlocked;
            return PySession{recur::Session::from_bytes(data.data(), data.size(), o)};
          },
          py::arg("model"), py::arg("options"))
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("run", &PySession::run, py::arg("output_names"), py::arg("feeds"),
           py::arg("run_options") = nullptr)
      .def("explain", [](const PySession& s) { return s.session.explain(); })
      .def("end_profiling",
           [](const PySession& s) {
             py::gil_scoped_release unlocked;  // waits for runs in progress
             return s.session.end_profiling();
           })
      .def("assignment", &PySession::assignment)
      .def("providers", [](const PySession& s) { return s.session.providers(); })
      .def("metadata", [](const PySession& s) {
        const recur::ModelMetadata& md = s.session.metadata();
        py::dict d;
        d["producer_name"] = md.producer_name;
        d["producer_version"] = md.producer_version;
        d["domain"] = md.domain;
        d["description"] = md.description;
        d["version"] = md.version;
        d["graph_name"] = md.graph_name;
        d["graph_description"] = md.graph_description;
        d["ir_version"] = md.ir_version;
        d["opsets"] = md.opsets;
        d["custom_metadata_map"] = md.custom;
        return d;
      });

  py::class_<PyRunOptions>(m, "RunOptions")
      .def(py::init<>())
      .def_property("terminate", &PyRunOptions::terminate, &PyRunOptions::set_terminate)
      .def_readwrite("timeout_ms", &PyRunOptions::timeout_ms)
      .def_readwrite("cancellable", &PyRunOptions::cancellable);

  m.def("list_providers", [] {
    py::list out;
    for (const auto& p : recur::list_providers()) {
      out.append(py::make_tuple(p.name, p.available, p.reason));
    }
    return out;
  });
#ifdef RECUR_VERSION_STRING
  m.attr("__version__") = RECUR_VERSION_STRING;
#endif
}
