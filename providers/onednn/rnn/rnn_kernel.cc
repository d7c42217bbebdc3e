// Loading the oneDNN RNN kernel: constant weights repacked once and held per format, and for a
// static X shape the implementation chosen and the primitives built before the first run.
#include "providers/onednn/rnn/rnn_kernel.h"

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/rnn/rnn_int8.h"
#include "providers/onednn/rnn/row_team.h"
#include "providers/onednn/rnn/small_cell.h"
#include "runtime/core/code_layout.h"

#include <cstring>
#include <string>

namespace recur::onednn {

namespace rnn {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

RECUR_LOAD_PATH Status RnnKernel::init(CompileContext& ctx, SharedWeights shared) {
  shared_ = std::move(shared);
  const Node& node = ctx.node();
  const Tensor* w = ctx.constant_input(kRnnW);
  const Tensor* r = ctx.constant_input(kRnnR);
  // The other kernel's copy stands in for W and R, which it may have released: their shapes
  // are all this kernel reads of them at load.
  Tensor w_shape, r_shape;
  if (shared_.source) {
    w_shape = Tensor::borrow(nullptr, DType::kFloat32, shared_.w_shape);
    r_shape = Tensor::borrow(nullptr, DType::kFloat32, shared_.r_shape);
    w = &w_shape;
    r = &r_shape;
  }
  const Tensor* b = ctx.constant_input(kRnnB);
  const Tensor* p = ctx.constant_input(kRnnP);
  has_b_ = node.has_input(kRnnB);
  has_p_ = node.has_input(kRnnP);
  const_weights_ = w && r && (!has_b_ || b) && (!has_p_ || p);
  geom_ = OnednnRnnGeometry::of(spec_, 1, 1);
  if (!const_weights_) {
    note_graph_weights(ctx);
    choose_precision(ctx, 0, 0);
    return ok_status();
  }
  RECUR_ASSIGN_OR_RETURN(RnnDims dims, check_const_weights(ctx, w, r, b, p));
  const int64_t I = dims.input_size, H = dims.hidden;
  geom_ = OnednnRnnGeometry::of(spec_, I, H);
  RECUR_RETURN_IF_ERROR(hold_const_weights(ctx, w, r, b, p, I, H));  // frees W and R
  release_weights(ctx, b, p);
  choose_precision(ctx, I, H);
  return prepare_static_shape(ctx, I, H);
}

RECUR_LOAD_PATH void RnnKernel::choose_precision(CompileContext& ctx, int64_t I, int64_t H) {
  using P = ProviderConfig::Precision;
  // int8 is its own kernel path, which notes its precision itself.
  if (opts_.precision == P::kInt8) return;
  if (opts_.precision != P::kBf16) {
    ctx.note("precision fp32");
    return;
  }
  std::string why = bf16_unsupported_reason();
  if (why.empty() && !const_weights_)
    why = "W, R or B is a graph input (bf16 weights are converted once, at load)";
  if (why.empty()) why = bf16_declined(I, H);
  if (!why.empty()) {
    ctx.note("precision fp32 (bf16 asked for): " + why);
    return;
  }
  bf16_ = true;
  ctx.note("precision bf16: W, R, X, Y and h in bf16, bias and c in f32");
}

// Why oneDNN declines this cell in bf16 (empty if it takes it), asked on a one-step, one-row
// primitive of each weights format and each direction's activations.
std::string RnnKernel::bf16_declined(int64_t I, int64_t H) const {
  for (bool any : {false, true}) {
    for (int d = 0; d < static_cast<int>(D()); ++d) {
      const ShapeKey k{1, 1, I, H, 1, false, Mode::kPacked, true, true, act_dir(d), any, 1};
      try {
        (void)create_rnn_pd(spec_, rnn_descs(k, spec_, geom_, has_peephole(), true), k.act_dir,
                            false, 1);
      } catch (const dnnl::error& e) {
        return std::string("oneDNN 2.6 declines this ") + spec_.cell_name() + " in bf16 (" +
               e.what() + ")";
      }
    }
  }
  return {};
}

void RnnKernel::note_graph_weights(CompileContext& ctx) const {
  const Node& node = ctx.node();
  std::string which;
  for (auto [i, name] :
       {std::pair<size_t, const char*>{kRnnW, "W"}, {kRnnR, "R"}, {kRnnB, "B"}, {kRnnP, "P"}}) {
    if (node.has_input(i) && !ctx.constant_input(i))
      which += (which.empty() ? "" : ", ") + std::string(name);
  }
  ctx.note(which +
           (which.find(',') == std::string::npos ? " is a graph input" : " are graph inputs") +
           ": weights repacked per run (explicit ldigo)");
}

// Checks W, R, B and P against each other now, with a stand-in X of the right input size, and
// keeps their shapes for the runs' checks once they are released.
RECUR_LOAD_PATH Result<RnnDims> RnnKernel::check_const_weights(CompileContext& ctx, const Tensor* w,
                                                               const Tensor* r, const Tensor* b,
                                                               const Tensor* p) {
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
  return check_rnn_inputs(ctx.node(), spec_, &x_stand_in, &w_shape_, &r_shape_,
                          b ? &b_shape_ : nullptr, nullptr, nullptr, nullptr,
                          p ? &p_shape_ : nullptr);
}

// The constant weights in ldigo per direction, the format every other one is reordered from.
// Each matrix is converted straight into the buffer that keeps it, W for every direction and
// then R, and each ONNX matrix is freed once converted (release_input_now). Where that frees
// it, its pages go back to the kernel while it is read (discard_source): at the peak of
// loading the weights are held about once (once and a half where the buffers are on huge
// pages), not twice.
RECUR_LOAD_PATH Status RnnKernel::hold_const_weights(CompileContext& ctx, const Tensor* w,
                                                     const Tensor* r, const Tensor* b,
                                                     const Tensor* p, int64_t I, int64_t H) {
  const int64_t Dn = D();
  const int64_t G = geom_.gates(), Gb = geom_.bias_gates();
  OnednnRnnGeometry one = geom_;
  one.directions = 1;
  std::vector<float> bias(static_cast<size_t>(geom_.bias_size()));
  RECUR_RETURN_IF_ERROR(onnx_to_onednn_bias(geom_, b ? b->data<float>() : nullptr, bias.data()));
  std::vector<float> peep;
  if (has_peephole()) {
    peep.resize(static_cast<size_t>(geom_.peephole_size()));
    RECUR_RETURN_IF_ERROR(onnx_to_onednn_peephole(geom_, p->data<float>(), peep.data()));
  }
  auto convert = [&](const Tensor* onnx, int64_t in, bool layer) RECUR_LOAD_PATH -> Status {
    // The other kernel's copy stands in until a plan needs this one (weights_in).
    if (shared_.source) return ok_status();
    const memory::desc ldigo({1, 1, in, G, H}, DT::f32, Tag::ldigo);
    const int64_t per = G * H * in;
    const bool last_read = ctx.input_dies_on_release(layer ? kRnnW : kRnnR);
    const size_t bytes = static_cast<size_t>(per) * sizeof(float);
    // On huge pages the transpose's first tile makes the whole 2 MiB pages of `buf` (all of it
    // but a tail) resident, so giving the source back as it is read would not lower the peak:
    // it would only cost madvise calls (lstm_large's load took 4-6% longer). Under 4 MiB, where
    // a huge page is half of the buffer or more, the source given back lowers the peak by more
    // than huge pages save: 4 KiB pages there.
    const bool huge = !last_read || bytes >= (size_t{4} << 20);
    for (int64_t d = 0; d < Dn; ++d) {
      auto buf = std::make_shared<AlignedBuffer>(bytes, huge);
      RECUR_RETURN_IF_ERROR(onnx_to_onednn_weights(
          one, onnx->data<float>() + d * per, in, OnednnWeightsFormat::kLdigo,
          static_cast<float*>(buf->data), last_read && !buf->huge));
      formats(static_cast<int>(d), layer).push_back({ldigo, std::move(buf)});
    }
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(convert(w, I, true));
  ctx.release_input_now(kRnnW);
  RECUR_RETURN_IF_ERROR(convert(r, H, false));
  ctx.release_input_now(kRnnR);
  for (int64_t d = 0; d < Dn; ++d) {
    bias_.emplace_back(bias.begin() + d * Gb * H, bias.begin() + (d + 1) * Gb * H);
    if (has_peephole())
      peephole_.emplace_back(peep.begin() + d * 3 * H, peep.begin() + (d + 1) * 3 * H);
  }
  return ok_status();
}

RECUR_LOAD_PATH void RnnKernel::release_weights(CompileContext& ctx, const Tensor* b,
                                                const Tensor* p) const {
  std::string released = "W, R";  // hold_const_weights has released them already
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
  if (shared_.source)
    ctx.note(released + ": the row team's copy kept; oneDNN's (" + how +
             ") made from it at the first run the primitive takes");
  else
    ctx.note(released + " repacked at load (" + how + ", combined bias); ONNX copies released");
}

// A static X shape without sequence_lens: choose and build the primitives now, so the first
// run pays nothing.
RECUR_LOAD_PATH Status RnnKernel::prepare_static_shape(CompileContext& ctx, int64_t I,
                                                       int64_t H) const {
  const Node& node = ctx.node();
  const int64_t Dn = D();
  const TypeInfo& xt = ctx.input_type(kRnnX);
  if (xt.is_static() && xt.rank() == 3 && !node.has_input(kRnnSeqLens)) {
    const Shape xs = xt.static_shape();
    const int64_t T = spec_.layout == 0 ? xs[0] : xs[1];
    const int64_t N = spec_.layout == 0 ? xs[1] : xs[0];
    // A declared shape oneDNN cannot take is left to the first run, which reports it.
    // Rows another kernel takes (SharedWeights) never reach the primitive.
    const bool elsewhere = N >= 1 && N <= shared_.max_rows;
    if (!elsewhere && xs[2] == I && check_onednn_rnn_shape(T, N, I, H, Dn, geom_.gates()).ok()) {
      const BucketKey bucket{N, I, H, t_class(T), false};
      std::string note;
      RECUR_ASSIGN_OR_RETURN(Choice c, choose(bucket, T, &note));
      if (!note.empty()) ctx.note(note);
      // Timing at load has built the candidates already; otherwise the primitives (JIT code,
      // and the weights in their layout: a second copy of them) wait for the first run unless
      // onednn.prepare=load, which keeps them out of session creation's time and peak memory.
      if (!opts_.prepare_at_load && opts_.tune != OnednnOptions::Tune::kAtLoad) {
        ctx.note("oneDNN primitive built at the first run (onednn.prepare=load: at load), " +
                 c.describe(Dn));
        return ok_status();
      }
      const bool src_iter = node.has_input(kRnnInitialH) || node.has_input(kRnnInitialC);
      const bool dst_iter = node.has_output(kRnnYh) || node.has_output(kRnnYc);
      std::vector<std::shared_ptr<const Plan>> plans;
      const Jobs jobs = jobs_for(c, N);
      RECUR_RETURN_IF_ERROR(uniform_plans(c, jobs, T, time_block(T, N, I, H, c, jobs), N, I, H,
                                          src_iter, dst_iter, plans));
      ctx.note("oneDNN " + plans.front()->impl + ", " + c.describe(Dn));
    }
  }
  return ok_status();
}

}  // namespace rnn

namespace {

// A mid-sized cell (small_cell.h), or without AVX-512 a small one: the small-cell kernel for
// runs of few rows, oneDNN's primitive for the others. Each holds the weights in its own layout.
class RowSplitRnnKernel final : public Kernel {
 public:
  // `jobs`: the small kernel only where it has a job for each thread (a mid-sized cell); a
  // small cell's takes one row on one thread still ahead of the primitive on two.
  RowSplitRnnKernel(std::unique_ptr<Kernel> small, std::unique_ptr<Kernel> primitive, int layout,
                    int64_t D, int64_t cell_macs, int max_threads, int64_t max_rows, bool jobs)
      : small_(std::move(small)),
        primitive_(std::move(primitive)),
        layout_(layout),
        D_(D),
        cell_macs_(cell_macs),
        max_threads_(max_threads),
        max_rows_(max_rows),
        jobs_(jobs) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(kRnnX);
    if (x && x->rank() == 3) {
      const int64_t N = x->dim(layout_ == 0 ? 1 : 0), T = x->dim(layout_ == 0 ? 0 : 1);
      // The small kernel's threads: one a direction, then slices of the rows (small_cell.cc).
      const int threads = threads_for(static_cast<double>(D_ * T * N * cell_macs_), max_threads_);
      if (N >= 1 && N <= max_rows_ && (!jobs_ || D_ * N >= threads)) return small_->run(ctx);
    }
    return primitive_->run(ctx);
  }

