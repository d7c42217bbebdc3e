#include "providers/onednn/rnn/rnn_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

#include "converters/onednn_weights.h"
#include "providers/onednn/common/dnnl_util.h"

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
  return Claim::accept();
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

// One primitive per (T, N, direction, memory layout, which states are read and written);
// cell, dtype (float32) and sizes are fixed per node, and the thread count comes with the
// bucket's choice.
struct ShapeKey {
  int64_t T = 0, N = 0, I = 0, H = 0;
  bool reverse = false;
  Mode mode = Mode::kLayout0;
  bool src_iter = false, dst_iter = false;
  int act_dir = 0;  // whose activations (a bidirectional RNN may have two sets)
  auto tie() const { return std::tie(T, N, I, H, reverse, mode, src_iter, dst_iter, act_dir); }
  bool operator<(const ShapeKey& o) const { return tie() < o.tie(); }
};

// Implementation and thread count are chosen per bucket of shapes: N, and T in three classes.
struct BucketKey {
  int64_t N = 0, I = 0, H = 0;
  int t_class = 0;
  auto tie() const { return std::tie(N, I, H, t_class); }
  bool operator<(const BucketKey& o) const { return tie() < o.tie(); }
};
int t_class(int64_t T) { return T <= 1 ? 0 : T <= 16 ? 1 : 2; }

struct Choice {
  bool any = false;  // format_tag::any weights (brgemm for LSTM/RNN) rather than explicit ldigo
  int threads = 1;
};

struct Plan {
  dnnl::primitive primitive;
  Choice choice;
  std::string impl;
  RnnDescs descs;
  memory::desc scratchpad;
  size_t scratch_bytes = 0;
  // Constant weights in this primitive's format, per direction.
  std::vector<std::shared_ptr<AlignedBuffer>> weights_layer, weights_iter;
};

struct WeightBuf {
  memory::desc desc;
  std::shared_ptr<AlignedBuffer> buf;
};

// Per-run weights when W/R/B/P are graph inputs: ldigo, per direction.
struct RunWeights {
  std::vector<std::vector<float>> layer, iter, bias, peephole;
};

std::vector<float> pattern(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>(static_cast<int>(i * 7919 % 17) - 8);
  return v;
}

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

  RnnDescs descs_for(const ShapeKey& k, bool any) const;
  RnnPd create_pd(const RnnDescs& d, int dir, bool reverse, int threads) const;
  Result<std::shared_ptr<const Plan>> get_plan(const ShapeKey& key, std::string* note) const;
  Result<Choice> choose(const ShapeKey& key, std::string* note) const;  // mu_ held
  Result<std::shared_ptr<AlignedBuffer>> weights_in(int d, bool layer,
                                                    const memory::desc& md) const;  // mu_ held
  void prune_formats() const;                                                       // mu_ held
  Status repack_run_weights(KernelContext& ctx, const Tensor* w, const Tensor* r, const Tensor* b,
                            const Tensor* p, int64_t I, int64_t H, RunWeights& rw) const;
  int act_dir(int d) const {
    return spec_.cell == RnnCell::kRnn && D() == 2 &&
                   !(spec_.activation(0, 0) == spec_.activation(1, 0))
               ? d
               : 0;
  }

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

