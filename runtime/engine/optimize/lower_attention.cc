// ONNX Runtime's attention operators, which its attention fusions write into the models it
// saves (com.microsoft Attention, with the input projection packed in one weight, and
// MultiHeadAttention, with Q, K and V projected before it): each becomes the scaled
// dot-product attention it computes, written out in ONNX operators (MatMul, Softmax, the masks
// as additive biases), so that every provider runs it with its own MatMul and Softmax. Also
// the embeddings before BERT's first attention (EmbedLayerNormalization), whose mask_index
// output is the mask Attention reads.
// docs/semantics.md ("ONNX Runtime's optimized models") lists the forms.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/engine/optimize/lowering.h"

namespace recur::lowering {

namespace {

// The largest head count and hidden size taken, so that their sums and products stay exact.
constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;

// What is added to the scaled scores before the Softmax.
struct Masks {
  ValueId key_mask = kNoValue;   // raw 0/1 (B, T) or (B, S, T), or sequence ends (B) or (2B)
  ValueId past_key = kNoValue;   // (B, N, P, H): the causal mask starts after it
  ValueId input = kNoValue;      // the node's (B, S, D) input, whose batch the mask has
  ValueId attn_bias = kNoValue;  // (B or 1, N, S, T)
  bool causal = false;
  float filter = -10000.0f;    // ONNX Runtime's mask_filter_value: what a masked score gets
  ValueId visible = kNoValue;  // bool, broadcast to (B, N, S, T): false keys get the lowest value
  float softcap = 0.0f;        // > 0: scores become softcap * tanh(scores / softcap)
};

// Builds the masks and the run-time positions they compare, each scalar made once. `t` is the
// attention's float type (checked by the caller, so that its constants can be made).
class MaskBuilder {
 public:
  MaskBuilder(Lowering& l, DType t, float filter = -10000.0f) : l_(l), t_(t), filter_(filter) {}

  // 0 where `keep` holds, mask_filter_value elsewhere.
  Result<ValueId> additive(ValueId keep, const std::string& what) {
    RECUR_ASSIGN_OR_RETURN(const ValueId zero, zero_value());
    if (filter_value_ == kNoValue) {
      RECUR_ASSIGN_OR_RETURN(filter_value_, l_.scalar("mask_filter_value", t_, filter_));
    }
    const ValueId m = l_.temp(what, t_);
    l_.add("Where", 16, {keep, zero, filter_value_}, {m});
    return m;
  }

  // 0 where `keep` holds, the type's lowest value elsewhere: ONNX Runtime's causal mask,
  // which outweighs a key mask's mask_filter_value (a query whose past keys are all masked
  // still sees only them, not the keys after it).
  Result<ValueId> hide_lowest(ValueId keep) {
    double lowest = -std::numeric_limits<float>::max();
    if (t_ == DType::kFloat16) lowest = -65504.0;
    if (t_ == DType::kBFloat16) lowest = -3.3895313892515355e38;
    if (t_ == DType::kFloat64) lowest = -std::numeric_limits<double>::max();
    RECUR_ASSIGN_OR_RETURN(const ValueId zero, zero_value());
    RECUR_ASSIGN_OR_RETURN(const ValueId low, l_.scalar("causal_mask_value", t_, lowest));
    const ValueId m = l_.temp("causal_bias", t_);
    l_.add("Where", 16, {keep, zero, low}, {m});
    return m;
  }

  // Dimension `axis` of x at run time, as an int64 scalar.
  ValueId runtime_dim(ValueId x, int64_t axis, const std::string& what) {
    const ValueId shape = l_.temp(what + "_shape", DType::kInt64);
    l_.add("Shape", 15, {x}, {shape});
    const ValueId d = l_.temp(what, DType::kInt64);
    l_.add("Gather", 13, {shape, l_.constant(what + "_axis", Tensor::scalar(axis))}, {d});
    return d;
  }

  // 0, 1, ..., n - 1 (int64), n a scalar.
  ValueId positions(ValueId n, const std::string& what) {
    if (int0_ == kNoValue) {
      int0_ = l_.constant("int64_zero", Tensor::scalar(int64_t{0}));
      int1_ = l_.constant("int64_one", Tensor::scalar(int64_t{1}));
    }
    const ValueId r = l_.temp(what, DType::kInt64);
    l_.add("Range", 11, {int0_, n, int1_}, {r});
    return r;
  }

  ValueId unsqueeze(ValueId x, std::vector<int64_t> axes, DType t, const std::string& what) {
    const ValueId y = l_.temp(what, t);
    l_.add("Unsqueeze", 13, {x, l_.int64s(what + "_axes", axes)}, {y});
    return y;
  }

 private:
  Result<ValueId> zero_value() {
    if (zero_ == kNoValue) {
      RECUR_ASSIGN_OR_RETURN(zero_, l_.scalar("mask_zero", t_, 0.0));
    }
    return zero_;
  }

