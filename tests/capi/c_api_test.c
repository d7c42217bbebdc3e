/* Every function of include/recur/recur_c.h from C11, error paths included. Run as
 *   c_api_test MODELS_DIR
 * (the repository's models/). The run results are compared with PyTorch's expected outputs
 * in models/lstm_streaming/test_data_set_0, read by a small TensorProto reader below. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recur/recur_c.h"

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++g_checks;                                                                \
    if (!(cond)) {                                                             \
      ++g_failures;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* A call that must succeed. */
#define OK(call)                                                                \
  do {                                                                          \
    recur_status st_ = (call);                                                  \
    ++g_checks;                                                                 \
    if (st_ != RECUR_OK) {                                                      \
      ++g_failures;                                                             \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, \
              recur_status_name(st_), recur_last_error_message());              \
    }                                                                           \
  } while (0)

/* A call that must fail with `status` and a message containing `text`. */
#define FAILS(call, status, text) expect_failure((call), (status), (text), #call, __LINE__)

static void expect_failure(recur_status got, recur_status want, const char* text, const char* call,
                           int line) {
  const char* message = recur_last_error_message();
  ++g_checks;
  if (got != want || message == NULL || strstr(message, text) == NULL) {
    ++g_failures;
    fprintf(stderr, "%s:%d: %s: want %s with \"%s\", got %s with \"%s\"\n", __FILE__, line, call,
            recur_status_name(want), text, recur_status_name(got),
            message != NULL ? message : "(null)");
  }
}

static char* path_join(const char* a, const char* b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char* p = malloc(n);
  snprintf(p, n, "%s/%s", a, b);
  return p;
}

static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = malloc(n > 0 ? (size_t)n : 1);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

/* ---- A TensorProto reader: dims (1), data_type (2), name (8) and raw_data (9), which is
 * all that the models' test folders use. */

typedef struct {
  char name[64];
  int dtype;
  int64_t dims[8];
  size_t rank;
  unsigned char* raw;
  size_t raw_size;
} proto_tensor;

static int read_varint(const unsigned char** p, const unsigned char* end, uint64_t* v) {
  int shift = 0;
  *v = 0;
  while (*p < end && shift < 64) {
    unsigned char b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return 1;
    shift += 7;
  }
  return 0;
}

static int parse_tensor(const unsigned char* p, size_t size, proto_tensor* t) {
  const unsigned char* end = p + size;
  memset(t, 0, sizeof *t);
  while (p < end) {
    uint64_t key, v;
    if (!read_varint(&p, end, &key)) return 0;
    unsigned field = (unsigned)(key >> 3), wire = (unsigned)(key & 7);
    if (wire == 0) {
      if (!read_varint(&p, end, &v)) return 0;
      if (field == 1 && t->rank < 8) t->dims[t->rank++] = (int64_t)v;
      if (field == 2) t->dtype = (int)v;
    } else if (wire == 2) {
      if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p)) return 0;
      if (field == 1) { /* packed dims */
        const unsigned char* q = p;
        uint64_t d;
        while (q < p + v && t->rank < 8 && read_varint(&q, p + v, &d))
          t->dims[t->rank++] = (int64_t)d;
      } else if (field == 8 && v < sizeof t->name) {
        memcpy(t->name, p, (size_t)v);
      } else if (field == 9) {
        t->raw = malloc(v > 0 ? (size_t)v : 1);
        memcpy(t->raw, p, (size_t)v);
        t->raw_size = (size_t)v;
      }
      p += v;
    } else if (wire == 5) {
      p += 4;
    } else if (wire == 1) {
      p += 8;
    } else {
      return 0;
    }
  }
  return t->raw != NULL;
}

static int load_tensor(const char* dir, const char* file, proto_tensor* t) {
  char* path = path_join(dir, file);
  size_t size = 0;
  unsigned char* data = read_file(path, &size);
  int ok = data != NULL && parse_tensor(data, size, t);
  if (!ok) fprintf(stderr, "cannot read the TensorProto %s\n", path);
  free(data);
  free(path);
  return ok;
}

/* ---- The tests ------------------------------------------------------------------------- */

static void test_library(void) {
  CHECK(strlen(recur_version()) > 0);
  CHECK(strcmp(recur_status_name(RECUR_OK), "ok") == 0);
  CHECK(strcmp(recur_status_name(RECUR_INVALID_ARGUMENT), "invalid argument") == 0);
  CHECK(strcmp(recur_status_name(RECUR_INVALID_MODEL), "invalid model") == 0);
  CHECK(strcmp(recur_status_name(RECUR_NOT_IMPLEMENTED), "not implemented") == 0);
  CHECK(strcmp(recur_status_name(RECUR_OUT_OF_RANGE), "out of range") == 0);
  CHECK(strcmp(recur_status_name(RECUR_FAILED_PRECONDITION), "failed precondition") == 0);
  CHECK(strcmp(recur_status_name(RECUR_IO), "i/o error") == 0);
  CHECK(strcmp(recur_status_name(RECUR_DEVICE), "device error") == 0);
  CHECK(strcmp(recur_status_name(RECUR_INTERNAL), "internal error") == 0);
  CHECK(strcmp(recur_status_name(RECUR_CANCELLED), "cancelled") == 0);
  CHECK(strcmp(recur_status_name(RECUR_ERROR), "error") == 0);
  CHECK(strcmp(recur_status_name((recur_status)42), "unknown status") == 0);

  size_t count = 0;
  OK(recur_provider_count(&count));
  CHECK(count >= 1);
  CHECK(strcmp(recur_last_error_message(), "") == 0);
  int saw_reference = 0;
  for (size_t i = 0; i < count; ++i) {
    const char *name = NULL, *reason = NULL;
    int available = -1;
    OK(recur_provider_info(i, &name, &available, &reason));
    CHECK(name != NULL && reason != NULL && (available == 0 || available == 1));
    if (name != NULL && strcmp(name, "reference") == 0) saw_reference = available;
    OK(recur_provider_info(i, &name, &available, NULL));
  }
  CHECK(saw_reference == 1);
  const char* name = NULL;
  int available = 0;
  FAILS(recur_provider_count(NULL), RECUR_INVALID_ARGUMENT, "recur_provider_count: count is NULL");
  FAILS(recur_provider_info(count, &name, &available, NULL), RECUR_OUT_OF_RANGE,
        "recur_provider_info: provider");
  FAILS(recur_provider_info(0, NULL, &available, NULL), RECUR_INVALID_ARGUMENT, "name is NULL");
  FAILS(recur_provider_info(0, &name, NULL, NULL), RECUR_INVALID_ARGUMENT, "available is NULL");
}

