#include "runtime/rnn/quantized_lstm.h"

#include <string>

namespace recur {

Result<RnnSpec> parse_quantized_lstm(const Node& node) {
  // The attributes are LSTM-7's, so the LSTM parser reads them; it keys on the op type.
  Node as_lstm = node;
  as_lstm.op_type = "LSTM";
  as_lstm.domain.clear();
  as_lstm.opset = 7;
  return RnnSpec::parse(as_lstm);
}

Status check_quantized_weight(const Node& node, const char* name, const QuantizedWeight& w,
                              int64_t D, int64_t K, int64_t H) {
  const std::string where = node.describe() + ": input " + name;
  if (!w.q || !w.scale || !w.zero_point) {
    return invalid_argument(where + ", its scale and its zero point are all required");
  }
  const DType qt = w.q->dtype();
  if (qt != DType::kInt8 && qt != DType::kUInt8) {
    return invalid_argument(where + " must be int8 or uint8, got " + std::string(dtype_name(qt)));
  }
  if (w.q->shape() != Shape{D, K, 4 * H}) {
    return invalid_argument(where + " must have shape [" + std::to_string(D) + "," +
                            std::to_string(K) + "," + std::to_string(4 * H) + "], got " +
                            shape_to_string(w.q->shape()));
  }
  if (w.scale->dtype() != DType::kFloat32) {
    return invalid_argument(where + "_scale must be float32");
  }
  const Shape& s = w.scale->shape();
  if (s != Shape{D} && s != Shape{D, 4 * H}) {
    return invalid_argument(where + "_scale must have shape [" + std::to_string(D) + "] or [" +
                            std::to_string(D) + "," + std::to_string(4 * H) + "], got " +
                            shape_to_string(s));
  }
  if (w.zero_point->dtype() != qt || w.zero_point->shape() != s) {
    return invalid_argument(where + "_zero_point must have " + name +
                            "'s dtype and its scale's shape");
  }
  return ok_status();
}

namespace {

int64_t param_index(const QuantizedWeight& w, int64_t d, int64_t g) {
  return w.scale->rank() == 1 ? d : d * w.scale->dim(1) + g;
}

}  // namespace

float quantized_scale(const QuantizedWeight& w, int64_t d, int64_t g) {
  return w.scale->data<float>()[param_index(w, d, g)];
}

int32_t quantized_zero_point(const QuantizedWeight& w, int64_t d, int64_t g) {
  const int64_t i = param_index(w, d, g);
  return w.zero_point->dtype() == DType::kInt8 ? w.zero_point->data<int8_t>()[i]
                                               : w.zero_point->data<uint8_t>()[i];
}

int32_t quantized_value(const QuantizedWeight& w, int64_t index) {
  return w.q->dtype() == DType::kInt8 ? w.q->data<int8_t>()[index] : w.q->data<uint8_t>()[index];
}

std::vector<float> dequantize_to_onnx_layout(const QuantizedWeight& w, int64_t D, int64_t K,
                                             int64_t H) {
  const int64_t G = 4 * H;
  std::vector<float> out(static_cast<size_t>(D * G * K));
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t g = 0; g < G; ++g) {
      const float s = quantized_scale(w, d, g);
      const int32_t z = quantized_zero_point(w, d, g);
      for (int64_t k = 0; k < K; ++k) {
        const int32_t q = quantized_value(w, (d * K + k) * G + g);
        out[static_cast<size_t>((d * G + g) * K + k)] = static_cast<float>(q - z) * s;
      }
    }
  }
  return out;
}

Status infer_quantized_lstm(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, parse_quantized_lstm(ctx.node()));
  const TypeInfo& x = ctx.input_type(kRnnX);
  const TypeInfo& r = ctx.input_type(kRnnR);
  if (x.dtype != DType::kUndefined && x.dtype != DType::kFloat32) {
    return ctx.error("input X must be float32, got " + std::string(dtype_name(x.dtype)));
  }
  int64_t H = spec.hidden_size;
  if (H <= 0 && r.is_static() && r.rank() == 3) H = r.static_shape()[1];
  Dim t, n, h = H > 0 ? Dim{H, {}} : Dim{};
  if (x.rank() == 3) {
    t = (*x.shape)[0];
    n = (*x.shape)[1];
  }
  const Dim d{spec.num_directions(), {}};
  TypeInfo y, state;
  y.dtype = state.dtype = DType::kFloat32;
  if (x.rank() == 3 || x.rank() < 0) {
    y.shape = std::vector<Dim>{t, d, n, h};
    state.shape = std::vector<Dim>{d, n, h};
  }
  ctx.set_output(kRnnY, y);
  ctx.set_output(kRnnYh, state);
  ctx.set_output(kRnnYc, state);
  return ok_status();
}

}  // namespace recur
