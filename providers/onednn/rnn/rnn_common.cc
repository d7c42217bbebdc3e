#include "providers/onednn/rnn/rnn_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

#include "converters/onednn_weights.h"
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/rnn/candidate_race.h"

namespace recur::onednn {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

// --- Claims ------------------------------------------------------------------------------

}  // namespace

Claim claim_rnn_common(const Node& node, const Graph& graph, const RnnSpec& spec) {
  if (node.has_input(kRnnX)) {
    const DType dt = graph.value(node.inputs[kRnnX]).type.dtype;
    if (dt != DType::kFloat32 && dt != DType::kUndefined) {
      return Claim::decline("oneDNN RNN primitives run float32 here, X is " +
                            std::string(dtype_name(dt)));
    }
  }
  if (spec.clip) {
    return Claim::decline("clip=" + std::to_string(*spec.clip) +
                          ": oneDNN's RNN primitives cannot bound the gate pre-activations");
  }
  // An input size of 0 (W is [D, G*H, 0]) is valid ONNX that oneDNN's primitives cannot take.
  if (node.has_input(kRnnW)) {
    const TypeInfo& w = graph.value(node.inputs[kRnnW]).type;
    if (w.shape && w.shape->size() == 3 && (*w.shape)[2].is_fixed() && (*w.shape)[2].value == 0) {
      return Claim::decline("input size 0: oneDNN's RNN primitives need a positive input size");
    }
  }
  return Claim::accept();
}

Claim claim_default_activations(const RnnSpec& spec, const char* fixed) {
  if (spec.default_activations()) return Claim::accept();
  std::string names;
  for (const auto& a : spec.activations) {
    if (!names.empty()) names += ',';
    names += a.name();
  }
  const char* cell = spec.cell == RnnCell::kLstm ? "LSTM" : "GRU";
  return Claim::decline(std::string("non-default ") + cell + " activations (" + names +
                        "): oneDNN's " + cell + " is fixed to " + fixed);
}

Claim claim_alpha_beta(const Node& node, const RnnSpec& spec) {
  // After the activation checks the only parameterised activation an RNN can have is
  // LeakyRelu, whose alpha oneDNN takes as the relu's negative slope.
  if (spec.alpha_beta_given && (spec.cell != RnnCell::kRnn || node.attr("activation_beta"))) {
    return Claim::decline(
        "activation_alpha/activation_beta: oneDNN takes only LeakyRelu's alpha on RNN");
  }
  return Claim::accept();
}

namespace {

// --- The kernel ----------------------------------------------------------------------------

enum class Mode : uint8_t { kLayout0, kLayout1, kPacked };

// One primitive: a slice of N rows out of ld_n (the whole batch, which sets the strides), one
// direction, the memory layout, which states are read and written, and the implementation
// (weights format and thread count). Cell, dtype (float32) and sizes are fixed per node.
struct ShapeKey {
  int64_t T = 0, N = 0, I = 0, H = 0, ld_n = 0;
  bool reverse = false;
  Mode mode = Mode::kLayout0;
  bool src_iter = false, dst_iter = false;
  int act_dir = 0;  // whose activations (a bidirectional RNN may have two sets)
  bool any = false;
  int threads = 1;
  auto tie() const {
    return std::tie(T, N, I, H, ld_n, reverse, mode, src_iter, dst_iter, act_dir, any, threads);
  }
  bool operator<(const ShapeKey& o) const { return tie() < o.tie(); }
};

// Implementation and threading are chosen per bucket of shapes: N, and T in three classes;
// the time segments of unequal sequence lengths have buckets of their own.
struct BucketKey {
  int64_t N = 0, I = 0, H = 0;
  int t_class = 0;
  bool segments = false;
  auto tie() const { return std::tie(N, I, H, t_class, segments); }
  bool operator<(const BucketKey& o) const { return tie() < o.tie(); }
};
int t_class(int64_t T) { return T <= 1 ? 0 : T <= 16 ? 1 : 2; }

// How one RNN node runs: the weights format, and either `threads` OpenMP threads inside each
// primitive, or `split` independent jobs (batch slices, or the two directions) run in parallel
// on one thread each. A split has no barrier per time step, so it also holds up when the
// machine is busy.
struct Choice {
  bool any = false;  // format_tag::any weights (brgemm for LSTM/RNN) rather than explicit ldigo
  int threads = 1;
  int split = 1;
  std::string describe(int64_t D) const {
    std::string s = std::string("weights ") + (any ? "any" : "ldigo") + ", ";
    if (split > 1) {
      return s + std::to_string(split) + " threads (" +
             (D == 2 && split == 2 ? "directions in parallel" : "batch split") + ")";
    }
    return s + std::to_string(threads) + (threads > 1 ? " threads (OpenMP)" : " thread");
  }
};

struct Plan {
  dnnl::primitive primitive;
  int threads = 1;
  std::string impl;
  RnnDescs descs;
  memory::desc scratchpad;
  size_t scratch_bytes = 0;
  // Constant weights in this primitive's format, per direction.
  std::vector<std::shared_ptr<AlignedBuffer>> weights_layer, weights_iter;
  // The memory objects of its executions, per direction.
  mutable ArgsPool args[2];
};

struct WeightBuf {
  memory::desc desc;
  std::shared_ptr<AlignedBuffer> buf;
};

// Per-run weights when W/R/B/P are graph inputs: ldigo, per direction.
struct RunWeights {
  std::vector<std::vector<float>> layer, iter, bias, peephole;
};

// One primitive execution of a run: direction d over rows [n0, n1).
struct Job {
  int d = 0;
  int64_t n0 = 0, n1 = 0;
};

// oneDNN 2.6 computes some RNN offsets in 32 bits and divides by the dimensions: a shape
// outside that range makes it crash rather than fail (a declared batch of 2^40 raised SIGFPE
// in primitive creation). Such shapes are refused here, with the reason.
Status check_onednn_rnn_shape(int64_t T, int64_t N, int64_t I, int64_t H, int64_t D, int64_t G) {
  if (T <= 0 || N <= 0 || I <= 0 || H <= 0) {
    return not_implemented(
        "the oneDNN RNN primitives need positive sizes, got T=" + std::to_string(T) +
        " N=" + std::to_string(N) + " I=" + std::to_string(I) + " H=" + std::to_string(H));
  }
  constexpr __int128 kLimit = std::numeric_limits<int32_t>::max();
  const __int128 t = T, n = N, i = I, h = H, d = D, g = G;
  for (const __int128 elems :
       {t * n * i, t * n * d * h, t * n * d * g * h, d * g * h * i, d * g * h * h}) {
    if (elems > kLimit) {
      return not_implemented("T=" + std::to_string(T) + " N=" + std::to_string(N) +
                             " I=" + std::to_string(I) + " H=" + std::to_string(H) +
                             " needs a buffer of more than 2^31 elements, beyond oneDNN's "
                             "32-bit RNN offsets");
    }
  }
  return ok_status();
}

std::vector<float> pattern(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>(static_cast<int>(i * 7919 % 17) - 8);
  return v;
}

// Runs f(i) for i in [0, n): with threads > 1 on the job pool, the caller included (each f
// runs its primitive single-threaded), else in order. Returns the first error.
template <class F>
Status run_parallel(size_t n, int threads, F&& f) {
  std::vector<Status> st(n);
  if (threads > 1 && n > 1) {
    run_jobs(n, threads - 1, [&](size_t i) { st[i] = f(i); });
  } else {
    for (size_t i = 0; i < n; ++i) {
      st[i] = f(i);
      if (!st[i].ok()) break;
    }
  }
  for (auto& s : st)
    if (!s.ok()) return s;
  return ok_status();
}

// A candidate set up for timing: its primitives and synthetic buffers, per job.
struct ProbeJob {
  RnnPd pd;
  RnnDescs descs;
  std::vector<float> x, y, h0, c0, hn, cn;
  std::shared_ptr<AlignedBuffer> wl, wi;
  std::unique_ptr<AlignedBuffer> scratch;
  std::unordered_map<int, memory> args;
};
struct ProbeSet {
  std::vector<ProbeJob> jobs;
  int parallel = 1;      // jobs run on this many threads (the job pool)
  int prim_threads = 1;  // OpenMP threads inside each primitive
  std::vector<float> bias, peep;
};
using ProbeWeights = std::vector<std::pair<memory::desc, std::shared_ptr<AlignedBuffer>>>;

class RnnKernel final : public Kernel {
 public:
  RnnKernel(const Node& node, RnnSpec spec, OnednnOptions opts)
      : node_(node), spec_(std::move(spec)), opts_(opts) {}

