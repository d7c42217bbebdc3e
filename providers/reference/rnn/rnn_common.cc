#include "providers/reference/rnn/rnn_common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "providers/reference/common/gemm.h"
#include "runtime/core/memory_budget.h"
#include "runtime/provider/repack_count.h"

namespace recur::reference::rnn {

template <class C>
void activate(const RnnActivation& act, C* x, int64_t n) {
  using Kind = RnnActivation::Kind;
  const C alpha = static_cast<C>(act.alpha);
  const C beta = static_cast<C>(act.beta);
  const C zero(0), one(1);
  switch (act.kind) {
    case Kind::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > zero ? x[i] : zero;
      break;
    case Kind::kTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
      break;
    case Kind::kSigmoid:
      // exp(-x) overflows to inf for very negative x, which gives the right limit, 0.
      for (int64_t i = 0; i < n; ++i) x[i] = one / (one + std::exp(-x[i]));
      break;
    case Kind::kAffine:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
      break;
    case Kind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= zero ? x[i] : alpha * x[i];
      break;
    case Kind::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : zero;
      break;
    case Kind::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * std::tanh(beta * x[i]);
      break;
    case Kind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(zero, std::min(one, alpha * x[i] + beta));
      break;
    case Kind::kElu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= zero ? x[i] : alpha * std::expm1(x[i]);
      break;
    case Kind::kSoftsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (one + std::fabs(x[i]));
      break;
    case Kind::kSoftplus:
      // log(1 + exp(x)) without overflowing exp for large x.
      for (int64_t i = 0; i < n; ++i) {
        const C v = x[i];
        x[i] = v > zero ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
      }
      break;
  }
}

template <class C>
void clip_values(C* x, int64_t n, C clip) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(clip, std::max(-clip, x[i]));
}

template void activate<float>(const RnnActivation&, float*, int64_t);
template void activate<double>(const RnnActivation&, double*, int64_t);
template void clip_values<float>(float*, int64_t, float);
template void clip_values<double>(double*, int64_t, double);