static void test_options(void) {
  recur_session_options* o = NULL;
  OK(recur_session_options_create(&o));
  CHECK(o != NULL);
  const char* providers[] = {"onednn", "reference"};
  OK(recur_session_options_set_providers(o, providers, 2));
  OK(recur_session_options_set_providers(o, NULL, 0));
  OK(recur_session_options_set_threads(o, 1));
  OK(recur_session_options_set_optimize(o, 1));
  OK(recur_session_options_set_plan_only(o, 0));
  OK(recur_session_options_set_rnn_layer_fusion(o, RECUR_RNN_FUSION_OFF));
  OK(recur_session_options_set_rnn_layer_fusion(o, RECUR_RNN_FUSION_ON));
  OK(recur_session_options_set_rnn_layer_fusion(o, RECUR_RNN_FUSION_AUTO));
  OK(recur_session_options_set_cuda_graphs(o, 0));
  OK(recur_session_options_set_random_seed(o, 42));
  OK(recur_session_options_set(o, "onednn.verbose", "0"));

  FAILS(recur_session_options_create(NULL), RECUR_INVALID_ARGUMENT, "out is NULL");
  FAILS(recur_session_options_set_providers(NULL, providers, 2), RECUR_INVALID_ARGUMENT,
        "recur_session_options_set_providers: options is NULL");
  FAILS(recur_session_options_set_providers(o, NULL, 1), RECUR_INVALID_ARGUMENT, "names is NULL");
  const char* with_null[] = {"reference", NULL};
  FAILS(recur_session_options_set_providers(o, with_null, 2), RECUR_INVALID_ARGUMENT,
        "names[1] is NULL");
  FAILS(recur_session_options_set_threads(NULL, 1), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_session_options_set_optimize(NULL, 1), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_session_options_set_plan_only(NULL, 1), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_session_options_set_rnn_layer_fusion(NULL, RECUR_RNN_FUSION_ON),
        RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_session_options_set_rnn_layer_fusion(o, (recur_rnn_fusion)7), RECUR_INVALID_ARGUMENT,
        "fusion 7 is not one of");
  FAILS(recur_session_options_set_cuda_graphs(NULL, 1), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_session_options_set_random_seed(NULL, 1), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_session_options_set(NULL, "a.b", "c"), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_session_options_set(o, NULL, "c"), RECUR_INVALID_ARGUMENT, "key is NULL");
  FAILS(recur_session_options_set(o, "a.b", NULL), RECUR_INVALID_ARGUMENT, "value is NULL");
  recur_session_options_release(o);
  recur_session_options_release(NULL);
}

/* Session creation failures: each leaves *out untouched. */
static void test_session_errors(const char* model, const char* models_dir) {
  recur_session* s = (recur_session*)&g_checks; /* a sentinel that must survive */
  recur_session_options* o = NULL;
  char* missing = path_join(models_dir, "no_such_model.onnx");
  FAILS(recur_session_create(missing, NULL, &s), RECUR_IO, "no_such_model.onnx");
  CHECK(s == (recur_session*)&g_checks);
  free(missing);
  FAILS(recur_session_create(NULL, NULL, &s), RECUR_INVALID_ARGUMENT, "model_path is NULL");
  FAILS(recur_session_create(model, NULL, NULL), RECUR_INVALID_ARGUMENT, "out is NULL");

  OK(recur_session_options_create(&o));
  const char* bad[] = {"reference", "tpu"};
  OK(recur_session_options_set_providers(o, bad, 2));
  FAILS(recur_session_create(model, o, &s), RECUR_INVALID_ARGUMENT, "unknown provider 'tpu'");
  recur_session_options_release(o);

  OK(recur_session_options_create(&o));
  OK(recur_session_options_set(o, "reference.no_such_key", "1"));
  FAILS(recur_session_create(model, o, &s), RECUR_INVALID_ARGUMENT, "no_such_key");
  recur_session_options_release(o);

  OK(recur_session_options_create(&o));
  OK(recur_session_options_set(o, "nobody.key", "1"));
  FAILS(recur_session_create(model, o, &s), RECUR_INVALID_ARGUMENT, "unknown setting 'nobody.key'");
  recur_session_options_release(o);

  OK(recur_session_options_create(&o));
  OK(recur_session_options_set_threads(o, -3));
  FAILS(recur_session_create(model, o, &s), RECUR_INVALID_ARGUMENT, "got -3");
  recur_session_options_release(o);

  const char garbage[] = "this is not an ONNX model";
  FAILS(recur_session_create_from_bytes(garbage, sizeof garbage, NULL, NULL, &s),
        RECUR_INVALID_MODEL, "");
  FAILS(recur_session_create_from_bytes(NULL, 10, NULL, NULL, &s), RECUR_INVALID_ARGUMENT,
        "data is NULL");
  FAILS(recur_session_create_from_bytes(garbage, sizeof garbage, NULL, NULL, NULL),
        RECUR_INVALID_ARGUMENT, "out is NULL");
  CHECK(s == (recur_session*)&g_checks);
  recur_session_release(NULL);
}

static void check_dim(const recur_value_info* info, size_t i, int64_t value, const char* symbol) {
  int64_t v = -2;
  const char* sym = NULL;
  OK(recur_value_info_dim(info, i, &v, &sym));
  CHECK(v == value);
  CHECK(sym != NULL && strcmp(sym, symbol) == 0);
}

/* lstm_streaming: x float32 [batch,chunk,20], h0, c0 float32 [2,batch,40] -> y [batch,chunk,12],
 * h_n, c_n [2,batch,40]. */
static void test_metadata(const recur_session* s) {
  size_t n = 0;
  OK(recur_session_input_count(s, &n));
  CHECK(n == 3);
  OK(recur_session_output_count(s, &n));
  CHECK(n == 3);
  const recur_value_info* info = NULL;
  const char* name = NULL;
  recur_dtype dtype = RECUR_DTYPE_UNDEFINED;
  int64_t rank = 0;
  int has_default = -1;
  OK(recur_session_input_info(s, 0, &info));
  OK(recur_value_info_name(info, &name));
  CHECK(strcmp(name, "x") == 0);
  OK(recur_value_info_dtype(info, &dtype));
  CHECK(dtype == RECUR_DTYPE_FLOAT32);
  OK(recur_value_info_rank(info, &rank));
  CHECK(rank == 3);
  check_dim(info, 0, -1, "batch");
  check_dim(info, 1, -1, "chunk");
  check_dim(info, 2, 20, "");
  OK(recur_value_info_dim(info, 0, NULL, NULL));
  OK(recur_value_info_has_default(info, &has_default));
  CHECK(has_default == 0);
  OK(recur_session_output_info(s, 2, &info));
  OK(recur_value_info_name(info, &name));
  CHECK(strcmp(name, "c_n") == 0);
  check_dim(info, 0, 2, "");
  check_dim(info, 1, -1, "batch");

  FAILS(recur_session_input_count(NULL, &n), RECUR_INVALID_ARGUMENT, "session is NULL");
  FAILS(recur_session_input_count(s, NULL), RECUR_INVALID_ARGUMENT, "count is NULL");
  FAILS(recur_session_output_count(NULL, &n), RECUR_INVALID_ARGUMENT, "session is NULL");
  FAILS(recur_session_output_count(s, NULL), RECUR_INVALID_ARGUMENT, "count is NULL");
  FAILS(recur_session_input_info(s, 3, &info), RECUR_OUT_OF_RANGE,
        "recur_session_input_info: input 3 is out of range (there are 3)");
  FAILS(recur_session_input_info(NULL, 0, &info), RECUR_INVALID_ARGUMENT, "session is NULL");
  FAILS(recur_session_input_info(s, 0, NULL), RECUR_INVALID_ARGUMENT, "info is NULL");
  FAILS(recur_session_output_info(s, 3, &info), RECUR_OUT_OF_RANGE, "output 3");
  FAILS(recur_session_output_info(NULL, 0, &info), RECUR_INVALID_ARGUMENT, "session is NULL");
  FAILS(recur_session_output_info(s, 0, NULL), RECUR_INVALID_ARGUMENT, "info is NULL");
  FAILS(recur_value_info_name(NULL, &name), RECUR_INVALID_ARGUMENT, "info is NULL");
  FAILS(recur_value_info_name(info, NULL), RECUR_INVALID_ARGUMENT, "name is NULL");
  FAILS(recur_value_info_dtype(NULL, &dtype), RECUR_INVALID_ARGUMENT, "info is NULL");
  FAILS(recur_value_info_dtype(info, NULL), RECUR_INVALID_ARGUMENT, "dtype is NULL");
  FAILS(recur_value_info_rank(NULL, &rank), RECUR_INVALID_ARGUMENT, "info is NULL");
  FAILS(recur_value_info_rank(info, NULL), RECUR_INVALID_ARGUMENT, "rank is NULL");
  FAILS(recur_value_info_dim(NULL, 0, NULL, NULL), RECUR_INVALID_ARGUMENT, "info is NULL");
  FAILS(recur_value_info_dim(info, 3, NULL, NULL), RECUR_OUT_OF_RANGE, "dimension 3");
  FAILS(recur_value_info_has_default(NULL, &has_default), RECUR_INVALID_ARGUMENT, "info is NULL");
  FAILS(recur_value_info_has_default(info, NULL), RECUR_INVALID_ARGUMENT, "has_default is NULL");

  const char* text = NULL;
  const char* again = NULL;
  OK(recur_session_explain(s, &text));
  CHECK(text != NULL && strstr(text, "LSTM") != NULL);
  OK(recur_session_explain(s, &again));
  CHECK(again == text);
  FAILS(recur_session_explain(NULL, &text), RECUR_INVALID_ARGUMENT, "session is NULL");
  FAILS(recur_session_explain(s, NULL), RECUR_INVALID_ARGUMENT, "text is NULL");

  size_t nodes = 0;
  OK(recur_session_assignment_count(s, &nodes));
  CHECK(nodes > 0);
  int lstm_on_reference = 0;
  for (size_t i = 0; i < nodes; ++i) {
    const char *node = NULL, *op = NULL, *provider = NULL;
    OK(recur_session_assignment(s, i, &node, &op, &provider));
    CHECK(node != NULL && op != NULL && provider != NULL);
    if (op != NULL && provider != NULL && strstr(op, "LSTM") != NULL &&
        strcmp(provider, "reference") == 0) {
      lstm_on_reference = 1;
    }
  }
  CHECK(lstm_on_reference); /* the session was made with providers = {reference} */
  OK(recur_session_assignment(s, 0, NULL, NULL, NULL));
  FAILS(recur_session_assignment_count(NULL, &nodes), RECUR_INVALID_ARGUMENT, "session is NULL");
  FAILS(recur_session_assignment_count(s, NULL), RECUR_INVALID_ARGUMENT, "count is NULL");
  FAILS(recur_session_assignment(NULL, 0, NULL, NULL, NULL), RECUR_INVALID_ARGUMENT,
        "session is NULL");
  FAILS(recur_session_assignment(s, nodes, NULL, NULL, NULL), RECUR_OUT_OF_RANGE, "node");
}

