// com.microsoft::DynamicQuantizeLSTM (ONNX Runtime's contrib operator), shared by every
// provider: an LSTM whose W and R are 8-bit and stored transposed, [D, I, 4H] and [D, H, 4H]
// (ONNX's LSTM has [D, 4H, I]), with a scale and zero point per direction or per output column
// (gate row, in ONNX's i,o,f,c order). X, B, initial_h, initial_c and P are float32 as in LSTM.
#pragma once

#include <cstdint>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur {

// The positions of the quantization inputs; 0..7 are LSTM's (RnnInput).
enum QuantLstmInput : size_t {
  kQlstmWScale = 8,
  kQlstmWZeroPoint = 9,
  kQlstmRScale = 10,
  kQlstmRZeroPoint = 11
};

// The node's attributes as an LSTM's (the attribute set is LSTM-7's).
Result<RnnSpec> parse_quantized_lstm(const Node& node);

// One quantized weight tensor with its parameters, as given.
struct QuantizedWeight {
  const Tensor* q = nullptr;           // int8 or uint8, [D, K, 4H]
  const Tensor* scale = nullptr;       // float32, [D] or [D, 4H]
  const Tensor* zero_point = nullptr;  // q's dtype, the shape of scale
};

// Checks a quantized weight against D, K and H; `name` is "W" or "R". Errors name the node.
Status check_quantized_weight(const Node& node, const char* name, const QuantizedWeight& w,
                              int64_t D, int64_t K, int64_t H);

// The real value of column g of direction d: (q - zero_point) * scale with the parameters of
// column g (or of the direction, per-tensor).
float quantized_scale(const QuantizedWeight& w, int64_t d, int64_t g);
int32_t quantized_zero_point(const QuantizedWeight& w, int64_t d, int64_t g);
int32_t quantized_value(const QuantizedWeight& w, int64_t index);

// The weight dequantized into ONNX LSTM's layout [D, 4H, K], for kernels that requantize.
std::vector<float> dequantize_to_onnx_layout(const QuantizedWeight& w, int64_t D, int64_t K,
                                             int64_t H);

// Shape rule: Y [T, D, N, H], Y_h and Y_c [D, N, H], float32.
Status infer_quantized_lstm(InferContext& ctx);

}  // namespace recur
