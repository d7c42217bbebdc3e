// The C API (include/recur/recur_c.h) over the public C++ API. Every entry point catches
// whatever the C++ side throws, so that no exception crosses into C.
#include "recur/recur_c.h"

#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "recur/error.h"
#include "recur/session.h"
#include "recur/tensor.h"

struct recur_session_options {
  recur::SessionOptions options;
};

struct recur_run_options {
  recur::RunOptions options;
  uint64_t timeout_ms = 0;  // 0: none; the deadline is set when a run starts
};

struct recur_value_info {
  recur::ValueInfo info;
};

struct recur_tensor {
  recur::Tensor tensor;
};

struct recur_session {
  explicit recur_session(recur::Session s) : session(std::move(s)) {
    for (const auto& v : session.inputs()) inputs.push_back({v});
    for (const auto& v : session.outputs()) outputs.push_back({v});
  }
  recur::Session session;
  std::vector<recur_value_info> inputs;
  std::vector<recur_value_info> outputs;
  // explain() builds a new string on each call; the C API hands out a pointer it must keep,
  // and runs may call it from several threads.
  mutable std::once_flag explain_once;
  mutable std::string explain;
};

namespace {

using recur::ErrorCode;

// The numeric values are the C++ ones, so that a code read in a debugger or a log means the
// same in both APIs.
static_assert(RECUR_INVALID_ARGUMENT == static_cast<int>(ErrorCode::kInvalidArgument));
static_assert(RECUR_INVALID_MODEL == static_cast<int>(ErrorCode::kInvalidModel));
static_assert(RECUR_NOT_IMPLEMENTED == static_cast<int>(ErrorCode::kNotImplemented));
static_assert(RECUR_OUT_OF_RANGE == static_cast<int>(ErrorCode::kOutOfRange));
static_assert(RECUR_FAILED_PRECONDITION == static_cast<int>(ErrorCode::kFailedPrecondition));
static_assert(RECUR_IO == static_cast<int>(ErrorCode::kIo));
static_assert(RECUR_DEVICE == static_cast<int>(ErrorCode::kDevice));
static_assert(RECUR_INTERNAL == static_cast<int>(ErrorCode::kInternal));
static_assert(RECUR_CANCELLED == static_cast<int>(ErrorCode::kCancelled));
// The metadata-only dtypes, which a C caller reads from recur_value_info_dtype.
static_assert(RECUR_DTYPE_SEQUENCE == static_cast<int>(recur::DType::kSequence));
static_assert(RECUR_DTYPE_NONE == static_cast<int>(recur::DType::kNone));
static_assert(RECUR_DTYPE_MAP == static_cast<int>(recur::DType::kMap));

// A code added to recur::ErrorCode must be given a C value: the switch below has no default,
// and this makes the compiler's missing-case warning an error.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
recur_status to_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return RECUR_OK;
    case ErrorCode::kInvalidArgument:
      return RECUR_INVALID_ARGUMENT;
    case ErrorCode::kInvalidModel:
      return RECUR_INVALID_MODEL;
    case ErrorCode::kNotImplemented:
      return RECUR_NOT_IMPLEMENTED;
    case ErrorCode::kOutOfRange:
      return RECUR_OUT_OF_RANGE;
    case ErrorCode::kFailedPrecondition:
      return RECUR_FAILED_PRECONDITION;
    case ErrorCode::kIo:
      return RECUR_IO;
    case ErrorCode::kDevice:
      return RECUR_DEVICE;
    case ErrorCode::kInternal:
      return RECUR_INTERNAL;
    case ErrorCode::kCancelled:
      return RECUR_CANCELLED;
  }
  // A value outside the enumeration (a newer library behind an older header).
  return RECUR_ERROR;
}
#pragma GCC diagnostic pop

thread_local std::string last_message;

recur_status fail(recur_status status, std::string message) {
  try {
    last_message = std::move(message);
  } catch (...) {
    last_message.clear();  // cannot even hold the message: the code still says what failed
  }
  // A library error that says "ok" would read as success to the caller.
  return status == RECUR_OK ? RECUR_INTERNAL : status;
}

