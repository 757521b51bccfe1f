// The dropout mask as a pure function of (seed, index): element i is kept when the i-th output of
// splitmix64 started at `seed` is at least p (in 24-bit fixed point). Nothing is stored: the forward,
// the backward and a checkpointed recompute of the forward all ask the same question and get the same
// answer, and a resumed run given the same seeds draws the same masks as an uninterrupted one.
#pragma once

#include <cstdint>

namespace engine {

inline uint64_t splitmix64_at(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Keep-scale of element i: 0 (dropped) or 1/(1-p). p must be in [0, 1).
inline float dropout_scale(uint64_t seed, uint64_t i, float p) {
  const float u = static_cast<float>(splitmix64_at(seed, i) >> 40) * (1.0f / 16777216.0f);
  return u >= p ? 1.0f / (1.0f - p) : 0.0f;
}

// Seeds for distinct dropout sites (layer, site) derived from one step seed, so that no two sites share
// a mask.
inline uint64_t dropout_site_seed(uint64_t step_seed, uint64_t layer, uint64_t site) {
  return splitmix64_at(splitmix64_at(step_seed, layer), site);
}

}  // namespace engine
