#include "providers/onednn/rnn/rnn_int8.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <span>
#include <tuple>
#include <vector>

#include <dnnl.hpp>

#include "converters/onednn_weights.h"
#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/rnn/rnn_desc.h"
#include "providers/onednn/rnn/team_tuner.h"
#include "runtime/core/code_layout.h"
#include "runtime/rnn/quantized_lstm.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::onednn {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

// u8 = 127*v + 128 for every activation oneDNN quantizes (X after centring and scaling, h).
// Every step's h lies in [-1, 1], but a caller's initial_h need not (an encoder's projection fed
// to a decoder), and this scale would saturate it: a DynamicQuantizeLSTM fed initial_h in
// [-2, 2] was off by 0.17 where ONNX Runtime's arithmetic is within 0.003 (found by the
// fuzzer's comparison with the reference provider). Rows whose initial_h leaves [-1, 1] run
// their first step in float32 (float_first_step) and the others from its h. A data scale that
// held initial_h, for all steps or for the first step alone as a primitive of its own, left
// errors of 0.01 to 0.015 for initial_h in [-2, 2] and 0.03 to 0.04 in [-5, 5] (the weights
// and h lose resolution with it); the float step leaves 0.006 for both.
constexpr float kDataScale = 127.0f;
constexpr float kDataShift = 128.0f;
// Per-output-channel weight scales over ldigo: the g and o dimensions.
constexpr int kPerChannelMask = (1 << 3) | (1 << 4);
// Plans (one per X scale bucket and shape) kept before the cache starts over.
constexpr size_t kMaxPlans = 16;

// One direction's float weights in oneDNN's gate order: ldigo W [I,4,H] and R [H,4,H], the
// combined bias, and per output channel (g, o) the row sums of W and the largest |W| and |R|.
struct DirWeights {
  std::vector<float> layer, iter, bias, rowsum, layer_max, iter_max;
};

struct Int8Plan {
  std::vector<dnnl::primitive> prims;  // per direction
  RnnDescs d;
  memory::desc scratch;
  // Packed, per direction; lstm_large's 8 MB on huge pages (AlignedBuffer), 1.05-1.2x faster
  // at one thread than on 4 KiB pages.
  std::vector<std::shared_ptr<AlignedBuffer>> wl, wi;
  int threads = 1;  // OpenMP threads of each primitive
  // The memory objects of its executions, per direction (made once, re-pointed per run).
  mutable ArgsPool args[2];
};

// One job's buffers: the bias with X's centre folded in, and the uint8 / f32 states.
struct Int8JobBuffers {
  std::vector<float> bias, c_init, c1, gates;  // c1, gates: a first step in float32
  std::vector<uint8_t> hq, hn;
};

// What a run works in besides its outputs, leased from the kernel's pool so that it keeps its
// capacity from run to run (issue 13: no allocation in the steady state).
struct Int8Scratch {
  std::vector<Int8JobBuffers> jobs;
  std::vector<std::shared_ptr<const Int8Plan>> plans;
  std::vector<uint8_t> first_in_float;
  std::vector<Status> status;
  std::vector<float> lo, hi;  // quantize_x's range per part
  std::vector<uint8_t> ok;
};

// Without VNNI, oneDNN 2.6 multiplies uint8 by int8 with vpmaddubsw, which adds each pair of
// products into an int16 and saturates there: on an AVX2 Zen 3 a DynamicQuantizeLSTM's Y was
// off by up to 0.17 (of values within 0.4) from ONNX Runtime's and the reference's.
std::string int8_isa_reason() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx2_vnni:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return "";
    default:
      return "this processor has no VNNI: oneDNN's uint8 x int8 products saturate in int16 "
             "without it";
  }
}

std::string decline_reason(const RnnSpec& spec) {
  if (spec.cell == RnnCell::kGru) {
    return spec.linear_before_reset
               ? "oneDNN 2.6 has no int8 linear_before_reset GRU"
               : "oneDNN 2.6 runs an int8 GRU only in its reference implementation, slower than "
                 "float32";
  }
  if (spec.cell == RnnCell::kRnn) return "oneDNN 2.6 has no int8 vanilla RNN";
  if (spec.layout != 0) return "layout=1";
  if (spec.clip) return "clip";
  if (spec.input_forget) return "input_forget";
  if (!spec.default_activations()) return "non-default activations";
  return "";
}

// Below this many values per extra thread a pass over X stays on one thread.
constexpr int64_t kValuesPerJob = int64_t{1} << 16;

// X's range (lo, hi; false when X holds a NaN or an infinity) and X quantized, in one pass,
// with parameters guessed before the range is known. The OpenMP simd reductions let the
// compiler vectorise the loop (no threads: those come from run_jobs); min and max pass over a
// NaN, so it is looked for apart: x - x is 0 unless x is a NaN or an infinity.
bool range_and_quantize(const float* x, int64_t n, float offset, float inv, float* lo_out,
                        float* hi_out, uint8_t* q) {
  float lo = x[0], hi = x[0], check = 0.0f;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : check)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    check += v - v;
    float u = (v - offset) * inv + (kDataShift + 0.5f);
    u = u < 0.0f ? 0.0f : u;
    u = u > 255.0f ? 255.0f : u;
    q[i] = static_cast<uint8_t>(static_cast<int>(u));
  }
  *lo_out = lo;
  *hi_out = hi;
  return check == 0.0f;
}