// Runs `body` and turns what it throws into a status and this thread's message.
template <class F>
recur_status guarded(F&& body) {
  try {
    body();
    last_message.clear();
    return RECUR_OK;
  } catch (const recur::Error& e) {
    return fail(to_status(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(RECUR_ERROR, "out of memory");
  } catch (const std::exception& e) {
    return fail(RECUR_INTERNAL, e.what());
  } catch (...) {
    return fail(RECUR_INTERNAL, "unknown exception");
  }
}

// Throws the error a NULL handle or out-pointer is; `what` is "function: argument".
template <class T>
T* need(T* p, const char* what) {
  if (p == nullptr) {
    throw recur::Error(ErrorCode::kInvalidArgument, std::string(what) + " is NULL");
  }
  return p;
}

// A NULL entry `i` of the array `array`; `detail` says more about the entry.
[[noreturn]] void null_element(const char* array, size_t i, const std::string& detail) {
  std::string m = array;
  m += '[';
  m += std::to_string(i);
  m += ']';
  m += detail;
  m += " is NULL";
  throw recur::Error(ErrorCode::kInvalidArgument, m);
}

void check_index(size_t index, size_t count, const char* what) {
  if (index >= count) {
    throw recur::Error(ErrorCode::kOutOfRange, std::string(what) + " " + std::to_string(index) +
                                                   " is out of range (there are " +
                                                   std::to_string(count) + ")");
  }
}

// The dtypes a C caller can hold in a flat buffer: every numeric type and bool.
recur::DType tensor_dtype(recur_dtype dtype, const char* fn) {
  const auto d = static_cast<recur::DType>(dtype);
  const bool flat = recur::dtype_size(d) > 0 && d != recur::DType::kString &&
                    d != recur::DType::kSequence && d != recur::DType::kNone &&
                    d != recur::DType::kMap && recur::dtype_from_name(recur::dtype_name(d)) == d;
  if (!flat) {
    throw recur::Error(ErrorCode::kInvalidArgument,
                       std::string(fn) + ": dtype " + std::to_string(static_cast<int>(dtype)) +
                           " is not a numeric or bool type (recur_tensor_create_strings, "
                           "recur_sequence_create, recur_map_create and recur_none_create make "
                           "the other values)");
  }
  return d;
}

recur::Shape make_shape(const int64_t* shape, size_t rank, const char* fn) {
  if (rank > 0 && shape == nullptr) {
    throw recur::Error(ErrorCode::kInvalidArgument,
                       std::string(fn) + ": shape is NULL with rank " + std::to_string(rank));
  }
  recur::Shape s(shape, shape + rank);
  for (int64_t d : s) {
    if (d < 0) {
      throw recur::Error(
          ErrorCode::kInvalidArgument,
          std::string(fn) + ": negative dimension in shape " + recur::shape_to_string(s));
    }
  }
  return s;
}

// numel * element size, or an error where it does not fit in size_t.
size_t byte_size_of(const recur::Shape& shape, recur::DType dtype, const char* fn) {
  size_t n = recur::dtype_size(dtype);
  for (int64_t d : shape) {
    const auto u = static_cast<size_t>(d);
    if (u != 0 && n > std::numeric_limits<size_t>::max() / u) {
      throw recur::Error(ErrorCode::kOutOfRange, std::string(fn) + ": shape " +
                                                     recur::shape_to_string(shape) +
                                                     " is too large to address");
    }
    n *= u;
  }
  return n;
}

const recur::Tensor& plain(const recur_tensor* t, const char* fn) {
  need(t, fn);
  if (!t->tensor.is_tensor()) {
    throw recur::Error(ErrorCode::kInvalidArgument,
                       std::string(fn) + ": the value is a " +
                           std::string(recur::dtype_name(t->tensor.dtype())) +
                           ", not a tensor (recur_value_count, recur_sequence_element and "
                           "recur_map_entries read sequences and maps)");
  }
  return t->tensor;
}

// A plain tensor whose elements a C caller can address as a buffer: not a string tensor.
const recur::Tensor& flat(const recur_tensor* t, const char* fn) {
  const recur::Tensor& tensor = plain(t, fn);
  if (tensor.dtype() == recur::DType::kString) {
    throw recur::Error(ErrorCode::kInvalidArgument,
                       std::string(fn) +
                           ": the value is a string tensor, whose elements recur_tensor_string "
                           "reads one by one");
  }
  return tensor;
}

// `t`, which must be a `want` (a sequence or a map), for the function `fn`.
const recur::Tensor& of_kind(const recur_tensor* t, recur::DType want, const char* fn) {
  need(t, fn);
  if (t->tensor.dtype() != want) {
    throw recur::Error(ErrorCode::kInvalidArgument,
                       std::string(fn) + ": the value is a " +
                           std::string(recur::dtype_name(t->tensor.dtype())) + ", not a " +
                           std::string(recur::dtype_name(want)));
  }
  return t->tensor;
}

// `t` with every piece of borrowed memory (a graph input passed through to an output, maybe
// inside a sequence or map) copied, since the caller may free or reuse it once the run returns.
recur::Tensor owned(const recur::Tensor& t) {
  if (t.is_sequence()) {
    std::vector<recur::Tensor> elements;
    elements.reserve(t.elements().size());
    for (const recur::Tensor& e : t.elements()) elements.push_back(owned(e));
    return recur::Tensor::sequence(std::move(elements), t.element_dtype());
  }
  if (t.is_map()) return recur::Tensor::map(owned(t.map_keys()), owned(t.map_values()));
  if (t.owner() == nullptr && t.raw_data() != nullptr) return t.clone();
  return t;
}

}  // namespace

extern "C" {

const char* recur_version(void) { return RECUR_VERSION_STRING; }

const char* recur_status_name(recur_status status) {
  switch (status) {
    case RECUR_OK:
      return "ok";
    case RECUR_INVALID_ARGUMENT:
    case RECUR_INVALID_MODEL:
    case RECUR_NOT_IMPLEMENTED:
    case RECUR_OUT_OF_RANGE:
    case RECUR_FAILED_PRECONDITION:
    case RECUR_IO:
    case RECUR_DEVICE:
    case RECUR_INTERNAL:
    case RECUR_CANCELLED:
      return recur::to_string(static_cast<ErrorCode>(status));
    case RECUR_ERROR:
      return "error";
    case RECUR_STATUS_FORCE_INT:
      break;
  }
  return "unknown status";
}

const char* recur_last_error_message(void) { return last_message.c_str(); }

recur_status recur_provider_count(size_t* count) {
  return guarded([&] {
    need(count, "recur_provider_count: count");
    static const std::vector<recur::ProviderInfo> providers = recur::list_providers();
    *count = providers.size();
  });
}

recur_status recur_provider_info(size_t index, const char** name, int* available,
                                 const char** reason) {
  return guarded([&] {
    need(name, "recur_provider_info: name");
    need(available, "recur_provider_info: available");
    static const std::vector<recur::ProviderInfo> providers = recur::list_providers();
    check_index(index, providers.size(), "recur_provider_info: provider");
    *name = providers[index].name.c_str();
    *available = providers[index].available ? 1 : 0;
    if (reason != nullptr) *reason = providers[index].reason.c_str();
  });
}

recur_status recur_session_options_create(recur_session_options** out) {
  return guarded([&] {
    need(out, "recur_session_options_create: out");
    *out = new recur_session_options();
  });
}

void recur_session_options_release(recur_session_options* options) { delete options; }

recur_status recur_session_options_set_providers(recur_session_options* options,
                                                 const char* const* names, size_t count) {
  return guarded([&] {
    need(options, "recur_session_options_set_providers: options");
    if (count > 0) need(names, "recur_session_options_set_providers: names");
    std::vector<std::string> list;
    for (size_t i = 0; i < count; ++i) {
      if (names[i] == nullptr) null_element("recur_session_options_set_providers: names", i, "");
      list.emplace_back(names[i]);
    }
    options->options.providers(std::move(list));
  });
}

recur_status recur_session_options_set_threads(recur_session_options* options, int threads) {
  return guarded([&] {
    need(options, "recur_session_options_set_threads: options");
    options->options.threads(threads);
  });
}

recur_status recur_session_options_set_optimize(recur_session_options* options, int on) {
  return guarded([&] {
    need(options, "recur_session_options_set_optimize: options");
    options->options.optimize(on != 0);
  });
}

recur_status recur_session_options_set_plan_only(recur_session_options* options, int on) {
  return guarded([&] {
    need(options, "recur_session_options_set_plan_only: options");
    options->options.plan_only(on != 0);
  });
}

recur_status recur_session_options_set_rnn_layer_fusion(recur_session_options* options,
                                                        recur_rnn_fusion fusion) {
  return guarded([&] {
    need(options, "recur_session_options_set_rnn_layer_fusion: options");
    using Fusion = recur::SessionOptions::Fusion;
    switch (fusion) {
      case RECUR_RNN_FUSION_AUTO:
        options->options.rnn_layer_fusion(Fusion::kAuto);
        return;
      case RECUR_RNN_FUSION_ON:
        options->options.rnn_layer_fusion(Fusion::kOn);
        return;
      case RECUR_RNN_FUSION_OFF:
        options->options.rnn_layer_fusion(Fusion::kOff);
        return;
      case RECUR_RNN_FUSION_FORCE_INT:
        break;
    }
    throw recur::Error(ErrorCode::kInvalidArgument,
                       "recur_session_options_set_rnn_layer_fusion: fusion " +
                           std::to_string(static_cast<int>(fusion)) +
                           " is not one of RECUR_RNN_FUSION_AUTO, _ON, _OFF");
  });
}

recur_status recur_session_options_set_cuda_graphs(recur_session_options* options, int on) {
  return guarded([&] {
    need(options, "recur_session_options_set_cuda_graphs: options");
    options->options.cuda_graphs(on != 0);
  });
}

recur_status recur_session_options_set_random_seed(recur_session_options* options, uint64_t seed) {
  return guarded([&] {
    need(options, "recur_session_options_set_random_seed: options");
    options->options.random_seed(seed);
  });
}

recur_status recur_session_options_set(recur_session_options* options, const char* key,
                                       const char* value) {
  return guarded([&] {
    need(options, "recur_session_options_set: options");
    need(key, "recur_session_options_set: key");
    need(value, "recur_session_options_set: value");
    options->options.set(key, value);
  });
}

recur_status recur_session_create(const char* model_path, const recur_session_options* options,
                                  recur_session** out) {
  return guarded([&] {
    need(model_path, "recur_session_create: model_path");
    need(out, "recur_session_create: out");
    const recur::SessionOptions defaults;
    recur::Session s(model_path, options != nullptr ? options->options : defaults);
    *out = new recur_session(std::move(s));
  });
}

recur_status recur_session_create_from_bytes(const void* data, size_t size, const char* base_dir,
                                             const recur_session_options* options,
                                             recur_session** out) {
  return guarded([&] {
    need(data, "recur_session_create_from_bytes: data");
    need(out, "recur_session_create_from_bytes: out");
    const recur::SessionOptions defaults;
    auto s =
        recur::Session::from_bytes(data, size, options != nullptr ? options->options : defaults,
                                   base_dir != nullptr ? base_dir : ".");
    *out = new recur_session(std::move(s));
  });
}

void recur_session_release(recur_session* session) { delete session; }

recur_status recur_session_input_count(const recur_session* session, size_t* count) {
  return guarded([&] {
    need(session, "recur_session_input_count: session");
    *need(count, "recur_session_input_count: count") = session->inputs.size();
  });
}

recur_status recur_session_output_count(const recur_session* session, size_t* count) {
  return guarded([&] {
    need(session, "recur_session_output_count: session");
    *need(count, "recur_session_output_count: count") = session->outputs.size();
  });
}

recur_status recur_session_input_info(const recur_session* session, size_t index,
                                      const recur_value_info** info) {
  return guarded([&] {
    need(session, "recur_session_input_info: session");
    need(info, "recur_session_input_info: info");
    check_index(index, session->inputs.size(), "recur_session_input_info: input");
    *info = &session->inputs[index];
  });
}

recur_status recur_session_output_info(const recur_session* session, size_t index,
                                       const recur_value_info** info) {
  return guarded([&] {
    need(session, "recur_session_output_info: session");
    need(info, "recur_session_output_info: info");
    check_index(index, session->outputs.size(), "recur_session_output_info: output");
    *info = &session->outputs[index];
  });
}

recur_status recur_value_info_name(const recur_value_info* info, const char** name) {
  return guarded([&] {
    need(info, "recur_value_info_name: info");
    *need(name, "recur_value_info_name: name") = info->info.name.c_str();
  });
}

recur_status recur_value_info_dtype(const recur_value_info* info, recur_dtype* dtype) {
  return guarded([&] {
    need(info, "recur_value_info_dtype: info");
    *need(dtype, "recur_value_info_dtype: dtype") = static_cast<recur_dtype>(info->info.dtype);
  });
}

recur_status recur_value_info_rank(const recur_value_info* info, int64_t* rank) {
  return guarded([&] {
    need(info, "recur_value_info_rank: info");
    need(rank, "recur_value_info_rank: rank");
    *rank = info->info.shape ? static_cast<int64_t>(info->info.shape->size()) : -1;
  });
}

recur_status recur_value_info_dim(const recur_value_info* info, size_t index, int64_t* value,
                                  const char** symbol) {
  return guarded([&] {
    need(info, "recur_value_info_dim: info");
    if (!info->info.shape) {
      throw recur::Error(ErrorCode::kFailedPrecondition,
                         "recur_value_info_dim: '" + info->info.name + "' has an unknown rank");
    }
    check_index(index, info->info.shape->size(), "recur_value_info_dim: dimension");
    const recur::Dim& d = (*info->info.shape)[index];
    if (value != nullptr) *value = d.is_fixed() ? d.value : -1;
    if (symbol != nullptr) *symbol = d.symbol.c_str();
  });
}

recur_status recur_value_info_element_dtypes(const recur_value_info* info, recur_dtype* element,
                                             recur_dtype* map_key, recur_dtype* map_value) {
  return guarded([&] {
    need(info, "recur_value_info_element_dtypes: info");
    if (element != nullptr) *element = static_cast<recur_dtype>(info->info.element_dtype);
    if (map_key != nullptr) *map_key = static_cast<recur_dtype>(info->info.map_key_dtype);
    if (map_value != nullptr) *map_value = static_cast<recur_dtype>(info->info.map_value_dtype);
  });
}

recur_status recur_value_info_has_default(const recur_value_info* info, int* has_default) {
  return guarded([&] {
    need(info, "recur_value_info_has_default: info");
    *need(has_default, "recur_value_info_has_default: has_default") =
        info->info.has_default ? 1 : 0;
  });
}

recur_status recur_session_model_string(const recur_session* session, recur_model_field field,
                                        const char** value) {
  return guarded([&] {
    need(session, "recur_session_model_string: session");
    need(value, "recur_session_model_string: value");
    // Indexed by recur_model_field.
    using recur::ModelMetadata;
    static constexpr std::string ModelMetadata::*kFields[] = {
        &ModelMetadata::producer_name, &ModelMetadata::producer_version,
        &ModelMetadata::domain,        &ModelMetadata::description,
        &ModelMetadata::graph_name,    &ModelMetadata::graph_description};
    static_assert(std::size(kFields) == RECUR_MODEL_GRAPH_DESCRIPTION + 1);
    const auto i = static_cast<int64_t>(field);
    if (i < 0 || i >= static_cast<int64_t>(std::size(kFields))) {
      throw recur::Error(
          ErrorCode::kInvalidArgument,
          "recur_session_model_string: field " + std::to_string(i) + " is not a recur_model_field");
    }
    *value = (session->session.metadata().*kFields[i]).c_str();
  });
}

recur_status recur_session_model_version(const recur_session* session, int64_t* model_version,
                                         int64_t* ir_version) {
  return guarded([&] {
    need(session, "recur_session_model_version: session");
    const recur::ModelMetadata& md = session->session.metadata();
    if (model_version != nullptr) *model_version = md.version;
    if (ir_version != nullptr) *ir_version = md.ir_version;
  });
}

recur_status recur_session_metadata_count(const recur_session* session, size_t* count) {
  return guarded([&] {
    need(session, "recur_session_metadata_count: session");
    *need(count, "recur_session_metadata_count: count") = session->session.metadata().custom.size();
  });
}

recur_status recur_session_metadata_entry(const recur_session* session, size_t index,
                                          const char** key, const char** value) {
  return guarded([&] {
    need(session, "recur_session_metadata_entry: session");
    const auto& custom = session->session.metadata().custom;
    check_index(index, custom.size(), "recur_session_metadata_entry: entry");
    const auto it = std::next(custom.begin(), static_cast<std::ptrdiff_t>(index));
    if (key != nullptr) *key = it->first.c_str();
    if (value != nullptr) *value = it->second.c_str();
  });
}

recur_status recur_session_metadata_lookup(const recur_session* session, const char* key,
                                           const char** value) {
  return guarded([&] {
    need(session, "recur_session_metadata_lookup: session");
    need(key, "recur_session_metadata_lookup: key");
    need(value, "recur_session_metadata_lookup: value");
    const auto& custom = session->session.metadata().custom;
    const auto it = custom.find(key);
    *value = it == custom.end() ? nullptr : it->second.c_str();
  });
}

recur_status recur_session_explain(const recur_session* session, const char** text) {
  return guarded([&] {
    need(session, "recur_session_explain: session");
    need(text, "recur_session_explain: text");
    std::call_once(session->explain_once, [&] { session->explain = session->session.explain(); });
    *text = session->explain.c_str();
  });
}

recur_status recur_session_assignment_count(const recur_session* session, size_t* count) {
  return guarded([&] {
    need(session, "recur_session_assignment_count: session");
    *need(count, "recur_session_assignment_count: count") = session->session.assignment().size();
  });
}

recur_status recur_session_assignment(const recur_session* session, size_t index, const char** node,
                                      const char** op, const char** provider) {
  return guarded([&] {
    need(session, "recur_session_assignment: session");
    const auto& nodes = session->session.assignment();
    check_index(index, nodes.size(), "recur_session_assignment: node");
    if (node != nullptr) *node = nodes[index].node.c_str();
    if (op != nullptr) *op = nodes[index].op.c_str();
    if (provider != nullptr) *provider = nodes[index].provider.c_str();
  });
}

recur_status recur_tensor_create(recur_dtype dtype, const int64_t* shape, size_t rank,
                                 recur_tensor** out) {
  return guarded([&] {
    const char* fn = "recur_tensor_create";
    need(out, "recur_tensor_create: out");
    const recur::DType d = tensor_dtype(dtype, fn);
    recur::Shape s = make_shape(shape, rank, fn);
    byte_size_of(s, d, fn);
    *out = new recur_tensor{recur::Tensor::zeros(d, std::move(s))};
  });
}

recur_status recur_tensor_create_borrowed(void* data, size_t byte_size, recur_dtype dtype,
                                          const int64_t* shape, size_t rank, recur_tensor** out) {
  return guarded([&] {
    const char* fn = "recur_tensor_create_borrowed";
    need(out, "recur_tensor_create_borrowed: out");
    const recur::DType d = tensor_dtype(dtype, fn);
    recur::Shape s = make_shape(shape, rank, fn);
    const size_t want = byte_size_of(s, d, fn);
    if (byte_size != want) {
      throw recur::Error(ErrorCode::kInvalidArgument,
                         std::string(fn) + ": byte_size is " + std::to_string(byte_size) +
                             " but a " + std::string(recur::dtype_name(d)) + " tensor of shape " +
                             recur::shape_to_string(s) + " takes " + std::to_string(want));
    }
    if (data == nullptr && want > 0) need(data, "recur_tensor_create_borrowed: data");
    *out = new recur_tensor{recur::Tensor::borrow(data, d, std::move(s))};
  });
}

void recur_tensor_release(recur_tensor* tensor) { delete tensor; }

recur_status recur_tensor_dtype(const recur_tensor* tensor, recur_dtype* dtype) {
  return guarded([&] {
    need(tensor, "recur_tensor_dtype: tensor");
    *need(dtype, "recur_tensor_dtype: dtype") = static_cast<recur_dtype>(tensor->tensor.dtype());
  });
}

recur_status recur_tensor_rank(const recur_tensor* tensor, size_t* rank) {
  return guarded([&] {
    need(tensor, "recur_tensor_rank: tensor");
    *need(rank, "recur_tensor_rank: rank") = tensor->tensor.shape().size();
  });
}

recur_status recur_tensor_shape(const recur_tensor* tensor, const int64_t** shape) {
  return guarded([&] {
    need(tensor, "recur_tensor_shape: tensor");
    const recur::Shape& s = tensor->tensor.shape();
    *need(shape, "recur_tensor_shape: shape") = s.empty() ? nullptr : s.data();
  });
}

recur_status recur_tensor_element_count(const recur_tensor* tensor, int64_t* count) {
  return guarded([&] {
    const recur::Tensor& t = plain(tensor, "recur_tensor_element_count: tensor");
    *need(count, "recur_tensor_element_count: count") = t.numel();
  });
}

recur_status recur_tensor_byte_size(const recur_tensor* tensor, size_t* size) {
  return guarded([&] {
    const recur::Tensor& t = flat(tensor, "recur_tensor_byte_size: tensor");
    *need(size, "recur_tensor_byte_size: size") = t.nbytes();
  });
}

recur_status recur_tensor_data(recur_tensor* tensor, void** data) {
  return guarded([&] {
    flat(tensor, "recur_tensor_data: tensor");
    *need(data, "recur_tensor_data: data") = tensor->tensor.raw_data();
  });
}

recur_status recur_tensor_create_strings(const char* const* strings, const size_t* lengths,
                                         size_t count, const int64_t* shape, size_t rank,
                                         recur_tensor** out) {
  return guarded([&] {
    const char* fn = "recur_tensor_create_strings";
    need(out, "recur_tensor_create_strings: out");
    recur::Shape s = make_shape(shape, rank, fn);
    byte_size_of(s, recur::DType::kString, fn);
    const auto n = static_cast<size_t>(recur::shape_numel(s));
    if (count != n) {
      throw recur::Error(ErrorCode::kInvalidArgument,
                         std::string(fn) + ": count is " + std::to_string(count) + " but shape " +
                             recur::shape_to_string(s) + " has " + std::to_string(n) + " elements");
    }
    if (n > 0) need(strings, "recur_tensor_create_strings: strings");
    std::vector<std::string> values;
    values.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (strings[i] == nullptr) null_element("recur_tensor_create_strings: strings", i, "");
      if (lengths != nullptr) {
        values.emplace_back(strings[i], lengths[i]);
      } else {
        values.emplace_back(strings[i]);
      }
    }
    *out = new recur_tensor{recur::Tensor::from_vector<std::string>(std::move(s), values)};
  });
}

recur_status recur_tensor_string(const recur_tensor* tensor, size_t index, const char** data,
                                 size_t* length) {
  return guarded([&] {
    const char* fn = "recur_tensor_string: tensor";
    const recur::Tensor& t = plain(tensor, fn);
    if (t.dtype() != recur::DType::kString) {
      throw recur::Error(ErrorCode::kInvalidArgument,
                         std::string(fn) + " is a " + std::string(recur::dtype_name(t.dtype())) +
                             " tensor, not a string tensor");
    }
    need(data, "recur_tensor_string: data");
    check_index(index, static_cast<size_t>(t.numel()), "recur_tensor_string: element");
    const std::string& e = t.data<std::string>()[index];
    *data = e.c_str();
    if (length != nullptr) *length = e.size();
  });
}

recur_status recur_sequence_create(const recur_tensor* const* elements, size_t count,
                                   recur_dtype element_dtype, recur_tensor** out) {
  return guarded([&] {
    const char* fn = "recur_sequence_create";
    need(out, "recur_sequence_create: out");
    if (count > 0) need(elements, "recur_sequence_create: elements");
    auto d = static_cast<recur::DType>(element_dtype);
    if (d != recur::DType::kUndefined && d != recur::DType::kMap &&
        (recur::dtype_size(d) == 0 || recur::dtype_from_name(recur::dtype_name(d)) != d)) {
      throw recur::Error(ErrorCode::kInvalidArgument,
                         std::string(fn) + ": element_dtype " +
                             std::to_string(static_cast<int>(element_dtype)) +
                             " is not a tensor dtype or RECUR_DTYPE_MAP");
    }
    std::vector<recur::Tensor> values;
    values.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (elements[i] == nullptr) null_element("recur_sequence_create: elements", i, "");
      values.push_back(elements[i]->tensor);
    }
    if (d == recur::DType::kUndefined && count > 0) d = values.front().dtype();
    *out = new recur_tensor{recur::Tensor::sequence(std::move(values), d)};
  });
}

