// Shape buckets: an input size of a convolution that has no primitive of its own (ExactPlans,
// prim_cache.h: past the first few sizes, unless it comes back often) runs on the primitive of
// a slightly larger size, shared by every size that rounds up to it, with X copied into a
// zero-padded buffer and Y cut back. oneDNN generates code for each primitive (0.5 to 0.7 ms
// for each of a DeepSpeech2's two convolutions), so a session fed utterances or lines of all
// different lengths paid that at nearly every run, where ONNX Runtime's kernels, generated
// for no shape, pay nothing; and each size's primitive stayed resident.
#pragma once

#include <cstdint>
#include <span>

namespace recur::onednn {

// `n` rounded up to its bucket: sizes below 32 are their own; above, to a multiple of
// 2^floor(log2 n) / 16, so that a bucket pads less than 1/16 of the size (a coarser step cost
// an OCR line reader's last convolutions, 40 to 60 wide, up to 14% more work on every run),
// and the sizes of each octave fall into 16 buckets.
int64_t bucket_size(int64_t n);

// Copies the region that `from` (dims `from_dims`) and `to` (dims `to_dims`, of the same rank)
// share, and zeros the rest of `to`. Both are row-major float32 with `inner` contiguous floats
// at each position (16 for a channel-blocked tensor's [N, C/16, H, W] positions, else 1).
void copy_window(const float* from, std::span<const int64_t> from_dims, float* to,
                 std::span<const int64_t> to_dims, int64_t inner);

}  // namespace recur::onednn
