#include "providers/cuda/rnn/cudnn_rnn_plan.h"

namespace recur::cuda {

std::vector<PersistentAlgo> persistent_candidates(const CudnnRnnGeometry& g, DType dtype, int64_t N,
                                                  CudaOptions::Persistent mode,
                                                  const GpuTraits& gpu) {
  using Mode = CudaOptions::Persistent;
  std::vector<PersistentAlgo> algos;
  const int64_t H = g.hidden_size;
  switch (mode) {
    case Mode::kSmallH:
      return {PersistentAlgo::kStaticSmallH};
    case Mode::kStatic:
      return {PersistentAlgo::kStatic};
    case Mode::kDynamic:
      return {PersistentAlgo::kDynamic};
    default:
      break;
  }
  if (mode == Mode::kOn) {
    if (g.cell != RnnCell::kRnn && H <= 192) algos.push_back(PersistentAlgo::kStaticSmallH);
    algos.push_back(PersistentAlgo::kStatic);
    algos.push_back(PersistentAlgo::kDynamic);
    return algos;
  }
  if (mode != Mode::kAuto || gpu.major < 6) return algos;
  // Not for RNN: on the H200 its small-H kernel was off from the reference by up to 0.3%
  // (CudnnGpu.RandomParityWithReference), where STANDARD agrees to float32 rounding.
  if (g.cell != RnnCell::kRnn && H <= 192) {
    algos.push_back(PersistentAlgo::kStaticSmallH);
    return algos;
  }
  const bool shape = dtype == DType::kFloat16 && g.num_layers == 1 && g.directions == 1 &&
                     H <= 1024 && H % 128 == 0 && g.input_size % 128 == 0;
  const bool device = gpu.major >= 8 && gpu.minor != 6 && gpu.multiprocessors >= 98;
  const bool batch = N % 8 == 0 && N <= 128;
  bool take = false;
  switch (g.cell) {
    case RnnCell::kLstm:
      take = batch;
      break;
    case RnnCell::kRnn:
      take = batch && (N < 96 || H < 896);
      break;
    case RnnCell::kGru:
      break;
  }
  if (shape && device && take) algos.push_back(PersistentAlgo::kStatic);
  return algos;
}

CudnnRunPlan plan_cudnn_run(const RnnSpec& spec, const RnnDims& dims, const int32_t* lengths,
                            bool want_y, bool want_yh, bool want_yc) {
  CudnnRunPlan p;
  p.cell = spec.cell;
  p.layout = spec.layout;
  p.T = dims.seq_length;
  p.N = dims.batch;
  p.I = dims.input_size;
  p.H = dims.hidden;
  p.D = dims.directions;
  p.want_y = want_y;
  p.want_yh = want_yh;
  p.want_yc = want_yc && spec.cell == RnnCell::kLstm;
  p.reverse = spec.direction == RnnDirection::kReverse;
  p.bidir_reorder = p.layout == 0 && p.D == 2;
  p.transpose_states = p.layout == 1 && p.D > 1 && p.N > 1;
  p.y_to_scratch = p.reverse || p.bidir_reorder || !want_y;
  p.lengths.resize(static_cast<size_t>(p.N));
  p.cudnn_lengths.resize(static_cast<size_t>(p.N));
  for (int64_t n = 0; n < p.N; ++n) {
    const int32_t len = lengths ? lengths[n] : static_cast<int32_t>(p.T);
    p.lengths[static_cast<size_t>(n)] = len;
    p.cudnn_lengths[static_cast<size_t>(n)] = len == 0 ? 1 : len;
    if (len != p.T) p.full_lengths = false;
    if (len == 0) p.zero_batches.push_back(static_cast<int32_t>(n));
  }
  return p;
}

Status execute_cudnn_run(const CudnnRunPlan& p, const CudnnRunBuffers& b,
                         CudnnRunBackend& backend) {
  CudnnForwardArgs f;
  f.x = b.x;
  if (p.reverse) {
    RECUR_ASSIGN_OR_RETURN(void* xr, backend.scratch(p.x_elems()));
    RECUR_RETURN_IF_ERROR(backend.reverse_sequences(b.x, xr, p.I, p));
    f.x = xr;
  }
  f.hx = b.h0;
  f.cx = p.cell == RnnCell::kLstm ? b.c0 : nullptr;
  if (p.transpose_states) {
    if (f.hx) {
      RECUR_ASSIGN_OR_RETURN(void* h, backend.scratch(p.state_elems()));
      RECUR_RETURN_IF_ERROR(backend.transpose_states(f.hx, h, p.N, p.D, p.H));
      f.hx = h;
    }
    if (f.cx) {
      RECUR_ASSIGN_OR_RETURN(void* c, backend.scratch(p.state_elems()));
      RECUR_RETURN_IF_ERROR(backend.transpose_states(f.cx, c, p.N, p.D, p.H));
      f.cx = c;
    }
  }
  void* yh = p.want_yh ? b.yh : nullptr;
  void* yc = p.want_yc ? b.yc : nullptr;
  f.hy = yh;
  f.cy = yc;
  if (p.transpose_states) {
    if (yh) {
      RECUR_ASSIGN_OR_RETURN(f.hy, backend.scratch(p.state_elems()));
    }
    if (yc) {
      RECUR_ASSIGN_OR_RETURN(f.cy, backend.scratch(p.state_elems()));
    }
  }
  void* y = p.want_y ? b.y : nullptr;
  f.y = y;
  if (p.y_to_scratch) {
    RECUR_ASSIGN_OR_RETURN(f.y, backend.scratch(p.y_elems()));
  }

  RECUR_RETURN_IF_ERROR(backend.forward(f, p));

  if (y) {
    if (p.reverse) {
      RECUR_RETURN_IF_ERROR(backend.reverse_sequences(f.y, y, p.D * p.H, p));
    } else if (p.bidir_reorder) {
      RECUR_RETURN_IF_ERROR(backend.bidir_to_onnx(f.y, y, p));
    }
    // Steps past each length are zero in ONNX; a length of 0 ran as 1 and its step 0 goes.
    if (!p.full_lengths) RECUR_RETURN_IF_ERROR(backend.mask_y(y, p));
  }
  if (p.transpose_states) {
    if (yh) RECUR_RETURN_IF_ERROR(backend.transpose_states(f.hy, yh, p.D, p.N, p.H));
    if (yc) RECUR_RETURN_IF_ERROR(backend.transpose_states(f.cy, yc, p.D, p.N, p.H));
  }
  // Zero-length batches: zero states. [D,N,H] for layout 0; [N,D,H] for layout 1.
  for (int32_t n : p.zero_batches) {
    for (void* s : {yh, yc}) {
      if (!s) continue;
      if (p.layout == 0) {
        for (int64_t d = 0; d < p.L * p.D; ++d) {
          RECUR_RETURN_IF_ERROR(backend.zero(s, (d * p.N + n) * p.H, p.H));
        }
      } else {
        RECUR_RETURN_IF_ERROR(backend.zero(s, n * p.D * p.H, p.D * p.H));
      }
    }
  }
  return ok_status();
}

}  // namespace recur::cuda