recur_status recur_map_create(const recur_tensor* keys, const recur_tensor* values,
                              recur_tensor** out) {
  return guarded([&] {
    need(out, "recur_map_create: out");
    const recur::Tensor& k = plain(keys, "recur_map_create: keys");
    const recur::Tensor& v = plain(values, "recur_map_create: values");
    *out = new recur_tensor{recur::Tensor::map(k, v)};
  });
}

recur_status recur_none_create(recur_tensor** out) {
  return guarded([&] {
    need(out, "recur_none_create: out");  // first: a `new` beside it would run before it and leak
    *out = new recur_tensor{recur::Tensor::none()};
  });
}

recur_status recur_value_count(const recur_tensor* value, size_t* count) {
  return guarded([&] {
    need(value, "recur_value_count: value");
    need(count, "recur_value_count: count");
    const recur::Tensor& t = value->tensor;
    if (t.is_sequence()) {
      *count = t.elements().size();
    } else if (t.is_map()) {
      *count = static_cast<size_t>(t.map_keys().numel());
    } else {
      throw recur::Error(ErrorCode::kInvalidArgument,
                         "recur_value_count: the value is a " +
                             std::string(recur::dtype_name(t.dtype())) +
                             ", not a sequence or a map");
    }
  });
}

recur_status recur_value_element_dtype(const recur_tensor* value, recur_dtype* dtype) {
  return guarded([&] {
    need(value, "recur_value_element_dtype: value");
    need(dtype, "recur_value_element_dtype: dtype");
    const recur::Tensor& t = value->tensor;
    if (!t.is_sequence() && !t.is_map()) {
      throw recur::Error(ErrorCode::kInvalidArgument,
                         "recur_value_element_dtype: the value is a " +
                             std::string(recur::dtype_name(t.dtype())) +
                             ", not a sequence or a map");
    }
    *dtype = static_cast<recur_dtype>(t.element_dtype());
  });
}