// X's quantization: half-width m = 2^(bucket/4) around `offset`.
struct XParams {
  int bucket = 0;
  float offset = 0.0f;
  bool operator==(const XParams&) const = default;
};

// The parameters of X's range [lo, hi], a function of the range alone: the half-width rounded
// up to a quarter octave, the centre to a sixteenth of it (so that a run can guess them from
// the last one and check the guess exactly; the bucket grows by one where the rounded centre
// would leave part of the range uncovered).
XParams params_of(float lo, float hi) {
  const float half = 0.5f * (hi - lo);
  const float centre = 0.5f * (lo + hi);
  XParams p;
  p.bucket =
      half > 0.0f ? std::clamp(static_cast<int>(std::ceil(4.0f * std::log2(half))), -80, 80) : 0;
  const float step = std::exp2(static_cast<float>(p.bucket) / 4.0f) / 16.0f;
  p.offset = std::nearbyint(centre / step) * step;
  if (half + std::fabs(p.offset - centre) > std::exp2(static_cast<float>(p.bucket) / 4.0f))
    p.bucket = std::min(p.bucket + 1, 81);
  return p;
}

// u8 = round(127 (x - offset) / m + 128), saturated; `inv` is 127 / m. +0.5 and truncation
// round half up (vectorisable), as good here as ties to even.
void quantize(const float* x, int64_t n, float offset, float inv, uint8_t* q) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = (x[i] - offset) * inv + (kDataShift + 0.5f);
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    q[i] = static_cast<uint8_t>(static_cast<int>(v));
  }
}