  Lowering& l_;
  DType t_;
  float filter_;
  ValueId zero_ = kNoValue, filter_value_ = kNoValue, int0_ = kNoValue, int1_ = kNoValue;
};

// The key mask as an additive (B, 1, 1, T) or (B, 1, S, T) bias. ONNX Runtime's forms: a raw
// mask (B, T) or (B, S, T), where a position > 0 attends; or, in one dimension, each
// sequence's end (B: right padding) or its end and then its start (2B: padding on both sides).
// Which of the last two is met is told at run time from the mask's length, as ONNX Runtime
// tells it.
Result<ValueId> key_mask_bias(Lowering& l, MaskBuilder& mb, ValueId mask, ValueId input,
                              ValueId k) {
  const int64_t r = l.rank(mask);
  if (r < 0) {
    RECUR_RETURN_IF_ERROR(l.needs_shapes("the rank of its mask is not known"));
    return kNoValue;
  }
  if (l.dtype(mask) != DType::kInt32) {
    return l.error("its mask is " + std::string(dtype_name(l.dtype(mask))) +
                   "; ONNX Runtime's masks are int32");
  }
  if (r == 2 || r == 3) {
    const ValueId zero = l.constant("mask_int32_zero", Tensor::scalar(int32_t{0}));
    const ValueId keep = l.temp("key_mask_keep", DType::kBool);
    l.add("Greater", 13, {mask, zero}, {keep});
    RECUR_ASSIGN_OR_RETURN(const ValueId bias, mb.additive(keep, "key_mask_bias"));
    return mb.unsqueeze(bias, r == 2 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1},
                        l.dtype(bias), "key_mask_bias_BNST");
  }
  if (r != 1) {
    return l.error("its mask has rank " + std::to_string(r) +
                   "; recur lowers the raw masks (batch, total length) and (batch, length, "
                   "total length) and the sequence ends (batch) or (2 * batch)");
  }
  const int64_t len = l.dim(mask, 0), batch_size = l.dim(input, 0);
  const int64_t twice = batch_size >= 0 ? checked_mul(batch_size, 2).value_or(-1) : -1;
  if (len >= 0 && twice >= 0 && len != batch_size && len != twice) {
    return l.error("its 1-D mask has " + std::to_string(len) + " entries; with batch " +
                   std::to_string(batch_size) + " it takes " + std::to_string(batch_size) +
                   " (sequence ends) or " + std::to_string(twice) + " (ends, starts)");
  }
  const ValueId mask64 = l.temp("mask_int64", DType::kInt64);
  set_int(l.add("Cast", 13, {mask}, {mask64}), "to", static_cast<int64_t>(DType::kInt64));
  // ends = mask[0:B]; starts = (mask ++ zeros(B))[B:2B], zero where only the ends are given.
  const ValueId batch = l.temp("batch", DType::kInt64);
  Node& shape = l.add("Shape", 15, {input}, {batch});
  set_int(shape, "start", 0);
  set_int(shape, "end", 1);
  const ValueId zero1 = l.int64s("slice_start", {0});
  const ValueId ends = l.temp("sequence_ends", DType::kInt64);
  l.add("Slice", 13, {mask64, zero1, batch}, {ends});
  const ValueId zeros = l.binary("Sub", ends, ends, kNoValue, DType::kInt64);
  const ValueId ext = l.temp("sequence_bounds", DType::kInt64);
  set_int(l.add("Concat", 13, {mask64, zeros}, {ext}), "axis", 0);
  const ValueId batch2 = l.binary("Add", batch, batch, kNoValue, DType::kInt64);
  const ValueId starts = l.temp("sequence_starts", DType::kInt64);
  l.add("Slice", 13, {ext, batch, batch2}, {starts});
  const ValueId pos = mb.positions(mb.runtime_dim(k, 2, "total_length"), "key_positions");
  const ValueId ends_col = mb.unsqueeze(ends, {1}, DType::kInt64, "sequence_ends_column");
  const ValueId starts_col = mb.unsqueeze(starts, {1}, DType::kInt64, "sequence_starts_column");
  const ValueId before_end = l.temp("before_end", DType::kBool);
  l.add("Less", 13, {pos, ends_col}, {before_end});
  const ValueId after_start = l.temp("after_start", DType::kBool);
  l.add("GreaterOrEqual", 16, {pos, starts_col}, {after_start});
  const ValueId keep = l.temp("key_mask_keep", DType::kBool);
  l.add("And", 7, {before_end, after_start}, {keep});
  RECUR_ASSIGN_OR_RETURN(const ValueId bias, mb.additive(keep, "key_mask_bias"));
  return mb.unsqueeze(bias, {1, 2}, l.dtype(bias), "key_mask_bias_BNST");
}

// (B, L, N * H) -> (B, N, L, H).
ValueId split_heads(Lowering& l, ValueId x, int64_t heads, const std::string& what, DType t) {
  const ValueId r = l.temp(what + "_BSNH", t);
  l.add("Reshape", 14, {x, l.int64s(what + "_heads_shape", {0, 0, heads, -1})}, {r});
  const ValueId y = l.temp(what + "_BNSH", t);
  set_ints(l.add("Transpose", 13, {r}, {y}), "perm", {0, 2, 1, 3});
  return y;
}

ValueId concat(Lowering& l, std::vector<ValueId> parts, int64_t axis, const std::string& what,
               DType t, ValueId y = kNoValue) {
  if (y == kNoValue) y = l.temp(what, t);
  set_int(l.add("Concat", 13, std::move(parts), {y}), "axis", axis);
  return y;
}

// softmax(scale Q K' + masks) V for Q (B, N, S, H), K (B, N, T, H), V (B, N, T, Hv), written
// to `out` as (B, S, N * Hv). The scores' MatMul keeps the node's name.
Status attend(Lowering& l, ValueId q, ValueId k, ValueId v, ValueId scale, const Masks& m,
              ValueId out, DType t) {
  MaskBuilder mb(l, t, m.filter);
  const ValueId kt = l.temp("K_transposed", t);
  set_ints(l.add("Transpose", 13, {k}, {kt}), "perm", {0, 1, 3, 2});
  const ValueId qk = l.temp("QK", t);
  l.add("MatMul", 13, {q, kt}, {qk});
  l.keep_name();
  ValueId scores = l.binary("Mul", qk, scale, kNoValue, t);
  if (m.softcap > 0.0f) {
    RECUR_ASSIGN_OR_RETURN(const ValueId cap, l.scalar("softcap", t, m.softcap));
    const ValueId ratio = l.binary("Div", scores, cap, kNoValue, t);
    scores = l.binary("Mul", l.unary("Tanh", 13, ratio, kNoValue, t), cap, kNoValue, t);
  }
  if (m.visible != kNoValue) {
    RECUR_ASSIGN_OR_RETURN(const ValueId bias, mb.hide_lowest(m.visible));
    scores = l.binary("Add", scores, bias, kNoValue, t);
  }
  if (m.key_mask != kNoValue) {
    RECUR_ASSIGN_OR_RETURN(const ValueId bias, key_mask_bias(l, mb, m.key_mask, m.input, k));
    if (l.deferred()) return ok_status();
    scores = l.binary("Add", scores, bias, kNoValue, t);
  }
  if (m.causal) {
    // Query i sees keys j <= P + i, P being the past's length, as ONNX Runtime counts (also
    // where the new keys are more than the queries).
    const ValueId rows =
        mb.unsqueeze(mb.positions(mb.runtime_dim(q, 2, "length"), "query_positions"), {1},
                     DType::kInt64, "query_positions_column");
    ValueId last = rows;
    if (m.past_key != kNoValue) {
      last = l.binary("Add", rows, mb.runtime_dim(m.past_key, 2, "past_length"), kNoValue,
                      DType::kInt64);
    }
    const ValueId total = mb.runtime_dim(k, 2, "total_length");
    const ValueId keep = l.temp("causal_keep", DType::kBool);
    l.add("LessOrEqual", 16, {mb.positions(total, "key_positions"), last}, {keep});
    RECUR_ASSIGN_OR_RETURN(const ValueId bias, mb.hide_lowest(keep));
    scores = l.binary("Add", scores, bias, kNoValue, t);
  }
  if (m.attn_bias != kNoValue) scores = l.binary("Add", scores, m.attn_bias, kNoValue, t);
  const ValueId probs = l.temp("probabilities", t);
  set_int(l.add("Softmax", 13, {scores}, {probs}), "axis", -1);
  const ValueId ctx = l.temp("context_BNSH", t);
  l.add("MatMul", 13, {probs, v}, {ctx});
  const ValueId ctx_t = l.temp("context_BSNH", t);
  set_ints(l.add("Transpose", 13, {ctx}, {ctx_t}), "perm", {0, 2, 1, 3});
  l.add("Reshape", 14, {ctx_t, l.int64s("output_shape", {0, 0, -1})}, {out});
  return ok_status();
}

// The `scale` attribute, else 1 / sqrt(head size): of the known size, or else of q's
// (B, N, S, H) at run time.
Result<ValueId> scale_value(Lowering& l, float attr, int64_t head_size, ValueId q, DType t) {
  if (attr != 0.0f) return l.scalar("scale", t, attr);
  if (head_size > 0) return l.scalar("scale", t, 1.0 / std::sqrt(static_cast<double>(head_size)));
  MaskBuilder mb(l, t);
  const ValueId h = l.temp("head_size", t);
  set_int(l.add("Cast", 13, {mb.runtime_dim(q, 3, "head_size_int64")}, {h}), "to",
          static_cast<int64_t>(t));
  const ValueId root = l.unary("Sqrt", 13, h, kNoValue, t);
  return l.unary("Reciprocal", 13, root, kNoValue, t);
}

std::string summary(int64_t heads, const Masks& m, bool past) {
  std::string s = std::to_string(heads) + " heads";
  if (m.key_mask != kNoValue) s += ", key mask";
  if (m.causal) s += ", causal";
  if (m.attn_bias != kNoValue) s += ", attention bias";
  if (past) s += ", past";
  return s;
}

DType float_type(const Lowering& l, ValueId x, Status& st) {
  const DType t = l.dtype(x);
  if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16 &&
      t != DType::kFloat64) {
    st = l.error("its input is " + std::string(dtype_name(t)) + "; attention takes a float type");
  }
  return t;
}

