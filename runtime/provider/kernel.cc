#include "runtime/provider/kernel.h"

#include <algorithm>

namespace recur {

namespace {

// The calling thread's SubgraphOutputs vectors: [0, depth) are in use. Each vector is a block
// of its own, so that growing the stack leaves the ones in use where they are.
struct OutputsStack {
  std::vector<std::unique_ptr<std::vector<Tensor>>> vectors;
  size_t depth = 0;
};
thread_local OutputsStack t_outputs;

}  // namespace

SubgraphOutputs::SubgraphOutputs() {
  OutputsStack& s = t_outputs;
  if (s.depth == s.vectors.size()) s.vectors.push_back(std::make_unique<std::vector<Tensor>>());
  tensors_ = s.vectors[s.depth++].get();
}

SubgraphOutputs::~SubgraphOutputs() {
  tensors_->clear();
  --t_outputs.depth;
}

Tensor* KernelContext::output_over_input(DType dtype, const Shape& shape) {
  const size_t n = std::min<size_t>({inputs_.size(), last_reads_.size(), 32});
  for (size_t k = 0; k < n; ++k) {
    if (!(overwritable_ >> k & 1u) || !last_reads_[k] || inputs_[k] == kNoValue) continue;
    const Tensor& x = frame_[static_cast<size_t>(inputs_[k])];
    if (!x.is_tensor() || x.dtype() != dtype || x.device() != device_ ||
        x.numel() != shape_numel(shape) || !placer_->reusable(x, inputs_[k], outputs_[0]))
      continue;
    Tensor& slot = frame_[static_cast<size_t>(outputs_[0])];
    slot = Tensor::wrap(x.owner(), const_cast<void*>(x.raw_data()), dtype, shape, device_);
    return &slot;
  }
  return nullptr;
}

Result<Tensor*> KernelContext::allocate_output(size_t i, DType dtype, const Shape& shape) {
  if (i >= outputs_.size()) {
    return error(ErrorCode::kInternal, "output index " + std::to_string(i) + " out of range");
  }
  if (i == 0 && overwritable_ && placer_ && outputs_[0] != kNoValue) {
    if (Tensor* t = output_over_input(dtype, shape)) return t;
  }
  if (placer_ && outputs_[i] != kNoValue) {
    Tensor& slot = frame_[static_cast<size_t>(outputs_[i])];
    if (placer_->place(outputs_[i], dtype, shape, device_, slot)) return &slot;
  }
  Tensor t;
  try {
    t = Tensor::empty(dtype, shape, device_);
  } catch (const Error& e) {
    return error(e.code(), e.what());
  }
  if (outputs_[i] == kNoValue) {
    discarded_.push_back(std::move(t));
    return &discarded_.back();
  }
  Tensor& slot = frame_[static_cast<size_t>(outputs_[i])];
  slot = std::move(t);
  return &slot;
}

Status KernelContext::set_output(size_t i, Tensor t) {
  if (i >= outputs_.size()) {
    return error(ErrorCode::kInternal, "output index " + std::to_string(i) + " out of range");
  }
  if (outputs_[i] == kNoValue) return ok_status();
  frame_[static_cast<size_t>(outputs_[i])] = std::move(t);
  return ok_status();
}

}  // namespace recur
