// The small-cell float32 LSTM (small_lstm.h).
#include "providers/onednn/rnn/small_lstm.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"

#define RECUR_AVX512 __attribute__((target("avx512f")))

// GCC 12 takes the _mm512_undefined_ps() that the unmasked AVX-512 intrinsics pass through for
// an uninitialized read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace recur::onednn {

namespace {

constexpr int64_t kLanes = 16;
constexpr int kRowBlock = 4;  // rows whose gates accumulate together, sharing each weight load
constexpr int kColBlock = 4;  // vectors of gate columns per pass: 4x4 accumulators
constexpr int64_t kTimeBlock = 16;  // steps whose input projection is done together
constexpr size_t kMaxJobs = 16;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// e^x to about 2 ulp for x up to 88, and e^88 above (so that the callers below never divide by
// infinity): x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial for e^r, and 2^n applied by
// scalef, which goes to 0 by itself. The clamp lets a NaN through (max and min return their
// second operand on a NaN).
RECUR_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(88.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// 1/x from the 14-bit estimate and one Newton step, to about 1 ulp, for finite x >= 1 (what the
// callers pass): vdivps costs 16 cycles a vector, and the cell divides five times per element.
RECUR_AVX512 inline __m512 recip16(__m512 x) {
  const __m512 r = _mm512_rcp14_ps(x);
  return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(x, r, _mm512_set1_ps(1.0f)), r);
}

RECUR_AVX512 inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return recip16(_mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// tanh as (1 - e^-2|x|) / (1 + e^-2|x|) with x's sign; below |x| = 1/16, where that loses
// relative precision, its odd Taylor series to x^7.
RECUR_AVX512 inline __m512 tanh16(__m512 x) {
  const __m512 ax = _mm512_abs_ps(x);
  const __m512 e = exp16(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 big = _mm512_mul_ps(_mm512_sub_ps(one, e), recip16(_mm512_add_ps(one, e)));
  const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  big = _mm512_mask_sub_ps(big, neg, _mm512_setzero_ps(), big);
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 s = _mm512_set1_ps(-17.0f / 315.0f);
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(2.0f / 15.0f));
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(-1.0f / 3.0f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(s, x2), x, x);
  const __mmask16 tiny = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.0625f), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(tiny, big, small);
}

// out[n] = init[n] + in[n].m over the columns [c0, c0 + 16 NV), for NR rows: m is [K][Gp] in
// column blocks of 64 (pack_blocked), each of its vectors loaded once for the NR rows.
template <int NR, int NV>
RECUR_AVX512 void accumulate(const float* const* init, const float* const* in, int64_t K,
                             const float* m, int64_t Gp, int64_t c0, float* const* out) {
  __m512 acc[NR][NV];
  for (int n = 0; n < NR; ++n)
    for (int v = 0; v < NV; ++v) acc[n][v] = _mm512_load_ps(init[n] + c0 + v * kLanes);
  // m's column block [c0, c0 + 16 NV) is [K][16 NV] at c0 K (every block before it is full).
  const float* mb = m + c0 * K;
  for (int64_t k = 0; k < K; ++k) {
    __m512 wv[NV];
    for (int v = 0; v < NV; ++v) {
      wv[v] = _mm512_load_ps(mb + k * NV * kLanes + v * kLanes);
      // Held in a register: folded into each row's FMA, the vector is loaded NR times, and
      // with four rows the loads, not the FMAs, set the pace.
      asm("" : "+v"(wv[v]));
    }
    for (int n = 0; n < NR; ++n) {
      const __m512 s = _mm512_set1_ps(in[n][k]);
      for (int v = 0; v < NV; ++v) acc[n][v] = _mm512_fmadd_ps(s, wv[v], acc[n][v]);
    }
  }
  for (int n = 0; n < NR; ++n)
    for (int v = 0; v < NV; ++v) _mm512_store_ps(out[n] + c0 + v * kLanes, acc[n][v]);
}

template <int NR>
RECUR_AVX512 void multiply(const float* const* init, const float* const* in, int64_t K,
                           const float* m, int64_t Gp, float* const* out) {
  int64_t c0 = 0;
  for (; c0 + kColBlock * kLanes <= Gp; c0 += kColBlock * kLanes)
    accumulate<NR, kColBlock>(init, in, K, m, Gp, c0, out);
  switch ((Gp - c0) / kLanes) {
    case 3:
      accumulate<NR, 3>(init, in, K, m, Gp, c0, out);
      break;
    case 2:
      accumulate<NR, 2>(init, in, K, m, Gp, c0, out);
      break;
    case 1:
      accumulate<NR, 1>(init, in, K, m, Gp, c0, out);
      break;
    default:
      break;
  }
}

// out[n] = init[n] + in[n].m for nr <= kRowBlock rows (all Gp wide, 64-byte aligned).
void multiply_rows(int nr, const float* const* init, const float* const* in, int64_t K,
                   const float* m, int64_t Gp, float* const* out) {
  switch (nr) {
    case 4:
      return multiply<4>(init, in, K, m, Gp, out);
    case 3:
      return multiply<3>(init, in, K, m, Gp, out);
    case 2:
      return multiply<2>(init, in, K, m, Gp, out);
    default:
      return multiply<1>(init, in, K, m, Gp, out);
  }
}

// One row's cell update from its gates g (ONNX order i, o, f, c, each H wide): c and h in place.
// p: the peepholes i, o, f (3H), or null.
RECUR_AVX512 void cell_update(const float* g, int64_t H, const float* p, bool input_forget,
                              float* c, float* h) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t j = 0; j < H; j += kLanes) {
    const __mmask16 m = H - j >= kLanes ? static_cast<__mmask16>(0xFFFF)
                                        : static_cast<__mmask16>((1u << (H - j)) - 1);
    __m512 gi = _mm512_maskz_loadu_ps(m, g + j);
    __m512 go = _mm512_maskz_loadu_ps(m, g + H + j);
    __m512 gf = _mm512_maskz_loadu_ps(m, g + 2 * H + j);
    const __m512 gc = _mm512_maskz_loadu_ps(m, g + 3 * H + j);
    const __m512 cp = _mm512_maskz_loadu_ps(m, c + j);
    if (p) gi = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, p + j), cp, gi);
    const __m512 i = sigmoid16(gi);
    __m512 f;
    if (input_forget) {
      f = _mm512_sub_ps(one, i);
    } else {
      if (p) gf = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, p + 2 * H + j), cp, gf);
      f = sigmoid16(gf);
    }
    const __m512 cn = _mm512_fmadd_ps(f, cp, _mm512_mul_ps(i, tanh16(gc)));
    if (p) go = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, p + H + j), cn, go);
    _mm512_mask_storeu_ps(c + j, m, cn);
    _mm512_mask_storeu_ps(h + j, m, _mm512_mul_ps(sigmoid16(go), tanh16(cn)));
  }
}