namespace {

// W, R, B and P in the form the loop wants, in the compute type C (float for the 16-bit floats).
template <class C>
struct PackedWeights {
  // Per direction d: W_d transposed, [I, G*H]; empty when W was not packed.
  std::vector<C> wt;
  // Per direction d: R_d transposed, [H, G*H].
  std::vector<C> rt;
  // Per direction: [G*H] added to the input projection. Wb+Rb, except that a GRU with
  // linear_before_reset=1 keeps Rbh apart (it is multiplied by r). Empty with no B.
  std::vector<C> bias;
  // Per direction: GRU linear_before_reset=1's Rbh, [H]. Empty otherwise or with no B.
  std::vector<C> rbh;
  // Per direction: LSTM peepholes [3H] in ONNX's order i,o,f. Empty with no P.
  std::vector<C> p;
};

// Which of W, R, B, P are packed (at compile time they may only be some of them).
enum PackedPart : unsigned { kPackW = 1, kPackR = 2, kPackB = 4, kPackP = 8 };

// Packs the parts in `parts` from tensors of storage type T whose shapes have been checked.
template <class T, class C>
void pack_weights(const RnnSpec& spec, const RnnDims& dims, unsigned parts, const Tensor* w,
                  const Tensor* r, const Tensor* b, const Tensor* p, PackedWeights<C>* out) {
  const int64_t D = dims.directions, H = dims.hidden, GH = spec.num_gates() * H;
  if ((parts & kPackW) && w) {
    const int64_t I = w->dim(2);
    const T* src = w->data<T>();
    out->wt.assign(static_cast<size_t>(D * I * GH), C(0));
    for (int64_t d = 0; d < D; ++d)
      for (int64_t g = 0; g < GH; ++g)
        for (int64_t i = 0; i < I; ++i)
          out->wt[static_cast<size_t>((d * I + i) * GH + g)] =
              to_compute(src[(d * GH + g) * I + i]);
  }
  if ((parts & kPackR) && r) {
    const T* src = r->data<T>();
    out->rt.assign(static_cast<size_t>(D * H * GH), C(0));
    for (int64_t d = 0; d < D; ++d)
      for (int64_t g = 0; g < GH; ++g)
        for (int64_t k = 0; k < H; ++k)
          out->rt[static_cast<size_t>((d * H + k) * GH + g)] =
              to_compute(src[(d * GH + g) * H + k]);
  }
  if ((parts & kPackB) && b) {
    const T* src = b->data<T>();
    const bool separate_rbh = spec.cell == RnnCell::kGru && spec.linear_before_reset;
    out->bias.assign(static_cast<size_t>(D * GH), C(0));
    if (separate_rbh) out->rbh.assign(static_cast<size_t>(D * H), C(0));
    for (int64_t d = 0; d < D; ++d) {
      const T* wb = src + d * 2 * GH;
      const T* rb = wb + GH;
      for (int64_t g = 0; g < GH; ++g) {
        C v = to_compute(wb[g]);
        if (separate_rbh && g >= kOnnxGruH * H) {
          out->rbh[static_cast<size_t>(d * H + g - kOnnxGruH * H)] = to_compute(rb[g]);
        } else {
          v += to_compute(rb[g]);
        }
        out->bias[static_cast<size_t>(d * GH + g)] = v;
      }
    }
  }
  if ((parts & kPackP) && p) {
    const T* src = p->data<T>();
    out->p.resize(static_cast<size_t>(D * 3 * H));
    for (int64_t i = 0; i < D * 3 * H; ++i) out->p[static_cast<size_t>(i)] = to_compute(src[i]);
  }
}

constexpr unsigned kAllParts = kPackW | kPackR | kPackB | kPackP;

// a*b*..., or -1 if the product overflows int64 (corrupt shapes with a zero-sized dimension
// elsewhere can make it huge).
int64_t checked_product(std::initializer_list<int64_t> v) {
  int64_t r = 1;
  for (int64_t x : v) {
    if (x < 0 || __builtin_mul_overflow(r, x, &r)) return -1;
  }
  return r;
}

// A tensor with the shape and dtype of `t` and no data, standing in for a released constant.
Tensor descriptor_of(const Tensor& t) { return Tensor::borrow(nullptr, t.dtype(), t.shape()); }

// Where the packed weights of one run come from: the kernel's constants or this run's packing.
template <class C>
struct WeightView {
  const C* wt = nullptr;
  const C* rt = nullptr;
  const C* bias = nullptr;
  const C* rbh = nullptr;
  const C* p = nullptr;
};

template <class C>
const C* data_or_null(const std::vector<C>& v) {
  return v.empty() ? nullptr : v.data();
}

// The sizes and layout of one run, shared by its steps.
struct RunGeometry {
  int64_t D = 0, N = 0, S = 0, I = 0, H = 0, GH = 0;
  bool layout0 = true;
  bool lstm = false;

  // Offset of (direction d, batch row n) in the [D,N,H] / [N,D,H] states.
  int64_t state_at(int64_t d, int64_t n) const { return (layout0 ? d * N + n : n * D + d) * H; }
  // Offset of (time t, direction d, batch row n) in Y, [S,D,N,H] / [N,S,D,H].
  int64_t y_at(int64_t t, int64_t d, int64_t n) const {
    return (layout0 ? (t * D + d) * N + n : (n * S + t) * D + d) * H;
  }
  // Row of (time t, batch row n) in X and in its input projection.
  int64_t x_row(int64_t t, int64_t n) const { return layout0 ? t * N + n : n * S + t; }
};

// Each batch row's length, from sequence_lens or S for all.
struct SequenceLengths {
  SmallVector<int64_t, 64> lens;  // no heap up to batch 64: read on every run
  int64_t max_len = 0;
  bool all_full = true;
};

SequenceLengths sequence_lengths(const Tensor* seq_lens, int64_t N, int64_t S) {
  SequenceLengths out;
  out.lens.assign(static_cast<size_t>(N), S);
  if (seq_lens) {
    const int32_t* l = seq_lens->data<int32_t>();
    for (int64_t i = 0; i < N; ++i) out.lens[static_cast<size_t>(i)] = l[i];
  }
  out.max_len = N == 0 ? 0 : *std::max_element(out.lens.begin(), out.lens.end());
  out.all_full = std::all_of(out.lens.begin(), out.lens.end(), [&](int64_t v) { return v == S; });
  return out;
}

// The data of Y, Y_h and Y_c; null for the outputs not requested.
template <class T>
struct RunOutputs {
  T* y = nullptr;
  T* yh = nullptr;
  T* yc = nullptr;
};

template <class T>
Status allocate_outputs(KernelContext& ctx, const RunGeometry& g, DType dtype, bool want_y,
                        bool want_yh, bool want_yc, RunOutputs<T>* out) {
  const Shape state_shape = g.layout0 ? Shape{g.D, g.N, g.H} : Shape{g.N, g.D, g.H};
  if (want_y) {
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(kRnnY, dtype,
                                                           g.layout0 ? Shape{g.S, g.D, g.N, g.H}
                                                                     : Shape{g.N, g.S, g.D, g.H}));
    out->y = y->data<T>();
  }
  if (want_yh) {
    RECUR_ASSIGN_OR_RETURN(Tensor * yh, ctx.allocate_output(kRnnYh, dtype, state_shape));
    out->yh = yh->data<T>();
  }
  if (want_yc) {
    RECUR_ASSIGN_OR_RETURN(Tensor * yc, ctx.allocate_output(kRnnYc, dtype, state_shape));
    out->yc = yc->data<T>();
  }
  return ok_status();
}

