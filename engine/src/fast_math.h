// Branch-free elementwise math for the CPU backend's activation loops, written so GCC vectorises
// them (glibc's scalar expf/tanhf cost ~12% of a GPT-2 prefill).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace engine {

// exp(x) for x in [-87, 88] (clamped outside), relative error < 2e-7: x = n ln2 + r with |r| <= ln2/2,
// exp(r) by a degree-6 Taylor/minimax polynomial, 2^n built in the exponent bits.
inline float fast_expf(float x) {
  x = std::fmin(std::fmax(x, -87.0f), 88.0f);
  const float n = std::nearbyint(x * 1.44269504088896341f);
  // Cody-Waite: subtract the exact high part of n ln2 first (no rounding), then the low part.
  const float r = std::fma(n, -1.428606765330187045e-06f, std::fma(n, -0.693145751953125f, x));
  float p = 1.3888889e-3f;
  p = std::fma(p, r, 8.3333333e-3f);
  p = std::fma(p, r, 4.1666667e-2f);
  p = std::fma(p, r, 1.6666667e-1f);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return p * scale;
}

// GPT-2's tanh-approximated GELU. 0.5 (1 + tanh(u)) = sigmoid(2u), so gelu(x) = x / (1 + exp(-2u)).
inline float gelu_tanh(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x / (1.0f + fast_expf(-2.0f * u));
}

}  // namespace engine
