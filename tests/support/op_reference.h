// Test helpers shared by the op tests (forward, backward, typed matmul): seeded inputs and the error
// measure every op is held to against its double-precision reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

// n values from N(0, scale), deterministic in `seed`.
inline std::vector<float> random_vec(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Largest |a-b| / (1 + |b|): relative for big values, absolute near zero.
inline double max_rel_err(const std::vector<float>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < b.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]) / (1.0 + std::abs(b[i])));
  return m;
}