// The input times the packed weights, plus the bias: Attention's MatMul, or QAttention's
// MatMulInteger of its quantized input and weights, scaled by input_scale * weight_scale.
ValueId project(Lowering& l, bool quantized, DType t) {
  ValueId proj = l.temp("QKV", t);
  if (quantized) {
    const ValueId acc = l.temp("QKV_int32", DType::kInt32);
    l.add("MatMulInteger", 10, {l.in(0), l.in(1), l.in(6), l.in(7)}, {acc});
    set_int(l.add("Cast", 13, {acc}, {proj}), "to", static_cast<int64_t>(t));
    const ValueId scale = l.binary("Mul", l.in(3), l.in(4), kNoValue, t);
    proj = l.binary("Mul", proj, scale, kNoValue, t);
  } else {
    l.add("MatMul", 13, {l.in(0), l.in(1)}, {proj});
  }
  if (l.in(2) != kNoValue) proj = l.binary("Add", proj, l.in(2), kNoValue, t);
  return proj;
}

// Attention(input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?)
// and QAttention(input, weights, bias, input_scale, weight_scale, mask_index?,
// input_zero_point?, weight_zero_point?, past?), whose input and weights are 8-bit: Q, K and V
// from one product of the input with the packed weights (qkv_hidden_sizes, else three equal
// parts); past (2, B, N, P, H) before K and V; present the same with T = P + S.
Status lower_attention(Lowering& l, bool quantized) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(quantized ? 5 : 2));
  const ValueId mask = l.in(quantized ? 5 : 3), past_in = l.in(quantized ? 8 : 4);
  const ValueId attn_bias = quantized ? kNoValue : l.in(5);
  AttrReader a(l.original());
  const int64_t heads = a.require_int("num_heads");
  const std::vector<int64_t> sizes = a.get_ints("qkv_hidden_sizes");
  const bool causal = a.get_int("unidirectional", 0) != 0;
  const float filter = a.get_float("mask_filter_value", -10000.0f);
  const float scale_attr = a.get_float("scale", 0.0f);
  const int64_t rotary = a.get_int("do_rotary", 0);
  const int64_t shared = a.get_int("past_present_share_buffer", 0);
  RECUR_RETURN_IF_ERROR(a.status());
  Status st = ok_status();
  const DType t = float_type(l, l.in(quantized ? 3 : 0), st);
  RECUR_RETURN_IF_ERROR(st);
  if (rotary) return l.error("do_rotary=1: recur does not lower rotary embeddings in Attention");
  if (shared) {
    return l.error(
        "past_present_share_buffer=1: ONNX Runtime's CUDA cache in place; recur lowers the "
        "form with past and present apart");
  }
  if (heads <= 0 || heads > kMaxSize) return l.error("num_heads is " + std::to_string(heads));
  int64_t hq = 0, hk = 0, hv = 0;
  if (!sizes.empty()) {
    if (sizes.size() != 3)
      return l.error("qkv_hidden_sizes has " + std::to_string(sizes.size()) +
                     " entries; it takes 3");
    hq = sizes[0], hk = sizes[1], hv = sizes[2];
  } else {
    const int64_t all = l.dim(l.in(1), 1);
    if (all < 0) return l.needs_shapes("its weights' shape is not known");
    hq = hk = hv = all / 3;
    if (all % 3 != 0)
      return l.error("its weights have " + std::to_string(all) + " columns, not 3 equal parts");
  }
  if (hq != hk || hq <= 0 || hv <= 0 || hq > kMaxSize || hv > kMaxSize || hq % heads != 0 ||
      hv % heads != 0) {
    return l.error("Q, K and V have " + std::to_string(hq) + ", " + std::to_string(hk) + " and " +
                   std::to_string(hv) + " columns: Q and K must match, and " +
                   std::to_string(heads) + " heads divide each");
  }
  const int64_t w_cols = l.dim(l.in(1), 1);
  if (w_cols >= 0 && w_cols != hq + hk + hv) {
    return l.error("its weights have " + std::to_string(w_cols) + " columns; Q, K and V take " +
                   std::to_string(hq + hk + hv));
  }
  if (l.rank(l.in(0)) >= 0 && l.rank(l.in(0)) != 3)
    return l.error("its input has rank " + std::to_string(l.rank(l.in(0))) + "; it takes 3");

  const ValueId proj = project(l, quantized, t);
  const ValueId q = l.temp("Q", t), k = l.temp("K", t), v = l.temp("V", t);
  set_int(l.add("Split", 13, {proj, l.int64s("split", {hq, hk, hv})}, {q, k, v}), "axis", 2);
  ValueId qh = split_heads(l, q, heads, "Q", t);
  ValueId kh = split_heads(l, k, heads, "K", t);
  ValueId vh = split_heads(l, v, heads, "V", t);
  Masks m;
  if (past_in != kNoValue) {
    // past (2, B, N, P, H): its keys and values come before the new ones.
    ValueId halves[2];
    for (int64_t i = 0; i < 2; ++i) {
      halves[i] = l.temp(i ? "past_value" : "past_key", t);
      set_int(
          l.add("Gather", 13,
                {past_in, l.constant(i ? "past_value_index" : "past_key_index", Tensor::scalar(i))},
                {halves[i]}),
          "axis", 0);
    }
    kh = concat(l, {halves[0], kh}, 2, "K_total", t);
    vh = concat(l, {halves[1], vh}, 2, "V_total", t);
    m.past_key = halves[0];
  }
  if (l.out(1) != kNoValue) {
    const ValueId pk = l.temp("present_key", t), pv = l.temp("present_value", t);
    const ValueId zero = l.int64s("present_axis", {0});
    l.add("Unsqueeze", 13, {kh, zero}, {pk});
    l.add("Unsqueeze", 13, {vh, zero}, {pv});
    concat(l, {pk, pv}, 0, "present", t, l.out(1));
    l.type_output(1, t);
  }
  m.key_mask = mask;
  m.input = l.in(0);
  m.attn_bias = attn_bias;
  m.causal = causal;
  m.filter = filter;
  RECUR_ASSIGN_OR_RETURN(const ValueId scale, scale_value(l, scale_attr, hq / heads, qh, t));
  RECUR_RETURN_IF_ERROR(attend(l, qh, kh, vh, scale, m, l.out(0), t));
  l.commit(summary(heads, m, past_in != kNoValue), t);
  return ok_status();
}

// MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?,
// past_key?, past_value?, ...): Q, K and V already projected, (B, L, N * H) each (or K and V
// as (B, N, L, H)); bias (D + D + Dv) added to the 3-D ones; past_key and past_value
// (B, N, P, H) before K and V, present_key and present_value the same with T = P + L.
Status lower_multi_head_attention(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  AttrReader a(l.original());
  const int64_t heads = a.require_int("num_heads");
  const bool causal = a.get_int("unidirectional", 0) != 0;
  const float filter = a.get_float("mask_filter_value", -10000.0f);
  const float scale_attr = a.get_float("scale", 0.0f);
  RECUR_RETURN_IF_ERROR(a.status());
  Status st = ok_status();
  const DType t = float_type(l, l.in(0), st);
  RECUR_RETURN_IF_ERROR(st);
  if (heads <= 0 || heads > kMaxSize) return l.error("num_heads is " + std::to_string(heads));
  if (l.in(1) == kNoValue || l.in(2) == kNoValue) {
    return l.error(
        "its key or value is not given: recur does not lower the packed forms (Q, K and V in "
        "the query, or K and V in the key)");
  }
  if (l.in(8) != kNoValue || l.in(9) != kNoValue) {
    return l.error(
        "past_sequence_length or cache_indirection is given (ONNX Runtime's CUDA cache in place "
        "and beam search); recur lowers the form with past and present apart");
  }
  if (l.out(3) != kNoValue)
    return l.error("its qk output is asked for; recur does not lower that output");
  const int64_t qr = l.rank(l.in(0)), kr = l.rank(l.in(1)), vr = l.rank(l.in(2));
  if (qr < 0 || kr < 0 || vr < 0)
    return l.needs_shapes("the rank of its query, key or value is not known");
  if (qr != 3 || kr != vr || (kr != 3 && kr != 4)) {
    return l.error("its query, key and value have ranks " + std::to_string(qr) + ", " +
                   std::to_string(kr) + " and " + std::to_string(vr) +
                   "; recur lowers a 3-D query with 3-D or 4-D (batch, heads, length, size) "
                   "key and value");
  }
  const int64_t d = l.dim(l.in(0), 2);
  int64_t dv = l.dim(l.in(2), kr - 1);
  if (kr == 4 && dv >= 0) dv = checked_mul(dv, heads).value_or(-1);
  // Unknown hidden sizes wait for shape inference; known only at run time, they are read
  // there.
  if ((d < 0 || dv < 0) && !l.last_round())
    return l.needs_shapes("the last dimensions of its query and value are not known");
  if ((d > 0 && d % heads != 0) || (dv > 0 && dv % heads != 0)) {
    return l.error(std::to_string(heads) + " heads do not divide its hidden sizes " +
                   std::to_string(d) + " and " + std::to_string(dv));
  }
  ValueId q = l.in(0), k = l.in(1), v = l.in(2);
  if (l.in(3) != kNoValue) {
    if (kr == 4) {
      return l.error("a bias with 4-D key and value: recur lowers the bias of 3-D ones only");
    }
    const ValueId bq = l.temp("bias_Q", t), bk = l.temp("bias_K", t), bv = l.temp("bias_V", t);
    if (d >= 0 && dv >= 0) {
      set_int(l.add("Split", 13, {l.in(3), l.int64s("bias_split", {d, d, dv})}, {bq, bk, bv}),
              "axis", 0);
    } else {
      // bias[0:D], bias[D:2D], bias[2D:], D the query's last dimension at run time.
      const ValueId dq = l.temp("hidden_size", DType::kInt64);
      Node& shape = l.add("Shape", 15, {l.in(0)}, {dq});
      set_int(shape, "start", 2);
      set_int(shape, "end", 3);
      const ValueId d2 = l.binary("Add", dq, dq, kNoValue, DType::kInt64);
      l.add("Slice", 13, {l.in(3), l.int64s("bias_Q_start", {0}), dq}, {bq});
      l.add("Slice", 13, {l.in(3), dq, d2}, {bk});
      l.add("Slice", 13,
            {l.in(3), d2, l.int64s("bias_V_end", {std::numeric_limits<int64_t>::max()})}, {bv});
    }
    q = l.binary("Add", q, bq, kNoValue, t);
    k = l.binary("Add", k, bk, kNoValue, t);
    v = l.binary("Add", v, bv, kNoValue, t);
  }
  const ValueId qh = split_heads(l, q, heads, "Q", t);
  ValueId kh = kr == 3 ? split_heads(l, k, heads, "K", t) : k;
  ValueId vh = kr == 3 ? split_heads(l, v, heads, "V", t) : v;
  const bool past = l.in(6) != kNoValue || l.in(7) != kNoValue;
  if (past) {
    if (l.in(6) == kNoValue || l.in(7) == kNoValue)
      return l.error("it has one of past_key and past_value; it takes both or neither");
    kh = concat(l, {l.in(6), kh}, 2, "K_total", t);
    vh = concat(l, {l.in(7), vh}, 2, "V_total", t);
  }
  Masks m;
  m.past_key = l.in(6);
  if (l.out(1) != kNoValue) {
    l.add("Identity", 16, {kh}, {l.out(1)});
    l.type_output(1, t);
  }
  if (l.out(2) != kNoValue) {
    l.add("Identity", 16, {vh}, {l.out(2)});
    l.type_output(2, t);
  }
  m.key_mask = l.in(4);
  m.input = l.in(0);
  m.attn_bias = l.in(5);
  m.causal = causal;
  m.filter = filter;
  RECUR_ASSIGN_OR_RETURN(const ValueId scale,
                         scale_value(l, scale_attr, d < 0 ? -1 : d / heads, qh, t));
  RECUR_RETURN_IF_ERROR(attend(l, qh, kh, vh, scale, m, l.out(0), t));
  l.commit(summary(heads, m, past), t);
  return ok_status();
}

// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
// segment_embedding?, gamma, beta?, mask?, position_ids?): the word, position (position_ids,
// else 0 ... S-1) and segment embeddings summed in that order (output 2, embedding_sum),
// layer-normalized over the last axis (output 0); output 1, mask_index, is each sequence's
// mask summed (int32; zeros without a mask), the sequence ends Attention reads.
// QEmbedLayerNormalization(input_ids, segment_ids?, the five uint8 tables, mask?, their
// scales, their zero points) dequantizes the tables first.
Status lower_embed_layer_norm(Lowering& l, bool quantized) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 2, 3, 5}));
  AttrReader a(l.original());
  const float eps = a.get_float("epsilon", 1e-12f);
  RECUR_RETURN_IF_ERROR(a.status());
  if ((l.in(1) == kNoValue) != (l.in(4) == kNoValue))
    return l.error("it has one of segment_ids and segment_embedding; it takes both or neither");
  // Inputs 2 to 6: the tables, gamma and beta; QEmbedLayerNormalization's are uint8, each with
  // its scale (input + 6) and zero point (input + 11).
  const DType t = quantized ? l.dtype(l.in(8)) : l.dtype(l.in(2));
  if (t == DType::kUndefined) return l.needs_shapes("the type of its embeddings is not known");
  if (quantized) RECUR_RETURN_IF_ERROR(l.require_inputs({8, 9, 11, 12}));
  const auto table = [&](size_t i, const char* what) {
    if (!quantized || l.in(i) == kNoValue) return l.in(i);
    const ValueId f = l.temp(what, t);
    l.add("DequantizeLinear", 13, {l.in(i), l.in(i + 6), l.in(i + 11)}, {f});
    return f;
  };
  const ValueId word_table = table(2, "word_table"), pos_table = table(3, "position_table");
  const ValueId seg_table = table(4, "segment_table");
  const ValueId gamma = table(5, "gamma_float"), beta = table(6, "beta_float");
  MaskBuilder mb(l, t);
  const auto lookup = [&](ValueId tbl, ValueId ids, const std::string& what) {
    const ValueId y = l.temp(what, t);
    set_int(l.add("Gather", 13, {tbl, ids}, {y}), "axis", 0);
    return y;
  };
  const ValueId word = lookup(word_table, l.in(0), "word_embedding");
  ValueId pos_ids = quantized ? kNoValue : l.in(8);
  if (pos_ids == kNoValue) {
    const ValueId range = mb.positions(mb.runtime_dim(l.in(0), 1, "length"), "positions");
    pos_ids = mb.unsqueeze(range, {0}, DType::kInt64, "position_ids");
  }
  const ValueId pos = lookup(pos_table, pos_ids, "position_embedding");
  const bool segment = l.in(1) != kNoValue;
  ValueId sum = l.binary("Add", word, pos, segment ? kNoValue : l.out(2), t);
  if (segment) {
    sum = l.binary("Add", sum, lookup(seg_table, l.in(1), "segment_embedding"), l.out(2), t);
  }
  Node& ln = l.add("LayerNormalization", 17, {sum, gamma, beta}, {l.out(0)});
  set_int(ln, "axis", -1);
  set_float(ln, "epsilon", eps);
  l.keep_name();
  if (l.out(1) != kNoValue) {
    if (l.in(7) != kNoValue) {
      Node& r = l.add("ReduceSum", 13, {l.in(7), l.int64s("mask_axes", {1})}, {l.out(1)});
      set_int(r, "keepdims", 0);
    } else {
      const ValueId batch = l.temp("batch", DType::kInt64);
      Node& shape = l.add("Shape", 15, {l.in(0)}, {batch});
      set_int(shape, "start", 0);
      set_int(shape, "end", 1);
      Attribute zero;
      zero.type = AttrType::kTensor;
      zero.t = Tensor::from_vector<int32_t>({1}, {0});
      l.add("ConstantOfShape", 9, {batch}, {l.out(1)}).attributes["value"] = std::move(zero);
    }
    l.type_output(1, DType::kInt32);
  }
  l.type_output(2, t);
  std::string what = "epsilon " + short_float(eps);
  if (!segment) what += ", no segments";
  l.commit(what, t);
  return ok_status();
}