// One direction's weights, packed at load: W and R transposed to [K][Gp] in column blocks (Gp:
// 4H rounded up to whole vectors, the padding zero), Wb + Rb, and the peepholes.
struct DirWeights {
  std::unique_ptr<AlignedBuffer> w, r, bias;
  std::vector<float> peep;  // i, o, f (3H); empty without P
};

// A run's rows, and where its outputs go.
struct Io {
  int64_t T = 0, N = 0, I = 0, H = 0, D = 1;
  bool l0 = true;
  const float* x = nullptr;
  const float* h0 = nullptr;
  const float* c0 = nullptr;
  float* y = nullptr;
  float* yh = nullptr;
  float* yc = nullptr;
  const int32_t* lens = nullptr;   // null: every row has T steps
  const int64_t* order = nullptr;  // rows by decreasing length
  const float* x_at(int64_t t, int64_t n) const { return x + (l0 ? t * N + n : n * T + t) * I; }
  float* y_at(int64_t t, int64_t d, int64_t n) const {
    return y + (l0 ? (t * D + d) * N + n : (n * T + t) * D + d) * H;
  }
  int64_t s_off(int64_t d, int64_t n) const { return (l0 ? d * N + n : n * D + d) * H; }
  int64_t len(int64_t n) const { return lens ? lens[n] : T; }
};