static void test_tensors(void) {
  recur_tensor* t = NULL;
  const int64_t shape[] = {2, 3};
  OK(recur_tensor_create(RECUR_DTYPE_INT32, shape, 2, &t));
  recur_dtype dtype = RECUR_DTYPE_UNDEFINED;
  size_t rank = 0, bytes = 0;
  int64_t count = 0;
  const int64_t* dims = NULL;
  void* data = NULL;
  OK(recur_tensor_dtype(t, &dtype));
  CHECK(dtype == RECUR_DTYPE_INT32);
  OK(recur_tensor_rank(t, &rank));
  CHECK(rank == 2);
  OK(recur_tensor_shape(t, &dims));
  CHECK(dims != NULL && dims[0] == 2 && dims[1] == 3);
  OK(recur_tensor_element_count(t, &count));
  CHECK(count == 6);
  OK(recur_tensor_byte_size(t, &bytes));
  CHECK(bytes == 24);
  OK(recur_tensor_data(t, &data));
  CHECK(data != NULL);
  if (data != NULL) {
    const int32_t* v = data;
    int zero = 1;
    for (int i = 0; i < 6; ++i) zero = zero && v[i] == 0;
    CHECK(zero);
  }
  recur_tensor_release(t);

  OK(recur_tensor_create(RECUR_DTYPE_FLOAT64, NULL, 0, &t)); /* a scalar */
  OK(recur_tensor_rank(t, &rank));
  CHECK(rank == 0);
  OK(recur_tensor_shape(t, &dims));
  CHECK(dims == NULL);
  OK(recur_tensor_element_count(t, &count));
  CHECK(count == 1);
  recur_tensor_release(t);

  float buffer[6] = {1, 2, 3, 4, 5, 6};
  OK(recur_tensor_create_borrowed(buffer, sizeof buffer, RECUR_DTYPE_FLOAT32, shape, 2, &t));
  OK(recur_tensor_data(t, &data));
  CHECK(data == (void*)buffer); /* zero-copy */
  recur_tensor_release(t);
  recur_tensor_release(NULL);
  CHECK(buffer[5] == 6); /* released without touching the caller's memory */

  t = NULL;
  const int64_t negative[] = {2, -1};
  const int64_t huge[] = {INT64_MAX / 2, INT64_MAX / 2};
  FAILS(recur_tensor_create(RECUR_DTYPE_STRING, shape, 2, &t), RECUR_INVALID_ARGUMENT,
        "dtype 8 is not a numeric or bool type");
  FAILS(recur_tensor_create((recur_dtype)999, shape, 2, &t), RECUR_INVALID_ARGUMENT, "dtype 999");
  FAILS(recur_tensor_create(RECUR_DTYPE_SEQUENCE, shape, 2, &t), RECUR_INVALID_ARGUMENT,
        "dtype 1000");
  FAILS(recur_tensor_create(RECUR_DTYPE_FLOAT32, negative, 2, &t), RECUR_INVALID_ARGUMENT,
        "negative dimension in shape [2,-1]");
  FAILS(recur_tensor_create(RECUR_DTYPE_FLOAT32, NULL, 2, &t), RECUR_INVALID_ARGUMENT,
        "shape is NULL with rank 2");
  FAILS(recur_tensor_create(RECUR_DTYPE_FLOAT32, huge, 2, &t), RECUR_OUT_OF_RANGE, "too large");
  FAILS(recur_tensor_create(RECUR_DTYPE_FLOAT32, shape, 2, NULL), RECUR_INVALID_ARGUMENT,
        "out is NULL");
  FAILS(recur_tensor_create_borrowed(buffer, 20, RECUR_DTYPE_FLOAT32, shape, 2, &t),
        RECUR_INVALID_ARGUMENT, "byte_size is 20 but a float32 tensor of shape [2,3] takes 24");
  FAILS(recur_tensor_create_borrowed(NULL, 24, RECUR_DTYPE_FLOAT32, shape, 2, &t),
        RECUR_INVALID_ARGUMENT, "data is NULL");
  FAILS(recur_tensor_create_borrowed(buffer, 24, RECUR_DTYPE_STRING, shape, 2, &t),
        RECUR_INVALID_ARGUMENT, "dtype 8");
  FAILS(recur_tensor_create_borrowed(buffer, 24, RECUR_DTYPE_FLOAT32, shape, 2, NULL),
        RECUR_INVALID_ARGUMENT, "out is NULL");
  CHECK(t == NULL);
  FAILS(recur_tensor_dtype(NULL, &dtype), RECUR_INVALID_ARGUMENT, "tensor is NULL");
  FAILS(recur_tensor_rank(NULL, &rank), RECUR_INVALID_ARGUMENT, "tensor is NULL");
  FAILS(recur_tensor_shape(NULL, &dims), RECUR_INVALID_ARGUMENT, "tensor is NULL");
  FAILS(recur_tensor_element_count(NULL, &count), RECUR_INVALID_ARGUMENT, "tensor is NULL");
  FAILS(recur_tensor_byte_size(NULL, &bytes), RECUR_INVALID_ARGUMENT, "tensor is NULL");
  FAILS(recur_tensor_data(NULL, &data), RECUR_INVALID_ARGUMENT, "tensor is NULL");
  OK(recur_tensor_create(RECUR_DTYPE_BOOL, shape, 2, &t));
  FAILS(recur_tensor_dtype(t, NULL), RECUR_INVALID_ARGUMENT, "dtype is NULL");
  FAILS(recur_tensor_rank(t, NULL), RECUR_INVALID_ARGUMENT, "rank is NULL");
  FAILS(recur_tensor_shape(t, NULL), RECUR_INVALID_ARGUMENT, "shape is NULL");
  FAILS(recur_tensor_element_count(t, NULL), RECUR_INVALID_ARGUMENT, "count is NULL");
  FAILS(recur_tensor_byte_size(t, NULL), RECUR_INVALID_ARGUMENT, "size is NULL");
  FAILS(recur_tensor_data(t, NULL), RECUR_INVALID_ARGUMENT, "data is NULL");
  recur_tensor_release(t);
}

