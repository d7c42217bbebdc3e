#include "providers/reference/kernels.h"
#include "providers/reference/rnn/rnn_common.h"

namespace recur::reference {

void register_rnn_kernels(Registrar& r) {
  rnn::register_lstm(r);
  rnn::register_gru(r);
  rnn::register_rnn(r);
  rnn::register_stacked_rnn(r);
}

}  // namespace recur::reference
