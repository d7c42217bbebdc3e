// The plan cache: one created primitive per ShapeKey, with the constant weights reordered into
// the formats its primitives ask for.
#include <algorithm>
#include <optional>
#include <string>

#include "providers/onednn/rnn/rnn_kernel.h"

namespace recur::onednn::rnn {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

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
      RECUR_ASSIGN_OR_RETURN(auto wl, weights_in(d, true, pd.weights_layer, key.threads));
      RECUR_ASSIGN_OR_RETURN(auto wi, weights_in(d, false, pd.weights_iter, key.threads));
      plan->weights_layer.push_back(std::move(wl));
      plan->weights_iter.push_back(std::move(wi));
    }
  }
  if (plans_.size() >= 256) plans_.erase(plans_.begin());
  plans_[key] = plan;
  if (const_weights_) prune_formats();
  return std::shared_ptr<const Plan>(plan);
}

Mode RnnKernel::run_mode(std::span<const Job> jobs, int64_t N, int64_t T) const {
  if (spec_.layout == 0) return Mode::kLayout0;
  // One row or one step of layout 1 is dense already (rnn_desc.cc).
  if (bf16_ || N < 2 || T < 2) return Mode::kLayout1;
  for (const Job& j : jobs)
    if (j.n1 - j.n0 != N) return Mode::kLayout1;  // a batch split: no slice is dense anyway
  return Mode::kLayout1DenseX;
}

Status RnnKernel::uniform_plans(const Choice& c, std::span<const Job> jobs, int64_t T, int64_t tb,
                                int64_t N, int64_t I, int64_t H, bool src_iter, bool dst_iter,
                                std::vector<std::shared_ptr<const Plan>>& plans) const {
  plans.clear();
  const bool blocked = tb < T;
  const Mode mode = run_mode(jobs, N, T);
  std::lock_guard<std::mutex> lock(mu_);
  auto add = [&](int64_t steps) -> Status {
    for (const Job& j : jobs) {
      const ShapeKey key{steps,
                         j.n1 - j.n0,
                         I,
                         H,
                         N,
                         is_reverse(j.d),
                         mode,
                         src_iter || blocked,
                         dst_iter || blocked,
                         act_dir(j.d),
                         c.any,
                         c.split > 1 ? 1 : c.threads,
                         blocked ? T : 0};
      RECUR_ASSIGN_OR_RETURN(auto plan, get_plan_locked(key));
      plans.push_back(std::move(plan));
    }
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(add(tb));
  if (blocked && T % tb != 0) RECUR_RETURN_IF_ERROR(add(T % tb));  // the short last block
  return ok_status();
}

Result<std::shared_ptr<AlignedBuffer>> RnnKernel::weights_in(int d, bool layer,
                                                             const memory::desc& md,
                                                             int threads) const {
  auto& held = formats(d, layer);
  const int packed_on = md.data.format_kind == dnnl_blocked ? 0 : threads;
  for (const auto& w : held)
    if (w.desc == md && w.threads == packed_on) return w.buf;
  // Where another kernel keeps W and R (SharedWeights), an ldigo copy made from its copy for
  // this reorder only: held as well, it would be a third copy (an LSTM of 1024 units: 32 MiB).
  std::optional<WeightBuf> made;
  if (shared_.source && (held.empty() || held.front().desc.data.format_kind != dnnl_blocked)) {
    made = shared_ldigo(d, layer);
    if (made->desc == md) {
      held.push_back(*made);
      return made->buf;
    }
  }
  if (!made && held.empty())
    return internal_error(node_.describe() + ": no weights to reorder from");
  auto buf = std::make_shared<AlignedBuffer>(md.get_size());
  const WeightBuf& from = made ? *made : held.front();
  auto reorder = [&](const memory::desc& sd, const void* src_data, const memory::desc& dd,
                     void* dst_data) {
    ThreadScope scope(packed_on > 0 ? packed_on : opts_.max_threads);
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
  held.push_back({md, buf, packed_on});
  return buf;
}

WeightBuf RnnKernel::shared_ldigo(int d, bool layer) const {
  const int64_t in = layer ? geom_.input_size : geom_.hidden, G = geom_.gates();
  OnednnRnnGeometry one = geom_;
  one.directions = 1;
  const memory::desc ldigo({1, 1, in, G, geom_.hidden}, DT::f32, Tag::ldigo);
  auto buf = std::make_shared<AlignedBuffer>(ldigo.get_size());
  auto* dst = static_cast<float*>(buf->data);
  shared_.source(d, layer, onnx_rows_in_ldigo(one), G * geom_.hidden, dst);
  derive_ldigo_blocks(one, in, dst);
  return {ldigo, std::move(buf)};
}

// Drops the weight formats that no cached primitive uses, keeping one to reorder new formats
// from: in steady state one copy of the weights is held per format in use.
void RnnKernel::prune_formats() const {
  for (size_t i = 0; i < formats_.size(); ++i) {
    const int d = static_cast<int>(i / 2);
    const bool layer = i % 2 == 1;
    auto& held = formats_[i];
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
    // SharedWeights can make one again.
    if (!shared_.source && std::none_of(keep.begin(), keep.end(), blocked)) {
      auto src = std::find_if(held.begin(), held.end(), blocked);
      if (src != held.end()) keep.insert(keep.begin(), *src);
    }
    std::stable_partition(keep.begin(), keep.end(), blocked);
    held = std::move(keep);
  }
}

}  // namespace recur::onednn::rnn