 private:
  std::unique_ptr<Kernel> small_, primitive_;
  int layout_;
  int64_t D_, cell_macs_;
  int max_threads_;
  int64_t max_rows_;  // mid_cell_rows or small_cell_rows
  bool jobs_;
};

// The two kernels of a mid-sized cell, or without AVX-512 of a small one (`small_cell`,
// small_cell_rows). The small kernel is made first, under a context that keeps the ONNX weights
// (release_input_now would free them before oneDNN's kernel reads them).
RECUR_LOAD_PATH Result<std::unique_ptr<Kernel>> create_row_split_kernel(CompileContext& ctx,
                                                                        const RnnSpec& spec,
                                                                        bool small_cell) {
  // small_rnn_declined has seen W and R constant, of rank 3.
  const int64_t I = ctx.constant_input(kRnnW)->dim(2), H = ctx.constant_input(kRnnR)->dim(2);
  CompileContext keep(ctx.node(), ctx.graph(), ctx.provider(), ctx.options(), {});
  RECUR_ASSIGN_OR_RETURN(auto small, create_small_rnn_kernel(keep, spec, options_of(ctx)));
  auto primitive = std::make_unique<rnn::RnnKernel>(ctx.node(), spec, options_of(ctx));
  RECUR_RETURN_IF_ERROR(primitive->init(ctx));
  const int64_t rows =
      small_cell ? small_cell_rows(spec) : few_rows_here(mid_cell_rows(core_l2_bytes()));
  const std::string macs = std::to_string(spec.num_gates() * H * (I + H));
  ctx.note(std::string("recur's small-cell ") + spec.cell_name() + " for runs of up to " +
           std::to_string(rows) + " rows" +
           (small_cell ? std::string(" (") + small_cells_isa() +
                             "), oneDNN's primitive for more: " + macs + " multiply-adds a row-step"
                       : std::string(" with a direction or a slice of rows for each thread (") +
                             small_cells_isa() + "), oneDNN's primitive for the others: a " +
                             "mid-sized cell, " + macs + " multiply-adds a row-step"));
  return std::unique_ptr<Kernel>(std::make_unique<RowSplitRnnKernel>(
      std::move(small), std::move(primitive), static_cast<int>(spec.layout), spec.num_directions(),
      spec.num_gates() * H * (I + H), options_of(ctx).max_threads, rows, !small_cell));
}

// A wide LSTM, GRU or RNN (row_team.h): the row-team kernel for runs of up to max_rows rows
// (row_team_rows), oneDNN's primitive for the others. The team holds the weights from load; the
// primitive makes its own layout from the team's at the first run it takes.
class RowTeamRnnKernel final : public Kernel {
 public:
  RowTeamRnnKernel(std::shared_ptr<const Kernel> team, std::unique_ptr<Kernel> primitive,
                   int layout, int64_t max_rows)
      : team_(std::move(team)),
        primitive_(std::move(primitive)),
        layout_(layout),
        max_rows_(max_rows) {}

