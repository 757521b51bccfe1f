// Branch-free elementwise math for the CPU backend's activation loops, written so GCC vectorises
// them (glibc's scalar expf/tanhf cost ~12% of a GPT-2 prefill).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace engine {

// exp(x) for x in [-87, 88] (clamped outside), relative error < 2e-7: x = n ln2 + r with |r| <= ln2/2,
// exp(r) by a degree-6 Taylor/minimax polynomial, 2^n built in the exponent bits.
inline float fast_expf(float x) {
  // Comparisons, not std::fmin / fmax: those are library calls in GCC without -ffast-math, which
  // kept every loop calling this from vectorising (NaN still propagates).
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
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

#if defined(__AVX2__) && defined(__FMA__)
// fast_expf on 8 lanes, the same operations in the same order (so the same results): GCC does
// not vectorise the scalar form (the int conversion and bit cast stop it).
inline __m256 fast_expf8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-1.428606765330187045e-06f),
                                   _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693145751953125f), x));
  __m256 p = _mm256_set1_ps(1.3888889e-3f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3333333e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1666667e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666667e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// gelu_tanh on 8 lanes.
inline __m256 gelu_tanh8(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f), x), x), x);
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f), _mm256_add_ps(x, x3));
  const __m256 e = fast_expf8(_mm256_mul_ps(_mm256_set1_ps(-2.0f), u));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}
#endif

// GPT-2's tanh-approximated GELU. 0.5 (1 + tanh(u)) = sigmoid(2u), so gelu(x) = x / (1 + exp(-2u)).
inline float gelu_tanh(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x / (1.0f + fast_expf(-2.0f * u));
}

}  // namespace engine
