// ONNX Runtime's QLinear operators, which its optimizer writes into the statically quantized
// (QDQ) models it saves, where a DequantizeLinear, a float operator and a QuantizeLinear were
// (com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax,
// QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool, QLinearWhere, QLinearReduceMean,
// QGemm): each becomes those three again. Also the quantization operators its quantizer writes
// in its own domain (QuantizeLinear, DequantizeLinear, QLinearConv, MulInteger), which become
// ONNX's, and its weight-only quantized MatMul (MatMulNBits: 4-bit or 8-bit blocks), which
// becomes a DequantizeLinear of the weights, folded at load, and a MatMul.
// ONNX Runtime computes some of them another way (QLinearAdd with the ratio of the scales,
// QLinearSigmoid from a table of the 256 inputs), so an output may differ from its by one
// quantization step where the float result falls at a half (docs/semantics.md).
#include <string>
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/engine/optimize/lowering.h"

namespace recur::lowering {

namespace {

// The float value of x (DequantizeLinear-13: scalar scale and zero point, or per-axis ones).
ValueId dequantize(Lowering& l, ValueId x, ValueId scale, ValueId zp, const std::string& what) {
  const ValueId f = l.temp(what, DType::kFloat32);
  l.add("DequantizeLinear", 13, {x, scale, zp}, {f});
  return f;
}

// y = QuantizeLinear(f, scale, zp). ONNX's QuantizeLinear without a zero point writes uint8;
// ONNX Runtime's QLinear operators write their input's type, so an int8 one gets a zero.
Status quantize(Lowering& l, ValueId f, ValueId scale, ValueId zp, DType t, ValueId y) {
  if (zp == kNoValue && t != DType::kUInt8) {
    RECUR_ASSIGN_OR_RETURN(zp, l.zero_point("y_zp", t));
  }
  l.add("QuantizeLinear", 13, {f, scale, zp}, {y});
  return ok_status();
}

DType quantized_type(const Lowering& l, ValueId x) {
  const DType t = l.dtype(x);
  return t == DType::kInt8 ? DType::kInt8 : DType::kUInt8;
}

Status check_quantized(const Lowering& l, ValueId x) {
  const DType t = l.dtype(x);
  if (t == DType::kUInt8 || t == DType::kInt8) return ok_status();
  return l.error("its quantized input is " + std::string(dtype_name(t)) +
                 "; the QLinear operators take uint8 or int8");
}

// ONNX Runtime's NHWC forms (channels_last=1, NhwcMaxPool), which its level 'all' writes for
// quantized convolutions and pools between Transposes: the operator runs in NCHW between
// Transposes of its own, which cancel against ONNX Runtime's where the optimizer meets both.
struct ChannelsLast {
  bool on = false;
  int64_t rank = 0;
  // Transposes x (N, spatial..., C) to N, C, spatial... where `on`.
  ValueId in(Lowering& l, ValueId x, DType t) const {
    if (!on) return x;
    std::vector<int64_t> perm = {0, rank - 1};
    for (int64_t i = 1; i + 1 < rank; ++i) perm.push_back(i);
    const ValueId y = l.temp("channels_first", t);
    set_ints(l.add("Transpose", 13, {x}, {y}), "perm", std::move(perm));
    return y;
  }
  // The node's output `y`, or where `on` a value to Transpose back into it (out()).
  ValueId result(Lowering& l, ValueId y, DType t) const { return on ? l.temp("nchw", t) : y; }
  void out(Lowering& l, ValueId nchw, ValueId y) const {
    if (!on) return;
    std::vector<int64_t> perm = {0};
    for (int64_t i = 2; i < rank; ++i) perm.push_back(i);
    perm.push_back(1);
    set_ints(l.add("Transpose", 13, {nchw}, {y}), "perm", std::move(perm));
  }
};

// The node's channels_last (or `always`), with the rank of `x` where it is on; an error for a
// rank below 3, a deferral while the rank is unknown.
Result<ChannelsLast> channels_last(Lowering& l, ValueId x, bool always = false) {
  AttrReader a(l.original());
  ChannelsLast c;
  c.on = always || a.get_int("channels_last", 0) != 0;
  RECUR_RETURN_IF_ERROR(a.status());
  if (!c.on) return c;
  c.rank = l.rank(x);
  if (c.rank < 0) {
    RECUR_RETURN_IF_ERROR(l.needs_shapes("the rank of its NHWC input is not known"));
    return c;
  }
  if (c.rank < 3) {
    return l.error("its NHWC input has rank " + std::to_string(c.rank) +
                   "; it takes rank 3 or more");
  }
  return c;
}

// QLinearAdd and QLinearMul(A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?).
Status lower_binary(Lowering& l, const char* op) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 1, 3, 4, 6}));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  const DType t = quantized_type(l, l.in(0));
  const ValueId a = dequantize(l, l.in(0), l.in(1), l.in(2), "A_float");
  const ValueId b = dequantize(l, l.in(3), l.in(4), l.in(5), "B_float");
  const ValueId c = l.binary(op, a, b, kNoValue, DType::kFloat32);
  l.keep_name();
  RECUR_RETURN_IF_ERROR(quantize(l, c, l.in(6), l.in(7), t, l.out(0)));
  l.commit(std::string("Dequantize, ") + op + ", Quantize", t);
  return ok_status();
}