// The workspace's memory, which each thread keeps from run to run so that a run of a shape it
// has run before allocates nothing. A buffer over kKeepBytes is given back after the run: a
// long sequence's projected inputs should not stay resident between runs.
template <class C>
struct WorkspaceStore {
  static constexpr size_t kKeepBytes = size_t{16} << 20;
  // Not zeroed: every part is written before it is read. Zeroing a long sequence's projected
  // inputs took tens of milliseconds that a cancellation could not interrupt.
  std::unique_ptr<C[]> buffer;
  size_t capacity = 0;  // elements of buffer
  std::vector<const C*> xw_rows;
  std::vector<uint8_t> active;
  bool in_use = false;
};

template <class C>
WorkspaceStore<C>& thread_workspace_store() {
  thread_local WorkspaceStore<C> store;
  return store;
}

// One workspace for the run: X in the compute type (16-bit floats only), the input projection
// of one direction, the states and the step's scratch, in one allocation.
template <class C>
struct Workspace {
  Workspace() {
    WorkspaceStore<C>& t = thread_workspace_store<C>();
    store = t.in_use ? &own : &t;  // nested on one thread (not expected): a store of its own
    store->in_use = true;
  }
  ~Workspace() {
    store->in_use = false;
    if (store->capacity * sizeof(C) > WorkspaceStore<C>::kKeepBytes) {
      store->buffer.reset();
      store->capacity = 0;
    }
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  WorkspaceStore<C> own;
  WorkspaceStore<C>* store;
  MemoryReservation counted;  // the buffer, against the run's memory limit
  // What the step reads per batch row (StepArgs::xw_rows and active): store's.
  std::vector<const C*>& xw_rows() { return store->xw_rows; }
  std::vector<uint8_t>& active() { return store->active; }
  C* xc = nullptr;
  C* xw = nullptr;
  C* h = nullptr;
  C* c = nullptr;
  C* gates = nullptr;
  C* scratch = nullptr;
};

template <class C>
Status allocate_workspace(KernelContext& ctx, const RunGeometry& g, int64_t x_size, int64_t xw_size,
                          Workspace<C>* ws) {
  static const std::string kWhat = "the RNN workspace";  // built once, not per run
  const int64_t N = g.N, H = g.H, GH = g.GH;
  ws->xw_rows().assign(static_cast<size_t>(N), nullptr);
  ws->active().assign(static_cast<size_t>(N), 0);
  const auto n = static_cast<size_t>(x_size + xw_size + N * H * (g.lstm ? 2 : 1) + N * GH + N * H);
  if (n > SIZE_MAX / sizeof(C)) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "the workspace for T=" + std::to_string(g.S) + " is too large");
  }
  if (Status st = ws->counted.grow(n * sizeof(C), kWhat); !st.ok()) {
    return ctx.error(st.code(), st.message());
  }
  WorkspaceStore<C>& store = *ws->store;
  if (n > store.capacity) {
    try {
      store.buffer.reset();
      store.capacity = 0;
      store.buffer.reset(new C[n]);
      store.capacity = n;
    } catch (const std::exception&) {  // bad_alloc
      return ctx.error(ErrorCode::kInvalidArgument,
                       "cannot allocate the workspace for T=" + std::to_string(g.S) +
                           ", N=" + std::to_string(N) + ", hidden_size=" + std::to_string(H));
    }
  }
  ws->xc = store.buffer.get();
  ws->xw = ws->xc + x_size;
  ws->h = ws->xw + xw_size;
  ws->c = ws->h + N * H;
  ws->gates = ws->c + (g.lstm ? N * H : 0);
  ws->scratch = ws->gates + N * GH;
  return ok_status();
}