/* |got - want| <= 1e-5 + 1e-3 |want|, as the models' CTests compare. */
static int matches(recur_tensor* got, const proto_tensor* want) {
  recur_dtype dtype;
  size_t rank = 0, bytes = 0;
  const int64_t* dims = NULL;
  void* data = NULL;
  if (recur_tensor_dtype(got, &dtype) != RECUR_OK || dtype != RECUR_DTYPE_FLOAT32) return 0;
  if (recur_tensor_rank(got, &rank) != RECUR_OK || rank != want->rank) return 0;
  if (recur_tensor_shape(got, &dims) != RECUR_OK) return 0;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] != want->dims[i]) return 0;
  }
  if (recur_tensor_byte_size(got, &bytes) != RECUR_OK || bytes != want->raw_size) return 0;
  if (recur_tensor_data(got, &data) != RECUR_OK) return 0;
  const float* g = data;
  for (size_t i = 0; i < bytes / sizeof(float); ++i) {
    float w;
    memcpy(&w, want->raw + i * sizeof w, sizeof w);
    if (!(fabsf(g[i] - w) <= 1e-5f + 1e-3f * fabsf(w))) {
      fprintf(stderr, "%s[%zu]: got %g, want %g\n", want->name, i, (double)g[i], (double)w);
      return 0;
    }
  }
  return 1;
}

static void test_run(const recur_session* s, const char* data_dir) {
  proto_tensor in[3], out[3];
  const char* in_files[] = {"input_0.pb", "input_1.pb", "input_2.pb"};
  const char* out_files[] = {"output_0.pb", "output_1.pb", "output_2.pb"};
  for (int i = 0; i < 3; ++i) {
    if (!load_tensor(data_dir, in_files[i], &in[i]) ||
        !load_tensor(data_dir, out_files[i], &out[i])) {
      CHECK(!"test data readable");
      return;
    }
  }
  recur_tensor* feeds[3] = {NULL, NULL, NULL};
  const char* names[3];
  for (int i = 0; i < 3; ++i) {
    names[i] = in[i].name;
    OK(recur_tensor_create_borrowed(in[i].raw, in[i].raw_size, (recur_dtype)in[i].dtype, in[i].dims,
                                    in[i].rank, &feeds[i]));
  }
  const recur_tensor* const* inputs = (const recur_tensor* const*)feeds;

  /* Every output, in model order. */
  recur_tensor* results[3] = {NULL, NULL, NULL};
  OK(recur_session_run(s, NULL, names, inputs, 3, NULL, 0, results));
  for (int i = 0; i < 3; ++i) {
    CHECK(results[i] != NULL && matches(results[i], &out[i]));
    recur_tensor_release(results[i]);
  }

  /* Two outputs by name, in the order asked, with run options. */
  recur_run_options* ro = NULL;
  OK(recur_run_options_create(&ro));
  OK(recur_run_options_set_outputs_on_device(ro, 0));
  const char* wanted[] = {"c_n", "y"};
  recur_tensor* two[2] = {NULL, NULL};
  OK(recur_session_run(s, ro, names, inputs, 3, wanted, 2, two));
  CHECK(two[0] != NULL && matches(two[0], &out[2]));
  CHECK(two[1] != NULL && matches(two[1], &out[0]));
  recur_tensor_release(two[0]);
  recur_tensor_release(two[1]);

  /* Failures write no output. */
  recur_tensor* untouched[3] = {NULL, NULL, NULL};
  const char* unknown_out[] = {"y", "logits"};
  FAILS(recur_session_run(s, ro, names, inputs, 3, unknown_out, 2, untouched),
        RECUR_INVALID_ARGUMENT, "the model has no output 'logits'");
  FAILS(recur_session_run(s, NULL, names, inputs, 2, NULL, 0, untouched), RECUR_INVALID_ARGUMENT,
        "missing input 'c0'");
  const char* unknown_in[] = {"x", "h0", "state"};
  FAILS(recur_session_run(s, NULL, unknown_in, inputs, 3, NULL, 0, untouched),
        RECUR_INVALID_ARGUMENT, "unknown input 'state'");
  recur_tensor* ints = NULL;
  OK(recur_tensor_create(RECUR_DTYPE_INT64, in[0].dims, in[0].rank, &ints));
  const recur_tensor* wrong[3] = {ints, feeds[1], feeds[2]};
  FAILS(recur_session_run(s, NULL, names, wrong, 3, NULL, 0, untouched), RECUR_INVALID_ARGUMENT,
        "input 'x' is int64 but the model expects float32");
  recur_tensor_release(ints);
  const recur_tensor* with_null[3] = {feeds[0], NULL, feeds[2]};
  FAILS(recur_session_run(s, NULL, names, with_null, 3, NULL, 0, untouched), RECUR_INVALID_ARGUMENT,
        "inputs[1] ('h0') is NULL");
  const char* null_name[] = {"x", NULL, "c0"};
  FAILS(recur_session_run(s, NULL, null_name, inputs, 3, NULL, 0, untouched),
        RECUR_INVALID_ARGUMENT, "input_names[1] is NULL");
  const char* null_out[] = {NULL};
  FAILS(recur_session_run(s, NULL, names, inputs, 3, null_out, 1, untouched),
        RECUR_INVALID_ARGUMENT, "output_names[0] is NULL");
  FAILS(recur_session_run(NULL, NULL, names, inputs, 3, NULL, 0, untouched), RECUR_INVALID_ARGUMENT,
        "session is NULL");
  FAILS(recur_session_run(s, NULL, names, inputs, 3, NULL, 0, NULL), RECUR_INVALID_ARGUMENT,
        "outputs is NULL");
  FAILS(recur_session_run(s, NULL, NULL, inputs, 3, NULL, 0, untouched), RECUR_INVALID_ARGUMENT,
        "input_names is NULL");
  FAILS(recur_session_run(s, NULL, names, NULL, 3, NULL, 0, untouched), RECUR_INVALID_ARGUMENT,
        "inputs is NULL");
  FAILS(recur_session_run(s, NULL, names, inputs, 3, NULL, 2, untouched), RECUR_INVALID_ARGUMENT,
        "output_names is NULL");
  CHECK(untouched[0] == NULL && untouched[1] == NULL && untouched[2] == NULL);
  FAILS(recur_run_options_create(NULL), RECUR_INVALID_ARGUMENT, "out is NULL");
  FAILS(recur_run_options_set_outputs_on_device(NULL, 1), RECUR_INVALID_ARGUMENT,
        "options is NULL");

  /* Cancellation: a timeout that is not reached changes nothing; once terminated, every run
   * given the options ends with RECUR_CANCELLED and writes no output. */
  OK(recur_run_options_set_cancellable(ro, 1));
  OK(recur_run_options_set_timeout(ro, 600000));
  OK(recur_session_run(s, ro, names, inputs, 3, wanted, 2, two));
  recur_tensor_release(two[0]);
  recur_tensor_release(two[1]);
  OK(recur_run_options_set_timeout(ro, UINT64_MAX)); /* never reached, not an overflow */
  OK(recur_session_run(s, ro, names, inputs, 3, wanted, 2, two));
  CHECK(two[0] != NULL && matches(two[0], &out[2]));
  recur_tensor_release(two[0]);
  recur_tensor_release(two[1]);
  OK(recur_run_options_set_timeout(ro, 0));
  OK(recur_run_options_terminate(ro));
  FAILS(recur_session_run(s, ro, names, inputs, 3, NULL, 0, untouched), RECUR_CANCELLED,
        "terminate()");
  CHECK(untouched[0] == NULL);
  FAILS(recur_run_options_terminate(NULL), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_run_options_set_timeout(NULL, 1), RECUR_INVALID_ARGUMENT, "options is NULL");
  FAILS(recur_run_options_set_cancellable(NULL, 1), RECUR_INVALID_ARGUMENT, "options is NULL");
  recur_run_options_release(ro);
  recur_run_options_release(NULL);
  OK(recur_provider_count(&(size_t){0}));
  CHECK(strcmp(recur_last_error_message(), "") == 0); /* a success clears the message */

  for (int i = 0; i < 3; ++i) {
    recur_tensor_release(feeds[i]);
    free(in[i].raw);
    free(out[i].raw);
  }
}