// The (B, kv_heads, T, H) keys or values, each head repeated for the `group` query heads
// that share it: (B, kv_heads * group, T, H).
ValueId repeat_heads(Lowering& l, ValueId x, int64_t kv_heads, int64_t group, int64_t head,
                     const std::string& what, DType t) {
  if (group == 1) return x;
  const ValueId x5 = l.temp(what + "_5d", t);
  l.add("Unsqueeze", 13, {x, l.int64s(what + "_group_axis", {2})}, {x5});
  const ValueId tiled = l.temp(what + "_tiled", t);
  l.add("Tile", 13, {x5, l.int64s(what + "_repeats", {1, 1, group, 1, 1})}, {tiled});
  const ValueId y = l.temp(what + "_heads", t);
  l.add("Reshape", 14, {tiled, l.int64s(what + "_heads_shape", {0, kv_heads * group, -1, head})},
        {y});
  return y;
}

// Where the new tokens of a GroupQueryAttention go in its KV cache.
struct CachePositions {
  ValueId total = kNoValue;      // total_sequence_length, an int64 scalar
  ValueId positions = kNoValue;  // (B, S): P_b + i
};

// P_b is 0 for a first prompt (S == total_sequence_length), else seqlens_k[b] + 1 - S.
CachePositions cache_positions(Lowering& l, MaskBuilder& mb, ValueId query, ValueId seqlens_k,
                               ValueId total_length) {
  CachePositions cp;
  const ValueId len = mb.runtime_dim(query, 1, "length");
  const ValueId total = l.temp("total_length", DType::kInt64);
  set_int(l.add("Cast", 13, {total_length}, {total}), "to", static_cast<int64_t>(DType::kInt64));
  cp.total = l.temp("total_length_scalar", DType::kInt64);
  l.add("Reshape", 14, {total, l.int64s("scalar_shape", {})}, {cp.total});
  const ValueId seqlens = l.temp("seqlens", DType::kInt64);
  set_int(l.add("Cast", 13, {seqlens_k}, {seqlens}), "to", static_cast<int64_t>(DType::kInt64));
  const ValueId one = l.constant("int64_one_", Tensor::scalar(int64_t{1}));
  const ValueId ends = l.binary("Add", seqlens, one, kNoValue, DType::kInt64);
  const ValueId later = l.binary("Sub", ends, len, kNoValue, DType::kInt64);
  const ValueId first = l.temp("first_prompt", DType::kBool);
  l.add("Equal", 13, {len, cp.total}, {first});
  const ValueId past_len = l.temp("past_lengths", DType::kInt64);
  l.add("Where", 16, {first, l.constant("int64_zero_", Tensor::scalar(int64_t{0})), later},
        {past_len});
  const ValueId steps = mb.unsqueeze(mb.positions(len, "steps"), {0}, DType::kInt64, "steps_row");
  const ValueId past_col = mb.unsqueeze(past_len, {1}, DType::kInt64, "past_lengths_column");
  cp.positions = l.binary("Add", past_col, steps, kNoValue, DType::kInt64);
  return cp;
}

// present_key or present_value: the past (zeros where there is none) padded along the sequence
// to max(total_sequence_length, past length), `fresh` (B, kv_heads, S, H) scattered in at
// P_b + i. Written to `out` where the node has that output.
Result<ValueId> write_cache(Lowering& l, MaskBuilder& mb, const CachePositions& cp, ValueId past,
                            ValueId fresh, ValueId out, int64_t head, const std::string& what,
                            DType t) {
  const ValueId shape = l.temp(what + "_new_shape", DType::kInt64);
  l.add("Shape", 15, {fresh}, {shape});
  const ValueId index = l.temp(what + "_write_index", DType::kInt64);
  l.add("Expand", 13,
        {mb.unsqueeze(cp.positions, {1, 3}, DType::kInt64, what + "_write_positions"), shape},
        {index});
  ValueId base;
  if (past != kNoValue) {
    const ValueId have = mb.runtime_dim(past, 2, what + "_past_length");
    const ValueId size = l.temp(what + "_present_length", DType::kInt64);
    l.add("Max", 13, {cp.total, have}, {size});
    const ValueId grow = mb.unsqueeze(l.binary("Sub", size, have, kNoValue, DType::kInt64), {0},
                                      DType::kInt64, what + "_growth");
    const ValueId pads = l.temp(what + "_pads", DType::kInt64);
    set_int(l.add("Concat", 13,
                  {l.int64s(what + "_pads_before", {0, 0, 0, 0, 0, 0}), grow,
                   l.int64s(what + "_pads_after", {0})},
                  {pads}),
            "axis", 0);
    base = l.temp(what + "_padded", t);
    l.add("Pad", 18, {past, pads}, {base});
  } else {
    const ValueId lead = l.temp(what + "_lead", DType::kInt64);
    Node& s2 = l.add("Shape", 15, {fresh}, {lead});
    set_int(s2, "start", 0);
    set_int(s2, "end", 2);
    const ValueId full = l.temp(what + "_present_shape", DType::kInt64);
    set_int(l.add("Concat", 13,
                  {lead, mb.unsqueeze(cp.total, {0}, DType::kInt64, what + "_total_1d"),
                   l.int64s(what + "_head", {head})},
                  {full}),
            "axis", 0);
    RECUR_ASSIGN_OR_RETURN(const ValueId zero, l.scalar(what + "_zero", t, 0.0));
    base = l.temp(what + "_zeros", t);
    l.add("Expand", 13, {zero, full}, {base});
  }
  const ValueId y = out != kNoValue ? out : l.temp(what, t);
  set_int(l.add("ScatterElements", 18, {base, index, fresh}, {y}), "axis", 2);
  return y;
}