// Rows order[first], order[first + stride], ... of direction d.
struct Job {
  int d = 0;
  int64_t first = 0, stride = 1, rows = 0;
};

class SmallLstmKernel final : public Kernel {
 public:
  SmallLstmKernel(const Node& node, RnnSpec spec, int max_threads)
      : node_(node), spec_(std::move(spec)), max_threads_(max_threads) {}

  Status init(CompileContext& ctx, const Tensor& w, const Tensor& r, const Tensor* b,
              const Tensor* p);
  Status run(KernelContext& ctx) const override;

 private:
  bool reverse(int d) const { return spec_.direction == RnnDirection::kReverse || d == 1; }
  Status run_job(const KernelContext& ctx, const Io& io, const Job& j, float* scratch) const;

  const Node& node_;
  RnnSpec spec_;
  int max_threads_;
  int64_t I_ = 0, H_ = 0, Gp_ = 0;
  std::vector<DirWeights> dirs_;
  // Shape-only stand-ins for the released weights, for check_rnn_inputs.
  Tensor w_shape_, r_shape_, b_shape_, p_shape_;
  mutable ScratchPool scratch_;
};

Status SmallLstmKernel::init(CompileContext& ctx, const Tensor& w, const Tensor& r, const Tensor* b,
                             const Tensor* p) {
  const int64_t D = spec_.num_directions();
  I_ = w.dim(2);
  H_ = r.dim(2);
  const int64_t G = 4 * H_;
  Gp_ = round_up(G, kLanes);
  w_shape_ = Tensor::borrow(nullptr, DType::kFloat32, w.shape());
  r_shape_ = Tensor::borrow(nullptr, DType::kFloat32, r.shape());
  if (b) b_shape_ = Tensor::borrow(nullptr, DType::kFloat32, b->shape());
  if (p) p_shape_ = Tensor::borrow(nullptr, DType::kFloat32, p->shape());
  // ONNX's [G][K] transposed to [K][Gp] and cut into column blocks of 64, each [K][width]
  // and stored whole, so that a pass over one block streams contiguous memory.
  auto transpose = [&](const float* src, int64_t K) {
    auto buf = std::make_unique<AlignedBuffer>(static_cast<size_t>(K * Gp_) * sizeof(float));
    float* dst = static_cast<float*>(buf->data);
    std::fill(dst, dst + K * Gp_, 0.0f);
    constexpr int64_t kBlock = kColBlock * kLanes;
    for (int64_t col = 0; col < G; ++col) {
      const int64_t c0 = col / kBlock * kBlock, width = std::min(kBlock, Gp_ - c0);
      for (int64_t k = 0; k < K; ++k) dst[c0 * K + k * width + (col - c0)] = src[col * K + k];
    }
    return buf;
  };
  for (int64_t d = 0; d < D; ++d) {
    DirWeights dw;
    dw.w = transpose(w.data<float>() + d * G * I_, I_);
    dw.r = transpose(r.data<float>() + d * G * H_, H_);
    dw.bias = std::make_unique<AlignedBuffer>(static_cast<size_t>(Gp_) * sizeof(float));
    float* bias = static_cast<float*>(dw.bias->data);
    std::fill(bias, bias + Gp_, 0.0f);
    if (b) {
      const float* bd = b->data<float>() + d * 2 * G;
      for (int64_t col = 0; col < G; ++col) bias[col] = bd[col] + bd[G + col];
    }
    if (p) dw.peep.assign(p->data<float>() + d * 3 * H_, p->data<float>() + (d + 1) * 3 * H_);
    dirs_.push_back(std::move(dw));
  }
  ctx.release_input(kRnnW);
  ctx.release_input(kRnnR);
  if (b) ctx.release_input(kRnnB);
  if (p) ctx.release_input(kRnnP);
  ctx.note("recur's small-cell LSTM (AVX-512), not a oneDNN primitive: W and R packed at load, " +
           std::to_string(4 * H_ * (I_ + H_)) + " multiply-adds a row-step (oneDNN above " +
           std::to_string(kSmallLstmMaxMacs) + ")");
  return ok_status();
}