recur_status recur_sequence_element(const recur_tensor* sequence, size_t index,
                                    recur_tensor** out) {
  return guarded([&] {
    const recur::Tensor& s =
        of_kind(sequence, recur::DType::kSequence, "recur_sequence_element: sequence");
    need(out, "recur_sequence_element: out");
    check_index(index, s.elements().size(), "recur_sequence_element: element");
    *out = new recur_tensor{s.elements()[index]};
  });
}

recur_status recur_map_entries(const recur_tensor* map, recur_tensor** keys,
                               recur_tensor** values) {
  return guarded([&] {
    const recur::Tensor& m = of_kind(map, recur::DType::kMap, "recur_map_entries: map");
    auto k = keys != nullptr ? std::make_unique<recur_tensor>(recur_tensor{m.map_keys()}) : nullptr;
    auto v =
        values != nullptr ? std::make_unique<recur_tensor>(recur_tensor{m.map_values()}) : nullptr;
    if (keys != nullptr) *keys = k.release();
    if (values != nullptr) *values = v.release();
  });
}

recur_status recur_run_options_create(recur_run_options** out) {
  return guarded([&] {
    need(out, "recur_run_options_create: out");
    *out = new recur_run_options();
  });
}

void recur_run_options_release(recur_run_options* options) { delete options; }