// X as the compute type: X itself, or its x_size values converted into xc.
template <class T, class C>
const C* input_in_compute_type(const Tensor& x, int64_t x_size, C* xc) {
  const T* xs = x.data<T>();
  if constexpr (std::is_same_v<T, C>) {
    return xs;
  } else {
    for (int64_t i = 0; i < x_size; ++i) xc[i] = to_compute(xs[i]);
    return xc;
  }
}

// The input projection (bias included) of direction d for every (t, n) row at once, rows in
// X's order.
template <class C>
Status project_inputs(const KernelContext& ctx, const RunGeometry& g, const WeightView<C>& wv,
                      int64_t d, const C* xin, C* xw) {
  const int64_t rows = g.S * g.N, GH = g.GH, I = g.I;
  if (wv.bias) {
    const C* bd = wv.bias + d * GH;
    for (int64_t i = 0; i < rows; ++i) std::copy(bd, bd + GH, xw + i * GH);
  }
  // In a run that can be cancelled, blocks of about 2M multiply-adds with a check between
  // them: one GEMM over a long sequence takes longer than a cancellation may wait. Rows are
  // independent, so the blocks give the same values.
  const int64_t block =
      ctx.env().control ? std::max<int64_t>(1, (int64_t{1} << 21) / std::max<int64_t>(1, GH * I))
                        : std::max<int64_t>(rows, 1);
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    if (r0 > 0) RECUR_RETURN_IF_ERROR(ctx.check_cancelled("input projection row", r0));
    gemm<C>(false, false, std::min(block, rows - r0), GH, I, C(1), xin + r0 * I, I,
            wv.wt + d * I * GH, GH, wv.bias ? C(1) : C(0), xw + r0 * GH, GH);
  }
  return ok_status();
}

// Direction d's initial_h and initial_c into h and c, zeros where they are absent.
template <class T, class C>
void load_initial_state(const RunGeometry& g, int64_t d, const T* h0, const T* c0, C* h, C* c) {
  const int64_t N = g.N, H = g.H;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t j = 0; j < H; ++j) {
      h[n * H + j] = h0 ? to_compute(h0[g.state_at(d, n) + j]) : C(0);
      if (g.lstm) c[n * H + j] = c0 ? to_compute(c0[g.state_at(d, n) + j]) : C(0);
    }
  }
}

// Y_h and Y_c of direction d: the state after each sequence's last valid step; zeros for a
// length of 0.
template <class T, class C>
void write_final_state(const RunGeometry& g, int64_t d, const SmallVector<int64_t, 64>& lens,
                       const C* h, const C* c, T* yh_data, T* yc_data) {
  const int64_t N = g.N, H = g.H;
  for (int64_t n = 0; n < N; ++n) {
    const bool empty = lens[static_cast<size_t>(n)] == 0;
    for (int64_t j = 0; j < H; ++j) {
      if (yh_data) yh_data[g.state_at(d, n) + j] = from_compute<T>(empty ? C(0) : h[n * H + j]);
      if (yc_data) yc_data[g.state_at(d, n) + j] = from_compute<T>(empty ? C(0) : c[n * H + j]);
    }
  }
}

class RnnKernel final : public Kernel {
 public:
  RnnKernel(RnnSpec spec, CellOps ops) : spec_(std::move(spec)), ops_(ops) {}

  // Packs the constant weights, when their shapes can be checked now; anything else is left
  // to run time, whose checks then report the problem with X in view.
  void prepack(CompileContext& ctx);

  Status run(KernelContext& ctx) const override;

 private:
  template <class T>
  Status run_typed(KernelContext& ctx, const RnnDims& dims, const Tensor& x, const Tensor* w,
                   const Tensor* r, const Tensor* b, const Tensor* seq_lens,
                   const Tensor* initial_h, const Tensor* initial_c, const Tensor* p) const;