Status SmallLstmKernel::run_job(const KernelContext& ctx, const Io& io, const Job& j,
                                float* scratch) const {
  const int64_t H = H_, Gp = Gp_;
  const DirWeights& dw = dirs_[static_cast<size_t>(j.d)];
  const float* w = static_cast<const float*>(dw.w->data);
  const float* r = static_cast<const float*>(dw.r->data);
  const float* bias = static_cast<const float*>(dw.bias->data);
  const float* peep = dw.peep.empty() ? nullptr : dw.peep.data();
  float* g = scratch;              // [kRowBlock][Gp]: one block's gates
  float* hs = g + kRowBlock * Gp;  // [rows][H]
  float* cs = hs + j.rows * H;     // [rows][H]
  float* xw = cs + j.rows * H;     // [kTimeBlock][rows][Gp]: bias + x.W of a block of steps
  xw += (kLanes - (xw - scratch) % kLanes) % kLanes;
  auto row = [&](int64_t q) { return io.order[j.first + q * j.stride]; };
  const bool rev = reverse(j.d);
  auto step = [&](int64_t t, int64_t q) { return rev ? io.len(row(q)) - 1 - t : t; };
  auto live = [&](int64_t t) {  // rows still running at step t: a prefix, longest first
    int64_t a = j.rows;
    while (a > 0 && io.len(row(a - 1)) <= t) --a;
    return a;
  };
  for (int64_t q = 0; q < j.rows; ++q) {
    const int64_t so = io.s_off(j.d, row(q));
    float* h = hs + q * H;
    float* c = cs + q * H;
    if (io.h0)
      std::memcpy(h, io.h0 + so, static_cast<size_t>(H) * sizeof(float));
    else
      std::fill(h, h + H, 0.0f);
    if (io.c0)
      std::memcpy(c, io.c0 + so, static_cast<size_t>(H) * sizeof(float));
    else
      std::fill(c, c + H, 0.0f);
  }
  const bool fine = ctx.fine_grained_cancel();
  const int64_t steps = j.rows ? io.len(row(0)) : 0;
  std::array<const float*, kRowBlock> init{}, in{};
  std::array<float*, kRowBlock> out{};
  for (int64_t t0 = 0; t0 < steps; t0 += kTimeBlock) {
    if (fine) RECUR_RETURN_IF_ERROR(ctx.check_cancelled("time step", t0));
    const int64_t t1 = std::min(steps, t0 + kTimeBlock);
    // The input projection of the block's live rows, four (step, row) pairs at a time: the
    // only part of a step that does not wait for the previous one.
    int nr = 0;
    auto flush = [&] {
      if (nr > 0) multiply_rows(nr, init.data(), in.data(), io.I, w, Gp, out.data());
      nr = 0;
    };
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t a = live(t);
      for (int64_t q = 0; q < a; ++q) {
        init[static_cast<size_t>(nr)] = bias;
        in[static_cast<size_t>(nr)] = io.x_at(step(t, q), row(q));
        out[static_cast<size_t>(nr)] = xw + ((t - t0) * j.rows + q) * Gp;
        if (++nr == kRowBlock) flush();
      }
    }
    flush();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t a = live(t);
      for (int64_t q0 = 0; q0 < a; q0 += kRowBlock) {
        const int n = static_cast<int>(std::min<int64_t>(kRowBlock, a - q0));
        for (int q = 0; q < n; ++q) {
          init[static_cast<size_t>(q)] = xw + ((t - t0) * j.rows + q0 + q) * Gp;
          in[static_cast<size_t>(q)] = hs + (q0 + q) * H;
          out[static_cast<size_t>(q)] = g + q * Gp;
        }
        multiply_rows(n, init.data(), in.data(), H, r, Gp, out.data());
        for (int q = 0; q < n; ++q) {
          float* h = hs + (q0 + q) * H;
          cell_update(g + q * Gp, H, peep, spec_.input_forget, cs + (q0 + q) * H, h);
          std::memcpy(io.y_at(step(t, q0 + q), j.d, row(q0 + q)), h,
                      static_cast<size_t>(H) * sizeof(float));
        }
      }
    }
  }
  // Final states; a row of length 0 has none and gets zeros, as on the other oneDNN paths.
  for (int64_t q = 0; q < j.rows; ++q) {
    const int64_t n = row(q);
    const int64_t so = io.s_off(j.d, n);
    const bool empty = io.len(n) == 0;
    for (auto [out, src] : {std::pair{io.yh, hs + q * H}, std::pair{io.yc, cs + q * H}}) {
      if (!out) continue;
      if (empty)
        std::fill(out + so, out + so + H, 0.0f);
      else
        std::memcpy(out + so, src, static_cast<size_t>(H) * sizeof(float));
    }
  }
  return ok_status();
}