  Status init(CompileContext& ctx);
  Status run(KernelContext& ctx) const override;

 private:
  int64_t D() const { return spec_.num_directions(); }
  bool is_reverse(int d) const {
    return spec_.direction == RnnDirection::kReverse || (D() == 2 && d == 1);
  }
  bool has_peephole() const { return spec_.cell == RnnCell::kLstm && has_p_; }
  int act_dir(int d) const {
    return spec_.cell == RnnCell::kRnn && D() == 2 &&
                   !(spec_.activation(0, 0) == spec_.activation(1, 0))
               ? d
               : 0;
  }

  RnnDescs descs_for(const ShapeKey& k) const;
  RnnPd create_pd(const RnnDescs& d, int dir, bool reverse, int threads) const;
  Result<std::shared_ptr<const Plan>> get_plan(const ShapeKey& key) const;
  Result<std::shared_ptr<const Plan>> get_plan_locked(const ShapeKey& key) const;  // mu_ held
  Result<Choice> choose(const BucketKey& bucket, int64_t T, std::string* note) const;
  Result<Choice> choose_locked(const BucketKey& bucket, int64_t T, std::string* note) const;
  Result<std::unique_ptr<ProbeSet>> prepare_probe(const Choice& c, int64_t tp, int64_t N, int64_t I,
                                                  int64_t H, ProbeWeights& weights) const;
  Result<double> time_probe(ProbeSet& set) const;
  std::vector<Job> jobs_for(const Choice& c, int64_t N) const;
  Result<std::shared_ptr<AlignedBuffer>> weights_in(int d, bool layer,
                                                    const memory::desc& md) const;  // mu_ held
  void prune_formats() const;                                                       // mu_ held
  Status repack_run_weights(KernelContext& ctx, const Tensor* w, const Tensor* r, const Tensor* b,
                            const Tensor* p, int64_t I, int64_t H, RunWeights& rw) const;
  // The uniform-length path's plans, one per job.
  Result<std::vector<std::shared_ptr<const Plan>>> uniform_plans(const Choice& c,
                                                                 const std::vector<Job>& jobs,
                                                                 int64_t T, int64_t N, int64_t I,
                                                                 int64_t H, bool src_iter,
                                                                 bool dst_iter) const;

  struct Exec {
    const void* x = nullptr;
    const void* h0 = nullptr;
    const void* c0 = nullptr;
    void* y = nullptr;
    void* hn = nullptr;
    void* cn = nullptr;
  };
  Status execute(const Plan& plan, int d, const RunWeights* rw, const Exec& e) const;

  const Node& node_;
  RnnSpec spec_;
  OnednnOptions opts_;
  bool const_weights_ = false;
  bool has_b_ = false;
  bool has_p_ = false;
  OnednnRnnGeometry geom_;
  // Shape-only stand-ins for released inputs, so check_rnn_inputs can still check them.
  Tensor w_shape_, r_shape_, b_shape_, p_shape_;
  // Constant weights: bias and peephole (ldgo) per direction.
  std::vector<std::vector<float>> bias_, peephole_;

