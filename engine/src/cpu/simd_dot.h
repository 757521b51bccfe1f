// Dot products and matrix-vector rows for the CPU backend, explicitly vectorised: GCC does not
// vectorise float reductions without -ffast-math, and decode speed is decided by these loops.
#pragma once

#include <cstdint>

#include "simd_intrinsics.h"

namespace engine {

#if defined(__AVX2__) && defined(__FMA__)
inline float hsum256(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  __m128 sh = _mm_movehdup_ps(lo);
  __m128 s = _mm_add_ps(lo, sh);
  sh = _mm_movehl_ps(sh, s);
  s = _mm_add_ss(s, sh);
  return _mm_cvtss_f32(s);
}
#endif

inline float dot_f32(const float* a, const float* b, int n) {
  int i = 0;
  float sum = 0.f;
#if defined(__AVX2__) && defined(__FMA__)
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  sum = hsum256(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// out[o] = dot(W[o], x) for o in [begin, end); W is (OC, C) row-major. Four rows at a time so each
// load of x is reused four times; with AVX-512 the wider loads keep more bytes in flight per
// instruction, which is what a bandwidth-bound loop needs.
inline void matvec_rows(float* out, const float* W, const float* x, int C, int64_t begin, int64_t end) {
  int64_t o = begin;
#if defined(__AVX512F__)
  for (; o + 4 <= end; o += 4) {
    const float* w0 = W + o * C;
    const float* w1 = w0 + C;
    const float* w2 = w1 + C;
    const float* w3 = w2 + C;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 16 <= C; i += 16) {
      const __m512 xv = _mm512_loadu_ps(x + i);
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + i), xv, a0);
      a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + i), xv, a1);
      a2 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + i), xv, a2);
      a3 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + i), xv, a3);
    }
    float s0 = _mm512_reduce_add_ps(a0), s1 = _mm512_reduce_add_ps(a1), s2 = _mm512_reduce_add_ps(a2),
          s3 = _mm512_reduce_add_ps(a3);
    for (; i < C; ++i) {
      s0 += w0[i] * x[i];
      s1 += w1[i] * x[i];
      s2 += w2[i] * x[i];
      s3 += w3[i] * x[i];
    }
    out[o] = s0;
    out[o + 1] = s1;
    out[o + 2] = s2;
    out[o + 3] = s3;
  }
#elif defined(__AVX2__) && defined(__FMA__)
  for (; o + 4 <= end; o += 4) {
    const float* w0 = W + o * C;
    const float* w1 = w0 + C;
    const float* w2 = w1 + C;
    const float* w3 = w2 + C;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= C; i += 8) {
      const __m256 xv = _mm256_loadu_ps(x + i);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + i), xv, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w1 + i), xv, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w2 + i), xv, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w3 + i), xv, a3);
    }
    float s0 = hsum256(a0), s1 = hsum256(a1), s2 = hsum256(a2), s3 = hsum256(a3);
    for (; i < C; ++i) {
      s0 += w0[i] * x[i];
      s1 += w1[i] * x[i];
      s2 += w2[i] * x[i];
      s3 += w3[i] * x[i];
    }
    out[o] = s0;
    out[o + 1] = s1;
    out[o + 2] = s2;
    out[o + 3] = s3;
  }
#endif
  for (; o < end; ++o) out[o] = dot_f32(W + o * C, x, C);
}

}  // namespace engine