  // The team also takes runs of no rows and inputs it rejects, so that neither makes the other
  // kernel build its copy of the weights.
  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(kRnnX);
    if (x && x->rank() == 3 && x->dim(layout_ == 0 ? 1 : 0) > max_rows_)
      return primitive_->run(ctx);
    return team_->run(ctx);
  }

 private:
  std::shared_ptr<const Kernel> team_;
  std::unique_ptr<Kernel> primitive_;
  int layout_;
  int64_t max_rows_;
};

RECUR_LOAD_PATH Result<std::unique_ptr<Kernel>> create_row_team_pair(CompileContext& ctx,
                                                                     const RnnSpec& spec) {
  // row_team_declined has seen W and R constant; the team releases them once packed.
  RowTeam team = create_row_team_kernel(ctx, spec, options_of(ctx));
  const int64_t rows = team.max_rows;
  const bool apart = team.apart;
  auto primitive = std::make_unique<rnn::RnnKernel>(ctx.node(), spec, options_of(ctx));
  RECUR_RETURN_IF_ERROR(primitive->init(
      ctx, {std::move(team.weights), rows, std::move(team.w_shape), std::move(team.r_shape)}));
  ctx.note(std::string("recur's row-team ") + spec.cell_name() + " for runs of up to " +
           std::to_string(rows) + " rows" +
           (apart ? ", the two directions at once, a thread each with its W and R packed at load"
                  : ", each thread a slice of the units with its columns of W and R packed at "
                    "load") +
           " (" + small_cells_isa() + "), oneDNN's primitive for the others");
  return std::unique_ptr<Kernel>(std::make_unique<RowTeamRnnKernel>(
      std::move(team.kernel), std::move(primitive), static_cast<int>(spec.layout), rows));
}

// A cell whose clip or activations oneDNN's primitives lack (claim_rnn took it for recur's
// own kernels): recur's kernels for every run, whatever the cell's size, in float32.
RECUR_LOAD_PATH Result<std::unique_ptr<Kernel>> create_general_cell_kernel(CompileContext& ctx,
                                                                           RnnSpec spec) {
  OnednnOptions o = options_of(ctx);
  const std::string why = small_kernel_declined(ctx.node(), ctx.graph(), spec);
  if (!o.small_cells || !why.empty())
    return ctx.error(ErrorCode::kNotImplemented,
                     primitive_math_declined(ctx.node(), spec) +
                         ", and recur's own kernels cannot run it: " +
                         (why.empty() ? "onednn.impl asks for oneDNN's primitive" : why));
  if (o.precision != ProviderConfig::Precision::kFp32) {
    ctx.note("precision fp32 (" +
             std::string(o.precision == ProviderConfig::Precision::kBf16 ? "bf16" : "int8") +
             " asked for): recur's own kernels, which run this cell's clip or activations, are "
             "float32");
    o.precision = ProviderConfig::Precision::kFp32;
  }
  if (!row_team_declined(ctx, spec, o).empty())
    return create_small_rnn_kernel(ctx, std::move(spec), o);
  // A wide cell: the row team for its few rows, as a default cell's, and the small-cell kernel
  // for more (no primitive can take those), built from the team's slices at the first run that
  // has more rows, as a default cell's primitive is: a node whose runs all take the team holds
  // its weights once.
  RowTeam team = create_row_team_kernel(ctx, spec, o);
  const int64_t rows = team.max_rows;
  RECUR_ASSIGN_OR_RETURN(auto small,
                         create_deferred_small_rnn_kernel(ctx, spec, o, std::move(team.weights),
                                                          team.w_shape, team.r_shape));
  ctx.note(std::string("recur's row-team ") + spec.cell_name() + " for runs of up to " +
           std::to_string(rows) + " rows (" + small_cells_isa() +
           "), its small-cell kernel for more (its weights packed from the team's at the first "
           "such run), every run: " +
           primitive_math_declined(ctx.node(), spec));
  return std::unique_ptr<Kernel>(std::make_unique<RowTeamRnnKernel>(
      std::move(team.kernel), std::move(small), static_cast<int>(spec.layout), rows));
}

}  // namespace