// QLinearSigmoid, QLinearLeakyRelu and QLinearSoftmax(X, X_scale, X_zp?, Y_scale, Y_zp?).
Status lower_unary(Lowering& l, const std::string& op) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 1, 3}));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  AttrReader a(l.original());
  const float alpha = a.get_float("alpha", 0.01f);
  const int64_t axis = a.get_int("axis", -1);
  const int64_t opset = a.get_int("opset", 13);
  RECUR_RETURN_IF_ERROR(a.status());
  const DType t = quantized_type(l, l.in(0));
  const ValueId x = dequantize(l, l.in(0), l.in(1), l.in(2), "X_float");
  const ValueId y = l.temp(op, DType::kFloat32);
  if (op == "Softmax") {
    // The Softmax it replaced, of its opset: before 13, over the axes from `axis` on.
    set_int(l.add(op, opset < 13 ? 11 : 13, {x}, {y}), "axis", axis);
  } else if (op == "LeakyRelu") {
    set_float(l.add(op, 16, {x}, {y}), "alpha", alpha);
  } else {
    l.add(op, 13, {x}, {y});
  }
  l.keep_name();
  RECUR_RETURN_IF_ERROR(quantize(l, y, l.in(3), l.in(4), t, l.out(0)));
  l.commit("Dequantize, " + op + ", Quantize", t);
  return ok_status();
}

// QLinearConcat(Y_scale, Y_zp, X1, X1_scale, X1_zp, X2, ...).
Status lower_concat(Lowering& l) {
  const Node& n = l.original();
  if (n.inputs.size() < 5 || (n.inputs.size() - 2) % 3 != 0) {
    return l.error("has " + std::to_string(n.inputs.size()) +
                   " inputs; QLinearConcat takes Y_scale, Y_zero_point and a (tensor, scale, "
                   "zero point) triple for each input");
  }
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  AttrReader a(n);
  const int64_t axis = a.require_int("axis");
  RECUR_RETURN_IF_ERROR(a.status());
  std::vector<ValueId> parts;
  for (size_t i = 2; i < n.inputs.size(); i += 3) {
    if (l.in(i) == kNoValue || l.in(i + 1) == kNoValue)
      return l.error("input " + std::to_string(i) + " or its scale is missing");
    RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(i)));
    parts.push_back(dequantize(l, l.in(i), l.in(i + 1), l.in(i + 2), "X_float"));
  }
  const DType t = quantized_type(l, l.in(2));
  const ValueId y = l.temp("Concat", DType::kFloat32);
  set_int(l.add("Concat", 13, parts, {y}), "axis", axis);
  l.keep_name();
  RECUR_RETURN_IF_ERROR(quantize(l, y, l.in(0), l.in(1), t, l.out(0)));
  l.commit("Dequantize, Concat, Quantize", t);
  return ok_status();
}

