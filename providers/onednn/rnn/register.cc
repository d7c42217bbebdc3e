#include "providers/onednn/kernels.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "providers/onednn/rnn/rnn_int8.h"

namespace recur::onednn {

void register_rnn_kernels(KernelRegistry& r) {
  r.add({.op_type = "LSTM", .since = 1, .create = create_rnn_kernel, .settings_claim = claim_rnn});
  r.add({.op_type = "GRU", .since = 1, .create = create_rnn_kernel, .settings_claim = claim_rnn});
  r.add({.op_type = "RNN", .since = 1, .create = create_rnn_kernel, .settings_claim = claim_rnn});
  r.add({.op_type = "DynamicQuantizeLSTM",
         .domain = "com.microsoft",
         .since = 1,
         .create = create_quantized_lstm_kernel,
         .claim = claim_quantized_lstm});
}

}  // namespace recur::onednn