/* The same model from memory, with default options, runs too; a plan-only one cannot. */
static void test_from_bytes_and_plan_only(const char* model, const char* data_dir) {
  size_t size = 0;
  unsigned char* bytes = read_file(model, &size);
  CHECK(bytes != NULL);
  if (bytes == NULL) return;
  recur_session* s = NULL;
  OK(recur_session_create_from_bytes(bytes, size, ".", NULL, &s));
  free(bytes); /* the session keeps its own copy */
  proto_tensor x, y;
  if (s != NULL && load_tensor(data_dir, "input_0.pb", &x) &&
      load_tensor(data_dir, "output_0.pb", &y)) {
    /* h0 and c0 are required: this also checks the session sees the same model. */
    recur_tensor* feed = NULL;
    OK(recur_tensor_create_borrowed(x.raw, x.raw_size, RECUR_DTYPE_FLOAT32, x.dims, x.rank, &feed));
    const char* name = "x";
    recur_tensor* got = NULL;
    const recur_tensor* in[1] = {feed};
    FAILS(recur_session_run(s, NULL, &name, in, 1, NULL, 0, &got), RECUR_INVALID_ARGUMENT,
          "missing input 'h0'");
    recur_tensor_release(feed);
    free(x.raw);
    free(y.raw);
  }
  recur_session_release(s);

  recur_session_options* o = NULL;
  OK(recur_session_options_create(&o));
  OK(recur_session_options_set_plan_only(o, 1));
  s = NULL;
  OK(recur_session_create(model, o, &s));
  recur_session_options_release(o);
  recur_tensor* got[3] = {NULL, NULL, NULL};
  FAILS(recur_session_run(s, NULL, NULL, NULL, 0, NULL, 0, got), RECUR_FAILED_PRECONDITION,
        "plan_only");
  recur_session_release(s);
}

/* Y = Identity(X), X and Y float32 [2,3], opset 14: a ModelProto written out field by field
 * (what onnx.helper.make_model gives for that graph with ir_version 8). */
static const unsigned char identity_model[] = {
    0x08, 0x08,                                                 /* ir_version 8 */
    0x3a, 0x3f,                                                 /* graph (63 bytes) */
    0x0a, 0x10,                                                 /*   node */
    0x0a, 0x01, 'X',  0x12, 0x01, 'Y',                          /*     input X, output Y */
    0x22, 0x08, 'I',  'd',  'e',  'n',  't',  'i',  't',  'y',  /*     op_type */
    0x12, 0x01, 'g',                                            /*   name */
    0x5a, 0x13, 0x0a, 0x01, 'X',                                /*   input X */
    0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01,                         /*     tensor float */
    0x12, 0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x03, /*     shape [2,3] */
    0x62, 0x13, 0x0a, 0x01, 'Y',                                /*   output Y */
    0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01,                         /*     tensor float */
    0x12, 0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x03, /*     shape [2,3] */
    0x42, 0x04, 0x0a, 0x00, 0x10, 0x0e                          /* opset_import "" 14 */
};

/* An output that is an input passed through must not be the caller's buffer: the caller may
 * free or reuse it as soon as the run returns. */
static void test_outputs_own_their_memory(void) {
  recur_session* s = NULL;
  OK(recur_session_create_from_bytes(identity_model, sizeof identity_model, NULL, NULL, &s));
  if (s == NULL) return;
  float x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[] = {2, 3};
  recur_tensor* in = NULL;
  OK(recur_tensor_create_borrowed(x, sizeof x, RECUR_DTYPE_FLOAT32, shape, 2, &in));
  const char* name = "X";
  const recur_tensor* feeds[1] = {in};
  recur_tensor* y = NULL;
  OK(recur_session_run(s, NULL, &name, feeds, 1, NULL, 0, &y));
  recur_tensor_release(in);
  void* data = NULL;
  if (y != NULL) OK(recur_tensor_data(y, &data));
  CHECK(data != NULL && data != (void*)x);
  x[0] = 100; /* the caller reuses its buffer */
  CHECK(data != NULL && ((const float*)data)[0] == 1 && ((const float*)data)[5] == 6);
  recur_tensor_release(y);
  recur_session_release(s);
}

/* ModelProto fields appended to identity_model (protobuf takes fields in any order):
 * producer_name "c", model_version 3, doc_string "d", and metadata_props rate = 16000 and
 * labels = yes,no. */
static const unsigned char metadata_fields[] = {
    0x12, 0x01, 'c',                                                       /* producer_name */
    0x28, 0x03,                                                            /* model_version */
    0x32, 0x01, 'd',                                                       /* doc_string */
    0x72, 0x0d, 0x0a, 0x04, 'r', 'a', 't', 'e', 0x12, 0x05, '1', '6', '0', '0', '0',
    0x72, 0x10, 0x0a, 0x06, 'l', 'a', 'b', 'e', 'l', 's', 0x12, 0x06, 'y', 'e', 's', ',', 'n', 'o'};

static void test_metadata_props(void) {
  unsigned char bytes[sizeof identity_model + sizeof metadata_fields];
  memcpy(bytes, identity_model, sizeof identity_model);
  memcpy(bytes + sizeof identity_model, metadata_fields, sizeof metadata_fields);
  recur_session* s = NULL;
  OK(recur_session_create_from_bytes(bytes, sizeof bytes, NULL, NULL, &s));
  if (s == NULL) return;
  const char* value = NULL;
  OK(recur_session_model_string(s, RECUR_MODEL_PRODUCER_NAME, &value));
  CHECK(value != NULL && strcmp(value, "c") == 0);
  OK(recur_session_model_string(s, RECUR_MODEL_DESCRIPTION, &value));
  CHECK(value != NULL && strcmp(value, "d") == 0);
  OK(recur_session_model_string(s, RECUR_MODEL_GRAPH_NAME, &value));
  CHECK(value != NULL && strcmp(value, "g") == 0);
  OK(recur_session_model_string(s, RECUR_MODEL_PRODUCER_VERSION, &value));
  CHECK(value != NULL && strcmp(value, "") == 0);
  OK(recur_session_model_string(s, RECUR_MODEL_DOMAIN, &value));
  OK(recur_session_model_string(s, RECUR_MODEL_GRAPH_DESCRIPTION, &value));
  FAILS(recur_session_model_string(s, (recur_model_field)6, &value), RECUR_INVALID_ARGUMENT,
        "field 6 is not a recur_model_field");
  FAILS(recur_session_model_string(s, RECUR_MODEL_DOMAIN, NULL), RECUR_INVALID_ARGUMENT,
        "value is NULL");
  int64_t version = 0, ir = 0;
  OK(recur_session_model_version(s, &version, &ir));
  CHECK(version == 3 && ir == 8);
  OK(recur_session_model_version(s, NULL, NULL));

  size_t count = 0;
  OK(recur_session_metadata_count(s, &count));
  CHECK(count == 2);
  const char* key = NULL;
  OK(recur_session_metadata_entry(s, 0, &key, &value)); /* in key order */
  CHECK(key != NULL && strcmp(key, "labels") == 0 && strcmp(value, "yes,no") == 0);
  OK(recur_session_metadata_entry(s, 1, &key, NULL));
  CHECK(key != NULL && strcmp(key, "rate") == 0);
  FAILS(recur_session_metadata_entry(s, 2, &key, &value), RECUR_OUT_OF_RANGE,
        "recur_session_metadata_entry: entry 2 is out of range (there are 2)");
  OK(recur_session_metadata_lookup(s, "rate", &value));
  CHECK(value != NULL && strcmp(value, "16000") == 0);
  OK(recur_session_metadata_lookup(s, "missing", &value));
  CHECK(value == NULL);
  FAILS(recur_session_metadata_lookup(s, NULL, &value), RECUR_INVALID_ARGUMENT, "key is NULL");
  FAILS(recur_session_metadata_count(NULL, &count), RECUR_INVALID_ARGUMENT, "session is NULL");
  recur_session_release(s);
}