// QLinearAveragePool and QLinearGlobalAveragePool(X, X_scale, X_zp?, Y_scale, Y_zp?), in NCHW.
Status lower_pool(Lowering& l, bool global) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 1, 3}));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  RECUR_ASSIGN_OR_RETURN(const ChannelsLast nhwc, channels_last(l, l.in(0)));
  if (l.deferred()) return ok_status();
  const DType t = quantized_type(l, l.in(0));
  const ValueId x = dequantize(l, nhwc.in(l, l.in(0), t), l.in(1), l.in(2), "X_float");
  const ValueId y = l.temp(global ? "GlobalAveragePool" : "AveragePool", DType::kFloat32);
  if (global) {
    l.add("GlobalAveragePool", 1, {x}, {y});
  } else {
    Node& p = l.add("AveragePool", 11, {x}, {y});
    copy_attrs(l.original(), p,
               {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  }
  l.keep_name();
  const ValueId q = nhwc.result(l, l.out(0), t);
  RECUR_RETURN_IF_ERROR(quantize(l, y, l.in(3), l.in(4), t, q));
  nhwc.out(l, q, l.out(0));
  l.commit(std::string(global ? "Dequantize, GlobalAveragePool, Quantize"
                              : "Dequantize, AveragePool, Quantize") +
               (nhwc.on ? ", in NCHW" : ""),
           t);
  return ok_status();
}

// QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?): alpha (A'B' + C) of the
// dequantized A and B (b_scale per column or one) and C, int32 at scale a_scale * b_scale;
// quantized to y_scale where it is given, else float.
Status lower_qgemm(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 1, 3, 4}));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(3)));
  AttrReader a(l.original());
  const int64_t trans_b = a.get_int("transB", 0);
  const float alpha = a.get_float("alpha", 1.0f);
  RECUR_RETURN_IF_ERROR(a.status());
  const ValueId fa = dequantize(l, l.in(0), l.in(1), l.in(2), "A_float");
  // A per-column scale is per output channel: B's axis 1, or 0 when B is transposed.
  const ValueId fb = l.temp("B_float", DType::kFloat32);
  Node& dqb = l.add("DequantizeLinear", 13, {l.in(3), l.in(4), l.in(5)}, {fb});
  set_int(dqb, "axis", trans_b ? 0 : 1);
  ValueId fc = kNoValue;
  if (l.in(6) != kNoValue) {
    const ValueId c = l.temp("C_float", DType::kFloat32);
    set_int(l.add("Cast", 13, {l.in(6)}, {c}), "to", static_cast<int64_t>(DType::kFloat32));
    const ValueId scale = l.binary("Mul", l.in(1), l.in(4), kNoValue, DType::kFloat32);
    fc = l.binary("Mul", c, scale, kNoValue, DType::kFloat32);
  }
  const bool quantized_out = l.in(7) != kNoValue;
  const ValueId y = quantized_out ? l.temp("Gemm", DType::kFloat32) : l.out(0);
  Node& g = l.add("Gemm", 13, {fa, fb, fc}, {y});
  copy_attrs(l.original(), g, {"alpha", "transA", "transB"});
  // C joins the int32 sums before alpha scales them: alpha (A'B' + C).
  set_float(g, "beta", alpha);
  l.keep_name();
  DType t = DType::kFloat32;
  if (quantized_out) {
    t = l.in(8) != kNoValue ? quantized_type(l, l.in(8)) : DType::kUInt8;
    RECUR_RETURN_IF_ERROR(quantize(l, y, l.in(7), l.in(8), t, l.out(0)));
  }
  l.commit(quantized_out ? "Dequantize, Gemm, Quantize" : "Dequantize, Gemm", t);
  return ok_status();
}

// QLinearWhere(condition, X, X_scale, X_zp, Y, Y_scale, Y_zp, Z_scale, Z_zp).
Status lower_where(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 1, 2, 4, 5, 7}));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(1)));
  const DType t = quantized_type(l, l.in(1));
  const ValueId x = dequantize(l, l.in(1), l.in(2), l.in(3), "X_float");
  const ValueId y = dequantize(l, l.in(4), l.in(5), l.in(6), "Y_float");
  const ValueId z = l.temp("Where", DType::kFloat32);
  l.add("Where", 16, {l.in(0), x, y}, {z});
  l.keep_name();
  RECUR_RETURN_IF_ERROR(quantize(l, z, l.in(7), l.in(8), t, l.out(0)));
  l.commit("Dequantize, Where, Quantize", t);
  return ok_status();
}

