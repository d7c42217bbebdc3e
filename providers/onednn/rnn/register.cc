#include "providers/onednn/kernels.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "providers/onednn/rnn/rnn_int8.h"

namespace recur::onednn {

void register_rnn_kernels(KernelRegistry& r) {
  r.add({.op_type = "LSTM", .since = 1, .create = create_rnn_kernel, .claim = claim_lstm});
  r.add({.op_type = "GRU", .since = 1, .create = create_rnn_kernel, .claim = claim_gru});
  r.add({.op_type = "RNN", .since = 1, .create = create_rnn_kernel, .claim = claim_vanilla});
  r.add({.op_type = "DynamicQuantizeLSTM",
         .domain = "com.microsoft",
         .since = 1,
         .create = create_quantized_lstm_kernel,
         .claim = claim_quantized_lstm});
}

}  // namespace recur::onednn