/* ---- Strings, sequences, maps and optionals --------------------------------------------- */

/* Whether string tensor `t` holds `want` (count strings, row-major). */
static int strings_equal(const recur_tensor* t, const char* const* want, size_t count) {
  int64_t n = -1;
  if (recur_tensor_element_count(t, &n) != RECUR_OK || n != (int64_t)count) return 0;
  for (size_t i = 0; i < count; ++i) {
    const char* got = NULL;
    size_t length = 0;
    if (recur_tensor_string(t, i, &got, &length) != RECUR_OK) return 0;
    if (length != strlen(want[i]) || strcmp(got, want[i]) != 0) return 0;
  }
  return 1;
}

static void test_string_tensors(void) {
  /* Strings are copied, may hold NUL bytes when their lengths are given, and come back with a
   * terminating NUL. */
  const char* words[] = {"the", "cat", "", "x\0y"};
  const size_t lengths[] = {3, 3, 0, 3};
  const int64_t shape[] = {2, 2};
  recur_tensor* t = NULL;
  OK(recur_tensor_create_strings(words, lengths, 4, shape, 2, &t));
  recur_dtype dtype = RECUR_DTYPE_UNDEFINED;
  OK(recur_tensor_dtype(t, &dtype));
  CHECK(dtype == RECUR_DTYPE_STRING);
  const char* got = NULL;
  size_t length = 99;
  OK(recur_tensor_string(t, 3, &got, &length));
  CHECK(length == 3 && memcmp(got, "x\0y", 4) == 0);
  OK(recur_tensor_string(t, 2, &got, NULL));
  CHECK(got != NULL && got[0] == '\0');
  int64_t count = 0;
  OK(recur_tensor_element_count(t, &count));
  CHECK(count == 4);
  void* data = NULL;
  size_t bytes = 0;
  FAILS(recur_tensor_data(t, &data), RECUR_INVALID_ARGUMENT, "recur_tensor_string");
  FAILS(recur_tensor_byte_size(t, &bytes), RECUR_INVALID_ARGUMENT, "string tensor");
  FAILS(recur_tensor_string(t, 4, &got, NULL), RECUR_OUT_OF_RANGE,
        "recur_tensor_string: element 4 is out of range (there are 4)");
  FAILS(recur_tensor_string(t, 0, NULL, NULL), RECUR_INVALID_ARGUMENT, "data is NULL");
  recur_tensor_release(t);

  t = NULL;
  OK(recur_tensor_create_strings(words, NULL, 2, shape, 1, &t)); /* NUL-terminated */
  CHECK(t != NULL && strings_equal(t, words, 2));
  recur_tensor_release(t);
  const int64_t none[] = {0};
  t = NULL;
  OK(recur_tensor_create_strings(NULL, NULL, 0, none, 1, &t)); /* empty: no strings needed */
  OK(recur_tensor_element_count(t, &count));
  CHECK(count == 0);
  recur_tensor_release(t);

  FAILS(recur_tensor_create_strings(words, NULL, 3, shape, 2, &t), RECUR_INVALID_ARGUMENT,
        "count is 3 but shape [2,2] has 4 elements");
  const char* holes[] = {"a", NULL};
  FAILS(recur_tensor_create_strings(holes, NULL, 2, shape, 1, &t), RECUR_INVALID_ARGUMENT,
        "recur_tensor_create_strings: strings[1] is NULL");
  FAILS(recur_tensor_create_strings(NULL, NULL, 2, shape, 1, &t), RECUR_INVALID_ARGUMENT,
        "strings is NULL");
  FAILS(recur_tensor_create_strings(words, NULL, 2, shape, 1, NULL), RECUR_INVALID_ARGUMENT,
        "out is NULL");
  float x = 1;
  recur_tensor* f = NULL;
  OK(recur_tensor_create_borrowed(&x, sizeof x, RECUR_DTYPE_FLOAT32, NULL, 0, &f));
  FAILS(recur_tensor_string(f, 0, &got, NULL), RECUR_INVALID_ARGUMENT,
        "is a float32 tensor, not a string tensor");
  recur_tensor_release(f);
}

/* A session with the default options over dir/file, or NULL (a failed check). */
static recur_session* open_model(const char* dir, const char* file) {
  char* path = path_join(dir, file);
  recur_session* s = NULL;
  OK(recur_session_create(path, NULL, &s));
  free(path);
  return s;
}

/* tests/data/ml/category_mapper_embedding: words (strings) -> ids, vectors, and ids mapped
 * back to strings. The inputs and expected outputs are its test_data_set_0, written by hand
 * from CategoryMapper's and Gather's definitions (tools/gen_ml_tests.py). */
static void test_string_model(const char* test_data_dir) {
  recur_session* s = open_model(test_data_dir, "ml/category_mapper_embedding/model.onnx");
  if (s == NULL) return;
  const recur_value_info* info = NULL;
  recur_dtype dtype = RECUR_DTYPE_UNDEFINED;
  OK(recur_session_input_info(s, 0, &info));
  OK(recur_value_info_dtype(info, &dtype));
  CHECK(dtype == RECUR_DTYPE_STRING);

  const char* words[] = {"the", "cat", "sat", "the", "dog", "The"};
  const int64_t shape[] = {2, 3};
  recur_tensor* in = NULL;
  OK(recur_tensor_create_strings(words, NULL, 6, shape, 2, &in));
  const char* name = "words";
  const recur_tensor* feeds[1] = {in};
  recur_tensor* out[3] = {NULL, NULL, NULL};
  OK(recur_session_run(s, NULL, &name, feeds, 1, NULL, 0, out));
  recur_tensor_release(in); /* the outputs do not depend on it */
  if (out[0] != NULL && out[2] != NULL) {
    const int64_t want_ids[] = {1, 2, 3, 1, 0, 0};
    void* ids = NULL;
    OK(recur_tensor_data(out[0], &ids));
    CHECK(ids != NULL && memcmp(ids, want_ids, sizeof want_ids) == 0);
    const char* back[] = {"the", "cat", "sat", "the", "<unk>", "<unk>"};
    CHECK(strings_equal(out[2], back, 6));
    const int64_t* got_shape = NULL;
    OK(recur_tensor_shape(out[2], &got_shape));
    CHECK(got_shape != NULL && got_shape[0] == 2 && got_shape[1] == 3);
  }
  for (int i = 0; i < 3; ++i) recur_tensor_release(out[i]);
  recur_session_release(s);
}

