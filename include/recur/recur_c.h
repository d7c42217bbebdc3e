/* The C API of recur: a C11 (and C++) interface over the C++ session, for languages and
 * programs that cannot use C++ directly.
 *
 * Conventions, which every function follows:
 * - Objects are opaque handles: recur_session_options, recur_session, recur_run_options,
 *   recur_tensor. A handle made by a *_create function is owned by the caller, who gives it
 *   back with the matching *_release (release accepts NULL and does nothing).
 *   recur_value_info handles are borrowed from their session and live as long as it does.
 * - Every function that can fail returns a recur_status. On failure it writes nothing to its
 *   out-parameters, and recur_last_error_message() returns the message, which names the
 *   file, node, input, setting or argument concerned. The message is per thread and stays
 *   valid until the next call of this API on that thread. A successful call sets it to "".
 * - Strings returned through out-parameters are owned by the object they came from (the
 *   session, the value info, the tensor) and stay valid as long as it does; static strings
 *   (recur_version, recur_status_name, the provider list) live as long as the program.
 * - No function throws, aborts on bad input, or takes a C++ type.
 * - A session may be run from several threads at once; other handles are not thread-safe.
 */
#ifndef RECUR_RECUR_C_H_
#define RECUR_RECUR_C_H_

#include <stddef.h>
#include <stdint.h>

/* The C functions are exported from the shared library whatever the visibility the rest of
 * the library is built with. */
#if defined(_WIN32)
#define RECUR_C_API
#else
#define RECUR_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The values mirror recur::ErrorCode. RECUR_ERROR is what a failure whose code this header
 * does not know becomes (a newer library's code, or an error that is not recur's). */
typedef enum recur_status {
  RECUR_OK = 0,
  RECUR_INVALID_ARGUMENT = 1, /* bad input from the caller: a missing input, a wrong dtype */
  RECUR_INVALID_MODEL = 2,    /* the model file or graph is malformed */
  RECUR_NOT_IMPLEMENTED = 3,  /* an operator, attribute or type no provider supports */
  RECUR_OUT_OF_RANGE = 4,     /* an index, length or count outside its valid range */
  RECUR_FAILED_PRECONDITION = 5,
  RECUR_IO = 6,     /* the file system */
  RECUR_DEVICE = 7, /* CUDA, cuDNN or oneDNN reported an error */
  RECUR_INTERNAL = 8,
  RECUR_CANCELLED = 9, /* the run was ended by recur_run_options_terminate() or its timeout */
  RECUR_ERROR = 100,
  /* Not a status. It makes each enum of this header as wide as an int, so that any int value
   * that reaches the library through one is well-defined there (C++ would otherwise limit
   * the enum to the bits of its largest enumerator). */
  RECUR_STATUS_FORCE_INT = 0x7fffffff
} recur_status;

/* ONNX's TensorProto.DataType codes, as recur::DType. */
typedef enum recur_dtype {
  RECUR_DTYPE_UNDEFINED = 0,
  RECUR_DTYPE_FLOAT32 = 1,
  RECUR_DTYPE_UINT8 = 2,
  RECUR_DTYPE_INT8 = 3,
  RECUR_DTYPE_UINT16 = 4,
  RECUR_DTYPE_INT16 = 5,
  RECUR_DTYPE_INT32 = 6,
  RECUR_DTYPE_INT64 = 7,
  RECUR_DTYPE_STRING = 8, /* recur_tensor_create_strings, recur_tensor_string */
  RECUR_DTYPE_BOOL = 9,   /* one byte per element, 0 or 1 */
  RECUR_DTYPE_FLOAT16 = 10,
  RECUR_DTYPE_FLOAT64 = 11,
  RECUR_DTYPE_UINT32 = 12,
  RECUR_DTYPE_UINT64 = 13,
  RECUR_DTYPE_BFLOAT16 = 16,
  RECUR_DTYPE_FLOAT8E4M3FN = 17,
  RECUR_DTYPE_FLOAT8E4M3FNUZ = 18,
  RECUR_DTYPE_FLOAT8E5M2 = 19,
  RECUR_DTYPE_FLOAT8E5M2FNUZ = 20,
  RECUR_DTYPE_UINT4 = 21,            /* one byte per element, unpacked */
  RECUR_DTYPE_INT4 = 22,             /* one byte per element, unpacked and sign-extended */
  RECUR_DTYPE_SEQUENCE = 1000,       /* an ONNX sequence (of tensors, or of maps) */
  RECUR_DTYPE_NONE = 1001,           /* an ONNX optional; as a value, an empty one */
  RECUR_DTYPE_MAP = 1002,            /* an ONNX map (ai.onnx.ml) */
  RECUR_DTYPE_FORCE_INT = 0x7fffffff /* not a dtype: see RECUR_STATUS_FORCE_INT */
} recur_dtype;