recur_status recur_run_options_set_outputs_on_device(recur_run_options* options, int on) {
  return guarded([&] {
    need(options, "recur_run_options_set_outputs_on_device: options");
    options->options.outputs_on_device = on != 0;
  });
}

recur_status recur_run_options_terminate(const recur_run_options* options) {
  return guarded([&] {
    need(options, "recur_run_options_terminate: options");
    options->options.terminate();
  });
}

recur_status recur_run_options_set_timeout(recur_run_options* options, uint64_t milliseconds) {
  return guarded([&] {
    need(options, "recur_run_options_set_timeout: options");
    options->timeout_ms = milliseconds;
  });
}

recur_status recur_run_options_set_cancellable(recur_run_options* options, int on) {
  return guarded([&] {
    need(options, "recur_run_options_set_cancellable: options");
    options->options.cancellable(on != 0);
  });
}

recur_status recur_session_run(const recur_session* session, const recur_run_options* run_options,
                               const char* const* input_names, const recur_tensor* const* inputs,
                               size_t input_count, const char* const* output_names,
                               size_t output_count, recur_tensor** outputs) {
  return guarded([&] {
    need(session, "recur_session_run: session");
    need(outputs, "recur_session_run: outputs");
    if (input_count > 0) {
      need(input_names, "recur_session_run: input_names");
      need(inputs, "recur_session_run: inputs");
    }
    if (output_count > 0) need(output_names, "recur_session_run: output_names");
    recur::Feeds feeds;
    for (size_t i = 0; i < input_count; ++i) {
      if (input_names[i] == nullptr) null_element("recur_session_run: input_names", i, "");
      if (inputs[i] == nullptr) {
        null_element("recur_session_run: inputs", i, std::string(" ('") + input_names[i] + "')");
      }
      feeds.emplace_back(input_names[i], inputs[i]->tensor);
    }
    recur::RunOptions ro = run_options != nullptr ? run_options->options : recur::RunOptions{};
    if (run_options != nullptr && run_options->timeout_ms > 0) {
      ro.timeout(std::chrono::duration<uint64_t, std::milli>(run_options->timeout_ms));
    }
    ro.outputs.clear();
    for (size_t i = 0; i < output_count; ++i) {
      if (output_names[i] == nullptr) null_element("recur_session_run: output_names", i, "");
      ro.outputs.emplace_back(output_names[i]);
    }
    recur::Outputs got = session->session.run(feeds, ro);
    // Nothing reaches the caller's array until every output has its handle.
    std::vector<std::unique_ptr<recur_tensor>> made;
    for (size_t i = 0; i < got.size(); ++i) {
      made.push_back(std::make_unique<recur_tensor>(recur_tensor{owned(got[i])}));
    }
    for (size_t i = 0; i < made.size(); ++i) outputs[i] = made[i].release();
  });
}

}  // extern "C"