// The two passes on AVX-512, 16 values at a time. The loops above compile for the baseline
// x86-64 (SSE2), and quantizing lstm_large's X (6.5M values) took 12% of its run at one
// thread. Both forms take the same arithmetic, (x - offset) * inv + 128.5 by one fused
// multiply-add, so the guessed pass and the second one agree bit for bit; a machine runs one
// form or the other, chosen once (have_avx512).
namespace v16 {

using avx512::lanes;

RECUR_AVX512 inline __m512i quantize16(__m512 v, __m512 offset, __m512 inv) {
  __m512 u = _mm512_fmadd_ps(_mm512_sub_ps(v, offset), inv, _mm512_set1_ps(kDataShift + 0.5f));
  u = _mm512_min_ps(_mm512_max_ps(u, _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
  return _mm512_cvttps_epi32(u);
}

RECUR_AVX512 bool range_and_quantize(const float* x, int64_t n, float offset, float inv,
                                     float* lo_out, float* hi_out, uint8_t* q) {
  const __m512 off = _mm512_set1_ps(offset), sc = _mm512_set1_ps(inv);
  __m512 lo = _mm512_set1_ps(x[0]), hi = lo, check = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += avx512::kLanes) {
    const __mmask16 m = lanes(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    lo = _mm512_mask_min_ps(lo, m, lo, v);
    hi = _mm512_mask_max_ps(hi, m, hi, v);
    check = _mm512_add_ps(check, _mm512_sub_ps(v, v));  // NaN from a NaN or an infinity
    _mm512_mask_cvtusepi32_storeu_epi8(q + i, m, quantize16(v, off, sc));
  }
  // Through memory: GCC 12 warns of an uninitialized read inside _mm512_reduce_min_ps.
  alignas(64) float l[avx512::kLanes], h[avx512::kLanes], z[avx512::kLanes];
  _mm512_store_ps(l, lo);
  _mm512_store_ps(h, hi);
  _mm512_store_ps(z, check);
  *lo_out = *std::min_element(l, l + avx512::kLanes);
  *hi_out = *std::max_element(h, h + avx512::kLanes);
  float sum = 0.0f;
  for (const float v : z) sum += v;
  return sum == 0.0f;
}

RECUR_AVX512 void quantize(const float* x, int64_t n, float offset, float inv, uint8_t* q) {
  const __m512 off = _mm512_set1_ps(offset), sc = _mm512_set1_ps(inv);
  for (int64_t i = 0; i < n; i += avx512::kLanes) {
    const __mmask16 m = lanes(n - i);
    _mm512_mask_cvtusepi32_storeu_epi8(q + i, m,
                                       quantize16(_mm512_maskz_loadu_ps(m, x + i), off, sc));
  }
}

}  // namespace v16

// One primitive execution: direction d over batch rows [n0, n1) on `threads` OpenMP threads.
struct Int8Job {
  int64_t d = 0, n0 = 0, n1 = 0;
  int threads = 1;
};
using Int8Jobs = SmallVector<Int8Job, 16>;

class Int8LstmKernel final : public Kernel {
 public:
  Int8LstmKernel(const Node& node, RnnSpec spec, const OnednnOptions& o)
      : spec_(std::move(spec)),
        threads_(o.threading == ThreadingChoice::kSingle ? 1 : std::max(1, o.max_threads)),
        threading_(o.threading),
        tune_team_(o.threading == ThreadingChoice::kAuto && !o.deterministic &&
                   threads_ / std::max<int64_t>(1, spec_.num_directions()) > 1),
        what_(node.describe() + " (int8)") {}

  // W [D,4H,I], R [D,4H,H] and B [D,8H] (or null) in ONNX's layout.
  Status init(const float* w, const float* r, const float* b, int64_t I, int64_t H);
  Status run(KernelContext& ctx) const override;
  // How the threads are used, for --explain.
  std::string threading_note() const;

 private:
  int64_t D() const { return spec_.num_directions(); }
  bool reverse(int64_t d) const { return spec_.direction == RnnDirection::kReverse || d == 1; }
  // Primitives for n rows out of a batch of ld_n (which sets the strides) on `threads` each.
  Result<std::shared_ptr<const Int8Plan>> plan_for(int bucket, int64_t T, int64_t n, int64_t ld_n,
                                                   int threads) const;
  void make_plan(int bucket, int64_t T, int64_t n, int64_t ld_n, int threads, Int8Plan& p) const;
  // `team`: one primitive per direction on all its threads, else batch slices.
  Int8Jobs jobs_for(int64_t N, bool team) const;
  // X as uint8 in xq and the centre it was taken from; false for a NaN or infinity in X.
  bool quantize_x(const Tensor& x, int* bucket, float* offset, uint8_t* xq,
                  Int8Scratch& scratch) const;
  // Whether initial_h's rows [n0, n1) of direction d leave [-1, 1].
  static bool h0_out_of_range(const Tensor* h0, const Int8Job& j);
  // `plan`: the steps after the first where first_in_float, else all of them; null where
  // there are none.
  Status run_job(const Int8Job& j, const Int8Plan* plan, bool first_in_float, const Tensor& x,
                 const uint8_t* xq, float offset, const Tensor* h0, const Tensor* c0, float* y,
                 float* yh, float* yc, Int8JobBuffers& buf) const;

  RnnSpec spec_;
  int threads_;
  ThreadingChoice threading_;            // onednn.threading: omp shares one primitive per direction
  bool tune_team_;                       // auto: slices or a team, whichever the runs time faster
  std::string what_;                     // the node, for errors: described once, not on every run
  bool avx512_ = avx512::have_avx512();  // X's passes on 16 lanes (v16)
  int64_t I_ = 0, H_ = 0;
  std::vector<DirWeights> dirs_;
  mutable std::mutex mu_;
  mutable std::map<std::tuple<int, int64_t, int64_t, int64_t, int>, std::shared_ptr<const Int8Plan>>
      plans_;
  // Quantized, packed W (layer) and R of a scale bucket and direction, in a primitive's layout;
  // guarded by mu_.
  struct PackedWeights {
    int bucket;
    int64_t dir;
    bool layer;
    memory::desc desc;
    std::shared_ptr<AlignedBuffer> buf;
  };
  mutable std::vector<PackedWeights> packed_;
  mutable ScratchPool scratch_;
  mutable ScratchPool xq_pool_;  // X as uint8, pooled like the scratchpad
  mutable ScratchPool states_;   // Y_h and Y_c where the node does not list them
  mutable XParams last_x_;       // guarded by mu_
  mutable ObjectPool<Int8Scratch> run_scratch_;
  mutable TeamTuner tuner_;
};

Status Int8LstmKernel::init(const float* w, const float* r, const float* b, int64_t I, int64_t H) {
  I_ = I;
  H_ = H;
  // A team pays off where each step's R (4H x H int8) is more than one core's L2 holds, so
  // that splitting its columns keeps each half there: lstm_large (H=1024, 4 MiB) ran 1.17x
  // faster as a team, lstm_med (H=512, 1 MiB) 1.13x slower. Elsewhere the runs are not timed.
  const int64_t l2 = core_l2_bytes();
  tune_team_ = tune_team_ && 4 * H * H > (l2 > 0 ? l2 : int64_t{1} << 20);
  const OnednnRnnGeometry g = OnednnRnnGeometry::of(spec_, I, H);
  const int64_t G = 4 * H;
  std::vector<float> wl(static_cast<size_t>(g.weights_size(I)));
  std::vector<float> wi(static_cast<size_t>(g.weights_size(H)));
  std::vector<float> bias(static_cast<size_t>(g.bias_size()));
  RECUR_RETURN_IF_ERROR(onnx_to_onednn_weights(g, w, I, OnednnWeightsFormat::kLdigo, wl.data()));
  RECUR_RETURN_IF_ERROR(onnx_to_onednn_weights(g, r, H, OnednnWeightsFormat::kLdigo, wi.data()));
  RECUR_RETURN_IF_ERROR(onnx_to_onednn_bias(g, b, bias.data()));
  for (int64_t d = 0; d < D(); ++d) {
    DirWeights dw;
    dw.layer.assign(wl.begin() + d * I * G, wl.begin() + (d + 1) * I * G);
    dw.iter.assign(wi.begin() + d * H * G, wi.begin() + (d + 1) * H * G);
    dw.bias.assign(bias.begin() + d * G, bias.begin() + (d + 1) * G);
    dw.rowsum.assign(static_cast<size_t>(G), 0.0f);
    dw.layer_max.assign(static_cast<size_t>(G), 0.0f);
    dw.iter_max.assign(static_cast<size_t>(G), 0.0f);
    for (int64_t k = 0; k < I; ++k)
      for (int64_t c = 0; c < G; ++c) {
        const float v = dw.layer[static_cast<size_t>(k * G + c)];
        dw.rowsum[static_cast<size_t>(c)] += v;
        dw.layer_max[static_cast<size_t>(c)] =
            std::max(dw.layer_max[static_cast<size_t>(c)], std::fabs(v));
      }
    for (int64_t k = 0; k < H; ++k)
      for (int64_t c = 0; c < G; ++c)
        dw.iter_max[static_cast<size_t>(c)] =
            std::max(dw.iter_max[static_cast<size_t>(c)],
                     std::fabs(dw.iter[static_cast<size_t>(k * G + c)]));
    dirs_.push_back(std::move(dw));
  }
  return ok_status();
}

// The primitives of X scale bucket `bucket` (m = 2^(bucket/4)) for T steps of N rows, with
// each direction's W*m and R quantized by their shared per-channel scales.
void Int8LstmKernel::make_plan(int bucket, int64_t T, int64_t N, int64_t ld_n, int threads,
                               Int8Plan& p) const {
  const int64_t I = I_, H = H_, G = 4 * H;
  const float m = std::exp2(static_cast<float>(bucket) / 4.0f);
  // oneDNN sizes the primitive's work split and scratchpad for the threads it sees here.
  ThreadScope scope(threads);
  p.threads = threads;
  RnnDescs& d = p.d;
  d.src_layer = memory::desc({T, N, I}, DT::u8, memory::dims{ld_n * I, I, 1});
  d.src_iter = memory::desc({1, 1, N, H}, DT::u8, Tag::ldnc);
  d.src_iter_c = memory::desc({1, 1, N, H}, DT::f32, Tag::ldnc);
  d.weights_layer = memory::desc({1, 1, I, 4, H}, DT::s8, Tag::any);
  d.weights_iter = memory::desc({1, 1, H, 4, H}, DT::s8, Tag::any);
  d.bias = memory::desc({1, 1, 4, H}, DT::f32, Tag::ldgo);
  // Straight into Y [T, D, N, H]: each direction's rows are N*H apart within a step.
  d.dst_layer = memory::desc({T, N, H}, DT::f32, memory::dims{D() * ld_n * H, H, 1});
  d.dst_iter = d.src_iter;
  d.dst_iter_c = d.src_iter_c;
  for (int64_t dir = 0; dir < D(); ++dir) {
    const DirWeights& dw = dirs_[static_cast<size_t>(dir)];
    std::vector<float> scales(static_cast<size_t>(G));
    for (int64_t c = 0; c < G; ++c) {
      const float amax =
          std::max(m * dw.layer_max[static_cast<size_t>(c)], dw.iter_max[static_cast<size_t>(c)]);
      scales[static_cast<size_t>(c)] = amax > 0.0f ? 127.0f / amax : 1.0f;
    }
    // The reorder that quantizes the weights takes the same parameters, with its own
    // scratchpad (it gets none passed).
    dnnl::primitive_attr reorder_attr;
    reorder_attr.set_rnn_data_qparams(kDataScale, kDataShift);
    reorder_attr.set_rnn_weights_qparams(kPerChannelMask, scales);
    // Built apart: copying a dnnl handle shares it.
    dnnl::primitive_attr attr;
    attr.set_rnn_data_qparams(kDataScale, kDataShift);
    attr.set_rnn_weights_qparams(kPerChannelMask, scales);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto direction = reverse(dir) ? dnnl::rnn_direction::unidirectional_right2left
                                        : dnnl::rnn_direction::unidirectional_left2right;
    dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_inference, direction, d.src_layer,
                                  d.src_iter, d.src_iter_c, d.weights_layer, d.weights_iter, d.bias,
                                  d.dst_layer, d.dst_iter, d.dst_iter_c);
    dnnl::lstm_forward::primitive_desc pd(desc, attr, cpu_engine());
    p.prims.push_back(dnnl::lstm_forward(pd));
    p.scratch = pd.scratchpad_desc();
    // The reorder quantizes and packs, and adds the compensation the shift needs. What it
    // makes depends on the scale bucket and the layout, not on T or N: plans of other lengths
    // share it (packed_). W is taken times m, R as it is.
    auto pack = [&](bool layer, const memory::desc& to) {
      for (const PackedWeights& w : packed_) {
        if (w.bucket == bucket && w.dir == dir && w.layer == layer && w.desc == to) return w.buf;
      }
      std::vector<float> scaled;
      if (layer) {
        scaled = dw.layer;
        for (float& v : scaled) v *= m;
      }
      const std::vector<float>& src = layer ? scaled : dw.iter;
      auto buf = std::make_shared<AlignedBuffer>(to.get_size());
      memory user({{1, 1, layer ? I : H, 4, H}, DT::f32, Tag::ldigo}, cpu_engine(),
                  const_cast<float*>(src.data()));
      memory packed(to, cpu_engine(), buf->data);
      dnnl::reorder(dnnl::reorder::primitive_desc(user, packed, reorder_attr))
          .execute(thread_stream(), user, packed);
      thread_stream().wait();
      packed_.push_back({bucket, dir, layer, to, buf});
      return buf;
    };
    p.wl.push_back(pack(true, pd.weights_layer_desc()));
    p.wi.push_back(pack(false, pd.weights_iter_desc()));
    if (dir == 0) {
      d.weights_layer = pd.weights_layer_desc();
      d.weights_iter = pd.weights_iter_desc();
    }
  }
}

Result<std::shared_ptr<const Int8Plan>> Int8LstmKernel::plan_for(int bucket, int64_t T, int64_t n,
                                                                 int64_t ld_n, int threads) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_tuple(bucket, T, n, ld_n, threads);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  auto plan = std::make_shared<Int8Plan>();
  RECUR_RETURN_IF_ERROR(dnnl_try(what_, [&] { make_plan(bucket, T, n, ld_n, threads, *plan); }));
  if (plans_.size() >= kMaxPlans) {
    plans_.clear();
    packed_.clear();  // the plans kept hold what they use
  }
  plans_[key] = plan;
  return std::shared_ptr<const Int8Plan>(plan);
}