/* How stacked single-layer RNNs are fused (recur::SessionOptions::Fusion). */
typedef enum recur_rnn_fusion {
  RECUR_RNN_FUSION_AUTO = 0,
  RECUR_RNN_FUSION_ON = 1,
  RECUR_RNN_FUSION_OFF = 2,
  RECUR_RNN_FUSION_FORCE_INT = 0x7fffffff /* not a value: see RECUR_STATUS_FORCE_INT */
} recur_rnn_fusion;

typedef struct recur_session_options recur_session_options;
typedef struct recur_session recur_session;
typedef struct recur_run_options recur_run_options;
typedef struct recur_tensor recur_tensor;
typedef struct recur_value_info recur_value_info;

/* ---- Library ---------------------------------------------------------------------------- */

/* "0.1.0". */
RECUR_C_API const char* recur_version(void);
/* "ok", "invalid argument", ...; "unknown status" for a value not in recur_status. */
RECUR_C_API const char* recur_status_name(recur_status status);
/* The message of this thread's last failed call ("" after a successful one). Never NULL. */
RECUR_C_API const char* recur_last_error_message(void);

/* The providers compiled into this build, in default priority order (cudnn, cuda-generic,
 * onednn, reference), and whether each has its device; `reason` says why not (may be NULL
 * when not wanted). */
RECUR_C_API recur_status recur_provider_count(size_t* count);
RECUR_C_API recur_status recur_provider_info(size_t index, const char** name, int* available,
                                             const char** reason);

/* ---- Session options -------------------------------------------------------------------- */

RECUR_C_API recur_status recur_session_options_create(recur_session_options** out);
RECUR_C_API void recur_session_options_release(recur_session_options* options);
/* Provider names in priority order; count 0 means every available provider. The names are
 * checked when a session is created. */
RECUR_C_API recur_status recur_session_options_set_providers(recur_session_options* options,
                                                             const char* const* names,
                                                             size_t count);
/* Intra-op threads for CPU providers; 0 leaves the choice to the provider. */
RECUR_C_API recur_status recur_session_options_set_threads(recur_session_options* options,
                                                           int threads);
/* Graph optimisations (on by default). */
RECUR_C_API recur_status recur_session_options_set_optimize(recur_session_options* options, int on);
/* Assign nodes as a machine with every device would, compiling nothing: such a session can
 * be explained but not run. */
RECUR_C_API recur_status recur_session_options_set_plan_only(recur_session_options* options,
                                                             int on);
RECUR_C_API recur_status recur_session_options_set_rnn_layer_fusion(recur_session_options* options,
                                                                    recur_rnn_fusion fusion);
RECUR_C_API recur_status recur_session_options_set_cuda_graphs(recur_session_options* options,
                                                               int on);
/* The seed of the random operators (RandomNormal, Bernoulli, Dropout in training mode, ...):
 * with one, every run draws the same values; without, each run draws anew. */
RECUR_C_API recur_status recur_session_options_set_random_seed(recur_session_options* options,
                                                               uint64_t seed);
