// Attention (opsets 23-25): scaled dot-product attention with multi-head, grouped-query and
// multi-query heads, an internal KV cache (past_key/past_value -> present_key/present_value),
// an additive or boolean mask, causal and sliding-window masking, softcap, and the
// qk_matmul_output debug output. Everything is computed in double, one query row at a time.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"
#include "runtime/core/checked_math.h"

namespace recur::reference {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct AttentionAttrs {
  bool is_causal = false;
  std::optional<int64_t> q_num_heads, kv_num_heads;
  int64_t qk_mode = 0;
  std::optional<double> scale;
  double softcap = 0.0;
  int64_t left_window = -1, right_window = -1;
  int opset = 23;
  // Opset 25 caps the raw scores and then adds the bias; 23 and 24 as released (ONNX 1.18 to
  // 1.21, ONNX Runtime, the ONNX 1.20 backend tests) add the bias first, and number the
  // qk_matmul_output modes 1 and 2 in that order. See docs/semantics.md.
  bool cap_before_bias = false;
};

// The geometry of one call, every size in the 4D (batch, heads, sequence, head size) view.
struct Dims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past_len = 0, total = 0,
          head = 0, v_head = 0;
};

// A 3D (batch, sequence, heads * size) or 4D (batch, heads, sequence, size) tensor read as
// doubles, indexed in the 4D view so that both layouts share the arithmetic.
struct HeadView {
  std::vector<double> data;
  bool three_d = false;
  int64_t heads = 0, seq = 0, size = 0;
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    const int64_t i =
        three_d ? ((b * seq + s) * heads + h) * size + d : ((b * heads + h) * seq + s) * size + d;
    return data[static_cast<size_t>(i)];
  }
};