// One thread per primitive with the batch sliced, or (`team`) a direction's threads in one
// primitive, where oneDNN splits the gate columns so that each thread streams only its part of
// the weights every step, where each slice streams all of them. A team stalls at each step's
// barrier on a busy machine (lstm_large at 2 threads: 1.5-9x slower than the slices under a
// load average of 3.5), so which one runs is onednn.threading's, or the tuner's (team_tuner.h).
Int8Jobs Int8LstmKernel::jobs_for(int64_t N, bool team_asked) const {
  const int64_t threads_per_dir = std::max<int64_t>(1, threads_ / D());
  const bool team = threads_per_dir > 1 && team_asked;
  const int64_t per_dir = team ? 1 : std::min<int64_t>(N, threads_per_dir);
  const int inner = team ? static_cast<int>(threads_per_dir) : 1;
  Int8Jobs jobs;
  for (int64_t d = 0; d < D(); ++d)
    for (int64_t s = 0; s < per_dir; ++s)
      jobs.push_back({d, N * s / per_dir, N * (s + 1) / per_dir, inner});
  return jobs;
}

std::string Int8LstmKernel::threading_note() const {
  if (tune_team_) {
    return "int8: " + std::to_string(threads_ / D()) +
           " threads per direction, as batch slices or sharing one oneDNN primitive, whichever "
           "the runs time faster (the same results either way)";
  }
  const Int8Job j = jobs_for(int64_t{1} << 20, threading_ == ThreadingChoice::kOmp).front();
  if (j.threads > 1)
    return "int8: " + std::to_string(j.threads) +
           " threads share each direction's oneDNN primitive";
  return "int8: one thread per oneDNN primitive (batch slices and directions as jobs)";
}