/* A provider setting "<provider>.<key>", e.g. ("onednn.verbose", "1"). Each provider checks
 * its own when a session is created: an unknown key or bad value fails there. */
RECUR_C_API recur_status recur_session_options_set(recur_session_options* options, const char* key,
                                                   const char* value);

/* ---- Session ---------------------------------------------------------------------------- */

/* `options` may be NULL (the defaults); the session copies what it needs from it. */
RECUR_C_API recur_status recur_session_create(const char* model_path,
                                              const recur_session_options* options,
                                              recur_session** out);
/* A model held in memory (copied; the caller may free it after the call). External data is
 * resolved against `base_dir` (NULL: the current directory). */
RECUR_C_API recur_status recur_session_create_from_bytes(const void* data, size_t size,
                                                         const char* base_dir,
                                                         const recur_session_options* options,
                                                         recur_session** out);
RECUR_C_API void recur_session_release(recur_session* session);

RECUR_C_API recur_status recur_session_input_count(const recur_session* session, size_t* count);
RECUR_C_API recur_status recur_session_output_count(const recur_session* session, size_t* count);
/* Borrowed from the session. */
RECUR_C_API recur_status recur_session_input_info(const recur_session* session, size_t index,
                                                  const recur_value_info** info);
RECUR_C_API recur_status recur_session_output_info(const recur_session* session, size_t index,
                                                   const recur_value_info** info);

RECUR_C_API recur_status recur_value_info_name(const recur_value_info* info, const char** name);
RECUR_C_API recur_status recur_value_info_dtype(const recur_value_info* info, recur_dtype* dtype);
/* The declared rank, or -1 when the model leaves it unknown. */
RECUR_C_API recur_status recur_value_info_rank(const recur_value_info* info, int64_t* rank);
/* One declared dimension: `value` is its size, or -1 when it is not a fixed number; `symbol`
 * is its name (dim_param), or "" when it has none. Either pointer may be NULL. */
RECUR_C_API recur_status recur_value_info_dim(const recur_value_info* info, size_t index,
                                              int64_t* value, const char** symbol);
/* What a sequence or map holds: a sequence's element dtype (RECUR_DTYPE_MAP for a sequence of
 * maps), and the key and value dtypes of a map or of a sequence's maps; RECUR_DTYPE_UNDEFINED
 * where the model does not say or the value has none. Any out-pointer may be NULL. */
RECUR_C_API recur_status recur_value_info_element_dtypes(const recur_value_info* info,
                                                         recur_dtype* element, recur_dtype* map_key,
                                                         recur_dtype* map_value);
/* Whether an input may be left out of a run (it has an initializer as its default). */
RECUR_C_API recur_status recur_value_info_has_default(const recur_value_info* info,
                                                      int* has_default);

/* What the model file says about itself (recur::ModelMetadata). */
typedef enum recur_model_field {
  RECUR_MODEL_PRODUCER_NAME = 0,
  RECUR_MODEL_PRODUCER_VERSION = 1,
  RECUR_MODEL_DOMAIN = 2,
  RECUR_MODEL_DESCRIPTION = 3, /* the model's doc_string */
  RECUR_MODEL_GRAPH_NAME = 4,
  RECUR_MODEL_GRAPH_DESCRIPTION = 5,
  RECUR_MODEL_FIELD_FORCE_INT = 0x7fffffff /* not a field: see RECUR_STATUS_FORCE_INT */
} recur_model_field;

/* One of the model's descriptive strings ("" when the file leaves it out), owned by the
 * session. */
RECUR_C_API recur_status recur_session_model_string(const recur_session* session,
                                                    recur_model_field field, const char** value);
/* The model's model_version and ir_version. Either out-pointer may be NULL. */
RECUR_C_API recur_status recur_session_model_version(const recur_session* session,
                                                     int64_t* model_version, int64_t* ir_version);
/* The model's metadata_props, in key order (a key the file gives twice keeps its last value,
 * as in ONNX Runtime): how many, entry `index` (either out-pointer may be NULL), and the value
 * of `key` (NULL when the model has no such key). Strings are owned by the session. */
