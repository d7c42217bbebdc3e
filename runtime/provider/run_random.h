// The random state of one run, read by the random operators (RandomNormal, RandomUniform, their
// -Like forms, Bernoulli, Multinomial, Dropout in training mode).
//
// Every draw is counter-based: element i of a draw is a hash of (the draw's key, i), so a
// draw's values do not depend on how it is split over threads, and a run's values depend only
// on its seed and the order of its draws. The executor runs a plan's nodes, and a Loop's
// iterations, in a fixed order, so a run's n-th draw is the same node every time.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

namespace recur {

// SplitMix64's finaliser: a bijection of 64-bit words that mixes every input bit into every
// output bit.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class RunRandom {
 public:
  explicit RunRandom(uint64_t seed) : seed_(seed) {}
  RunRandom(const RunRandom&) = delete;
  RunRandom& operator=(const RunRandom&) = delete;

  uint64_t seed() const { return seed_; }
  // The index of the run's next draw: 0, 1, 2, ... in execution order.
  uint64_t next_draw() const { return draws_.fetch_add(1, std::memory_order_relaxed); }

 private:
  uint64_t seed_;
  mutable std::atomic<uint64_t> draws_{0};
};

// One draw: a stream of independent uniform 64-bit words, addressed by element index.
struct RandomDraw {
  uint64_t key = 0;

  // `seed` is the node's seed attribute when it has one, else the run's seed; `draw` numbers
  // the draw within the run, so that a node inside a Loop draws new values each iteration.
  static RandomDraw make(uint64_t seed, uint64_t draw) {
    return {mix64(seed + 0x9E3779B97F4A7C15ull * (draw + 1))};
  }
  uint64_t bits(uint64_t i) const { return mix64(key ^ mix64(i + 0x632BE59BD9B4E019ull)); }
  // Uniform in [0, 1), with 53 random bits.
  double uniform(uint64_t i) const { return static_cast<double>(bits(i) >> 11) * 0x1.0p-53; }
};

}  // namespace recur