bool Int8LstmKernel::quantize_x(const Tensor& x, int* bucket, float* offset, uint8_t* xq,
                                Int8Scratch& scratch) const {
  const float* xs = x.data<float>();
  const int64_t n = x.numel();
  const int64_t parts = std::clamp<int64_t>(n / kValuesPerJob, 1, threads_);
  // One pass with the last run's parameters, which also finds the range; a second pass only
  // when the range gives other parameters. Either way the result is that of the range, so it
  // does not depend on earlier runs. X is read once where its statistics hold (reading a large
  // X twice from memory cost a fifth of lstm_large's run).
  XParams guess;
  {
    std::lock_guard<std::mutex> lock(mu_);
    guess = last_x_;
  }
  std::vector<float>& lo = scratch.lo;
  std::vector<float>& hi = scratch.hi;
  std::vector<uint8_t>& ok = scratch.ok;
  lo.assign(static_cast<size_t>(parts), 0.0f);
  hi.assign(lo.size(), 0.0f);
  ok.assign(lo.size(), 0);
  const float guess_inv = kDataScale / std::exp2(static_cast<float>(guess.bucket) / 4.0f);
  auto part = [&](size_t j) {
    const int64_t b = n * static_cast<int64_t>(j) / parts;
    const int64_t e = n * static_cast<int64_t>(j + 1) / parts;
    ok[j] = avx512_ ? v16::range_and_quantize(xs + b, e - b, guess.offset, guess_inv, &lo[j],
                                              &hi[j], xq + b)
                    : range_and_quantize(xs + b, e - b, guess.offset, guess_inv, &lo[j], &hi[j],
                                         xq + b);
  };
  // One reference: the closure fits std::function's inline storage (no allocation).
  run_jobs(static_cast<size_t>(parts), static_cast<int>(parts) - 1, [&part](size_t j) { part(j); });
  if (std::find(ok.begin(), ok.end(), 0) != ok.end()) return false;
  const XParams p =
      params_of(*std::min_element(lo.begin(), lo.end()), *std::max_element(hi.begin(), hi.end()));
  if (!(p == guess)) {
    const float inv = kDataScale / std::exp2(static_cast<float>(p.bucket) / 4.0f);
    in_parts(n, parts, [&](int64_t b, int64_t e) {
      if (avx512_)
        v16::quantize(xs + b, e - b, p.offset, inv, xq + b);
      else
        quantize(xs + b, e - b, p.offset, inv, xq + b);
    });
    std::lock_guard<std::mutex> lock(mu_);
    last_x_ = p;
  }
  *bucket = p.bucket;
  *offset = p.offset;
  return true;
}

bool Int8LstmKernel::h0_out_of_range(const Tensor* h0, const Int8Job& j) {
  if (!h0) return false;
  const int64_t N = h0->dim(1), H = h0->dim(2);
  const float* h = h0->data<float>() + (j.d * N + j.n0) * H;
  return std::any_of(h, h + (j.n1 - j.n0) * H, [](float v) { return std::fabs(v) > 1.0f; });
}

// One float32 LSTM step for `rows` rows (default activations, oneDNN's gate order i, f, c, o,
// the int8 kernel's weights before quantizing): h and c from x, h and c. `gates` is scratch.
void float_first_step(const DirWeights& dw, int64_t rows, int64_t I, int64_t H, const float* x,
                      const float* h, const float* c, float* h_out, float* c_out,
                      std::vector<float>& gates) {
  const int64_t G = 4 * H;
  gates.resize(static_cast<size_t>(rows * G));
  for (int64_t r = 0; r < rows; ++r)
    std::copy(dw.bias.begin(), dw.bias.end(), gates.begin() + r * G);
  // Row-major, as oneDNN's sgemm is: gates += x W + h R.
  dnnl::sgemm('N', 'N', rows, G, I, 1.0f, x, I, dw.layer.data(), G, 1.0f, gates.data(), G);
  dnnl::sgemm('N', 'N', rows, G, H, 1.0f, h, H, dw.iter.data(), G, 1.0f, gates.data(), G);
  auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gates.data() + r * G;
    for (int64_t k = 0; k < H; ++k) {
      const float cn = sigmoid(g[H + k]) * c[r * H + k] + sigmoid(g[k]) * std::tanh(g[2 * H + k]);
      c_out[r * H + k] = cn;
      h_out[r * H + k] = sigmoid(g[3 * H + k]) * std::tanh(cn);
    }
  }
}