RECUR_C_API recur_status recur_session_metadata_count(const recur_session* session, size_t* count);
RECUR_C_API recur_status recur_session_metadata_entry(const recur_session* session, size_t index,
                                                      const char** key, const char** value);
RECUR_C_API recur_status recur_session_metadata_lookup(const recur_session* session,
                                                       const char* key, const char** value);

/* The node-to-provider assignment as a table with device copies, fusions and notes, as
 * `recur-run --explain` prints it. Owned by the session. */
RECUR_C_API recur_status recur_session_explain(const recur_session* session, const char** text);
RECUR_C_API recur_status recur_session_assignment_count(const recur_session* session,
                                                        size_t* count);
/* Node `index` of the assignment: its name, operator and the provider that runs it ("" when
 * none claimed it). Any out-pointer may be NULL. */
RECUR_C_API recur_status recur_session_assignment(const recur_session* session, size_t index,
                                                  const char** node, const char** op,
                                                  const char** provider);

/* ---- Tensors ---------------------------------------------------------------------------- */

/* A host tensor whose zero-filled memory recur allocates and owns. `shape` may be NULL when
 * rank is 0 (a scalar). */
RECUR_C_API recur_status recur_tensor_create(recur_dtype dtype, const int64_t* shape, size_t rank,
                                             recur_tensor** out);
/* A host tensor over the caller's memory, without a copy. `byte_size` must equal the number
 * of elements times the element size. The caller keeps `data` alive and unchanged until the
 * tensor is released and every run that uses it has returned. */
RECUR_C_API recur_status recur_tensor_create_borrowed(void* data, size_t byte_size,
                                                      recur_dtype dtype, const int64_t* shape,
                                                      size_t rank, recur_tensor** out);
RECUR_C_API void recur_tensor_release(recur_tensor* tensor);

RECUR_C_API recur_status recur_tensor_dtype(const recur_tensor* tensor, recur_dtype* dtype);
RECUR_C_API recur_status recur_tensor_rank(const recur_tensor* tensor, size_t* rank);
/* `rank` entries, owned by the tensor. NULL for a scalar. */
RECUR_C_API recur_status recur_tensor_shape(const recur_tensor* tensor, const int64_t** shape);
RECUR_C_API recur_status recur_tensor_element_count(const recur_tensor* tensor, int64_t* count);
RECUR_C_API recur_status recur_tensor_byte_size(const recur_tensor* tensor, size_t* size);
/* The elements, row-major. Fails for a value that is not a flat numeric or bool array: a
 * string tensor (see recur_tensor_string), a sequence, a map or an empty optional. */
RECUR_C_API recur_status recur_tensor_data(recur_tensor* tensor, void** data);

/* ---- Strings, sequences, maps and optionals --------------------------------------------- */

/* These values travel in recur_tensor handles too, are fed and returned by recur_session_run
 * like tensors, and are released with recur_tensor_release. recur_tensor_dtype tells them
 * apart (RECUR_DTYPE_STRING, _SEQUENCE, _MAP, _NONE); recur_tensor_byte_size and
 * recur_tensor_data refuse them. A sequence or map shares the memory of the handles it was
 * made from, as a copy of a C++ recur::Tensor does: those handles may be released at once,
 * but a borrowed tensor's memory must stay alive as long as any value made from it. */

/* A string tensor of `shape`, its `count` elements (row-major; count must be the number of
 * elements the shape has) copied. `lengths` gives each string's length in bytes, so that a
 * string may hold NUL bytes; NULL means each string ends at its NUL. */
RECUR_C_API recur_status recur_tensor_create_strings(const char* const* strings,
                                                     const size_t* lengths, size_t count,
                                                     const int64_t* shape, size_t rank,
                                                     recur_tensor** out);
/* Element `index` (row-major) of a string tensor: its bytes, owned by the tensor and followed
 * by a NUL that `length` does not count. `length` may be NULL. */