  mutable std::mutex mu_;
  // Per direction, weights_layer (true) and weights_iter (false): the formats held.
  mutable std::map<std::pair<int, bool>, std::vector<WeightBuf>> formats_;
  mutable std::map<ShapeKey, std::shared_ptr<const Plan>> plans_;
  mutable std::map<BucketKey, Choice> choices_;
  mutable ScratchPool scratch_;
};

RnnDescs RnnKernel::descs_for(const ShapeKey& k) const {
  const int64_t T = k.T, N = k.N, I = k.I, H = k.H, Dn = D(), L = k.ld_n;
  const int64_t G = geom_.gates(), Gb = geom_.bias_gates();
  RnnDescs d;
  memory::desc state;
  switch (k.mode) {
    case Mode::kLayout0:  // X [T, L, I], Y [T, D, L, H], states [D, L, H]
      d.src_layer = memory::desc({T, N, I}, DT::f32, memory::dims{L * I, I, 1});
      d.dst_layer = memory::desc({T, N, H}, DT::f32, memory::dims{Dn * L * H, H, 1});
      state = memory::desc({1, 1, N, H}, DT::f32, memory::dims{Dn * L * H, L * H, H, 1});
      break;
    case Mode::kLayout1:  // X [L, T, I], Y [L, T, D, H], states [L, D, H]
      d.src_layer = memory::desc({T, N, I}, DT::f32, memory::dims{I, T * I, 1});
      d.dst_layer = memory::desc({T, N, H}, DT::f32, memory::dims{Dn * H, T * Dn * H, 1});
      state = memory::desc({1, 1, N, H}, DT::f32, memory::dims{L * Dn * H, H, Dn * H, 1});
      break;
    case Mode::kPacked:
      d.src_layer = memory::desc({T, N, I}, DT::f32, Tag::tnc);
      d.dst_layer = memory::desc({T, N, H}, DT::f32, Tag::tnc);
      state = memory::desc({1, 1, N, H}, DT::f32, Tag::ldnc);
      break;
  }
  const bool lstm = spec_.cell == RnnCell::kLstm;
  if (k.src_iter) {
    d.src_iter = state;
    if (lstm) d.src_iter_c = state;
  }
  if (k.dst_iter) {
    d.dst_iter = state;
    if (lstm) d.dst_iter_c = state;
  }
  const Tag wtag = k.any ? Tag::any : Tag::ldigo;
  d.weights_layer = memory::desc({1, 1, I, G, H}, DT::f32, wtag);
  d.weights_iter = memory::desc({1, 1, H, G, H}, DT::f32, wtag);
  d.bias = memory::desc({1, 1, Gb, H}, DT::f32, Tag::ldgo);
  if (has_peephole()) d.weights_peephole = memory::desc({1, 1, 3, H}, DT::f32, Tag::ldgo);
  return d;
}

RnnPd RnnKernel::create_pd(const RnnDescs& d, int dir, bool reverse, int threads) const {
  ThreadScope scope(threads);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto direction = reverse ? dnnl::rnn_direction::unidirectional_right2left
                                 : dnnl::rnn_direction::unidirectional_left2right;
  switch (spec_.cell) {
    case RnnCell::kLstm:
      return create_lstm_pd(spec_, dir, d, direction, attr);
    case RnnCell::kGru:
      return create_gru_pd(spec_, dir, d, direction, attr);
    case RnnCell::kRnn:
      break;
  }
  return create_vanilla_pd(spec_, dir, d, direction, attr);
}

Result<std::shared_ptr<AlignedBuffer>> RnnKernel::weights_in(int d, bool layer,
                                                             const memory::desc& md) const {
  auto& held = formats_[{d, layer}];
  for (const auto& w : held)
    if (w.desc == md) return w.buf;
  if (held.empty()) return internal_error(node_.describe() + ": no weights to reorder from");
  auto buf = std::make_shared<AlignedBuffer>(md.get_size());
  const WeightBuf& from = held.front();
  auto reorder = [&](const memory::desc& sd, const void* src_data, const memory::desc& dd,
                     void* dst_data) {
    ThreadScope scope(opts_.max_threads);
    memory src = make_memory(sd, src_data);
    memory dst = make_memory(dd, dst_data);
    dnnl::reorder(src, dst).execute(thread_stream(), src, dst);
    thread_stream().wait();
  };
  Status st = dnnl_try(node_.describe() + ": weights reorder",
                       [&] { reorder(from.desc, from.buf->data, md, buf->data); });
  if (!st.ok()) {
    // oneDNN has no reorder between some pairs of formats (a padded blocked one into
    // rnn_packed): go through plain ldigo.
    const memory::dims& dims = md.dims();
    const memory::desc plain(dims, DT::f32, Tag::ldigo);
    AlignedBuffer tmp(plain.get_size());
    st = dnnl_try(node_.describe() + ": weights reorder", [&] {
      reorder(from.desc, from.buf->data, plain, tmp.data);
      reorder(plain, tmp.data, md, buf->data);
    });
  }
  RECUR_RETURN_IF_ERROR(st);
  held.push_back({md, buf});
  return buf;
}

// Drops the weight formats that no cached primitive uses, keeping one to reorder new formats
// from: in steady state one copy of the weights is held per format in use.
void RnnKernel::prune_formats() const {
  for (auto& [key, held] : formats_) {
    const auto [d, layer] = key;
    auto used = [&](const WeightBuf& w) {
      for (const auto& [k, p] : plans_) {
        const auto& bufs = layer ? p->weights_layer : p->weights_iter;
        if (static_cast<size_t>(d) < bufs.size() && bufs[static_cast<size_t>(d)] == w.buf)
          return true;
      }
      return false;
    };
    // A packed format (rnn_packed) cannot be reordered from: keep a blocked one as the source.
    auto blocked = [](const WeightBuf& w) { return w.desc.data.format_kind == dnnl_blocked; };
    std::vector<WeightBuf> keep;
    for (const auto& w : held)
      if (used(w)) keep.push_back(w);
    if (std::none_of(keep.begin(), keep.end(), blocked)) {
      auto src = std::find_if(held.begin(), held.end(), blocked);
      if (src != held.end()) keep.insert(keep.begin(), *src);
    }
    std::stable_partition(keep.begin(), keep.end(), blocked);
    held = std::move(keep);
  }
}

std::vector<Job> RnnKernel::jobs_for(const Choice& c, int64_t N) const {
  std::vector<Job> jobs;
  int64_t slices = 1;
  if (c.split > 1) slices = std::min<int64_t>(N, D() == 2 ? std::max(1, c.split / 2) : c.split);
  for (int d = 0; d < D(); ++d) {
    for (int64_t s = 0; s < slices; ++s) jobs.push_back({d, N * s / slices, N * (s + 1) / slices});
  }
  return jobs;
}

// Candidate `c` set up on a probe of tp steps and N rows, with synthetic data (the timing does
// not depend on values), ready to be timed pass after pass. `weights` holds zero weights per
// format, shared between candidates.
Result<std::unique_ptr<ProbeSet>> RnnKernel::prepare_probe(const Choice& c, int64_t tp, int64_t N,
                                                           int64_t I, int64_t H,
                                                           ProbeWeights& weights) const {
  const std::vector<Job> jobs = jobs_for(c, N);
  auto set = std::make_unique<ProbeSet>();
  set->jobs.resize(jobs.size());
  set->parallel = c.split > 1 ? c.split : 1;
  set->prim_threads = c.split > 1 ? 1 : c.threads;
  set->bias = pattern(static_cast<size_t>(geom_.bias_gates() * H), 0.01f);
  set->peep = pattern(static_cast<size_t>(3 * H), 0.01f);
  // Some formats (rnn_packed) carry a header: fill them by a reorder, never by memset. One
  // thread: an OpenMP team would keep spinning on the core a split's helper needs.
  auto weights_for = [&](const memory::desc& md, int64_t in) {
    for (auto& [d, b] : weights)
      if (d == md) return b;
    auto buf = std::make_shared<AlignedBuffer>(md.get_size());
    const memory::desc plain({1, 1, in, geom_.gates(), H}, DT::f32, Tag::ldigo);
    std::vector<float> zeros(plain.get_size() / sizeof(float), 0.0f);
    ThreadScope scope(1);
    memory src = make_memory(plain, zeros.data());
    memory dst = make_memory(md, buf->data);
    dnnl::reorder(src, dst).execute(thread_stream(), src, dst);
    thread_stream().wait();
    weights.emplace_back(md, buf);
    return buf;
  };
  Status st = dnnl_try(node_.describe() + ": probe", [&] {
    for (size_t i = 0; i < jobs.size(); ++i) {
      ProbeJob& p = set->jobs[i];
      const int64_t n = jobs[i].n1 - jobs[i].n0;
      const ShapeKey k{
          tp, n, I, H, n, false, Mode::kPacked, true, true, 0, c.any, set->prim_threads};
      p.descs = descs_for(k);
      p.pd = create_pd(p.descs, 0, false, set->prim_threads);
      p.x = pattern(static_cast<size_t>(tp * n * I), 0.05f);
      p.y.resize(static_cast<size_t>(tp * n * H));
      p.h0 = pattern(static_cast<size_t>(n * H), 0.05f);
      p.c0 = p.h0;
      p.hn.resize(p.h0.size());
      p.cn.resize(p.h0.size());
      p.wl = weights_for(p.pd.weights_layer, I);
      p.wi = weights_for(p.pd.weights_iter, H);
      p.scratch = std::make_unique<AlignedBuffer>(p.pd.scratchpad.get_size());
      p.args = {{DNNL_ARG_SRC_LAYER, make_memory(p.descs.src_layer, p.x.data())},
                {DNNL_ARG_SRC_ITER, make_memory(p.descs.src_iter, p.h0.data())},
                {DNNL_ARG_WEIGHTS_LAYER, make_memory(p.pd.weights_layer, p.wl->data)},
                {DNNL_ARG_WEIGHTS_ITER, make_memory(p.pd.weights_iter, p.wi->data)},
                {DNNL_ARG_BIAS, make_memory(p.descs.bias, set->bias.data())},
                {DNNL_ARG_DST_LAYER, make_memory(p.descs.dst_layer, p.y.data())},
                {DNNL_ARG_DST_ITER, make_memory(p.descs.dst_iter, p.hn.data())},
                {DNNL_ARG_SCRATCHPAD, make_memory(p.pd.scratchpad, p.scratch->data)}};
      if (spec_.cell == RnnCell::kLstm) {
        p.args[DNNL_ARG_SRC_ITER_C] = make_memory(p.descs.src_iter_c, p.c0.data());
        p.args[DNNL_ARG_DST_ITER_C] = make_memory(p.descs.dst_iter_c, p.cn.data());
        if (has_peephole())
          p.args[DNNL_ARG_WEIGHTS_PEEPHOLE] =
              make_memory(p.descs.weights_peephole, set->peep.data());
      }
    }
  });
  RECUR_RETURN_IF_ERROR(st);
  return set;
}

// The time of one pass (every direction) of a prepared candidate.
Result<double> RnnKernel::time_probe(ProbeSet& set) const {
  auto once = [&](size_t i) {
    return dnnl_try(node_.describe() + ": probe run", [&] {
      ThreadScope scope(set.prim_threads);
      set.jobs[i].pd.primitive.execute(thread_stream(), set.jobs[i].args);
      thread_stream().wait();
    });
  };
  const auto t0 = std::chrono::steady_clock::now();
  RECUR_RETURN_IF_ERROR(run_parallel(set.jobs.size(), set.parallel, once));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Result<Choice> RnnKernel::choose(const BucketKey& bucket, int64_t T, std::string* note) const {
  std::lock_guard<std::mutex> lock(mu_);
  return choose_locked(bucket, T, note);
}

Result<Choice> RnnKernel::choose_locked(const BucketKey& bucket, int64_t T,
                                        std::string* note) const {
  auto it = choices_.find(bucket);
  if (it != choices_.end()) return it->second;
  const int64_t N = bucket.N, I = bucket.I, H = bucket.H;

  const int maxt = std::max(1, opts_.max_threads);
  std::vector<bool> formats;
  if (!const_weights_ || opts_.impl == ImplChoice::kLdigo) {
    formats = {false};
  } else if (opts_.impl == ImplChoice::kAny) {
    formats = {true};
  } else {
    formats = {false, true};
  }
  // Threads cannot pay for their synchronisation on a pass this small.
  const double pass_flops = 2.0 * static_cast<double>(N * T * D()) *
                            static_cast<double>(geom_.gates() * H) * static_cast<double>(I + H);
  const bool tiny = pass_flops < 1e6;
  const bool can_split = maxt > 1 && !bucket.segments && (N >= 2 || D() == 2);
  std::vector<Choice> threading;  // any is filled in below
  auto add = [&](Choice c) { threading.push_back(c); };
  switch (opts_.threading) {
    case ThreadingChoice::kSingle:
      add({false, 1, 1});
      break;
    case ThreadingChoice::kOmp:
      add({false, maxt, 1});
      break;
    case ThreadingChoice::kSplit:
      add(can_split ? Choice{false, 1, maxt} : Choice{false, maxt, 1});
      break;
    case ThreadingChoice::kAuto:
      add({false, 1, 1});
      if (can_split && !tiny) add({false, 1, maxt});
      if (maxt > 1 && !tiny) add({false, maxt, 1});
      break;
  }
  std::vector<Choice> cands;
  for (const Choice& t : threading)
    for (bool any : formats) cands.push_back({any, t.threads, t.split});

  Choice best;
  std::string detail;
  if (!opts_.tune || cands.size() == 1) {
    // Without timing: FACTS.md's measurements (brgemm loses at small batches on one thread).
    best = cands.front();
    if (formats.size() > 1) best.any = N >= 8;
    if (opts_.threading == ThreadingChoice::kAuto && maxt > 1 && N > 1 && !tiny) {
      best.threads = can_split ? 1 : maxt;
      best.split = can_split ? maxt : 1;
    }
    detail = "untimed default";
  } else {
    // A probe of the bucket's shape, T capped so that a pass stays short.
    const double step_flops = 2.0 * static_cast<double>(N) *
                              static_cast<double>(geom_.gates() * H) * static_cast<double>(I + H) *
                              static_cast<double>(D());
    int64_t tp = T;
    const double budget = 2e9;
    if (step_flops * static_cast<double>(tp) > budget) {
      tp = std::min(T, std::max<int64_t>(8, static_cast<int64_t>(budget / step_flops)));
    }
    auto median_of = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    // Times the candidates still `ok` at tp steps into `med` (candidate_race.h); `reps`
    // passes each.
    auto time_candidates = [&](int64_t tp, std::vector<bool>& ok, std::vector<double>& med,
                               int& reps) -> Status {
      ProbeWeights probe_weights;
      std::vector<std::unique_ptr<ProbeSet>> sets(cands.size());
      std::vector<RaceCandidate> race(cands.size());
      for (size_t i = 0; i < cands.size(); ++i) {
        race[i].single = cands[i].threads == 1 && cands[i].split == 1;
        race[i].ok = ok[i];
      }
      RaceCallbacks cb;
      // The warm-up pass also pays one-time costs (oneDNN generates its gemm kernels on first
      // use, OpenMP starts its threads) and weeds out failures.
      cb.warm_up = [&](size_t i) -> Result<double> {
        RECUR_ASSIGN_OR_RETURN(sets[i], prepare_probe(cands[i], tp, N, I, H, probe_weights));
        return time_probe(*sets[i]);
      };
      cb.pass = [&](size_t i) { return time_probe(*sets[i]); };
      cb.now_ms = [] {
        return std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
      };
      RECUR_ASSIGN_OR_RETURN(RaceResult r, race_candidates(std::move(race), cb));
      ok = std::move(r.ok);
      med = std::move(r.med);
      reps = r.reps;
      return ok_status();
    };
    auto describe_times = [&](const std::vector<bool>& ok, const std::vector<double>& med,
                              int64_t tp, int reps) {
      std::string d;
      char buf[160];
      for (size_t i = 0; i < cands.size(); ++i) {
        if (!ok[i]) continue;
        const Choice& c = cands[i];
        std::snprintf(buf, sizeof buf, "%s%s/%s %.3g ms", d.empty() ? "" : ", ",
                      c.any ? "any" : "ldigo",
                      c.split > 1 ? ("split" + std::to_string(c.split)).c_str()
                                  : (std::to_string(c.threads) + "t").c_str(),
                      med[i]);
        d += buf;
      }
      return "median of " + std::to_string(reps) + " at T=" + std::to_string(tp) + ": " + d;
    };
    auto is_omp = [](const Choice& c) { return c.threads > 1; };
    auto is_split = [](const Choice& c) { return c.split > 1; };
    auto is_single = [](const Choice& c) { return c.threads == 1 && c.split == 1; };

    std::vector<bool> ok(cands.size(), true);
    // OpenMP candidates first pass a two-step check against one thread: on a busy machine
    // their first full pass alone could take seconds (a stall at every barrier of every step).
    if (tp > 2) {
      std::vector<bool> check(cands.size(), false);
      size_t single = cands.size();
      for (size_t i = 0; i < cands.size(); ++i) {
        if (is_omp(cands[i])) check[i] = true;
        if (is_single(cands[i]) && single == cands.size()) single = i;
      }
      if (single != cands.size() && std::count(check.begin(), check.end(), true) > 0) {
        check[single] = true;
        ProbeWeights w;
        std::vector<double> t(cands.size(), 1e300);
        for (size_t i = 0; i < cands.size(); ++i) {
          if (!check[i]) continue;
          auto set = prepare_probe(cands[i], 2, N, I, H, w);
          if (!set.ok()) continue;
          std::vector<double> v;
          for (int k = 0; k < 4; ++k) {
            auto ms = time_probe(**set);
            if (ms.ok()) v.push_back(*ms);
          }
          if (!v.empty()) t[i] = median_of(v);
        }
        for (size_t i = 0; i < cands.size(); ++i) {
          if (is_omp(cands[i]) && t[i] > 1.5 * t[single]) ok[i] = false;
        }
      }
    }
    std::vector<double> med;
    int reps = 0;
    RECUR_RETURN_IF_ERROR(time_candidates(tp, ok, med, reps));
    detail = describe_times(ok, med, tp, reps);
    auto best_where = [&](auto pred) {
      size_t b = cands.size();
      for (size_t i = 0; i < cands.size(); ++i)
        if (ok[i] && pred(cands[i]) && (b == cands.size() || med[i] < med[b])) b = i;
      return b;
    };
    // A short probe misses what only a long sequence shows: a split's jobs each stream every
    // weight matrix and its own gate buffers through the shared caches, which the OpenMP
    // threads of one primitive share (lstm_large: equal at T=8, OpenMP 25% faster at T=100).
    // The best of each kind of threading, if close, is timed again at a longer T.
    int64_t t_timed = tp;
    if (tp < T) {
      double best_med = *std::min_element(med.begin(), med.end());
      std::vector<bool> finalists(cands.size(), false);
      int count = 0;
      for (auto kind : {+[](const Choice& c) { return c.threads == 1 && c.split == 1; },
                        +[](const Choice& c) { return c.split > 1; },
                        +[](const Choice& c) { return c.threads > 1; }}) {
        const size_t b = best_where(kind);
        if (b != cands.size() && med[b] <= 1.3 * best_med) {
          finalists[b] = true;
          ++count;
        }
      }
      // Only OpenMP against a split or one thread differs with T that way.
      const size_t omp_best = best_where(is_omp);
      if (count >= 2 && omp_best != cands.size() && finalists[omp_best]) {
        const int64_t tp2 = std::min(T, 4 * tp);
        std::vector<double> med2;
        int reps2 = 0;
        RECUR_RETURN_IF_ERROR(time_candidates(tp2, finalists, med2, reps2));
        if (std::count(finalists.begin(), finalists.end(), true) > 0) {
          ok = finalists;
          med = med2;
          t_timed = tp2;
          detail += "; then " + describe_times(ok, med, tp2, reps2);
        }
      }
    }
    size_t win = cands.size();
    for (size_t i = 0; i < cands.size(); ++i)
      if (ok[i] && (win == cands.size() || med[i] < med[win])) win = i;
    if (win == cands.size()) {
      return internal_error(node_.describe() + ": no oneDNN RNN implementation ran");
    }
    // OpenMP threads inside the primitive synchronise several times per time step, and on a
    // busy machine each wait can last a scheduler tick (measured: 1.5 s instead of 22 ms for
    // lstm_med). Unless a step is long enough (1 ms) for such a wait to matter little, they
    // must beat every other candidate by 15%, else by 5%.
    if (is_omp(cands[win])) {
      const size_t other = best_where([&](const Choice& c) { return !is_omp(c); });
      const double step_ms = med[win] / static_cast<double>(t_timed);
      const double need = step_ms >= 1.0 ? 0.95 : 0.85;
      if (other != cands.size() && med[win] > need * med[other]) win = other;
    }
    if (!is_omp(cands[win])) {
      // A split costs at worst about one thread: the caller runs every job a helper has not
      // started. So it is kept unless clearly slower than one thread, which a probe taken
      // while another process held the second core would show as a tie.
      const size_t split = best_where(is_split);
      const size_t single = best_where(is_single);
      if (split != cands.size() && (single == cands.size() || med[split] <= 1.05 * med[single])) {
        win = split;
        // Steps of a millisecond or more: OpenMP's barriers cost little there, while each job
        // of a split streams every weight matrix through the shared cache, which a probe at a
        // shorter T understates (lstm_large at 2 threads: equal in the probe, OpenMP 15%
        // faster in runs). The split must then be clearly faster.
        const size_t omp = best_where(is_omp);
        if (omp != cands.size() && med[omp] / static_cast<double>(t_timed) >= 1.0 &&
            med[omp] <= 1.05 * med[split])
          win = omp;
      } else if (single != cands.size()) {
        win = single;
      }
    }
    best = cands[win];
  }
  choices_[bucket] = best;
  if (note || opts_.verbose) {
    std::string text = std::string(spec_.cell_name()) + " N=" + std::to_string(N) + " T~" +
                       std::to_string(T) + (bucket.segments ? " (segments)" : "") + ": " +
                       best.describe(D()) + " (" + detail + ")";
    if (note) *note = text;
    if (opts_.verbose) {
      std::fprintf(stderr, "recur onednn: %s: %s\n", node_.name.c_str(), text.c_str());
    }
  }
  return best;
}

Result<std::shared_ptr<const Plan>> RnnKernel::get_plan(const ShapeKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return get_plan_locked(key);
}

Result<std::shared_ptr<const Plan>> RnnKernel::get_plan_locked(const ShapeKey& key) const {
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto plan = std::make_shared<Plan>();
  plan->threads = key.threads;
  plan->descs = descs_for(key);
  RnnPd pd;
  Status st =
      dnnl_try(node_.describe() + ": creating the " + std::string(spec_.cell_name()) + " primitive",
               [&] { pd = create_pd(plan->descs, key.act_dir, key.reverse, key.threads); });
  RECUR_RETURN_IF_ERROR(st);
  plan->primitive = pd.primitive;
  plan->impl = pd.impl;
  plan->descs.weights_layer = pd.weights_layer;
  plan->descs.weights_iter = pd.weights_iter;
  plan->scratchpad = pd.scratchpad;
  plan->scratch_bytes = pd.scratchpad.get_size();
  if (const_weights_) {
    for (int d = 0; d < D(); ++d) {
      RECUR_ASSIGN_OR_RETURN(auto wl, weights_in(d, true, pd.weights_layer));
      RECUR_ASSIGN_OR_RETURN(auto wi, weights_in(d, false, pd.weights_iter));
      plan->weights_layer.push_back(std::move(wl));
      plan->weights_iter.push_back(std::move(wi));
    }
  }
  if (plans_.size() >= 256) plans_.erase(plans_.begin());
  plans_[key] = plan;
  if (const_weights_) prune_formats();
  return std::shared_ptr<const Plan>(plan);
}

Result<std::vector<std::shared_ptr<const Plan>>> RnnKernel::uniform_plans(
    const Choice& c, const std::vector<Job>& jobs, int64_t T, int64_t N, int64_t I, int64_t H,
    bool src_iter, bool dst_iter) const {
  std::vector<std::shared_ptr<const Plan>> plans;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Job& j : jobs) {
    const ShapeKey key{T,
                       j.n1 - j.n0,
                       I,
                       H,
                       N,
                       is_reverse(j.d),
                       spec_.layout == 0 ? Mode::kLayout0 : Mode::kLayout1,
                       src_iter,
                       dst_iter,
                       act_dir(j.d),
                       c.any,
                       c.split > 1 ? 1 : c.threads};
    RECUR_ASSIGN_OR_RETURN(auto plan, get_plan_locked(key));
    plans.push_back(std::move(plan));
  }
  return plans;
}

Status RnnKernel::execute(const Plan& plan, int d, const RunWeights* rw, const Exec& e) const {
  const RnnDescs& ds = plan.descs;
  const size_t ud = static_cast<size_t>(d);
  const void* wl = rw ? rw->layer[ud].data() : plan.weights_layer[ud]->data;
  const void* wi = rw ? rw->iter[ud].data() : plan.weights_iter[ud]->data;
  const void* b = rw ? rw->bias[ud].data() : bias_[ud].data();
  ScratchPool::Lease scratch = scratch_.acquire(plan.scratch_bytes);
  ArgsPool::Lease args = plan.args[ud].acquire();
  return dnnl_try(node_.describe(), [&] {
    args.bind(DNNL_ARG_SRC_LAYER, ds.src_layer, e.x);
    args.bind(DNNL_ARG_WEIGHTS_LAYER, ds.weights_layer, wl);
    args.bind(DNNL_ARG_WEIGHTS_ITER, ds.weights_iter, wi);
    args.bind(DNNL_ARG_BIAS, ds.bias, b);
    args.bind(DNNL_ARG_DST_LAYER, ds.dst_layer, e.y);
    args.bind(DNNL_ARG_SCRATCHPAD, plan.scratchpad, scratch.data());
    if (!ds.src_iter.is_zero()) {
      args.bind(DNNL_ARG_SRC_ITER, ds.src_iter, e.h0);
      if (spec_.cell == RnnCell::kLstm) args.bind(DNNL_ARG_SRC_ITER_C, ds.src_iter_c, e.c0);
    }
    if (!ds.dst_iter.is_zero()) {
      args.bind(DNNL_ARG_DST_ITER, ds.dst_iter, e.hn);
      if (spec_.cell == RnnCell::kLstm) args.bind(DNNL_ARG_DST_ITER_C, ds.dst_iter_c, e.cn);
    }
    if (has_peephole()) {
      const void* p = rw ? rw->peephole[ud].data() : peephole_[ud].data();
      args.bind(DNNL_ARG_WEIGHTS_PEEPHOLE, ds.weights_peephole, p);
    }
    ThreadScope scope(plan.threads);
    plan.primitive.execute(thread_stream(), args.args());
    thread_stream().wait();
  });
}

Status RnnKernel::init(CompileContext& ctx) {
  const Node& node = ctx.node();
  const Tensor* w = ctx.constant_input(kRnnW);
  const Tensor* r = ctx.constant_input(kRnnR);
  const Tensor* b = ctx.constant_input(kRnnB);
  const Tensor* p = ctx.constant_input(kRnnP);
  has_b_ = node.has_input(kRnnB);
  has_p_ = node.has_input(kRnnP);
  const_weights_ = w && r && (!has_b_ || b) && (!has_p_ || p);
  geom_ = OnednnRnnGeometry::of(spec_, 1, 1);
  if (!const_weights_) {
    std::string which;
    for (auto [i, name] :
         {std::pair<size_t, const char*>{kRnnW, "W"}, {kRnnR, "R"}, {kRnnB, "B"}, {kRnnP, "P"}}) {
      if (node.has_input(i) && !ctx.constant_input(i))
        which += (which.empty() ? "" : ", ") + std::string(name);
    }
    ctx.note(which +
             (which.find(',') == std::string::npos ? " is a graph input" : " are graph inputs") +
             ": weights repacked per run (explicit ldigo)");
    return ok_status();
  }
  // Check W, R, B and P against each other now, with a stand-in X of the right input size.
  for (const Tensor* t : {w, r, b, p}) {
    if (t && t->dtype() != DType::kFloat32) {
      return ctx.error(ErrorCode::kNotImplemented, "oneDNN RNN weights must be float32");
    }
  }
  if (w->rank() != 3)
    return ctx.error(ErrorCode::kInvalidModel,
                     "W must have rank 3, got shape " + shape_to_string(w->shape()));
  const Tensor x_stand_in = Tensor::borrow(nullptr, DType::kFloat32, {1, 1, w->dim(2)});
  w_shape_ = Tensor::borrow(nullptr, DType::kFloat32, w->shape());
  r_shape_ = Tensor::borrow(nullptr, DType::kFloat32, r->shape());
  if (b) b_shape_ = Tensor::borrow(nullptr, DType::kFloat32, b->shape());
  if (p) p_shape_ = Tensor::borrow(nullptr, DType::kFloat32, p->shape());
  RECUR_ASSIGN_OR_RETURN(RnnDims dims, check_rnn_inputs(node, spec_, &x_stand_in, &w_shape_,
                                                        &r_shape_, b ? &b_shape_ : nullptr, nullptr,
                                                        nullptr, nullptr, p ? &p_shape_ : nullptr));
  const int64_t I = dims.input_size, H = dims.hidden, Dn = D();
  geom_ = OnednnRnnGeometry::of(spec_, I, H);
  const int64_t G = geom_.gates(), Gb = geom_.bias_gates();
  std::vector<float> wl(static_cast<size_t>(geom_.weights_size(I)));
  std::vector<float> wi(static_cast<size_t>(geom_.weights_size(H)));
  std::vector<float> bias(static_cast<size_t>(geom_.bias_size()));
  RECUR_RETURN_IF_ERROR(
      onnx_to_onednn_weights(geom_, w->data<float>(), I, OnednnWeightsFormat::kLdigo, wl.data()));
  RECUR_RETURN_IF_ERROR(
      onnx_to_onednn_weights(geom_, r->data<float>(), H, OnednnWeightsFormat::kLdigo, wi.data()));
  RECUR_RETURN_IF_ERROR(onnx_to_onednn_bias(geom_, b ? b->data<float>() : nullptr, bias.data()));
  std::vector<float> peep;
  if (has_peephole()) {
    peep.resize(static_cast<size_t>(geom_.peephole_size()));
    RECUR_RETURN_IF_ERROR(onnx_to_onednn_peephole(geom_, p->data<float>(), peep.data()));
  }
  const memory::desc ldigo_l({1, 1, I, G, H}, DT::f32, Tag::ldigo);
  const memory::desc ldigo_i({1, 1, H, G, H}, DT::f32, Tag::ldigo);
  for (int64_t d = 0; d < Dn; ++d) {
    auto slice = [&](const std::vector<float>& all, int64_t per) {
      auto buf = std::make_shared<AlignedBuffer>(static_cast<size_t>(per) * sizeof(float));
      std::memcpy(buf->data, all.data() + d * per, buf->bytes);
      return buf;
    };
    formats_[{static_cast<int>(d), true}].push_back({ldigo_l, slice(wl, I * G * H)});
    formats_[{static_cast<int>(d), false}].push_back({ldigo_i, slice(wi, H * G * H)});
    bias_.emplace_back(bias.begin() + d * Gb * H, bias.begin() + (d + 1) * Gb * H);
    if (has_peephole())
      peephole_.emplace_back(peep.begin() + d * 3 * H, peep.begin() + (d + 1) * 3 * H);
  }
  std::string released = "W, R";
  ctx.release_input(kRnnW);
  ctx.release_input(kRnnR);
  if (b) {
    ctx.release_input(kRnnB);
    released += ", B";
  }
  if (p) {
    ctx.release_input(kRnnP);
    released += ", P";
  }
  std::string how =
      spec_.cell == RnnCell::kLstm ? "gates i,f,c,o"
      : spec_.cell == RnnCell::kGru
          ? (spec_.linear_before_reset ? "gates u,r,o, 4-gate LBR bias" : "gates u,r,o")
          : "one gate";
  if (spec_.input_forget) how += ", input_forget as a negated input gate";
  ctx.note(released + " repacked at load (" + how + ", combined bias); ONNX copies released");

  // A static X shape without sequence_lens: choose and build the primitives now, so the first
  // run pays nothing.
  const TypeInfo& xt = ctx.input_type(kRnnX);
  if (xt.is_static() && xt.rank() == 3 && !node.has_input(kRnnSeqLens)) {
    const Shape xs = xt.static_shape();
    const int64_t T = spec_.layout == 0 ? xs[0] : xs[1];
    const int64_t N = spec_.layout == 0 ? xs[1] : xs[0];
    // A declared shape oneDNN cannot take is left to the first run, which reports it.
    if (xs[2] == I && check_onednn_rnn_shape(T, N, I, H, Dn, geom_.gates()).ok()) {
      const BucketKey bucket{N, I, H, t_class(T), false};
      std::string note;
      RECUR_ASSIGN_OR_RETURN(Choice c, choose(bucket, T, &note));
      if (!note.empty()) ctx.note(note);
      const bool src_iter = node.has_input(kRnnInitialH) || node.has_input(kRnnInitialC);
      const bool dst_iter = node.has_output(kRnnYh) || node.has_output(kRnnYc);
      RECUR_ASSIGN_OR_RETURN(auto plans,
                             uniform_plans(c, jobs_for(c, N), T, N, I, H, src_iter, dst_iter));
      ctx.note("oneDNN " + plans.front()->impl + ", " + c.describe(Dn));
    }
  }
  return ok_status();
}

Status RnnKernel::repack_run_weights(KernelContext& ctx, const Tensor* w, const Tensor* r,
                                     const Tensor* b, const Tensor* p, int64_t I, int64_t H,
                                     RunWeights& rw) const {
  for (const Tensor* t : {w, r, b, p}) {
    if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "oneDNN RNN weights must be float32 on the host");
    }
  }
  const OnednnRnnGeometry g = OnednnRnnGeometry::of(spec_, I, H);
  const int64_t G = g.gates(), Gb = g.bias_gates(), Dn = D();
  std::vector<float> wl(static_cast<size_t>(g.weights_size(I))),
      wi(static_cast<size_t>(g.weights_size(H))), bias(static_cast<size_t>(g.bias_size())), peep;
  RECUR_RETURN_IF_ERROR(
      onnx_to_onednn_weights(g, w->data<float>(), I, OnednnWeightsFormat::kLdigo, wl.data()));
  RECUR_RETURN_IF_ERROR(
      onnx_to_onednn_weights(g, r->data<float>(), H, OnednnWeightsFormat::kLdigo, wi.data()));
  RECUR_RETURN_IF_ERROR(onnx_to_onednn_bias(g, b ? b->data<float>() : nullptr, bias.data()));
  if (has_peephole()) {
    peep.resize(static_cast<size_t>(g.peephole_size()));
    RECUR_RETURN_IF_ERROR(onnx_to_onednn_peephole(g, p ? p->data<float>() : nullptr, peep.data()));
  }
  for (int64_t d = 0; d < Dn; ++d) {
    rw.layer.emplace_back(wl.begin() + d * I * G * H, wl.begin() + (d + 1) * I * G * H);
    rw.iter.emplace_back(wi.begin() + d * H * G * H, wi.begin() + (d + 1) * H * G * H);
    rw.bias.emplace_back(bias.begin() + d * Gb * H, bias.begin() + (d + 1) * Gb * H);
    if (has_peephole())
      rw.peephole.emplace_back(peep.begin() + d * 3 * H, peep.begin() + (d + 1) * 3 * H);
  }
  return ok_status();
}