// Direction j.d over rows [j.n0, j.n1): Y, and Y_h and Y_c of those rows.
Status Int8LstmKernel::run_job(const Int8Job& j, const Int8Plan* plan, bool first_in_float,
                               const Tensor& x, const uint8_t* xq, float offset, const Tensor* h0,
                               const Tensor* c0, float* y, float* yh, float* yc,
                               Int8JobBuffers& buf) const {
  const int64_t T = x.dim(0), N = x.dim(1);
  const int64_t I = I_, H = H_, G = 4 * H, Dn = D(), d = j.d, rows = j.n1 - j.n0, NH = N * H;
  const int64_t state = d * NH + j.n0 * H;  // the rows' offset in [D, N, H]
  const DirWeights& dw = dirs_[static_cast<size_t>(d)];
  // X's centre, taken out before quantizing, comes back through the bias:
  // W.x = W.(x-o) + o*sum(W).
  std::vector<float>& bias = buf.bias;
  bias.resize(static_cast<size_t>(G));
  for (int64_t c = 0; c < G; ++c)
    bias[static_cast<size_t>(c)] =
        dw.bias[static_cast<size_t>(c)] + offset * dw.rowsum[static_cast<size_t>(c)];
  std::vector<uint8_t>& hq = buf.hq;
  std::vector<uint8_t>& hn = buf.hn;
  std::vector<float>& c_init = buf.c_init;
  hq.assign(static_cast<size_t>(rows * H), static_cast<uint8_t>(kDataShift));
  hn.resize(hq.size());
  c_init.assign(hq.size(), 0.0f);
  if (c0) std::memcpy(c_init.data(), c0->data<float>() + state, c_init.size() * sizeof(float));
  const float* h_start = h0 ? h0->data<float>() + state : nullptr;
  // Where the first step runs in float32, the others start one step later (forward) or end
  // one step earlier (reverse, whose first step is T-1).
  const int64_t skip = first_in_float && !reverse(d) ? 1 : 0;
  if (first_in_float) {
    const int64_t t0 = reverse(d) ? T - 1 : 0;
    float* y0 = y + t0 * Dn * NH + state;
    std::vector<float>& c1 = buf.c1;
    c1.resize(c_init.size());
    RECUR_RETURN_IF_ERROR(dnnl_try(what_, [&] {
      ThreadScope scope(j.threads);
      float_first_step(dw, rows, I, H, x.data<float>() + (t0 * N + j.n0) * I, h_start,
                       c_init.data(), y0, plan ? c1.data() : yc + state, buf.gates);
    }));
    c_init.swap(c1);
    h_start = y0;  // the other steps start from its h, which lies in [-1, 1]
  }
  if (h_start) {
    for (size_t i = 0; i < hq.size(); ++i)
      hq[i] = static_cast<uint8_t>(
          std::clamp(std::nearbyint(h_start[i] * kDataScale + kDataShift), 0.0f, 255.0f));
  }
  if (plan) {
    // Pooled: the scratchpad holds every step's gates (100 MB for T=100, N=64, H=1024), which
    // a fresh buffer would page-fault in on every run.
    ScratchPool::Lease scratch = scratch_.acquire(plan->scratch.get_size());
    const size_t ud = static_cast<size_t>(d);
    ArgsPool::Lease args = plan->args[ud].acquire();
    RECUR_RETURN_IF_ERROR(dnnl_try(what_, [&] {
      const RnnDescs& ds = plan->d;
      args.bind(DNNL_ARG_SRC_LAYER, ds.src_layer, xq + (skip * N + j.n0) * I);
      args.bind(DNNL_ARG_SRC_ITER, ds.src_iter, hq.data());
      args.bind(DNNL_ARG_SRC_ITER_C, ds.src_iter_c, c_init.data());
      args.bind(DNNL_ARG_WEIGHTS_LAYER, ds.weights_layer, plan->wl[ud]->data);
      args.bind(DNNL_ARG_WEIGHTS_ITER, ds.weights_iter, plan->wi[ud]->data);
      args.bind(DNNL_ARG_BIAS, ds.bias, bias.data());
      args.bind(DNNL_ARG_DST_LAYER, ds.dst_layer, y + skip * Dn * NH + state);
      args.bind(DNNL_ARG_DST_ITER, ds.dst_iter, hn.data());
      args.bind(DNNL_ARG_DST_ITER_C, ds.dst_iter_c, yc + state);
      args.bind(DNNL_ARG_SCRATCHPAD, plan->scratch, scratch.data());
      ThreadScope scope(plan->threads);
      args.execute(plan->prims[ud], thread_stream());
      thread_stream().wait();
    }));
  }
  // Y_h from the float Y of the last step (dst_iter is uint8).
  const int64_t last = reverse(d) ? 0 : T - 1;
  std::memcpy(yh + state, y + last * Dn * NH + state,
              static_cast<size_t>(rows * H) * sizeof(float));
  return ok_status();
}