RnnDescs RnnKernel::descs_for(const ShapeKey& k, bool any) const {
  const int64_t T = k.T, N = k.N, I = k.I, H = k.H, Dn = D();
  const int64_t G = geom_.gates(), Gb = geom_.bias_gates();
  RnnDescs d;
  memory::desc state;
  switch (k.mode) {
    case Mode::kLayout0:
      d.src_layer = memory::desc({T, N, I}, DT::f32, Tag::tnc);
      d.dst_layer = memory::desc({T, N, H}, DT::f32, memory::dims{Dn * N * H, H, 1});
      state = memory::desc({1, 1, N, H}, DT::f32, memory::dims{Dn * N * H, N * H, H, 1});
      break;
    case Mode::kLayout1:
      d.src_layer = memory::desc({T, N, I}, DT::f32, Tag::ntc);
      d.dst_layer = memory::desc({T, N, H}, DT::f32, memory::dims{Dn * H, T * Dn * H, 1});
      state = memory::desc({1, 1, N, H}, DT::f32, memory::dims{N * Dn * H, H, Dn * H, 1});
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
  const Tag wtag = any ? Tag::any : Tag::ldigo;
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
  Status st = dnnl_try(node_.describe() + ": weights reorder", [&] {
    ThreadScope scope(opts_.max_threads);
    memory src = make_memory(from.desc, from.buf->data);
    memory dst = make_memory(md, buf->data);
    dnnl::reorder(src, dst).execute(thread_stream(), src, dst);
    thread_stream().wait();
  });
  RECUR_RETURN_IF_ERROR(st);
  held.push_back({md, buf});
  return buf;
}

// Drops the weight formats that no cached primitive uses, keeping at least one to reorder
// new formats from: in steady state one copy of the weights is held.
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

Result<Choice> RnnKernel::choose(const ShapeKey& key, std::string* note) const {
  const BucketKey bucket{key.N, key.I, key.H, t_class(key.T)};
  auto it = choices_.find(bucket);
  if (it != choices_.end()) return it->second;

  const int maxt = std::max(1, opts_.max_threads);
  std::vector<Choice> cands;
  std::vector<bool> formats;
  if (!const_weights_ || opts_.impl == ImplChoice::kLdigo) {
    formats = {false};
  } else if (opts_.impl == ImplChoice::kAny) {
    formats = {true};
  } else {
    formats = {false, true};
  }
  std::vector<int> threads = {1};
  if (maxt > 1) threads.push_back(maxt);
  for (int t : threads)
    for (bool any : formats) cands.push_back({any, t});

  Choice best;
  std::string detail;
  if (!opts_.tune || cands.size() == 1) {
    // Without timing: FACTS.md's measurements (brgemm loses at small batches on one thread).
    best.any = formats.size() == 1 ? formats[0] : key.N >= 8;
    best.threads = key.N == 1 ? 1 : maxt;
    detail = "untimed default";
  } else {
    // Time every candidate on a probe of the bucket's shape, T capped so that the probe stays
    // short, with synthetic data (the timing does not depend on values).
    const double step_flops = 2.0 * static_cast<double>(key.N) *
                              static_cast<double>(geom_.gates() * key.H) *
                              static_cast<double>(key.I + key.H);
    int64_t tp = key.T;
    const double budget = 2e9;
    if (step_flops * static_cast<double>(tp) > budget) {
      tp = std::max<int64_t>(8, static_cast<int64_t>(budget / step_flops));
      tp = std::min(tp, key.T);
    }
    ShapeKey pk{tp, key.N, key.I, key.H, false, Mode::kPacked, true, true, 0};
    struct Probe {
      Choice c;
      RnnPd pd;
      std::unique_ptr<AlignedBuffer> wl, wi, scratch;
      double best_ms = 1e30;
      bool ok = false;
    };
    std::vector<Probe> probes(cands.size());
    const auto x = pattern(static_cast<size_t>(tp * key.N * key.I), 0.05f);
    std::vector<float> y(static_cast<size_t>(tp * key.N * key.H));
    const auto h0 = pattern(static_cast<size_t>(key.N * key.H), 0.05f);
    const auto c0 = pattern(static_cast<size_t>(key.N * key.H), 0.05f);
    std::vector<float> hn(h0.size()), cn(c0.size());
    const auto bias = pattern(static_cast<size_t>(geom_.bias_gates() * key.H), 0.01f);
    const auto peep = pattern(static_cast<size_t>(3 * key.H), 0.01f);
    std::vector<std::string> impls(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) {
      Probe& p = probes[i];
      p.c = cands[i];
      Status st = dnnl_try(node_.describe() + ": probe", [&] {
        const RnnDescs d = descs_for(pk, p.c.any);
        p.pd = create_pd(d, 0, false, p.c.threads);
        p.wl = std::make_unique<AlignedBuffer>(p.pd.weights_layer.get_size());
        p.wi = std::make_unique<AlignedBuffer>(p.pd.weights_iter.get_size());
        p.scratch = std::make_unique<AlignedBuffer>(p.pd.scratchpad.get_size());
        // Some formats (rnn_packed) carry a header: fill them by a reorder, never by memset.
        ThreadScope scope(opts_.max_threads);
        for (auto [md, buf, in] : {std::tuple{p.pd.weights_layer, p.wl.get(), key.I},
                                   std::tuple{p.pd.weights_iter, p.wi.get(), key.H}}) {
          const memory::desc plain({1, 1, in, geom_.gates(), key.H}, DT::f32, Tag::ldigo);
          std::vector<float> zeros(plain.get_size() / sizeof(float), 0.0f);
          memory src = make_memory(plain, zeros.data());
          memory dst = make_memory(md, buf->data);
          dnnl::reorder(src, dst).execute(thread_stream(), src, dst);
        }
        thread_stream().wait();
        p.ok = true;
      });
      impls[i] = p.pd.impl;
      if (!st.ok()) continue;
      // format any that gives the same primitive as ldigo is no candidate of its own.
      for (size_t j = 0; j < i; ++j) {
        if (probes[j].ok && probes[j].c.threads == p.c.threads && probes[j].pd.impl == p.pd.impl &&
            probes[j].pd.weights_layer == p.pd.weights_layer &&
            probes[j].pd.weights_iter == p.pd.weights_iter)
          p.ok = false;
      }
    }
    auto run_probe = [&](Probe& p) -> Result<double> {
      const RnnDescs d = descs_for(pk, p.c.any);
      std::unordered_map<int, memory> args;
      Status st = dnnl_try(node_.describe() + ": probe run", [&] {
        args = {{DNNL_ARG_SRC_LAYER, make_memory(d.src_layer, x.data())},
                {DNNL_ARG_SRC_ITER, make_memory(d.src_iter, h0.data())},
                {DNNL_ARG_WEIGHTS_LAYER, make_memory(p.pd.weights_layer, p.wl->data)},
                {DNNL_ARG_WEIGHTS_ITER, make_memory(p.pd.weights_iter, p.wi->data)},
                {DNNL_ARG_BIAS, make_memory(d.bias, bias.data())},
                {DNNL_ARG_DST_LAYER, make_memory(d.dst_layer, y.data())},
                {DNNL_ARG_DST_ITER, make_memory(d.dst_iter, hn.data())},
                {DNNL_ARG_SCRATCHPAD, make_memory(p.pd.scratchpad, p.scratch->data)}};
        if (spec_.cell == RnnCell::kLstm) {
          args[DNNL_ARG_SRC_ITER_C] = make_memory(d.src_iter_c, c0.data());
          args[DNNL_ARG_DST_ITER_C] = make_memory(d.dst_iter_c, cn.data());
          if (has_peephole())
            args[DNNL_ARG_WEIGHTS_PEEPHOLE] = make_memory(d.weights_peephole, peep.data());
        }
      });
      RECUR_RETURN_IF_ERROR(st);
      ThreadScope scope(p.c.threads);
      const auto t0 = std::chrono::steady_clock::now();
      st = dnnl_try(node_.describe() + ": probe run", [&] {
        p.pd.primitive.execute(thread_stream(), args);
        thread_stream().wait();
      });
      RECUR_RETURN_IF_ERROR(st);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
          .count();
    };
    double round_ms = 0;
    for (auto& p : probes) {
      if (!p.ok) continue;
      RECUR_ASSIGN_OR_RETURN(double ms, run_probe(p));  // warm-up
      round_ms += ms;
    }
    // Alternate the candidates (A B C D A B C D ...) and keep each one's best time.
    const int reps = static_cast<int>(std::clamp(150.0 / std::max(round_ms, 1e-3), 3.0, 15.0));
    for (int r = 0; r < reps; ++r) {
      for (auto& p : probes) {
        if (!p.ok) continue;
        RECUR_ASSIGN_OR_RETURN(double ms, run_probe(p));
        p.best_ms = std::min(p.best_ms, ms);
      }
    }
    const Probe* win = nullptr;
    for (const auto& p : probes)
      if (p.ok && (!win || p.best_ms < win->best_ms)) win = &p;
    if (!win) return internal_error(node_.describe() + ": no oneDNN RNN implementation ran");
    // More threads must earn their keep: take a single-thread candidate within 3%.
    for (const auto& p : probes) {
      if (p.ok && p.c.threads == 1 && win->c.threads > 1 && p.best_ms <= 1.03 * win->best_ms)
        win = &p;
    }
    best = win->c;
    char buf[128];
    for (const auto& p : probes) {
      if (!p.ok) continue;
      std::snprintf(buf, sizeof buf, "%s%s/%dt %.3g ms", detail.empty() ? "" : ", ",
                    p.c.any ? "any" : "ldigo", p.c.threads, p.best_ms);
      detail += buf;
    }
    detail = "timed at T=" + std::to_string(tp) + ": " + detail;
  }
  choices_[bucket] = best;
  if (note || opts_.verbose) {
    std::string text = std::string(spec_.cell_name()) + " N=" + std::to_string(key.N) + " T~" +
                       std::to_string(key.T) + ": weights " + (best.any ? "any" : "ldigo") + ", " +
                       std::to_string(best.threads) + " thread" + (best.threads > 1 ? "s" : "") +
                       " (" + detail + ")";
    if (note) *note = text;
    if (opts_.verbose)
      std::fprintf(stderr, "recur onednn: %s: %s\n", node_.name.c_str(), text.c_str());
  }
  return best;
}

Result<std::shared_ptr<const Plan>> RnnKernel::get_plan(const ShapeKey& key,
                                                        std::string* note) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  RECUR_ASSIGN_OR_RETURN(Choice choice, choose(key, note));
  auto plan = std::make_shared<Plan>();
  plan->choice = choice;
  plan->descs = descs_for(key, choice.any);
  RnnPd pd;
  Status st =
      dnnl_try(node_.describe() + ": creating the " + std::string(spec_.cell_name()) + " primitive",
               [&] { pd = create_pd(plan->descs, key.act_dir, key.reverse, choice.threads); });
  if (!st.ok() && choice.any) {
    // format any has no implementation here: fall back to explicit ldigo.
    plan->choice.any = false;
    plan->descs = descs_for(key, false);
    st = dnnl_try(node_.describe() + ": creating the primitive",
                  [&] { pd = create_pd(plan->descs, key.act_dir, key.reverse, choice.threads); });
  }
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

Status RnnKernel::execute(const Plan& plan, int d, const RunWeights* rw, const Exec& e) const {
  const RnnDescs& ds = plan.descs;
  const size_t ud = static_cast<size_t>(d);
  const void* wl = rw ? rw->layer[ud].data() : plan.weights_layer[ud]->data;
  const void* wi = rw ? rw->iter[ud].data() : plan.weights_iter[ud]->data;
  const void* b = rw ? rw->bias[ud].data() : bias_[ud].data();
  ScratchPool::Lease scratch = scratch_.acquire(plan.scratch_bytes);
  return dnnl_try(node_.describe(), [&] {
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC_LAYER, make_memory(ds.src_layer, e.x)},
        {DNNL_ARG_WEIGHTS_LAYER, make_memory(ds.weights_layer, wl)},
        {DNNL_ARG_WEIGHTS_ITER, make_memory(ds.weights_iter, wi)},
        {DNNL_ARG_BIAS, make_memory(ds.bias, b)},
        {DNNL_ARG_DST_LAYER, make_memory(ds.dst_layer, e.y)},
        {DNNL_ARG_SCRATCHPAD, make_memory(plan.scratchpad, scratch.data())}};
    if (!ds.src_iter.is_zero()) {
      args[DNNL_ARG_SRC_ITER] = make_memory(ds.src_iter, e.h0);
      if (spec_.cell == RnnCell::kLstm)
        args[DNNL_ARG_SRC_ITER_C] = make_memory(ds.src_iter_c, e.c0);
    }
    if (!ds.dst_iter.is_zero()) {
      args[DNNL_ARG_DST_ITER] = make_memory(ds.dst_iter, e.hn);
      if (spec_.cell == RnnCell::kLstm)
        args[DNNL_ARG_DST_ITER_C] = make_memory(ds.dst_iter_c, e.cn);
    }
    if (has_peephole()) {
      const void* p = rw ? rw->peephole[ud].data() : peephole_[ud].data();
      args[DNNL_ARG_WEIGHTS_PEEPHOLE] = make_memory(ds.weights_peephole, p);
    }
    ThreadScope scope(plan.choice.threads);
    plan.primitive.execute(thread_stream(), args);
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
    if (T > 0 && N > 0 && xs[2] == I) {
      for (int d = 0; d < Dn; ++d) {
        ShapeKey key{T,
                     N,
                     I,
                     H,
                     is_reverse(d),
                     spec_.layout == 0 ? Mode::kLayout0 : Mode::kLayout1,
                     node.has_input(kRnnInitialH) || node.has_input(kRnnInitialC),
                     node.has_output(kRnnYh) || node.has_output(kRnnYc),
                     act_dir(d)};
        std::string note;
        RECUR_ASSIGN_OR_RETURN(auto plan, get_plan(key, &note));
        if (!note.empty()) ctx.note(note);
        ctx.note("direction " + std::to_string(d) + ": oneDNN " + plan->impl + ", weights " +
                 (plan->choice.any ? "format any" : "ldigo") + ", " +
                 std::to_string(plan->choice.threads) + " thread(s)");
      }
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
    for (int d = 0; d < Dn; ++d) {
      const ShapeKey key{
          T,        N,        I,         H, is_reverse(d), l0 ? Mode::kLayout0 : Mode::kLayout1,
          src_iter, dst_iter, act_dir(d)};
      RECUR_ASSIGN_OR_RETURN(auto plan, get_plan(key, nullptr));
      const int64_t so = s_off(d, 0);
      Exec e;
      e.x = xp;
      e.y = y + y_off(0, d, 0);
      if (src_iter) {
        e.h0 = h0p + so;
        e.c0 = lstm ? c0p + so : nullptr;
      }
      if (dst_iter) {
        e.hn = hn + so;
        e.cn = lstm ? cn + so : nullptr;
      }
      RECUR_RETURN_IF_ERROR(execute(*plan, d, rwp, e));
    }
    return ok_status();
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
      const ShapeKey key{ts, k, I, H, false, Mode::kPacked, have_state, true, act_dir(d)};
      RECUR_ASSIGN_OR_RETURN(auto plan, get_plan(key, nullptr));
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