// QLinearReduceMean(data, data_scale, data_zp?, reduced_scale, reduced_zp?), with the axes
// and keepdims attributes of ReduceMean-13.
Status lower_reduce_mean(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 1, 3}));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  const DType t = quantized_type(l, l.in(0));
  const ValueId x = dequantize(l, l.in(0), l.in(1), l.in(2), "data_float");
  const ValueId y = l.temp("ReduceMean", DType::kFloat32);
  copy_attrs(l.original(), l.add("ReduceMean", 13, {x}, {y}), {"axes", "keepdims"});
  l.keep_name();
  RECUR_RETURN_IF_ERROR(quantize(l, y, l.in(3), l.in(4), t, l.out(0)));
  l.commit("Dequantize, ReduceMean, Quantize", t);
  return ok_status();
}

// com.microsoft QuantizeLinear and DequantizeLinear(x, scale, zero_point?; axis), which ONNX
// Runtime's quantizer writes for 16-bit and 4-bit types (before ONNX had them) or when asked
// to: ONNX's of opset 21 computes the same.
Status lower_quantize_op(Lowering& l, bool quantize_op) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(2));
  const char* op = quantize_op ? "QuantizeLinear" : "DequantizeLinear";
  // QuantizeLinear writes its zero point's type (uint8 without one); DequantizeLinear its
  // scale's.
  const DType t =
      quantize_op ? (l.in(2) != kNoValue ? l.dtype(l.in(2)) : DType::kUInt8) : l.dtype(l.in(1));
  if (t == DType::kUndefined)
    return l.needs_shapes("the type of its scale or zero point is unknown");
  copy_attrs(l.original(), l.add(op, 21, {l.in(0), l.in(1), l.in(2)}, {l.out(0)}), {"axis"});
  l.commit(std::string("as ONNX's ") + op + "-21", t);
  return ok_status();
}

// com.microsoft QLinearConv: ONNX's, with a channels_last attribute ONNX Runtime sets at
// level 'all'.
Status lower_qlinear_conv(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  RECUR_ASSIGN_OR_RETURN(const ChannelsLast nhwc, channels_last(l, l.in(0)));
  if (l.deferred()) return ok_status();
  std::vector<ValueId> inputs(l.original().inputs);
  const DType t = l.in(7) != kNoValue ? l.dtype(l.in(7)) : DType::kUInt8;
  inputs[0] = nhwc.in(l, inputs[0], l.dtype(l.in(0)));
  const ValueId y = nhwc.result(l, l.out(0), t);
  copy_attrs(l.original(), l.add("QLinearConv", 10, std::move(inputs), {y}),
             {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  l.keep_name();
  nhwc.out(l, y, l.out(0));
  l.commit(nhwc.on ? "as ONNX's QLinearConv-10, in NCHW" : "as ONNX's QLinearConv-10", t);
  return ok_status();
}

// NhwcMaxPool(X): MaxPool of a uint8 or int8 tensor in NHWC.
Status lower_nhwc_max_pool(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  RECUR_ASSIGN_OR_RETURN(const ChannelsLast nhwc, channels_last(l, l.in(0), true));
  if (l.deferred()) return ok_status();
  const DType t = l.dtype(l.in(0));
  const ValueId x = nhwc.in(l, l.in(0), t);
  const ValueId y = nhwc.result(l, l.out(0), t);
  copy_attrs(l.original(), l.add("MaxPool", 12, {x}, {y}),
             {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"});
  l.keep_name();
  nhwc.out(l, y, l.out(0));
  l.commit("MaxPool in NCHW", t);
  return ok_status();
}

// MulInteger(A, A_zp?, B, B_zp?) = (A - A_zp) * (B - B_zp) in int32, broadcast.
Status lower_mul_integer(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 2}));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(0)));
  RECUR_RETURN_IF_ERROR(check_quantized(l, l.in(2)));
  const auto widen = [&](ValueId v, const char* what) {
    const ValueId w = l.temp(what, DType::kInt32);
    set_int(l.add("Cast", 13, {v}, {w}), "to", static_cast<int64_t>(DType::kInt32));
    return w;
  };
  const auto centred = [&](size_t x, const char* what, const char* zp_what) {
    const ValueId w = widen(l.in(x), what);
    if (l.in(x + 1) == kNoValue) return w;
    return l.binary("Sub", w, widen(l.in(x + 1), zp_what), kNoValue, DType::kInt32);
  };
  const ValueId a = centred(0, "A_int32", "A_zero_point_int32");
  const ValueId b = centred(2, "B_int32", "B_zero_point_int32");
  l.binary("Mul", a, b, l.out(0), DType::kInt32);
  l.keep_name();
  l.commit("int32 products of the centred inputs", DType::kInt32);
  return ok_status();
}

