/* Runs an ONNX model through recur's C API: prints its inputs and outputs, feeds every input
 * with 0.5 (numbers) or 1 (integers), with 2 for each symbolic dimension, and prints what
 * each output holds and where each node ran.
 *
 *   recur_c_example MODEL.onnx [PROVIDER...]
 */
#include <stdio.h>
#include <stdlib.h>

#include "recur/recur_c.h"

/* Prints the failed call's message and leaves. */
#define TRY(call)                                                                              \
  do {                                                                                         \
    recur_status st_ = (call);                                                                 \
    if (st_ != RECUR_OK) {                                                                     \
      fprintf(stderr, "error (%s): %s\n", recur_status_name(st_), recur_last_error_message()); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static void print_info(const char* kind, const recur_value_info* info) {
  const char* name;
  recur_dtype dtype;
  int64_t rank;
  TRY(recur_value_info_name(info, &name));
  TRY(recur_value_info_dtype(info, &dtype));
  TRY(recur_value_info_rank(info, &rank));
  printf("%s %s: dtype %d, shape [", kind, name, (int)dtype);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t value;
    const char* symbol;
    TRY(recur_value_info_dim(info, (size_t)d, &value, &symbol));
    if (value >= 0) {
      printf("%s%lld", d ? "," : "", (long long)value);
    } else {
      printf("%s%s", d ? "," : "", symbol[0] ? symbol : "?");
    }
  }
  printf("]\n");
}

/* A tensor for input `info`: each dimension that is not a fixed number becomes 2. */
static recur_tensor* make_input(const recur_value_info* info) {
  recur_dtype dtype;
  int64_t rank, shape[16];
  TRY(recur_value_info_dtype(info, &dtype));
  TRY(recur_value_info_rank(info, &rank));
  if (rank < 0 || rank > 16) {
    fprintf(stderr, "an input of unknown or large rank: this example does not handle it\n");
    exit(1);
  }
  for (int64_t d = 0; d < rank; ++d) {
    TRY(recur_value_info_dim(info, (size_t)d, &shape[d], NULL));
    if (shape[d] < 0) shape[d] = 2;
  }
  recur_tensor* t;
  TRY(recur_tensor_create(dtype, shape, (size_t)rank, &t));
  void* data;
  int64_t n;
  TRY(recur_tensor_data(t, &data));
  TRY(recur_tensor_element_count(t, &n));
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == RECUR_DTYPE_FLOAT32) ((float*)data)[i] = 0.5f;
    if (dtype == RECUR_DTYPE_INT64) ((int64_t*)data)[i] = 1;
    if (dtype == RECUR_DTYPE_INT32) ((int32_t*)data)[i] = 1;
  }
  return t;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.onnx [PROVIDER...]\n", argv[0]);
    return 2;
  }
  printf("recur %s\n", recur_version());
  recur_session_options* options;
  TRY(recur_session_options_create(&options));
  TRY(recur_session_options_set_providers(options, (const char* const*)argv + 2,
                                          (size_t)(argc - 2)));
  recur_session* session;
  TRY(recur_session_create(argv[1], options, &session));
  recur_session_options_release(options);

  size_t n_in, n_out;
  TRY(recur_session_input_count(session, &n_in));
  TRY(recur_session_output_count(session, &n_out));
  const char** names = malloc(n_in * sizeof *names);
  recur_tensor** inputs = malloc(n_in * sizeof *inputs);
  recur_tensor** outputs = malloc(n_out * sizeof *outputs);
  for (size_t i = 0; i < n_in; ++i) {
    const recur_value_info* info;
    TRY(recur_session_input_info(session, i, &info));
    print_info("input", info);
    TRY(recur_value_info_name(info, &names[i]));
    inputs[i] = make_input(info);
  }
  for (size_t i = 0; i < n_out; ++i) {
    const recur_value_info* info;
    TRY(recur_session_output_info(session, i, &info));
    print_info("output", info);
  }

  TRY(recur_session_run(session, NULL, names, (const recur_tensor* const*)inputs, n_in, NULL, 0,
                        outputs));
  for (size_t i = 0; i < n_out; ++i) {
    const recur_value_info* info;
    const char* name;
    recur_dtype dtype;
    size_t rank;
    const int64_t* shape;
    int64_t count;
    void* data;
    TRY(recur_session_output_info(session, i, &info));
    TRY(recur_value_info_name(info, &name));
    TRY(recur_tensor_dtype(outputs[i], &dtype));
    TRY(recur_tensor_rank(outputs[i], &rank));
    TRY(recur_tensor_shape(outputs[i], &shape));
    TRY(recur_tensor_element_count(outputs[i], &count));
    TRY(recur_tensor_data(outputs[i], &data));
    printf("%s: [", name);
    for (size_t d = 0; d < rank; ++d) printf("%s%lld", d ? "," : "", (long long)shape[d]);
    printf("]");
    for (int64_t k = 0; k < count && k < 4 && dtype == RECUR_DTYPE_FLOAT32; ++k) {
      printf(" %.6f", (double)((const float*)data)[k]);
    }
    printf("%s\n", count > 4 && dtype == RECUR_DTYPE_FLOAT32 ? " ..." : "");
    recur_tensor_release(outputs[i]);
  }

  const char* text;
  TRY(recur_session_explain(session, &text));
  printf("\n%s", text);

  for (size_t i = 0; i < n_in; ++i) recur_tensor_release(inputs[i]);
  free(outputs);
  free(inputs);
  free(names);
  recur_session_release(session);
  return 0;
}