  // The packed weights of one run: the kernel's constants, and what was not packed at compile
  // time packed now into *local.
  template <class T, class C>
  WeightView<C> weights_for_run(const RnnDims& dims, const Tensor* w, const Tensor* r,
                                const Tensor* b, const Tensor* p, PackedWeights<C>* local) const;

  // Direction d's steps over the projected inputs in ws, writing Y (when yd is not null).
  // Stops between steps when the run is cancelled.
  template <class T, class C>
  Status run_direction(const KernelContext& ctx, const RunGeometry& g, int64_t d,
                       const WeightView<C>& wv, const SequenceLengths& sl, Workspace<C>& ws,
                       T* yd) const;

  template <class C>
  const PackedWeights<C>& packed() const {
    if constexpr (std::is_same_v<C, float>) {
      return packed_f_;
    } else {
      return packed_d_;
    }
  }

  RnnSpec spec_;
  CellOps ops_;
  // Shape-and-dtype stand-ins for the constant inputs that were packed and released, so that
  // run-time checks still see them. Indexed by RnnInput.
  Tensor released_[kRnnP + 1];
  unsigned packed_parts_ = 0;
  PackedWeights<float> packed_f_;
  PackedWeights<double> packed_d_;
};

void RnnKernel::prepack(CompileContext& ctx) {
  const size_t kInputs[] = {kRnnW, kRnnR, kRnnB, kRnnP};
  const unsigned kParts[] = {kPackW, kPackR, kPackB, kPackP};
  const Tensor* c[4];
  DType dtype = DType::kUndefined;
  for (int k = 0; k < 4; ++k) {
    c[k] = ctx.constant_input(kInputs[k]);
    if (!c[k]) continue;
    if (!is_floating(c[k]->dtype()) || !c[k]->is_cpu()) return;
    if (dtype != DType::kUndefined && c[k]->dtype() != dtype) return;
    dtype = c[k]->dtype();
  }
  if (dtype == DType::kUndefined) return;

  const int64_t D = spec_.num_directions(), G = spec_.num_gates();
  int64_t H = spec_.hidden_size;
  if (H <= 0) {
    const Tensor* r = c[1];
    if (r && r->rank() == 3) {
      H = r->dim(2);
    } else if (ctx.input_type(kRnnR).is_static() && ctx.input_type(kRnnR).rank() == 3) {
      H = ctx.input_type(kRnnR).static_shape()[2];
    }
  }
  if (H <= 0) return;
  const Tensor* w = c[0];
  if (w && (w->rank() != 3 || w->dim(0) != D || w->dim(1) != G * H)) return;
  const Tensor* r = c[1];
  if (r && (r->rank() != 3 || r->shape() != Shape{D, G * H, H})) return;
  const Tensor* b = c[2];
  if (b && b->shape() != Shape{D, 2 * G * H}) return;
  const Tensor* p = c[3];
  if (p && (spec_.cell != RnnCell::kLstm || p->shape() != Shape{D, 3 * H})) return;

  RnnDims dims;
  dims.directions = D;
  dims.hidden = H;
  unsigned parts = 0;
  for (int k = 0; k < 4; ++k)
    if (c[k]) parts |= kParts[k];
  visit_dtype(kFloatTypes, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    PackedWeights<C>* out;
    if constexpr (std::is_same_v<C, float>) {
      out = &packed_f_;
    } else {
      out = &packed_d_;
    }
    pack_weights<T, C>(spec_, dims, parts, w, r, b, p, out);
  });
  packed_parts_ = parts;
  for (int k = 0; k < 4; ++k) {
    if (!c[k]) continue;
    released_[kInputs[k]] = descriptor_of(*c[k]);
    ctx.release_input(kInputs[k]);
  }
  std::string what;
  const char* kNames[] = {"W", "R", "B", "P"};
  for (int k = 0; k < 4; ++k) {
    if (c[k]) what += std::string(what.empty() ? "" : ",") + kNames[k];
  }
  ctx.note("constant " + what + " transposed for the GEMMs at load");
}