// Mask values as additive biases: a boolean mask gives 0 (attend) or -inf, a numeric one its
// value. Integer masks are accepted by the schema (U) and are added like float ones.
Result<std::vector<double>> read_mask(const Tensor& m) {
  std::vector<double> out(static_cast<size_t>(m.numel()));
  if (m.dtype() == DType::kBool) {
    const bool* p = m.data<bool>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i] ? 0.0 : kNegInf;
    return out;
  }
  const bool ok = visit_dtype(kNumericTypes, m.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = m.data<T>();
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
  });
  if (!ok) return invalid_argument("attn_mask has unsupported dtype " + dtype_str(m.dtype()));
  return out;
}

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(AttentionAttrs a) : a_(std::move(a)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* q, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* k, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* v, required_input(ctx, 2));
    const Tensor* mask = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    const Tensor* past_k = ctx.num_inputs() > 4 ? ctx.input(4) : nullptr;
    const Tensor* past_v = ctx.num_inputs() > 5 ? ctx.input(5) : nullptr;
    const Tensor* nonpad = ctx.num_inputs() > 6 ? ctx.input(6) : nullptr;

    RECUR_RETURN_IF_ERROR(check_dtypes(*q, *k, *v, past_k, past_v));
    Dims d;
    RECUR_RETURN_IF_ERROR(resolve_dims(*q, *k, *v, d));
    RECUR_RETURN_IF_ERROR(check_past(past_k, past_v, nonpad, d));
    std::optional<int64_t> total = checked_add(d.past_len, d.kv_len);
    if (!total) return invalid_argument("past and current sequence lengths overflow");
    d.total = *total;

    // Output sizes bound every buffer below; checking them first keeps the arithmetic on
    // indices in range.
    const std::optional<int64_t> y_hidden = checked_mul(d.q_heads, d.v_head);
    if (!y_hidden) return invalid_argument("q_num_heads * V head size overflows");
    const Shape y_shape = q->rank() == 3 ? Shape{d.batch, d.q_len, *y_hidden}
                                         : Shape{d.batch, d.q_heads, d.q_len, d.v_head};
    RECUR_RETURN_IF_ERROR(checked_numel(y_shape, "Y").status());
    const Shape pk_shape{d.batch, d.kv_heads, d.total, d.head};
    const Shape pv_shape{d.batch, d.kv_heads, d.total, d.v_head};
    const Shape qk_shape{d.batch, d.q_heads, d.q_len, d.total};
    RECUR_RETURN_IF_ERROR(checked_numel(pk_shape, "present_key").status());
    RECUR_RETURN_IF_ERROR(checked_numel(pv_shape, "present_value").status());
    RECUR_RETURN_IF_ERROR(checked_numel(qk_shape, "qk_matmul_output").status());

    std::vector<int64_t> valid;  // nonpad_kv_seqlen per batch
    if (nonpad) RECUR_RETURN_IF_ERROR(read_nonpad(*nonpad, d, valid));

    std::vector<double> mask_vals;
    Shape mask_strides;  // 4D strides into mask_vals, 0 on broadcast axes
    int64_t mask_len = 0;
    if (mask) {
      RECUR_RETURN_IF_ERROR(check_mask(*mask, d, mask_strides, mask_len));
      RECUR_ASSIGN_OR_RETURN(mask_vals, read_mask(*mask));
    }

    HeadView qv, kv, vv;
    RECUR_RETURN_IF_ERROR(load(*q, "Q", d.q_heads, d.q_len, d.head, qv));
    RECUR_RETURN_IF_ERROR(load(*k, "K", d.kv_heads, d.kv_len, d.head, kv));
    RECUR_RETURN_IF_ERROR(load(*v, "V", d.kv_heads, d.kv_len, d.v_head, vv));
    // The present caches are past ++ current along the sequence axis; attention reads them.
    RECUR_ASSIGN_OR_RETURN(std::vector<double> present_k, concat_cache(past_k, kv, d, d.head));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> present_v, concat_cache(past_v, vv, d, d.v_head));

    const double scale =
        a_.scale ? *a_.scale : 1.0 / std::sqrt(static_cast<double>(d.head == 0 ? 1 : d.head));
    const bool want_qk = ctx.num_outputs() > 3 && ctx.output_requested(3);
    std::vector<double> y(static_cast<size_t>(d.batch * d.q_heads * d.q_len * d.v_head), 0.0);
    std::vector<double> qk_out(want_qk ? static_cast<size_t>(shape_numel(qk_shape)) : 0);
    std::vector<double> raw(static_cast<size_t>(d.total)), mid(raw.size()), bias(raw.size()),
        logits(raw.size()), probs(raw.size());
    const int64_t group = d.q_heads / d.kv_heads;

    for (int64_t b = 0; b < d.batch; ++b) {
      // The count of valid keys before the query block: where causal and window masks align.
      const int64_t offset = past_k ? d.past_len : nonpad ? valid[b] - d.q_len : 0;
      for (int64_t h = 0; h < d.q_heads; ++h) {
        // Grouped-query heads share a KV head: q heads [g*group, (g+1)*group) read head g.
        const int64_t g = h / group;
        const double* kbase = present_k.data() + (b * d.kv_heads + g) * d.total * d.head;
        const double* vbase = present_v.data() + (b * d.kv_heads + g) * d.total * d.v_head;
        for (int64_t i = 0; i < d.q_len; ++i) {
          for (int64_t j = 0; j < d.total; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < d.head; ++e) dot += qv.at(b, h, i, e) * kbase[j * d.head + e];
            raw[j] = dot * scale;
            bias[j] = key_bias(b, h, i, j, offset, nonpad ? valid[b] : d.total, mask_vals,
                               mask_strides, mask_len);
            if (a_.cap_before_bias) {
              // `mid` is the capped score: qk_matmul_output_mode 1.
              mid[j] = cap(raw[j]);
              logits[j] = mid[j] + bias[j];
            } else {
              // `mid` is the biased score: qk_matmul_output_mode 1. A key the bias excludes
              // stays excluded: capping -inf would give it -softcap and some probability.
              mid[j] = raw[j] + bias[j];
              logits[j] = bias[j] == kNegInf ? kNegInf : cap(mid[j]);
            }
          }
          softmax_row(bias, logits, probs);
          double* yrow = y.data() + ((b * d.q_heads + h) * d.q_len + i) * d.v_head;
          for (int64_t j = 0; j < d.total; ++j) {
            if (probs[j] == 0.0) continue;
            for (int64_t e = 0; e < d.v_head; ++e) yrow[e] += probs[j] * vbase[j * d.v_head + e];
          }
          if (want_qk) {
            const std::vector<double>& src = a_.qk_mode == 0   ? raw
                                             : a_.qk_mode == 1 ? mid
                                             : a_.qk_mode == 2 ? logits
                                                               : probs;
            std::copy(src.begin(), src.end(),
                      qk_out.begin() + ((b * d.q_heads + h) * d.q_len + i) * d.total);
          }
        }
      }
    }

    if (q->rank() == 3) y = to_3d(y, d);
    RECUR_ASSIGN_OR_RETURN(Tensor * yt, ctx.allocate_output(0, q->dtype(), y_shape));
    write_from_double(y, *yt);
    if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(1, k->dtype(), pk_shape));
      write_from_double(present_k, *t);
    }
    if (ctx.num_outputs() > 2 && ctx.output_requested(2)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(2, v->dtype(), pv_shape));
      write_from_double(present_v, *t);
    }
    if (want_qk) {
      RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(3, q->dtype(), qk_shape));
      write_from_double(qk_out, *t);
    }
    return ok_status();
  }

 private:
  static Status check_dtypes(const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor* past_k, const Tensor* past_v) {
    if (!is_floating(q.dtype()) || !is_floating(v.dtype())) {
      return invalid_argument("Q and V must be float32, float64, float16 or bfloat16, got Q " +
                              dtype_str(q.dtype()) + " and V " + dtype_str(v.dtype()));
    }
    if (k.dtype() != q.dtype()) {
      return invalid_argument("K has dtype " + dtype_str(k.dtype()) + " but Q has " +
                              dtype_str(q.dtype()) + " (both are T1)");
    }
    if (past_k && past_k->dtype() != q.dtype()) {
      return invalid_argument("past_key has dtype " + dtype_str(past_k->dtype()) + " but Q has " +
                              dtype_str(q.dtype()));
    }
    if (past_v && past_v->dtype() != v.dtype()) {
      return invalid_argument("past_value has dtype " + dtype_str(past_v->dtype()) + " but V has " +
                              dtype_str(v.dtype()));
    }
    return ok_status();
  }

  Status resolve_dims(const Tensor& q, const Tensor& k, const Tensor& v, Dims& d) const {
    const int64_t rank = q.rank();
    if ((rank != 3 && rank != 4) || k.rank() != rank || v.rank() != rank) {
      return invalid_argument("Q, K and V must all be 3D or all be 4D, got Q " +
                              shape_to_string(q.shape()) + ", K " + shape_to_string(k.shape()) +
                              ", V " + shape_to_string(v.shape()));
    }
    const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
    if (ks[0] != qs[0] || vs[0] != qs[0]) {
      return invalid_argument("batch sizes differ: Q " + shape_to_string(qs) + ", K " +
                              shape_to_string(ks) + ", V " + shape_to_string(vs));
    }
    d.batch = qs[0];
    if (rank == 3) {
      if (!a_.q_num_heads || !a_.kv_num_heads) {
        return invalid_argument("3D Q, K and V need the q_num_heads and kv_num_heads attributes");
      }
      d.q_heads = *a_.q_num_heads;
      d.kv_heads = *a_.kv_num_heads;
      if (d.q_heads <= 0 || d.kv_heads <= 0) {
        return invalid_argument("q_num_heads " + std::to_string(d.q_heads) + " and kv_num_heads " +
                                std::to_string(d.kv_heads) + " must be positive");
      }
      if (qs[2] % d.q_heads != 0) {
        return invalid_argument("Q hidden size " + std::to_string(qs[2]) +
                                " is not a multiple of q_num_heads " + std::to_string(d.q_heads));
      }
      if (ks[2] % d.kv_heads != 0 || vs[2] % d.kv_heads != 0) {
        return invalid_argument("K hidden size " + std::to_string(ks[2]) + " and V hidden size " +
                                std::to_string(vs[2]) + " must be multiples of kv_num_heads " +
                                std::to_string(d.kv_heads));
      }
      d.q_len = qs[1];
      d.kv_len = ks[1];
      d.head = qs[2] / d.q_heads;
      if (ks[2] / d.kv_heads != d.head) {
        return invalid_argument("K head size " + std::to_string(ks[2] / d.kv_heads) +
                                " differs from Q head size " + std::to_string(d.head));
      }
      d.v_head = vs[2] / d.kv_heads;
      if (vs[1] != d.kv_len) {
        return invalid_argument("K " + shape_to_string(ks) + " and V " + shape_to_string(vs) +
                                " have different sequence lengths");
      }
    } else {
      d.q_heads = qs[1];
      d.kv_heads = ks[1];
      d.q_len = qs[2];
      d.kv_len = ks[2];
      d.head = qs[3];
      d.v_head = vs[3];
      // Opset 25 forbids the head-count attributes on 4D inputs; earlier opsets only ask
      // them to agree with the shapes.
      if (a_.opset >= 25 && (a_.q_num_heads || a_.kv_num_heads)) {
        return invalid_argument("q_num_heads and kv_num_heads must not be set for 4D inputs");
      }
      if ((a_.q_num_heads && *a_.q_num_heads != d.q_heads) ||
          (a_.kv_num_heads && *a_.kv_num_heads != d.kv_heads)) {
        return invalid_argument("q_num_heads/kv_num_heads disagree with 4D Q " +
                                shape_to_string(qs) + " and K " + shape_to_string(ks));
      }
      if (ks[3] != d.head) {
        return invalid_argument("K " + shape_to_string(ks) + " and Q " + shape_to_string(qs) +
                                " have different head sizes");
      }
      if (vs[1] != d.kv_heads || vs[2] != d.kv_len) {
        return invalid_argument("V " + shape_to_string(vs) +
                                " must have K's heads and sequence length " + shape_to_string(ks));
      }
    }
    if (d.kv_heads <= 0 || d.q_heads <= 0) {
      return invalid_argument("Q " + shape_to_string(qs) + " and K " + shape_to_string(ks) +
                              " must have at least one head");
    }
    if (d.q_heads % d.kv_heads != 0) {
      return invalid_argument("q_num_heads " + std::to_string(d.q_heads) +
                              " is not a multiple of kv_num_heads " + std::to_string(d.kv_heads));
    }
    return ok_status();
  }

  static Status check_past(const Tensor* pk, const Tensor* pv, const Tensor* nonpad, Dims& d) {
    if (!pk && !pv) return ok_status();
    if (!pk || !pv) return invalid_argument("past_key and past_value must be given together");
    if (nonpad) {
      return invalid_argument("nonpad_kv_seqlen cannot be combined with past_key/past_value");
    }
    const Shape &ks = pk->shape(), &vs = pv->shape();
    if (ks.size() != 4 || vs.size() != 4 || ks[0] != d.batch || ks[1] != d.kv_heads ||
        ks[3] != d.head || vs[0] != d.batch || vs[1] != d.kv_heads || vs[2] != ks[2] ||
        vs[3] != d.v_head) {
      return invalid_argument(
          "past_key " + shape_to_string(ks) + " and past_value " + shape_to_string(vs) +
          " must be [batch, kv_num_heads, past_len, head size] = [" + std::to_string(d.batch) +
          "," + std::to_string(d.kv_heads) + ",past_len," + std::to_string(d.head) + "/" +
          std::to_string(d.v_head) + "]");
    }
    d.past_len = ks[2];
    return ok_status();
  }

  static Status read_nonpad(const Tensor& t, const Dims& d, std::vector<int64_t>& out) {
    if (t.dtype() != DType::kInt64 || t.rank() != 1 || t.shape()[0] != d.batch) {
      return invalid_argument("nonpad_kv_seqlen must be int64 of shape [" +
                              std::to_string(d.batch) + "], got " + dtype_str(t.dtype()) + " " +
                              shape_to_string(t.shape()));
    }
    const int64_t* p = t.data<int64_t>();
    out.assign(p, p + d.batch);
    for (int64_t b = 0; b < d.batch; ++b) {
      if (out[b] < 0 || out[b] > d.total) {
        return invalid_argument("nonpad_kv_seqlen[" + std::to_string(b) +
                                "] = " + std::to_string(out[b]) + " is outside [0, " +
                                std::to_string(d.total) + "]");
      }
    }
    return ok_status();
  }

  // The mask broadcasts (numpy rules) to [batch, q_heads, q_len, total], except its last
  // axis: a shorter one is padded with masked keys, never broadcast.
  static Status check_mask(const Tensor& m, const Dims& d, Shape& strides, int64_t& len) {
    const Shape& ms = m.shape();
    const Shape target{d.batch, d.q_heads, d.q_len, d.total};
    auto fail = [&] {
      return invalid_argument("attn_mask " + shape_to_string(ms) + " does not broadcast to " +
                              shape_to_string(target) +
                              " (its last axis may be shorter than the total sequence length)");
    };
    if (ms.empty() || ms.size() > 4) return fail();
    Shape full(4 - ms.size(), 1);
    full.insert(full.end(), ms.begin(), ms.end());
    for (int a = 0; a < 3; ++a)
      if (full[a] != 1 && full[a] != target[a]) return fail();
    if (full[3] > d.total) return fail();
    len = full[3];
    strides = contiguous_strides(full);
    for (int a = 0; a < 3; ++a)
      if (full[a] == 1) strides[a] = 0;
    return ok_status();
  }

  // The additive bias on key j for query row i: the mask, then -inf for every key that the
  // causal frontier, the window or the padding (nonpad_kv_seqlen) excludes.
  double key_bias(int64_t b, int64_t h, int64_t i, int64_t j, int64_t offset, int64_t valid,
                  const std::vector<double>& mask, const Shape& ms, int64_t mask_len) const {
    double bias = 0.0;
    if (!ms.empty()) {
      if (j >= mask_len) return kNegInf;
      bias = mask[static_cast<size_t>(b * ms[0] + h * ms[1] + i * ms[2] + j)];
    }
    const int64_t pos = i + offset;  // the query's absolute position
    if (a_.is_causal && j > pos) return kNegInf;
    if (a_.left_window >= 0 && pos - j > a_.left_window) return kNegInf;
    if (a_.right_window >= 0 && j - pos > a_.right_window) return kNegInf;
    if (j >= valid) return kNegInf;
    return bias;
  }

  // A row whose every key has a -inf bias attends to nothing: it gives zeros, not the NaN of
  // 0/0, as the ONNX spec's errata ask.
  static void softmax_row(const std::vector<double>& bias, const std::vector<double>& x,
                          std::vector<double>& p) {
    bool any_key = false;
    double mx = kNegInf;  // a NaN logit is skipped here and still spreads through exp below
    for (size_t j = 0; j < x.size(); ++j) {
      if (bias[j] != kNegInf) any_key = true;
      if (x[j] > mx) mx = x[j];
    }
    if (!any_key || mx == kNegInf) {
      std::fill(p.begin(), p.end(), 0.0);
      return;
    }
    double sum = 0;
    for (size_t j = 0; j < x.size(); ++j) {
      p[j] = std::exp(x[j] - mx);
      sum += p[j];
    }
    for (double& e : p) e /= sum;
  }

  static Status load(const Tensor& t, const char* what, int64_t heads, int64_t seq, int64_t size,
                     HeadView& out) {
    RECUR_ASSIGN_OR_RETURN(out.data, read_as_double(t, what));
    out.three_d = t.rank() == 3;
    out.heads = heads;
    out.seq = seq;
    out.size = size;
    return ok_status();
  }

  // [batch, kv_heads, past + current, size] in 4D layout.
  static Result<std::vector<double>> concat_cache(const Tensor* past, const HeadView& cur,
                                                  const Dims& d, int64_t size) {
    std::vector<double> out(static_cast<size_t>(d.batch * d.kv_heads * d.total * size));
    std::vector<double> pv;
    if (past) {
      RECUR_ASSIGN_OR_RETURN(pv, read_as_double(*past, "past cache"));
    }
    for (int64_t b = 0; b < d.batch; ++b) {
      for (int64_t h = 0; h < d.kv_heads; ++h) {
        double* dst = out.data() + (b * d.kv_heads + h) * d.total * size;
        if (past) {
          const double* src = pv.data() + (b * d.kv_heads + h) * d.past_len * size;
          std::copy(src, src + d.past_len * size, dst);
        }
        for (int64_t s = 0; s < d.kv_len; ++s)
          for (int64_t e = 0; e < size; ++e) dst[(d.past_len + s) * size + e] = cur.at(b, h, s, e);
      }
    }
    return out;
  }

  // [batch, q_heads, q_len, v_head] -> [batch, q_len, q_heads * v_head].
  static std::vector<double> to_3d(const std::vector<double>& y, const Dims& d) {
    std::vector<double> out(y.size());
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.q_heads; ++h)
        for (int64_t s = 0; s < d.q_len; ++s)
          for (int64_t e = 0; e < d.v_head; ++e)
            out[static_cast<size_t>(((b * d.q_len + s) * d.q_heads + h) * d.v_head + e)] =
                y[static_cast<size_t>(((b * d.q_heads + h) * d.q_len + s) * d.v_head + e)];
    return out;
  }

  double cap(double x) const { return a_.softcap > 0 ? a_.softcap * std::tanh(x / a_.softcap) : x; }

  AttentionAttrs a_;
};