Status Int8LstmKernel::run(KernelContext& ctx) const {
  const Tensor* x = ctx.input(kRnnX);
  const Tensor* h0 = ctx.input(kRnnInitialH);
  const Tensor* c0 = ctx.input(kRnnInitialC);
  if (!x || x->dtype() != DType::kFloat32 || x->rank() != 3 || x->dim(2) != I_) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "input X must be float32 [T, N, " + std::to_string(I_) + "], got " +
                         (x ? shape_to_string(x->shape()) : std::string("nothing")));
  }
  const int64_t T = x->dim(0), N = x->dim(1), Dn = D(), H = H_;
  for (auto [t, name] : {std::pair{h0, "initial_h"}, std::pair{c0, "initial_c"}}) {
    if (t && (t->dtype() != DType::kFloat32 || t->shape() != Shape{Dn, N, H}))
      return ctx.error(ErrorCode::kInvalidArgument,
                       std::string("input ") + name + " must be float32 " +
                           shape_to_string({Dn, N, H}) + ", got " + shape_to_string(t->shape()));
  }
  // Y always (Y_h is copied from its last step); Y_h and Y_c where the node has them, else into
  // pooled scratch: a node may list only Y.
  RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(kRnnY, DType::kFloat32, {T, Dn, N, H}));
  const size_t state_elems = static_cast<size_t>(Dn * N * H);
  const bool all_listed = ctx.output_requested(kRnnYh) && ctx.output_requested(kRnnYc);
  ScratchPool::Lease unlisted =
      all_listed ? ScratchPool::Lease() : states_.acquire(2 * state_elems * sizeof(float));
  float* yh = static_cast<float*>(unlisted.data());
  float* yc = yh ? yh + state_elems : nullptr;
  if (ctx.output_requested(kRnnYh)) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYh, DType::kFloat32, {Dn, N, H}));
    yh = t->data<float>();
  }
  if (ctx.output_requested(kRnnYc)) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYc, DType::kFloat32, {Dn, N, H}));
    yc = t->data<float>();
  }
  if (T == 0 || N == 0) {
    std::fill(yh, yh + state_elems, 0.0f);
    std::fill(yc, yc + state_elems, 0.0f);
    return ok_status();
  }
  if (Status st = rnn::check_onednn_rnn_shape(T, N, I_, H, Dn, 4); !st.ok())
    return ctx.error(ErrorCode::kNotImplemented, st.message());
  ScratchPool::Lease xq_lease = xq_pool_.acquire(static_cast<size_t>(x->numel()));
  auto* xq = static_cast<uint8_t*>(xq_lease.data());
  ObjectPool<Int8Scratch>::Lease scratch = run_scratch_.acquire();
  if (h0) {
    const std::span h(h0->data<float>(), static_cast<size_t>(h0->numel()));
    if (!std::all_of(h.begin(), h.end(), [](float v) { return std::isfinite(v); })) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "initial_h holds a NaN or infinity, which int8 cannot");
    }
  }
  int bucket = 0;
  float offset = 0.0f;
  if (!quantize_x(*x, &bucket, &offset, xq, *scratch))
    return ctx.error(ErrorCode::kInvalidArgument, "X holds a NaN or infinity, which int8 cannot");
  const bool team = tune_team_ ? tuner_.pick() : threading_ == ThreadingChoice::kOmp;
  const Int8Jobs jobs = jobs_for(N, team);
  // Per job: whether its first step runs in float32 (initial_h beyond [-1, 1]), and the
  // plan of the steps oneDNN runs (none where that first step is the only one).
  std::vector<std::shared_ptr<const Int8Plan>>& plans = scratch->plans;
  std::vector<uint8_t>& first_in_float = scratch->first_in_float;
  plans.clear();
  first_in_float.clear();
  for (const Int8Job& j : jobs) {
    const bool first = h0_out_of_range(h0, j);
    std::shared_ptr<const Int8Plan> plan;
    if (const int64_t steps = first ? T - 1 : T; steps > 0) {
      RECUR_ASSIGN_OR_RETURN(plan, plan_for(bucket, steps, j.n1 - j.n0, N, j.threads));
    }
    plans.push_back(std::move(plan));
    first_in_float.push_back(first);
  }
  std::vector<Status>& st = scratch->status;
  st.assign(jobs.size(), ok_status());
  if (scratch->jobs.size() < jobs.size()) scratch->jobs.resize(jobs.size());
  auto job = [&](size_t i) {
    st[i] = run_job(jobs[i], plans[i].get(), first_in_float[i] != 0, *x, xq, offset, h0, c0,
                    y->data<float>(), yh, yc, scratch->jobs[i]);
  };
  const auto t0 = std::chrono::steady_clock::now();
  // One reference: the closure fits std::function's inline storage (no allocation).
  run_jobs(jobs.size(),
           static_cast<int>(std::min<size_t>(jobs.size(), static_cast<size_t>(threads_))) - 1,
           [&job](size_t i) { job(i); });
  if (tune_team_) {
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - t0;
    tuner_.record(jobs.front().threads > 1, ms.count(), static_cast<double>(T * N * Dn));
  }
  plans.clear();  // the plans stay in the kernel's cache, not in the pool's scratch
  for (const Status& s : st) RECUR_RETURN_IF_ERROR(s);
  return ctx.check_cancelled();
}

}  // namespace

