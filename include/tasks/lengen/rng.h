#pragma once
// A specified generator with our own distributions: std::uniform_int_distribution and
// friends differ between standard libraries, and data must be identical on every machine.
#include <cstdint>
#include <random>

namespace lengen {

using Rng = std::mt19937_64;

// Uniform integer in [lo, hi] (inclusive), by rejection so there is no modulo bias.
inline int64_t uniform_int(Rng& rng, int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<int64_t>(rng());
  const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  uint64_t draw;
  do {
    draw = rng();
  } while (draw >= limit);
  return lo + static_cast<int64_t>(draw % span);
}

// Uniform double in [0, 1) from the top 53 bits.
inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

inline bool bernoulli(Rng& rng, double p) { return uniform01(rng) < p; }

// Derives an independent stream seed from a base seed and a label (splitmix64 mixing).
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace lengen