Status SmallLstmKernel::run(KernelContext& ctx) const {
  const Tensor* x = ctx.input(kRnnX);
  const Tensor* seq = ctx.input(kRnnSeqLens);
  const Tensor* h0 = ctx.input(kRnnInitialH);
  const Tensor* c0 = ctx.input(kRnnInitialC);
  RECUR_ASSIGN_OR_RETURN(RnnDims dims,
                         check_rnn_inputs(node_, spec_, x, &w_shape_, &r_shape_,
                                          b_shape_.defined() ? &b_shape_ : nullptr, seq, h0, c0,
                                          p_shape_.defined() ? &p_shape_ : nullptr));
  for (const Tensor* t : {x, h0, c0}) {
    if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu()))
      return ctx.error(ErrorCode::kNotImplemented,
                       "X, initial_h and initial_c must be float32 "
                       "on the host");
  }
  if (seq && !seq->is_cpu())
    return ctx.error(ErrorCode::kInvalidArgument, "sequence_lens must be on the host");
  Io io;
  io.T = dims.seq_length;
  io.N = dims.batch;
  io.I = I_;
  io.H = H_;
  io.D = spec_.num_directions();
  io.l0 = spec_.layout == 0;
  io.x = x->data<float>();
  io.h0 = h0 ? h0->data<float>() : nullptr;
  io.c0 = c0 ? c0->data<float>() : nullptr;
  io.lens = seq ? seq->data<int32_t>() : nullptr;
  const Shape y_shape = io.l0 ? Shape{io.T, io.D, io.N, H_} : Shape{io.N, io.T, io.D, H_};
  const Shape s_shape = io.l0 ? Shape{io.D, io.N, H_} : Shape{io.N, io.D, H_};
  RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(kRnnY, DType::kFloat32, y_shape));
  io.y = y->data<float>();
  if (ctx.output_requested(kRnnYh)) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYh, DType::kFloat32, s_shape));
    io.yh = t->data<float>();
  }
  if (ctx.output_requested(kRnnYc)) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYc, DType::kFloat32, s_shape));
    io.yc = t->data<float>();
  }
  bool full = true;
  for (int64_t n = 0; n < io.N; ++n) full = full && io.len(n) == io.T;
  if (!full) std::fill(io.y, io.y + y->numel(), 0.0f);
  if (io.N == 0) return ok_status();

  // Jobs: each direction, and with threads to spare and enough work, interleaved slices of the
  // rows (sorted by length, so that the slices' steps match).
  const int64_t macs = io.D * io.T * io.N * 4 * H_ * (I_ + H_);
  const int threads = threads_for(static_cast<double>(macs), max_threads_);
  const int64_t slices = std::clamp<int64_t>(threads / io.D, 1, io.N);
  const int64_t njobs = std::min<int64_t>(io.D * slices, static_cast<int64_t>(kMaxJobs));
  const int64_t per_dir = njobs / io.D;
  const size_t order_floats = static_cast<size_t>(round_up(io.N * 2, kLanes));
  const int64_t rows = (io.N + per_dir - 1) / per_dir;
  const size_t job_floats = static_cast<size_t>(
      round_up(kRowBlock * Gp_ + 2 * rows * H_ + kLanes + kTimeBlock * rows * Gp_, kLanes));
  ScratchPool::Lease lease =
      scratch_.acquire((order_floats + static_cast<size_t>(njobs) * job_floats) * sizeof(float));
  auto* order = reinterpret_cast<int64_t*>(lease.data());
  for (int64_t n = 0; n < io.N; ++n) order[n] = n;
  if (io.lens)
    std::stable_sort(order, order + io.N,
                     [&](int64_t a, int64_t b) { return io.lens[a] > io.lens[b]; });
  io.order = order;
  float* base = static_cast<float*>(lease.data()) + order_floats;
  std::array<Status, kMaxJobs> st;
  auto one = [&](size_t i) {
    Job j;
    j.d = static_cast<int>(static_cast<int64_t>(i) / per_dir);
    j.first = static_cast<int64_t>(i) % per_dir;
    j.stride = per_dir;
    j.rows = (io.N - j.first + per_dir - 1) / per_dir;
    st[i] = run_job(ctx, io, j, base + i * job_floats);
  };
  if (njobs > 1 && threads > 1)
    run_jobs(static_cast<size_t>(njobs), threads - 1, one);
  else
    for (size_t i = 0; i < static_cast<size_t>(njobs); ++i) one(i);
  for (size_t i = 0; i < static_cast<size_t>(njobs); ++i) RECUR_RETURN_IF_ERROR(st[i]);
  return ok_status();
}

}  // namespace

