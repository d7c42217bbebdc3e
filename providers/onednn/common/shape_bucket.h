// Shape buckets: the first runs of an input size a kernel has not seen go through a primitive
// made for a slightly larger size, shared by every size that rounds up to it, with X copied
// into a zero-padded buffer and Y cut back. oneDNN generates code for each primitive (a few
// hundred microseconds a convolution), so a session fed lines or utterances of all different
// lengths paid that at every run: an OCR line reader ran a new width in 4.3 ms against 2.2
// once seen, where ONNX Runtime's kernels, generated for no shape, take 2.4 either way. The
// primitive of the exact size is made once a size has come back (its runs lose the padding).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>

namespace recur::onednn {

// `n` rounded up to its bucket: sizes below 16 are their own; above, to a multiple of
// max(8, 2^floor(log2 n) / 16), so that a bucket pads at most 1/16 of the size (8 positions
// below 128), and sizes of 100 to 340 fall into 26 buckets.
int64_t bucket_size(int64_t n);

// Copies the region that `from` (dims `from_dims`) and `to` (dims `to_dims`, of the same rank)
// share, and zeros the rest of `to`. Both are row-major float32 with `inner` contiguous floats
// at each position (16 for a channel-blocked tensor's [N, C/16, H, W] positions, else 1).
void copy_window(const float* from, std::span<const int64_t> from_dims, float* to,
                 std::span<const int64_t> to_dims, int64_t inner);

// Runs that went through a bucket's primitives in this process (their tests count them).
int64_t bucketed_runs();
void count_bucketed_run();

// How many times each key has been seen; forgets every key when it holds `capacity`, so that
// a stream of sizes that never come back keeps it bounded.
template <class Key>
class Sightings {
 public:
  // The count of `key`, this sighting included.
  int64_t bump(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kCapacity && map_.find(key) == map_.end()) map_.clear();
    return ++map_[key];
  }

 private:
  static constexpr size_t kCapacity = 1024;
  std::mutex mu_;
  std::map<Key, int64_t> map_;
};

}  // namespace recur::onednn