// Key j is visible to query i of sequence b where P_b + i - window < j <= P_b + i (no lower
// bound for a window of -1): (B, 1, S, T) bool.
ValueId visible_keys(Lowering& l, MaskBuilder& mb, const CachePositions& cp, ValueId present,
                     int64_t window) {
  const ValueId limit = mb.unsqueeze(cp.positions, {1, 3}, DType::kInt64, "last_visible");
  const ValueId keys = mb.positions(mb.runtime_dim(present, 2, "present_length"), "key_positions");
  const ValueId visible = l.temp("visible", DType::kBool);
  l.add("LessOrEqual", 16, {keys, limit}, {visible});
  if (window < 0) return visible;
  const ValueId lo = l.binary("Sub", limit, l.constant("window", Tensor::scalar(window - 1)),
                              kNoValue, DType::kInt64);
  const ValueId inside = l.temp("inside_window", DType::kBool);
  l.add("GreaterOrEqual", 16, {keys, lo}, {inside});
  const ValueId both = l.temp("visible_in_window", DType::kBool);
  l.add("And", 7, {visible, inside}, {both});
  return both;
}

// GroupQueryAttention(query, key?, value?, past_key?, past_value?, seqlens_k,
// total_sequence_length, cos_cache?, sin_cache?, position_ids?, attention_bias?): attention
// whose kv_num_heads key and value heads are each shared by num_heads / kv_num_heads query
// heads, over a KV cache. Sequence b holds seqlens_k[b] + 1 tokens; its new S ones follow its
// past ones, P_b = seqlens_k[b] + 1 - S of them (0 for a first prompt, where
// total_sequence_length is S), and are written into present_key and present_value (the past
// padded to max(total_sequence_length, past length) along the sequence) at P_b ... P_b + S - 1.
// Query i sees keys P_b + i - local_window_size + 1 ... P_b + i (the last local_window_size).
Status lower_group_query_attention(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs({0, 5, 6}));
  AttrReader a(l.original());
  const int64_t heads = a.require_int("num_heads");
  const int64_t kv_heads = a.require_int("kv_num_heads");
  const float scale_attr = a.get_float("scale", 0.0f);
  const float softcap = a.get_float("softcap", 0.0f);
  const int64_t window = a.get_int("local_window_size", -1);
  const bool rotary = a.get_int("do_rotary", 0) != 0;
  const int64_t interleaved = a.get_int("rotary_interleaved", 0);
  const int64_t smooth = a.get_int("smooth_softmax", 0);
  const int64_t qk_output = a.get_int("qk_output", 0);
  RECUR_RETURN_IF_ERROR(a.status());
  Status st = ok_status();
  const DType t = float_type(l, l.in(0), st);
  RECUR_RETURN_IF_ERROR(st);
  if (heads <= 0 || kv_heads <= 0 || heads > kMaxSize || heads % kv_heads != 0) {
    return l.error("num_heads " + std::to_string(heads) + " and kv_num_heads " +
                   std::to_string(kv_heads) +
                   ": both positive, the first a multiple of the second");
  }
  if (window == 0 || window < -1)
    return l.error("local_window_size is " + std::to_string(window) + "; -1 (none) or positive");
  if (smooth || l.in(11) != kNoValue) {
    return l.error("smooth_softmax or head_sink: recur lowers the plain Softmax only");
  }
  if (qk_output || l.out(3) != kNoValue)
    return l.error("its output_qk is asked for; recur does not lower that output");
  if (softcap > 0.0f && l.in(10) != kNoValue)
    return l.error("softcap with attention_bias: recur lowers one or the other");
  if ((l.in(1) == kNoValue) != (l.in(2) == kNoValue))
    return l.error("it has one of key and value; it takes both, or neither (packed QKV)");
  if ((l.in(3) == kNoValue) != (l.in(4) == kNoValue))
    return l.error("it has one of past_key and past_value; it takes both or neither");
  if (rotary && (l.in(7) == kNoValue || l.in(8) == kNoValue))
    return l.error("do_rotary=1 without cos_cache and sin_cache");
  if (l.rank(l.in(0)) < 0) return l.needs_shapes("the rank of its query is not known");
  if (l.rank(l.in(0)) != 3)
    return l.error("its query has rank " + std::to_string(l.rank(l.in(0))) + "; it takes 3");
  const int64_t width = l.dim(l.in(0), 2);
  if (width < 0) return l.needs_shapes("the last dimension of its query is not known");
  const bool packed = l.in(1) == kNoValue;
  const int64_t parts = packed ? heads + 2 * kv_heads : heads;
  if (width % parts != 0) {
    return l.error("its query's last dimension " + std::to_string(width) + " is not " +
                   std::to_string(parts) + " heads of one size");
  }
  const int64_t head = width / parts;

  ValueId q = l.in(0), k = l.in(1), v = l.in(2);
  if (packed) {
    q = l.temp("Q", t), k = l.temp("K", t), v = l.temp("V", t);
    set_int(
        l.add("Split", 13,
              {l.in(0), l.int64s("qkv_split", {heads * head, kv_heads * head, kv_heads * head})},
              {q, k, v}),
        "axis", 2);
  }
  ValueId qh = split_heads(l, q, heads, "Q", t);
  ValueId kh = split_heads(l, k, kv_heads, "K", t);
  const ValueId vh = split_heads(l, v, kv_heads, "V", t);

  MaskBuilder mb(l, t);
  const CachePositions cp = cache_positions(l, mb, l.in(0), l.in(5), l.in(6));
  if (rotary) {
    const ValueId pos = l.in(9) != kNoValue ? l.in(9) : cp.positions;
    const int64_t half = l.dim(l.in(7), 1);
    const auto rotate = [&](ValueId x, const char* what) {
      const ValueId y = l.temp(std::string(what) + "_rotated", t);
      Node& n = l.add("RotaryEmbedding", 23, {x, l.in(7), l.in(8), pos}, {y});
      set_int(n, "interleaved", interleaved);
      if (half > 0 && 2 * half != head) set_int(n, "rotary_embedding_dim", 2 * half);
      return y;
    };
    qh = rotate(qh, "Q");
    kh = rotate(kh, "K");
  }
  RECUR_ASSIGN_OR_RETURN(const ValueId pk,
                         write_cache(l, mb, cp, l.in(3), kh, l.out(1), head, "present_key", t));
  RECUR_ASSIGN_OR_RETURN(const ValueId pv,
                         write_cache(l, mb, cp, l.in(4), vh, l.out(2), head, "present_value", t));
  l.type_output(1, t);
  l.type_output(2, t);
  const ValueId visible = visible_keys(l, mb, cp, pk, window);
  const int64_t group = heads / kv_heads;
  const ValueId kr = repeat_heads(l, pk, kv_heads, group, head, "K_shared", t);
  const ValueId vr = repeat_heads(l, pv, kv_heads, group, head, "V_shared", t);
  Masks m;
  m.visible = visible;
  m.softcap = softcap;
  m.attn_bias = l.in(10);
  RECUR_ASSIGN_OR_RETURN(const ValueId scale, scale_value(l, scale_attr, head, qh, t));
  RECUR_RETURN_IF_ERROR(attend(l, qh, kr, vr, scale, m, l.out(0), t));
  std::string what = std::to_string(heads) + " query heads over " + std::to_string(kv_heads) +
                     " key and value heads";
  if (rotary) what += ", rotary";
  if (window >= 0) what += ", window " + std::to_string(window);
  l.commit(what, t);
  return ok_status();
}