std::string small_lstm_declined(const CompileContext& ctx, const RnnSpec& spec,
                                const OnednnOptions& o) {
  if (!o.small_lstm) return "onednn.impl asks for oneDNN's primitive";
  if (o.precision != ProviderConfig::Precision::kFp32) return "not float32";
  if (spec.cell != RnnCell::kLstm) return "not an LSTM";
  if (!spec.default_activations() || spec.clip) return "custom activations or clip";
  if (!__builtin_cpu_supports("avx512f")) return "no AVX-512 on this CPU";
  const Node& node = ctx.node();
  const Tensor* w = ctx.constant_input(kRnnW);
  const Tensor* r = ctx.constant_input(kRnnR);
  if (!w || !r || (node.has_input(kRnnB) && !ctx.constant_input(kRnnB)) ||
      (node.has_input(kRnnP) && !ctx.constant_input(kRnnP)))
    return "weights are graph inputs";
  for (size_t i : {kRnnW, kRnnR, kRnnB, kRnnP}) {
    const Tensor* t = ctx.constant_input(i);
    if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) return "weights not float32";
  }
  if (w->rank() != 3 || r->rank() != 3) return "W or R is not rank 3";
  const int64_t I = w->dim(2), H = r->dim(2);
  if (I <= 0 || H <= 0 || 4 * H * (I + H) > kSmallLstmMaxMacs) return "cell too large";
  return "";
}

Result<std::unique_ptr<Kernel>> create_small_lstm_kernel(CompileContext& ctx, RnnSpec spec,
                                                         const OnednnOptions& o) {
  const Tensor* w = ctx.constant_input(kRnnW);
  const Tensor* r = ctx.constant_input(kRnnR);
  const Tensor* b = ctx.constant_input(kRnnB);
  const Tensor* p = ctx.constant_input(kRnnP);
  const Tensor x_stand_in = Tensor::borrow(nullptr, DType::kFloat32, {1, 1, w->dim(2)});
  RECUR_RETURN_IF_ERROR(
      check_rnn_inputs(ctx.node(), spec, &x_stand_in, w, r, b, nullptr, nullptr, nullptr, p)
          .status());
  auto k = std::make_unique<SmallLstmKernel>(ctx.node(), std::move(spec), o.max_threads);
  RECUR_RETURN_IF_ERROR(k->init(ctx, *w, *r, b, p));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace recur::onednn