/* tests/data/ml/sk_dictvec_logreg: DictVectorizer and LogisticRegression, map(string, float)
 * -> label (string) and output_probability (a sequence of map(string, float)). The input and
 * expected outputs are its test_data_set_2, from scikit-learn's predict and predict_proba
 * (tools/gen_sklearn_tests.py). */
static void test_map_model(const char* test_data_dir) {
  recur_session* s = open_model(test_data_dir, "ml/sk_dictvec_logreg/model.onnx");
  if (s == NULL) return;
  const recur_value_info* info = NULL;
  recur_dtype dtype = RECUR_DTYPE_UNDEFINED, element = RECUR_DTYPE_UNDEFINED,
              key = RECUR_DTYPE_UNDEFINED, value = RECUR_DTYPE_UNDEFINED;
  OK(recur_session_input_info(s, 0, &info));
  OK(recur_value_info_dtype(info, &dtype));
  OK(recur_value_info_element_dtypes(info, &element, &key, &value));
  CHECK(dtype == RECUR_DTYPE_MAP && element == RECUR_DTYPE_UNDEFINED);
  CHECK(key == RECUR_DTYPE_STRING && value == RECUR_DTYPE_FLOAT32);
  OK(recur_session_output_info(s, 1, &info));
  OK(recur_value_info_dtype(info, &dtype));
  OK(recur_value_info_element_dtypes(info, &element, NULL, NULL));
  CHECK(dtype == RECUR_DTYPE_SEQUENCE && element == RECUR_DTYPE_MAP);
  OK(recur_value_info_element_dtypes(info, NULL, &key, &value));
  CHECK(key == RECUR_DTYPE_STRING && value == RECUR_DTYPE_FLOAT32);
  FAILS(recur_value_info_element_dtypes(NULL, &element, NULL, NULL), RECUR_INVALID_ARGUMENT,
        "info is NULL");

  const char* names[] = {"score", "weight", "height"};
  const int64_t three[] = {3};
  float values[] = {-0.25608575344085693f, -1.7697302103042603f, 0.18869368731975555f};
  recur_tensor *keys = NULL, *vals = NULL, *map = NULL;
  OK(recur_tensor_create_strings(names, NULL, 3, three, 1, &keys));
  OK(recur_tensor_create_borrowed(values, sizeof values, RECUR_DTYPE_FLOAT32, three, 1, &vals));
  OK(recur_map_create(keys, vals, &map));
  recur_tensor_release(keys); /* the map shares them */
  recur_tensor_release(vals);
  size_t count = 0;
  OK(recur_value_count(map, &count));
  CHECK(count == 3);
  OK(recur_tensor_dtype(map, &dtype));
  OK(recur_value_element_dtype(map, &value));
  CHECK(dtype == RECUR_DTYPE_MAP && value == RECUR_DTYPE_FLOAT32);

  const char* input = "features";
  const recur_tensor* feeds[1] = {map};
  recur_tensor* out[2] = {NULL, NULL};
  OK(recur_session_run(s, NULL, &input, feeds, 1, NULL, 0, out));
  if (out[0] != NULL && out[1] != NULL) {
    const char* label[] = {"b"};
    CHECK(strings_equal(out[0], label, 1));
    OK(recur_tensor_dtype(out[1], &dtype));
    OK(recur_value_count(out[1], &count));
    CHECK(dtype == RECUR_DTYPE_SEQUENCE && count == 1);
    OK(recur_value_element_dtype(out[1], &element));
    CHECK(element == RECUR_DTYPE_MAP);
    recur_tensor *probs = NULL, *classes = NULL, *p = NULL;
    OK(recur_sequence_element(out[1], 0, &probs));
    OK(recur_map_entries(probs, &classes, &p));
    const char* want_classes[] = {"a", "b", "c"};
    const float want_p[] = {0.49416470527648926f, 0.5023783445358276f, 0.003456977428868413f};
    CHECK(classes != NULL && strings_equal(classes, want_classes, 3));
    void* data = NULL;
    if (p != NULL) OK(recur_tensor_data(p, &data));
    for (int i = 0; data != NULL && i < 3; ++i) {
      CHECK(fabsf(((const float*)data)[i] - want_p[i]) <= 1e-5f);
    }
    FAILS(recur_sequence_element(out[1], 1, &p), RECUR_OUT_OF_RANGE,
          "recur_sequence_element: element 1 is out of range (there are 1)");
    FAILS(recur_map_entries(out[1], &classes, NULL), RECUR_INVALID_ARGUMENT,
          "recur_map_entries: map: the value is a sequence, not a map");
    FAILS(recur_sequence_element(probs, 0, &p), RECUR_INVALID_ARGUMENT, "not a sequence");
    FAILS(recur_tensor_data(probs, &data), RECUR_INVALID_ARGUMENT, "recur_map_entries");
    OK(recur_map_entries(probs, NULL, NULL));
    recur_tensor_release(p);
    recur_tensor_release(classes);
    recur_tensor_release(probs);
  }
  for (int i = 0; i < 2; ++i) recur_tensor_release(out[i]);

  /* A map of the wrong key type is refused naming the input. */
  recur_tensor *ikeys = NULL, *imap = NULL;
  int64_t ids[] = {1, 2, 3};
  OK(recur_tensor_create_borrowed(ids, sizeof ids, RECUR_DTYPE_INT64, three, 1, &ikeys));
  OK(recur_tensor_create_borrowed(values, sizeof values, RECUR_DTYPE_FLOAT32, three, 1, &vals));
  OK(recur_map_create(ikeys, vals, &imap));
  feeds[0] = imap;
  FAILS(recur_session_run(s, NULL, &input, feeds, 1, NULL, 0, out), RECUR_INVALID_ARGUMENT,
        "features");
  recur_tensor_release(imap);

  /* Maps that cannot be made. */
  const char* twice[] = {"a", "b", "a"};
  recur_tensor* tkeys = NULL;
  OK(recur_tensor_create_strings(twice, NULL, 3, three, 1, &tkeys));
  FAILS(recur_map_create(tkeys, vals, &imap), RECUR_INVALID_ARGUMENT, "a map holds the key 'a' twice");
  FAILS(recur_map_create(vals, vals, &imap), RECUR_INVALID_ARGUMENT,
        "keys are an int64 or string tensor, not float32");
  const int64_t two[] = {2};
  recur_tensor* short_vals = NULL;
  OK(recur_tensor_create_borrowed(values, 2 * sizeof(float), RECUR_DTYPE_FLOAT32, two, 1,
                                  &short_vals));
  FAILS(recur_map_create(ikeys, short_vals, &imap), RECUR_INVALID_ARGUMENT,
        "1-D keys and values of one length");
  FAILS(recur_map_create(NULL, vals, &imap), RECUR_INVALID_ARGUMENT,
        "recur_map_create: keys is NULL");
  FAILS(recur_map_create(ikeys, vals, NULL), RECUR_INVALID_ARGUMENT, "out is NULL");
  recur_tensor_release(short_vals);
  recur_tensor_release(tkeys);
  recur_tensor_release(ikeys);
  recur_tensor_release(vals);
  recur_tensor_release(map);
  recur_session_release(s);
}

/* Y = Identity(S) over a sequence of float tensors, opset 14, ir_version 8: what
 * onnx.helper.make_model gives for that graph (tensor_sequence_value_info, no shapes). */
