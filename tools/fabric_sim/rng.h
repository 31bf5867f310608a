// Deterministic, platform-independent PRNG (splitmix64). std:: distributions are not used
// because their output is implementation-defined, and the simulator's output must be the same
// for a given seed on every platform.
#pragma once

#include <cstdint>

namespace rdma_fabric_sim {

inline uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t MixSeed(uint64_t a, uint64_t b) {
  return SplitMix(a ^ SplitMix(b + 0x632be59bd9b4e019ULL));
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}
  // The splitmix64 step: advance by the golden gamma, then mix (SplitMix adds the gamma itself).
  uint64_t Next() {
    const uint64_t previous = state_;
    state_ += 0x9e3779b97f4a7c15ULL;
    return SplitMix(previous);
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [lo, hi] (inclusive).
  uint64_t Uniform(uint64_t lo, uint64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = hi - lo + 1;
    if (span == 0) return Next();
    return lo + Next() % span;
  }
  bool Chance(double p) { return Unit() < p; }

 private:
  uint64_t state_;
};

}  // namespace rdma_fabric_sim