RECUR_LOAD_PATH Result<std::unique_ptr<Kernel>> create_rnn_kernel(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(RnnSpec spec, RnnSpec::parse(ctx.node()));
  if (!primitive_math_declined(ctx.node(), spec).empty())
    return create_general_cell_kernel(ctx, std::move(spec));
  if (options_of(ctx).precision == ProviderConfig::Precision::kInt8) {
    const std::string why = int8_lstm_unsupported(ctx);
    if (why.empty()) return create_int8_lstm_kernel(ctx);
    ctx.note("int8 declined (" + why + "): runs float32");
  }
  if (small_rnn_declined(ctx, spec, options_of(ctx)).empty()) {
    if (small_cell_rows(spec) > 0) return create_row_split_kernel(ctx, spec, true);
    return create_small_rnn_kernel(ctx, std::move(spec), options_of(ctx));
  }
  if (small_rnn_declined(ctx, spec, options_of(ctx), true).empty())
    return create_row_split_kernel(ctx, spec, false);
  if (row_team_declined(ctx, spec, options_of(ctx)).empty()) return create_row_team_pair(ctx, spec);
  auto k = std::make_unique<rnn::RnnKernel>(ctx.node(), std::move(spec), options_of(ctx));
  RECUR_RETURN_IF_ERROR(k->init(ctx));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace recur::onednn