Status RnnKernel::run(KernelContext& ctx) const {
  auto in = [&](size_t i) -> const Tensor* {
    if (released_[i].defined()) return &released_[i];
    return ctx.input(i);
  };
  const Tensor* x = ctx.input(kRnnX);
  const Tensor* seq_lens = ctx.input(kRnnSeqLens);
  const Tensor* initial_h = ctx.input(kRnnInitialH);
  const Tensor* initial_c = ctx.input(kRnnInitialC);
  RECUR_ASSIGN_OR_RETURN(RnnDims dims,
                         check_rnn_inputs(ctx.node(), spec_, x, in(kRnnW), in(kRnnR), in(kRnnB),
                                          seq_lens, initial_h, initial_c, in(kRnnP)));
  for (const Tensor* t : {x, seq_lens, initial_h, initial_c}) {
    if (t && !t->is_cpu()) {
      return ctx.error(ErrorCode::kInvalidArgument, "the reference kernel needs host inputs");
    }
  }
  Status st;
  const bool handled = visit_dtype(kFloatTypes, x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    st = run_typed<T>(ctx, dims, *x, in(kRnnW), in(kRnnR), in(kRnnB), seq_lens, initial_h,
                      initial_c, in(kRnnP));
  });
  if (!handled) {
    return ctx.error(ErrorCode::kNotImplemented,
                     "dtype " + std::string(dtype_name(x->dtype())) + " is not supported");
  }
  return st;
}

template <class T>
Status RnnKernel::run_typed(KernelContext& ctx, const RnnDims& dims, const Tensor& x,
                            const Tensor* w, const Tensor* r, const Tensor* b,
                            const Tensor* seq_lens, const Tensor* initial_h,
                            const Tensor* initial_c, const Tensor* p) const {
  using C = compute_t<T>;
  RunGeometry g;
  g.D = dims.directions;
  g.N = dims.batch;
  g.S = dims.seq_length;
  g.I = dims.input_size;
  g.H = dims.hidden;
  g.GH = spec_.num_gates() * dims.hidden;
  g.layout0 = spec_.layout == 0;
  g.lstm = spec_.cell == RnnCell::kLstm;

  const bool want_y = ctx.output_requested(kRnnY);
  const bool want_yh = ctx.output_requested(kRnnYh);
  const bool want_yc = g.lstm && ctx.output_requested(kRnnYc);
  if (!want_y && !want_yh && !want_yc) return ok_status();

  const int64_t xw_size = checked_product({g.S, g.N, g.GH});
  const int64_t y_size = checked_product({g.S, g.D, g.N, g.H});
  if (xw_size < 0 || y_size < 0 || checked_product({g.N, g.GH}) < 0) {
    return ctx.error(ErrorCode::kInvalidArgument, "sizes overflow: T=" + std::to_string(g.S) +
                                                      ", N=" + std::to_string(g.N) +
                                                      ", hidden_size=" + std::to_string(g.H));
  }
  RunOutputs<T> out;
  RECUR_RETURN_IF_ERROR(allocate_outputs(ctx, g, x.dtype(), want_y, want_yh, want_yc, &out));
  const SequenceLengths sl = sequence_lengths(seq_lens, g.N, g.S);

  PackedWeights<C> local;
  const WeightView<C> wv = weights_for_run<T, C>(dims, w, r, b, p, &local);

  const int64_t x_size = std::is_same_v<T, C> ? 0 : x.numel();
  Workspace<C> ws;
  RECUR_RETURN_IF_ERROR(allocate_workspace(ctx, g, x_size, xw_size, &ws));
  const C* xin = input_in_compute_type<T, C>(x, x_size, ws.xc);

  if (out.y && !sl.all_full) std::fill(out.y, out.y + y_size, from_compute<T>(C(0)));
  const T* h0 = initial_h ? initial_h->data<T>() : nullptr;
  const T* c0 = initial_c ? initial_c->data<T>() : nullptr;
  for (int64_t d = 0; d < g.D; ++d) {
    RECUR_RETURN_IF_ERROR(project_inputs(ctx, g, wv, d, xin, ws.xw));
    load_initial_state(g, d, h0, c0, ws.h, ws.c);
    RECUR_RETURN_IF_ERROR(run_direction(ctx, g, d, wv, sl, ws, out.y));
    write_final_state(g, d, sl.lens, ws.h, ws.c, out.yh, out.yc);
  }
  return ok_status();
}