Status RnnKernel::run(KernelContext& ctx) const {
  const Tensor* x = ctx.input(kRnnX);
  const Tensor* w = const_weights_ ? &w_shape_ : ctx.input(kRnnW);
  const Tensor* r = const_weights_ ? &r_shape_ : ctx.input(kRnnR);
  const Tensor* b = const_weights_ ? (b_shape_.defined() ? &b_shape_ : nullptr) : ctx.input(kRnnB);
  const Tensor* p = const_weights_ ? (p_shape_.defined() ? &p_shape_ : nullptr) : ctx.input(kRnnP);
  const Tensor* seq = ctx.input(kRnnSeqLens);
  const Tensor* h0 = ctx.input(kRnnInitialH);
  const Tensor* c0 = spec_.cell == RnnCell::kLstm ? ctx.input(kRnnInitialC) : nullptr;
  RECUR_ASSIGN_OR_RETURN(RnnDims dims, check_rnn_inputs(node_, spec_, x, w, r, b, seq, h0, c0, p));
  if (x->dtype() != DType::kFloat32) {
    return ctx.error(ErrorCode::kNotImplemented, "the oneDNN RNN kernel runs float32 only, X is " +
                                                     std::string(dtype_name(x->dtype())));
  }
  for (const Tensor* t : {x, seq, h0, c0}) {
    if (t && !t->is_cpu())
      return ctx.error(ErrorCode::kInvalidArgument, "inputs must be on the host");
  }
  const int64_t T = dims.seq_length, N = dims.batch, I = dims.input_size, H = dims.hidden, Dn = D();
  const bool lstm = spec_.cell == RnnCell::kLstm;
  const bool l0 = spec_.layout == 0;
  const Shape y_shape = l0 ? Shape{T, Dn, N, H} : Shape{N, T, Dn, H};
  const Shape s_shape = l0 ? Shape{Dn, N, H} : Shape{N, Dn, H};
  RECUR_ASSIGN_OR_RETURN(Tensor * y_t, ctx.allocate_output(kRnnY, DType::kFloat32, y_shape));
  Tensor* yh_t = nullptr;
  Tensor* yc_t = nullptr;
  if (ctx.output_requested(kRnnYh)) {
    RECUR_ASSIGN_OR_RETURN(yh_t, ctx.allocate_output(kRnnYh, DType::kFloat32, s_shape));
  }
  if (lstm && ctx.output_requested(kRnnYc)) {
    RECUR_ASSIGN_OR_RETURN(yc_t, ctx.allocate_output(kRnnYc, DType::kFloat32, s_shape));
  }
  float* y = y_t->data<float>();
  float* yh = yh_t ? yh_t->data<float>() : nullptr;
  float* yc = yc_t ? yc_t->data<float>() : nullptr;
  const size_t state_n = static_cast<size_t>(Dn * N * H);
  if (T == 0 || N == 0) {
    if (yh) std::fill(yh, yh + state_n, 0.0f);
    if (yc) std::fill(yc, yc + state_n, 0.0f);
    return ok_status();
  }
  if (Status st = check_onednn_rnn_shape(T, N, I, H, Dn, geom_.gates()); !st.ok()) {
    return ctx.error(ErrorCode::kNotImplemented, st.message());
  }

  RunWeights rw;
  if (!const_weights_) RECUR_RETURN_IF_ERROR(repack_run_weights(ctx, w, r, b, p, I, H, rw));
  const RunWeights* rwp = const_weights_ ? nullptr : &rw;

  const int32_t* lens = seq ? seq->data<int32_t>() : nullptr;
  bool uniform = true;
  for (int64_t n = 0; lens && n < N; ++n) uniform = uniform && lens[n] == T;

  const float* xp = x->data<float>();
  // Offsets of (t, n) in X, of (t, d, n) in Y and of (d, n) in the states, per layout.
  auto x_at = [&](int64_t t, int64_t n) { return xp + (l0 ? t * N + n : n * T + t) * I; };
  auto y_off = [&](int64_t t, int64_t d, int64_t n) {
    return (l0 ? (t * Dn + d) * N + n : (n * T + t) * Dn + d) * H;
  };
  auto s_off = [&](int64_t d, int64_t n) { return (l0 ? d * N + n : n * Dn + d) * H; };

  if (uniform) {
    const bool src_iter = h0 || c0;
    const bool dst_iter = yh || yc;
    std::vector<float> zeros, spare;
    const float* h0p = h0 ? h0->data<float>() : nullptr;
    const float* c0p = c0 ? c0->data<float>() : nullptr;
    if (src_iter && (!h0p || (lstm && !c0p))) {
      zeros.assign(state_n, 0.0f);
      if (!h0p) h0p = zeros.data();
      if (lstm && !c0p) c0p = zeros.data();
    }
    float* hn = yh;
    float* cn = yc;
    if (dst_iter && (!hn || (lstm && !cn))) {
      spare.resize(state_n);
      if (!hn) hn = spare.data();
      if (lstm && !cn) cn = spare.data();
    }
    const BucketKey bucket{N, I, H, t_class(T), false};
    RECUR_ASSIGN_OR_RETURN(Choice c, choose(bucket, T, nullptr));
    const std::vector<Job> jobs = jobs_for(c, N);
    RECUR_ASSIGN_OR_RETURN(auto plans, uniform_plans(c, jobs, T, N, I, H, src_iter, dst_iter));
    return run_parallel(jobs.size(), c.split > 1 ? c.split : 1, [&](size_t i) {
      const Job& j = jobs[i];
      const int64_t so = s_off(j.d, j.n0);
      Exec e;
      e.x = x_at(0, j.n0);
      e.y = y + y_off(0, j.d, j.n0);
      if (src_iter) {
        e.h0 = h0p + so;
        e.c0 = lstm ? c0p + so : nullptr;
      }
      if (dst_iter) {
        e.hn = hn + so;
        e.cn = lstm ? cn + so : nullptr;
      }
      return execute(*plans[i], j.d, rwp, e);
    });
  }

  // Sequence lengths that differ: time segments over the rows still active, longest first.
  std::fill(y, y + y_t->numel(), 0.0f);
  if (yh) std::fill(yh, yh + state_n, 0.0f);
  if (yc) std::fill(yc, yc + state_n, 0.0f);
  std::vector<int64_t> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b2) { return lens[a] > lens[b2]; });
  int64_t active = 0;
  while (active < N && lens[order[static_cast<size_t>(active)]] > 0) ++active;
  if (active == 0) return ok_status();
  std::vector<int64_t> L(static_cast<size_t>(active));
  for (int64_t j = 0; j < active; ++j)
    L[static_cast<size_t>(j)] = lens[order[static_cast<size_t>(j)]];
  const size_t hsz = static_cast<size_t>(H), isz = static_cast<size_t>(I);
  const size_t act_states = static_cast<size_t>(active) * hsz;
  std::vector<float> cur_h(act_states), nxt_h(act_states), cur_c, nxt_c, xs, ys;
  if (lstm) {
    cur_c.resize(act_states);
    nxt_c.resize(act_states);
  }
  for (int d = 0; d < Dn; ++d) {
    const bool rev = is_reverse(d);
    bool have_state = h0 || c0;
    if (have_state) {
      for (int64_t j = 0; j < active; ++j) {
        const int64_t n = order[static_cast<size_t>(j)];
        float* dh = cur_h.data() + static_cast<size_t>(j) * hsz;
        if (h0)
          std::memcpy(dh, h0->data<float>() + s_off(d, n), hsz * sizeof(float));
        else
          std::fill(dh, dh + hsz, 0.0f);
        if (lstm) {
          float* dc = cur_c.data() + static_cast<size_t>(j) * hsz;
          if (c0)
            std::memcpy(dc, c0->data<float>() + s_off(d, n), hsz * sizeof(float));
          else
            std::fill(dc, dc + hsz, 0.0f);
        }
      }
    }
    int64_t s = 0;
    while (s < L[0]) {
      int64_t k = 0;
      while (k < active && L[static_cast<size_t>(k)] > s) ++k;
      const int64_t e = L[static_cast<size_t>(k - 1)];
      const int64_t ts = e - s;
      // The step of row j at segment step tau; the reverse direction walks each sequence
      // backward from its own last valid step.
      auto step = [&](int64_t tau, int64_t j) {
        return rev ? L[static_cast<size_t>(j)] - 1 - (s + tau) : s + tau;
      };
      xs.resize(static_cast<size_t>(ts * k) * isz);
      ys.resize(static_cast<size_t>(ts * k) * hsz);
      for (int64_t tau = 0; tau < ts; ++tau)
        for (int64_t j = 0; j < k; ++j)
          std::memcpy(xs.data() + static_cast<size_t>(tau * k + j) * isz,
                      x_at(step(tau, j), order[static_cast<size_t>(j)]), isz * sizeof(float));
      RECUR_ASSIGN_OR_RETURN(Choice c, choose(BucketKey{k, I, H, t_class(ts), true}, ts, nullptr));
      const ShapeKey key{ts,         k,    I,          H,     k,        false, Mode::kPacked,
                         have_state, true, act_dir(d), c.any, c.threads};
      RECUR_ASSIGN_OR_RETURN(auto plan, get_plan(key));
      Exec ex;
      ex.x = xs.data();
      ex.y = ys.data();
      ex.h0 = have_state ? cur_h.data() : nullptr;
      ex.c0 = have_state && lstm ? cur_c.data() : nullptr;
      ex.hn = nxt_h.data();
      ex.cn = lstm ? nxt_c.data() : nullptr;
      RECUR_RETURN_IF_ERROR(execute(*plan, d, rwp, ex));
      for (int64_t tau = 0; tau < ts; ++tau)
        for (int64_t j = 0; j < k; ++j)
          std::memcpy(y + y_off(step(tau, j), d, order[static_cast<size_t>(j)]),
                      ys.data() + static_cast<size_t>(tau * k + j) * hsz, hsz * sizeof(float));
      for (int64_t j = 0; j < k; ++j) {
        if (L[static_cast<size_t>(j)] != e) continue;
        const int64_t n = order[static_cast<size_t>(j)];
        if (yh)
          std::memcpy(yh + s_off(d, n), nxt_h.data() + static_cast<size_t>(j) * hsz,
                      hsz * sizeof(float));
        if (yc)
          std::memcpy(yc + s_off(d, n), nxt_c.data() + static_cast<size_t>(j) * hsz,
                      hsz * sizeof(float));
      }
      std::swap(cur_h, nxt_h);
      std::swap(cur_c, nxt_c);
      have_state = true;
      s = e;
    }
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> create_rnn_kernel(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, RnnSpec::parse(ctx.node()));
  auto k = std::make_unique<RnnKernel>(ctx.node(), std::move(spec), options_of(ctx));
  RECUR_RETURN_IF_ERROR(k->init(ctx));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace recur::onednn