Dim known(int64_t v) { return Dim{v, {}}; }

// Y, present_key, present_value and qk_matmul_output from whatever dimensions are declared.
Status infer_attention(InferContext& ctx) {
  const TypeInfo& q = ctx.input_type(0);
  const TypeInfo& k = ctx.input_type(1);
  const TypeInfo& v = ctx.input_type(2);
  AttrReader r(ctx.node());
  // 0 where the attribute is absent (a present one must be positive).
  const int64_t qh = r.has("q_num_heads") ? r.get_int("q_num_heads", 0) : 0;
  const int64_t kvh = r.has("kv_num_heads") ? r.get_int("kv_num_heads", 0) : 0;
  RECUR_RETURN_IF_ERROR(r.status());
  const Dim unknown{};
  auto dim = [&](const TypeInfo& t, size_t i) { return t.has_rank() ? (*t.shape)[i] : unknown; };
  auto div = [&](const Dim& a, int64_t n) {
    return a.is_fixed() && n > 0 && a.value % n == 0 ? known(a.value / n) : unknown;
  };
  const bool ranks_ok = q.has_rank() && k.has_rank() && v.has_rank() && q.rank() == k.rank() &&
                        k.rank() == v.rank() && (q.rank() == 3 || q.rank() == 4);
  TypeInfo y{.dtype = q.dtype}, pk{.dtype = k.dtype}, pv{.dtype = v.dtype}, qk{.dtype = q.dtype};
  if (ranks_ok) {
    const bool three = q.rank() == 3;
    const Dim batch = dim(q, 0);
    const Dim q_heads = three ? (qh > 0 ? known(qh) : unknown) : dim(q, 1);
    const Dim kv_heads = three ? (kvh > 0 ? known(kvh) : unknown) : dim(k, 1);
    const Dim q_len = dim(q, three ? 1 : 2);
    const Dim kv_len = dim(k, three ? 1 : 2);
    const Dim head = three ? div(dim(k, 2), kvh) : dim(k, 3);
    const Dim v_head = three ? div(dim(v, 2), kvh) : dim(v, 3);
    if (three) {
      Dim hidden = unknown;
      if (v_head.is_fixed() && qh > 0) {
        if (std::optional<int64_t> n = checked_mul(v_head.value, qh)) hidden = known(*n);
      }
      y.shape = std::vector<Dim>{batch, q_len, hidden};
    } else {
      y.shape = std::vector<Dim>{batch, q_heads, q_len, v_head};
    }
    Dim total = ctx.has_input(4) ? unknown : kv_len;
    if (ctx.has_input(4)) {
      const TypeInfo& past = ctx.input_type(4);
      if (past.rank() == 4 && (*past.shape)[2].is_fixed() && kv_len.is_fixed()) {
        if (std::optional<int64_t> n = checked_add((*past.shape)[2].value, kv_len.value))
          total = known(*n);
      }
    }
    pk.shape = std::vector<Dim>{batch, kv_heads, total, head};
    pv.shape = std::vector<Dim>{batch, kv_heads, total, v_head};
    qk.shape = std::vector<Dim>{batch, q_heads, q_len, total};
  }
  ctx.set_output(0, y);
  if (ctx.num_outputs() > 1 && ctx.node().has_output(1)) ctx.set_output(1, pk);
  if (ctx.num_outputs() > 2 && ctx.node().has_output(2)) ctx.set_output(2, pv);
  if (ctx.num_outputs() > 3 && ctx.node().has_output(3)) ctx.set_output(3, qk);
  return ok_status();
}

}  // namespace