RECUR_C_API recur_status recur_tensor_string(const recur_tensor* tensor, size_t index,
                                             const char** data, size_t* length);

/* A sequence of `count` values: tensors of one dtype, or maps of one key and value type.
 * `element_dtype` is that dtype (RECUR_DTYPE_MAP for maps); RECUR_DTYPE_UNDEFINED takes it
 * from the first element, or leaves an empty sequence's type unknown. */
RECUR_C_API recur_status recur_sequence_create(const recur_tensor* const* elements, size_t count,
                                               recur_dtype element_dtype, recur_tensor** out);
/* A map pairing 1-D `keys` (int64 or string, no key twice) in order with 1-D `values` of as
 * many elements (a numeric or string dtype). */
RECUR_C_API recur_status recur_map_create(const recur_tensor* keys, const recur_tensor* values,
                                          recur_tensor** out);
/* An empty optional, to feed an optional input that has no value. */
RECUR_C_API recur_status recur_none_create(recur_tensor** out);

/* The number of elements of a sequence, or of entries of a map. */
RECUR_C_API recur_status recur_value_count(const recur_tensor* value, size_t* count);
/* A sequence's element dtype (RECUR_DTYPE_MAP for maps; RECUR_DTYPE_UNDEFINED for an empty
 * sequence of unknown type), or a map's value dtype. */
RECUR_C_API recur_status recur_value_element_dtype(const recur_tensor* value, recur_dtype* dtype);
/* Element `index` of a sequence, as a new handle that shares the sequence's memory and that
 * the caller releases. */
RECUR_C_API recur_status recur_sequence_element(const recur_tensor* sequence, size_t index,
                                                recur_tensor** out);
/* A map's keys and values, in its order, as new 1-D handles that share the map's memory and
 * that the caller releases. Either out-pointer may be NULL. */
RECUR_C_API recur_status recur_map_entries(const recur_tensor* map, recur_tensor** keys,
                                           recur_tensor** values);

/* ---- Running ---------------------------------------------------------------------------- */

RECUR_C_API recur_status recur_run_options_create(recur_run_options** out);
RECUR_C_API void recur_run_options_release(recur_run_options* options);
/* Leave outputs on the device that computed them (no copy to the host); recur_tensor_data
 * then gives a device pointer. Off by default. */
RECUR_C_API recur_status recur_run_options_set_outputs_on_device(recur_run_options* options,
                                                                 int on);
/* Ends every run given these options (now running or started later) with RECUR_CANCELLED, at
 * the next node, loop iteration or RNN time-step block. Safe to call from any thread while a
 * run is using the options. */
RECUR_C_API recur_status recur_run_options_terminate(const recur_run_options* options);
/* A run given these options ends with RECUR_CANCELLED once `milliseconds` have passed since
 * it started. 0 clears the timeout. */
RECUR_C_API recur_status recur_run_options_set_timeout(recur_run_options* options,
                                                       uint64_t milliseconds);
/* Promises that recur_run_options_terminate() may be called, so that it takes effect within
 * milliseconds even inside a long fused RNN node, which then runs in blocks of time steps (a
 * little slower). A timeout implies it. Off by default. */
RECUR_C_API recur_status recur_run_options_set_cancellable(recur_run_options* options, int on);

/* Runs the model on `input_count` named inputs. `output_names` lists the outputs wanted, in
 * the order they are written to `outputs`, and the run runs only the nodes they need; with
 * output_names NULL and output_count 0, every
 * model output is returned in model order and `outputs` must have room for
 * recur_session_output_count() handles. Each returned tensor is owned by the caller, who
 * releases it. `run_options` may be NULL. On failure no output is written. */
RECUR_C_API recur_status recur_session_run(const recur_session* session,
                                           const recur_run_options* run_options,
                                           const char* const* input_names,
                                           const recur_tensor* const* inputs, size_t input_count,
                                           const char* const* output_names, size_t output_count,
                                           recur_tensor** outputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RECUR_RECUR_C_H_ */