// Unpacks `packed` (uint8, `bits` 4 or 8 per value, the low nibble first) into a uint8
// tensor (rows, cols): the values of each row, cut at `cols`.
ValueId unpack(Lowering& l, ValueId packed, int64_t bits, int64_t rows, int64_t cols,
               const std::string& what) {
  ValueId values = packed;
  if (bits == 4) {
    const ValueId low = l.temp(what + "_low", DType::kUInt8);
    l.add("BitwiseAnd", 18, {packed, l.constant(what + "_low_mask", Tensor::scalar(uint8_t{15}))},
          {low});
    const ValueId high = l.temp(what + "_high", DType::kUInt8);
    set_string(l.add("BitShift", 11,
                     {packed, l.constant(what + "_shift", Tensor::scalar(uint8_t{4}))}, {high}),
               "direction", "RIGHT");
    const ValueId axes = l.int64s(what + "_nibble_axis", {-1});
    const ValueId low1 = l.temp(what + "_low_last", DType::kUInt8);
    const ValueId high1 = l.temp(what + "_high_last", DType::kUInt8);
    l.add("Unsqueeze", 13, {low, axes}, {low1});
    l.add("Unsqueeze", 13, {high, axes}, {high1});
    values = l.temp(what + "_nibbles", DType::kUInt8);
    set_int(l.add("Concat", 13, {low1, high1}, {values}), "axis", -1);
  }
  const ValueId flat = l.temp(what + "_rows", DType::kUInt8);
  l.add("Reshape", 14, {values, l.int64s(what + "_rows_shape", {rows, -1})}, {flat});
  const ValueId y = l.temp(what + "_unpacked", DType::kUInt8);
  l.add("Slice", 13,
        {flat, l.int64s(what + "_start", {0}), l.int64s(what + "_end", {cols}),
         l.int64s(what + "_axes", {1})},
        {y});
  return y;
}

// MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): A times the transposed N x K weight
// matrix B, stored as `bits`-bit unsigned integers (4 or 8; two 4-bit ones a byte, the low
// nibble first) in blocks of block_size along K, each block with its scale and zero point
// (packed the same way; 2^(bits-1) where not given). The weight is dequantized by
// DequantizeLinear-21 per block, from constants, so recur folds it at load.
Status lower_matmul_nbits(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(3));
  AttrReader a(l.original());
  const int64_t k = a.require_int("K");
  const int64_t n = a.require_int("N");
  const int64_t bits = a.get_int("bits", 4);
  const int64_t block = a.require_int("block_size");
  RECUR_RETURN_IF_ERROR(a.status());
  if (bits != 4 && bits != 8) {
    return l.error("bits=" + std::to_string(bits) + "; recur lowers 4-bit and 8-bit weights");
  }
  constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1, kMaxBlock = int64_t{1} << 16;
  if (k <= 0 || n <= 0 || k > kMaxDim || n > kMaxDim || block < 16 || block > kMaxBlock ||
      (block & (block - 1)) != 0) {
    return l.error("K=" + std::to_string(k) + ", N=" + std::to_string(n) +
                   ", block_size=" + std::to_string(block) +
                   ": K and N must be from 1 to 2^31 - 1 and block_size a power of 2 from 16 "
                   "to 65536");
  }
  if (l.in(4) != kNoValue) {
    return l.error("g_idx is given (act-order blocks); recur lowers weights in K's order only");
  }
  const DType t = l.dtype(l.in(0));
  if (l.dtype(l.in(1)) != DType::kUInt8)
    return l.error("B is " + std::string(dtype_name(l.dtype(l.in(1)))) + "; it is packed uint8");
  const int64_t blocks = (k + block - 1) / block;
  // The sizes the attributes imply, where shape inference knows them (ONNX Runtime's writers
  // give B as [N, blocks, block bytes] and the others flat; any shape of that size is read).
  const auto expect = [&](size_t input, const char* what, int64_t want) {
    const int64_t r = l.rank(l.in(input));
    int64_t size = 1;
    for (int64_t i = 0; i < r; ++i) {
      const int64_t d = l.dim(l.in(input), i);
      if (d < 0) return ok_status();
      size = checked_mul(size, d).value_or(-1);
      if (size < 0) break;
    }
    if (r < 0 || size == want) return ok_status();
    return l.error(std::string(what) + " has " +
                   (size < 0 ? std::string("more than 2^63") : std::to_string(size)) +
                   " elements; K=" + std::to_string(k) + ", N=" + std::to_string(n) +
                   ", bits=" + std::to_string(bits) + ", block_size=" + std::to_string(block) +
                   " take " + std::to_string(want));
  };
  RECUR_RETURN_IF_ERROR(expect(1, "B", n * blocks * (block * bits / 8)));
  RECUR_RETURN_IF_ERROR(expect(2, "scales", n * blocks));
  if (l.in(3) != kNoValue) {
    RECUR_RETURN_IF_ERROR(
        expect(3, "zero_points", bits == 4 ? n * ((blocks + 1) / 2) : n * blocks));
  }
  if (l.in(5) != kNoValue) RECUR_RETURN_IF_ERROR(expect(5, "bias", n));
  const ValueId q = unpack(l, l.in(1), bits, n, k, "B");
  const ValueId scales = l.temp("scales_blocks", l.dtype(l.in(2)));
  l.add("Reshape", 14, {l.in(2), l.int64s("scales_shape", {n, blocks})}, {scales});
  ValueId zp = kNoValue;
  if (l.in(3) != kNoValue) {
    if (l.dtype(l.in(3)) != DType::kUInt8) {
      return l.error("its zero points are " + std::string(dtype_name(l.dtype(l.in(3)))) +
                     "; recur lowers packed uint8 zero points only");
    }
    zp = unpack(l, l.in(3), bits, n, blocks, "zero_points");
  } else {
    const ValueId mid = l.constant("zero_point", Tensor::scalar(uint8_t(1u << (bits - 1))));
    zp = l.temp("zero_points", DType::kUInt8);
    l.add("Expand", 13, {mid, l.int64s("zero_points_shape", {n, blocks})}, {zp});
  }
  const ValueId w = l.temp("B_dequantized", t);
  Node& dq = l.add("DequantizeLinear", 21, {q, scales, zp}, {w});
  set_int(dq, "axis", 1);
  set_int(dq, "block_size", block);
  const ValueId wt = l.temp("B_transposed", t);
  set_ints(l.add("Transpose", 13, {w}, {wt}), "perm", {1, 0});
  const ValueId bias = l.in(5);
  const ValueId y = bias == kNoValue ? l.out(0) : l.temp("product", t);
  l.add("MatMul", 13, {l.in(0), wt}, {y});
  l.keep_name();
  if (bias != kNoValue) l.binary("Add", y, bias, l.out(0), t);
  l.commit(std::to_string(bits) + "-bit weights in blocks of " + std::to_string(block), t);
  return ok_status();
}

}  // namespace

LowerFn qlinear_lowering(std::string_view op) {
  if (op == "QGemm") return lower_qgemm;
  if (op == "QLinearAdd") return [](Lowering& l) { return lower_binary(l, "Add"); };
  if (op == "QLinearMul") return [](Lowering& l) { return lower_binary(l, "Mul"); };
  if (op == "QLinearSigmoid") return [](Lowering& l) { return lower_unary(l, "Sigmoid"); };
  if (op == "QLinearLeakyRelu") return [](Lowering& l) { return lower_unary(l, "LeakyRelu"); };
  if (op == "QLinearSoftmax") return [](Lowering& l) { return lower_unary(l, "Softmax"); };
  if (op == "QLinearConcat") return lower_concat;
  if (op == "QLinearAveragePool") return [](Lowering& l) { return lower_pool(l, false); };
  if (op == "QLinearGlobalAveragePool") return [](Lowering& l) { return lower_pool(l, true); };
  if (op == "QLinearWhere") return lower_where;
  if (op == "QLinearReduceMean") return lower_reduce_mean;
  if (op == "QLinearConv") return lower_qlinear_conv;
  if (op == "NhwcMaxPool") return lower_nhwc_max_pool;
  if (op == "MulInteger") return lower_mul_integer;
  if (op == "MatMulNBits") return lower_matmul_nbits;
  if (op == "QuantizeLinear") return [](Lowering& l) { return lower_quantize_op(l, true); };
  if (op == "DequantizeLinear") return [](Lowering& l) { return lower_quantize_op(l, false); };
  return nullptr;
}

}  // namespace recur::lowering