std::string int8_lstm_unsupported(const CompileContext& ctx) {
  const Node& node = ctx.node();
  auto spec = RnnSpec::parse(node);
  if (!spec.ok()) return spec.status().message();
  std::string why = decline_reason(*spec);
  if (!why.empty()) return why;
  if (node.has_input(kRnnSeqLens)) return "sequence_lens (the int8 kernel runs full sequences)";
  if (node.has_input(kRnnP)) return "peepholes";
  if (!ctx.constant_input(kRnnW) || !ctx.constant_input(kRnnR) ||
      (node.has_input(kRnnB) && !ctx.constant_input(kRnnB)))
    return "W, R and B must be constant to be quantized at load";
  for (size_t i : {kRnnW, kRnnR, kRnnB}) {
    const Tensor* t = ctx.constant_input(i);
    if (t && t->dtype() != DType::kFloat32) return "weights are not float32";
  }
  const Tensor* w = ctx.constant_input(kRnnW);
  if (w->rank() != 3 || w->dim(2) <= 0) return "W is not [D, 4H, I] with I > 0";
  return int8_isa_reason();
}

Result<std::unique_ptr<Kernel>> create_int8_lstm_kernel(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, RnnSpec::parse(ctx.node()));
  const Tensor* w = ctx.constant_input(kRnnW);
  const Tensor* r = ctx.constant_input(kRnnR);
  const Tensor* b = ctx.constant_input(kRnnB);
  const Tensor x_stand_in = Tensor::borrow(nullptr, DType::kFloat32, {1, 1, w->dim(2)});
  RECUR_ASSIGN_OR_RETURN(RnnDims dims, check_rnn_inputs(ctx.node(), spec, &x_stand_in, w, r, b,
                                                        nullptr, nullptr, nullptr, nullptr));
  auto k = std::make_unique<Int8LstmKernel>(ctx.node(), spec, options_of(ctx));
  RECUR_RETURN_IF_ERROR(k->init(w->data<float>(), r->data<float>(), b ? b->data<float>() : nullptr,
                                dims.input_size, dims.hidden));
  ctx.note(
      "int8: W and R quantized at load (per-channel int8, scales shared by W and R), X and h "
      "as uint8 per run");
  ctx.note(k->threading_note());
  return std::unique_ptr<Kernel>(std::move(k));
}

RECUR_LOAD_PATH Claim claim_quantized_lstm(const Node& node, const Graph& graph) {
  auto spec = parse_quantized_lstm(node);
  if (!spec.ok()) return Claim::decline(spec.status().message());
  const std::string why = decline_reason(*spec);
  if (!why.empty()) return Claim::decline(why + ": not in oneDNN 2.6's int8 LSTM");
  if (node.has_input(kRnnSeqLens))
    return Claim::decline("sequence_lens: the int8 kernel runs full sequences");
  if (node.has_input(kRnnP)) return Claim::decline("peepholes: not in oneDNN 2.6's int8 LSTM");
  for (size_t i : {size_t{kRnnW}, size_t{kRnnR}, size_t{kRnnB}, size_t{kQlstmWScale},
                   size_t{kQlstmWZeroPoint}, size_t{kQlstmRScale}, size_t{kQlstmRZeroPoint}}) {
    if (i < node.inputs.size() && node.has_input(i) && !graph.constant(node.inputs[i]))
      return Claim::decline("the weights and their quantization parameters must be constant");
  }
  if (const std::string isa = int8_isa_reason(); !isa.empty()) return Claim::decline(isa);
  return Claim::accept();
}

Result<std::unique_ptr<Kernel>> create_quantized_lstm_kernel(CompileContext& ctx) {
  const Node& node = ctx.node();
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, parse_quantized_lstm(node));
  const QuantizedWeight w{ctx.constant_input(kRnnW), ctx.constant_input(kQlstmWScale),
                          ctx.constant_input(kQlstmWZeroPoint)};
  const QuantizedWeight r{ctx.constant_input(kRnnR), ctx.constant_input(kQlstmRScale),
                          ctx.constant_input(kQlstmRZeroPoint)};
  const Tensor* b = ctx.constant_input(kRnnB);
  if (!w.q || w.q->rank() != 3 || !r.q || r.q->rank() != 3)
    return invalid_model(node.describe() + ": W and R must be constant tensors of rank 3");
  const int64_t Dn = spec.num_directions(), I = w.q->dim(1), H = r.q->dim(1);
  RECUR_RETURN_IF_ERROR(check_quantized_weight(node, "W", w, Dn, I, H));
  RECUR_RETURN_IF_ERROR(check_quantized_weight(node, "R", r, Dn, H, H));
  if (b && (b->dtype() != DType::kFloat32 || b->shape() != Shape{Dn, 8 * H}))
    return invalid_model(node.describe() + ": B must be float32 " + shape_to_string({Dn, 8 * H}));
  const std::vector<float> wf = dequantize_to_onnx_layout(w, Dn, I, H);
  const std::vector<float> rf = dequantize_to_onnx_layout(r, Dn, H, H);
  auto k = std::make_unique<Int8LstmKernel>(node, spec, options_of(ctx));
  RECUR_RETURN_IF_ERROR(k->init(wf.data(), rf.data(), b ? b->data<float>() : nullptr, I, H));
  ctx.note("int8: W and R requantized to oneDNN's per-channel scales shared by W and R");
  ctx.note(k->threading_note());
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace recur::onednn