void register_attention(Registrar& r) {
  r.add({.op_type = "Attention",
         .since = 23,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           AttentionAttrs a;
           a.opset = ctx.node().opset;
           a.cap_before_bias = a.opset >= 25;
           a.is_causal = r.get_int("is_causal", 0) != 0;
           if (r.has("q_num_heads")) a.q_num_heads = r.get_int("q_num_heads", 0);
           if (r.has("kv_num_heads")) a.kv_num_heads = r.get_int("kv_num_heads", 0);
           a.qk_mode = r.get_int("qk_matmul_output_mode", 0);
           if (r.has("scale")) a.scale = r.get_float("scale", 0.0f);
           a.softcap = r.get_float("softcap", 0.0f);
           const int64_t precision = r.get_int("softmax_precision", 1);
           a.left_window = r.get_int("left_window_size", -1);
           a.right_window = r.get_int("right_window_size", -1);
           RECUR_RETURN_IF_ERROR(r.status());
           if (a.qk_mode < 0 || a.qk_mode > 3) {
             return ctx.error(
                 ErrorCode::kInvalidModel,
                 "qk_matmul_output_mode " + std::to_string(a.qk_mode) + " is not 0, 1, 2 or 3");
           }
           // Softmax runs in double, at least as precise as any of these.
           if (precision != 1 && precision != 10 && precision != 11 && precision != 16) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "softmax_precision " + std::to_string(precision) +
                                  " is not 1 (float), 10 (float16), 11 (double) or 16 "
                                  "(bfloat16)");
           }
           if (!(a.softcap >= 0)) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "softcap " + std::to_string(a.softcap) + " must be >= 0");
           }
           if (a.left_window < -1 || a.right_window < -1) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "left_window_size " + std::to_string(a.left_window) +
                                  " and right_window_size " + std::to_string(a.right_window) +
                                  " must be -1 (unbounded) or >= 0");
           }
           return std::make_unique<AttentionKernel>(std::move(a));
         }},
        infer_attention);
}

}  // namespace recur::reference