// RotaryEmbedding(input, position_ids, cos_cache, sin_cache) of ONNX Runtime's domain: ONNX's
// RotaryEmbedding-23 (input, cos_cache, sin_cache, position_ids), which it became, with its
// inputs reordered; a one-element position_ids is the first token's position, the others
// following it.
Status lower_rotary_embedding(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(4));
  AttrReader a(l.original());
  const float scale = a.get_float("scale", 1.0f);
  const int64_t packed = a.get_int("is_packed_batching", 0);
  RECUR_RETURN_IF_ERROR(a.status());
  if (packed) return l.error("is_packed_batching=1: recur lowers the padded batch only");
  if (scale != 1.0f) {
    return l.error("scale=" + short_float(scale) + ": recur lowers the rotation without a scale");
  }
  const int64_t r = l.rank(l.in(0)), pr = l.rank(l.in(1));
  if (r < 0 || pr < 0) return l.needs_shapes("the rank of its input or position_ids is not known");
  if (r != 3 && r != 4)
    return l.error("its input has rank " + std::to_string(r) + "; it takes 3 or 4");
  const DType t = l.dtype(l.in(0));
  ValueId pos = l.in(1);
  if (pr != 2) {
    // position_ids [offset]: positions offset ... offset + S - 1 for every sequence, as
    // (batch, S).
    MaskBuilder mb(l, t);
    const ValueId steps = mb.positions(mb.runtime_dim(l.in(0), r == 3 ? 1 : 2, "length"), "steps");
    const ValueId row = l.binary("Add", steps, l.in(1), kNoValue, DType::kInt64);
    const ValueId row2 = mb.unsqueeze(row, {0}, DType::kInt64, "position_row");
    const ValueId shape = l.temp("position_ids_shape", DType::kInt64);
    const ValueId batch = l.temp("batch", DType::kInt64);
    Node& bs = l.add("Shape", 15, {l.in(0)}, {batch});
    set_int(bs, "start", 0);
    set_int(bs, "end", 1);
    const ValueId len = l.temp("length_1d", DType::kInt64);
    Node& ls = l.add("Shape", 15, {l.in(0)}, {len});
    set_int(ls, "start", r == 3 ? 1 : 2);
    set_int(ls, "end", r == 3 ? 2 : 3);
    set_int(l.add("Concat", 13, {batch, len}, {shape}), "axis", 0);
    pos = l.temp("position_ids", DType::kInt64);
    l.add("Expand", 13, {row2, shape}, {pos});
  }
  copy_attrs(l.original(),
             l.add("RotaryEmbedding", 23, {l.in(0), l.in(2), l.in(3), pos}, {l.out(0)}),
             {"interleaved", "num_heads", "rotary_embedding_dim"});
  l.keep_name();
  l.commit(pr == 2 ? "position ids per token" : "positions from an offset", t);
  return ok_status();
}

}  // namespace

LowerFn attention_lowering(std::string_view op) {
  if (op == "RotaryEmbedding") return lower_rotary_embedding;
  if (op == "GroupQueryAttention") return lower_group_query_attention;
  if (op == "EmbedLayerNormalization")
    return [](Lowering& l) { return lower_embed_layer_norm(l, false); };
  if (op == "QEmbedLayerNormalization")
    return [](Lowering& l) { return lower_embed_layer_norm(l, true); };
  if (op == "Attention") return [](Lowering& l) { return lower_attention(l, false); };
  if (op == "QAttention") return [](Lowering& l) { return lower_attention(l, true); };
  if (op == "MultiHeadAttention") return lower_multi_head_attention;
  return nullptr;
}

}  // namespace recur::lowering