static const unsigned char identity_sequence_model[] = {
    0x08, 0x08,                                                 /* ir_version 8 */
    0x3a, 0x33,                                                 /* graph (51 bytes) */
    0x0a, 0x10,                                                 /*   node */
    0x0a, 0x01, 'S',  0x12, 0x01, 'Y',                          /*     input S, output Y */
    0x22, 0x08, 'I',  'd',  'e',  'n',  't',  'i',  't',  'y',  /*     op_type */
    0x12, 0x01, 'g',                                            /*   name */
    0x5a, 0x0d, 0x0a, 0x01, 'S',                                /*   input S */
    0x12, 0x08, 0x22, 0x06, 0x0a, 0x04, 0x0a, 0x02, 0x08, 0x01, /*     seq(tensor float) */
    0x62, 0x0d, 0x0a, 0x01, 'Y',                                /*   output Y */
    0x12, 0x08, 0x22, 0x06, 0x0a, 0x04, 0x0a, 0x02, 0x08, 0x01, /*     seq(tensor float) */
    0x42, 0x04, 0x0a, 0x00, 0x10, 0x0e                          /* opset_import "" 14 */
};

static void test_sequences(void) {
  float a[3] = {1, 2, 3}, b[2] = {4, 5};
  const int64_t three[] = {3}, two[] = {2};
  recur_tensor *ta = NULL, *tb = NULL, *seq = NULL;
  OK(recur_tensor_create_borrowed(a, sizeof a, RECUR_DTYPE_FLOAT32, three, 1, &ta));
  OK(recur_tensor_create_borrowed(b, sizeof b, RECUR_DTYPE_FLOAT32, two, 1, &tb));
  const recur_tensor* elements[2] = {ta, tb};
  OK(recur_sequence_create(elements, 2, RECUR_DTYPE_UNDEFINED, &seq));
  size_t count = 0;
  recur_dtype dtype = RECUR_DTYPE_UNDEFINED;
  OK(recur_value_count(seq, &count));
  OK(recur_value_element_dtype(seq, &dtype));
  CHECK(count == 2 && dtype == RECUR_DTYPE_FLOAT32);
  OK(recur_tensor_dtype(seq, &dtype));
  CHECK(dtype == RECUR_DTYPE_SEQUENCE);
  void* data = NULL;
  FAILS(recur_tensor_data(seq, &data), RECUR_INVALID_ARGUMENT, "not a tensor");
  FAILS(recur_tensor_element_count(seq, NULL), RECUR_INVALID_ARGUMENT, "not a tensor");
  FAILS(recur_value_count(ta, &count), RECUR_INVALID_ARGUMENT,
        "recur_value_count: the value is a float32, not a sequence or a map");
  FAILS(recur_value_element_dtype(ta, &dtype), RECUR_INVALID_ARGUMENT, "not a sequence or a map");

  /* Through a model: the output sequence holds copies, not the caller's buffers. */
  recur_session* s = NULL;
  OK(recur_session_create_from_bytes(identity_sequence_model, sizeof identity_sequence_model,
                                     NULL, NULL, &s));
  const char* name = "S";
  const recur_tensor* feeds[1] = {seq};
  recur_tensor* y = NULL;
  if (s != NULL) OK(recur_session_run(s, NULL, &name, feeds, 1, NULL, 0, &y));
  recur_tensor* second = NULL;
  if (y != NULL) OK(recur_sequence_element(y, 1, &second));
  if (second != NULL) OK(recur_tensor_data(second, &data));
  CHECK(data != NULL && data != (void*)b);
  b[0] = 100; /* the caller reuses its buffer */
  CHECK(data != NULL && ((const float*)data)[0] == 4 && ((const float*)data)[1] == 5);
  const int64_t* shape = NULL;
  if (second != NULL) OK(recur_tensor_shape(second, &shape));
  CHECK(shape != NULL && shape[0] == 2);
  recur_tensor_release(second);
  recur_tensor_release(y);

  /* A tensor where the model wants a sequence, and the reverse, are refused naming the input. */
  feeds[0] = ta;
  FAILS(recur_session_run(s, NULL, &name, feeds, 1, NULL, 0, &y), RECUR_INVALID_ARGUMENT, "'S'");
  recur_session_release(s);

  /* An empty sequence keeps the dtype it is given. */
  recur_tensor* empty = NULL;
  OK(recur_sequence_create(NULL, 0, RECUR_DTYPE_INT64, &empty));
  OK(recur_value_count(empty, &count));
  OK(recur_value_element_dtype(empty, &dtype));
  CHECK(count == 0 && dtype == RECUR_DTYPE_INT64);
  recur_tensor_release(empty);

  recur_tensor *ints = NULL, *none = NULL, *bad = NULL;
  int64_t k[2] = {7, 8};
  OK(recur_tensor_create_borrowed(k, sizeof k, RECUR_DTYPE_INT64, two, 1, &ints));
  const recur_tensor* mixed[2] = {ta, ints};
  FAILS(recur_sequence_create(mixed, 2, RECUR_DTYPE_UNDEFINED, &bad), RECUR_INVALID_ARGUMENT,
        "one dtype (float32), not int64");
  FAILS(recur_sequence_create(elements, 2, RECUR_DTYPE_INT64, &bad), RECUR_INVALID_ARGUMENT,
        "one dtype (int64), not float32");
  FAILS(recur_sequence_create(elements, 2, (recur_dtype)77, &bad), RECUR_INVALID_ARGUMENT,
        "element_dtype 77 is not a tensor dtype or RECUR_DTYPE_MAP");
  const recur_tensor* holes[2] = {ta, NULL};
  FAILS(recur_sequence_create(holes, 2, RECUR_DTYPE_UNDEFINED, &bad), RECUR_INVALID_ARGUMENT,
        "recur_sequence_create: elements[1] is NULL");
  FAILS(recur_sequence_create(NULL, 1, RECUR_DTYPE_UNDEFINED, &bad), RECUR_INVALID_ARGUMENT,
        "elements is NULL");
  OK(recur_none_create(&none));
  OK(recur_tensor_dtype(none, &dtype));
  CHECK(dtype == RECUR_DTYPE_NONE);
  const recur_tensor* nested[1] = {none};
  FAILS(recur_sequence_create(nested, 1, RECUR_DTYPE_UNDEFINED, &bad), RECUR_INVALID_ARGUMENT,
        "a sequence holds tensors of one dtype");
  FAILS(recur_none_create(NULL), RECUR_INVALID_ARGUMENT, "recur_none_create: out is NULL");
  recur_tensor_release(none);
  recur_tensor_release(ints);
  recur_tensor_release(seq);
  recur_tensor_release(tb);
  recur_tensor_release(ta);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODELS_DIR TEST_DATA_DIR\n", argv[0]);
    return 2;
  }
  char* dir = path_join(argv[1], "lstm_streaming");
  char* model = path_join(dir, "model.onnx");
  char* data_dir = path_join(dir, "test_data_set_0");

  test_library();
  test_options();
  test_session_errors(model, argv[1]);
  test_tensors();

  recur_session_options* o = NULL;
  recur_session* s = NULL;
  OK(recur_session_options_create(&o));
  const char* reference[] = {"reference"};
  OK(recur_session_options_set_providers(o, reference, 1));
  OK(recur_session_options_set_threads(o, 1));
  OK(recur_session_create(model, o, &s));
  recur_session_options_release(o); /* the session does not need it any more */
  if (s != NULL) {
    test_metadata(s);
    test_run(s, data_dir);
  }
  recur_session_release(s);
  test_from_bytes_and_plan_only(model, data_dir);
  test_outputs_own_their_memory();
  test_metadata_props();
  test_string_tensors();
  test_string_model(argv[2]);
  test_map_model(argv[2]);
  test_sequences();

  free(data_dir);
  free(model);
  free(dir);
  printf("c_api_test: %d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