template <class T, class C>
WeightView<C> RnnKernel::weights_for_run(const RnnDims& dims, const Tensor* w, const Tensor* r,
                                         const Tensor* b, const Tensor* p,
                                         PackedWeights<C>* local) const {
  const unsigned missing = kAllParts & ~packed_parts_;
  if (missing) pack_weights<T, C>(spec_, dims, missing, w, r, b, p, local);
  if (missing & (kPackW | kPackR)) count_run_time_repack();
  const PackedWeights<C>& pre = packed<C>();
  auto pick = [&](unsigned part, const std::vector<C>& mine, const std::vector<C>& theirs) {
    return data_or_null((packed_parts_ & part) ? mine : theirs);
  };
  WeightView<C> wv;
  wv.wt = pick(kPackW, pre.wt, local->wt);
  wv.rt = pick(kPackR, pre.rt, local->rt);
  wv.bias = pick(kPackB, pre.bias, local->bias);
  wv.rbh = pick(kPackB, pre.rbh, local->rbh);
  wv.p = pick(kPackP, pre.p, local->p);
  return wv;
}

template <class T, class C>
Status RnnKernel::run_direction(const KernelContext& ctx, const RunGeometry& g, int64_t d,
                                const WeightView<C>& wv, const SequenceLengths& sl,
                                Workspace<C>& ws, T* yd) const {
  const int64_t N = g.N, H = g.H, GH = g.GH;
  const bool reverse = spec_.direction == RnnDirection::kReverse ||
                       (spec_.direction == RnnDirection::kBidirectional && d == 1);
  StepArgs<C> args;
  args.spec = &spec_;
  args.dir = static_cast<int>(d);
  args.batch = N;
  args.hidden = H;
  args.xw_rows = ws.xw_rows().data();
  args.active = ws.active().data();
  args.rt = wv.rt + d * H * GH;
  args.rbh = wv.rbh ? wv.rbh + d * H : nullptr;
  args.p = wv.p ? wv.p + d * 3 * H : nullptr;
  args.h = ws.h;
  args.c = g.lstm ? ws.c : nullptr;
  args.gates = ws.gates;
  args.scratch = ws.scratch;

  // Step s reads time s of each sequence going forward, and time len-1-s going backward,
  // so that the reverse direction starts from each sequence's own last valid step.
  const auto& lens = sl.lens;
  for (int64_t s = 0; s < sl.max_len; ++s) {
    RECUR_RETURN_IF_ERROR(ctx.check_cancelled("time step", s));
    for (int64_t n = 0; n < N; ++n) {
      const int64_t len = lens[static_cast<size_t>(n)];
      const bool on = s < len;
      ws.active()[static_cast<size_t>(n)] = on;
      if (!on) {
        ws.xw_rows()[static_cast<size_t>(n)] = nullptr;
        continue;
      }
      const int64_t t = reverse ? len - 1 - s : s;
      ws.xw_rows()[static_cast<size_t>(n)] = ws.xw + g.x_row(t, n) * GH;
    }
    if constexpr (std::is_same_v<C, float>) {
      ops_.step_float(args);
    } else {
      ops_.step_double(args);
    }
    if (!yd) continue;
    for (int64_t n = 0; n < N; ++n) {
      if (!ws.active()[static_cast<size_t>(n)]) continue;
      const int64_t len = lens[static_cast<size_t>(n)];
      const int64_t t = reverse ? len - 1 - s : s;
      T* dst = yd + g.y_at(t, d, n);
      for (int64_t j = 0; j < H; ++j) dst[j] = from_compute<T>(ws.h[n * H + j]);
    }
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> create_rnn_kernel(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, RnnSpec::parse(ctx.node()));
  const CellOps ops = spec.cell == RnnCell::kLstm  ? lstm_cell_ops()
                      : spec.cell == RnnCell::kGru ? gru_cell_ops()
                                                   : rnn_cell_ops();
  auto k = std::make_unique<RnnKernel>(std::move(spec), ops);
  k->prepack(ctx);
  return std::unique_ptr<Kernel>(std::move(k));
}

void register_rnn_op(Registrar& r, const char* op_type) {
  r.add({.op_type = op_type, .since = 1, .create = create_rnn_kernel}, infer_rnn);
}

}  // namespace recur::reference::rnn
