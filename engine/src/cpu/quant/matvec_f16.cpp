// f16 weights x f32 vector: out[o] = dot(W[o], x), accumulated in f32.
//
// Half the bytes of f32 and no activation rounding. F16C widens 8 (AVX2) or 16 (AVX-512) halves
// per instruction, so the loop stays bound by the weight stream; four rows share each x load,
// like matvec_rows in simd_dot.h.
#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

namespace {
inline float dot_f16_scalar(const uint16_t* w, const float* x, int begin, int C) {
  float s = 0.f;
  for (int i = begin; i < C; ++i) s += half_to_f32(w[i]) * x[i];
  return s;
}
}  // namespace

void matvec_f16(float* out, const uint16_t* W, const float* x, int C, int64_t row_begin, int64_t row_end) {
  int64_t o = row_begin;
#if defined(__AVX512F__)
  for (; o + 4 <= row_end; o += 4) {
    const uint16_t* w0 = W + o * C;
    const uint16_t* w1 = w0 + C;
    const uint16_t* w2 = w1 + C;
    const uint16_t* w3 = w2 + C;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 16 <= C; i += 16) {
      const __m512 xv = _mm512_loadu_ps(x + i);
      a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w0 + i))), xv, a0);
      a1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w1 + i))), xv, a1);
      a2 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w2 + i))), xv, a2);
      a3 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w3 + i))), xv, a3);
    }
    out[o] = _mm512_reduce_add_ps(a0) + dot_f16_scalar(w0, x, i, C);
    out[o + 1] = _mm512_reduce_add_ps(a1) + dot_f16_scalar(w1, x, i, C);
    out[o + 2] = _mm512_reduce_add_ps(a2) + dot_f16_scalar(w2, x, i, C);
    out[o + 3] = _mm512_reduce_add_ps(a3) + dot_f16_scalar(w3, x, i, C);
  }
  for (; o < row_end; ++o) {
    const uint16_t* w = W + o * C;
    __m512 a = _mm512_setzero_ps();
    int i = 0;
    for (; i + 16 <= C; i += 16)
      a = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w + i))), _mm512_loadu_ps(x + i), a);
    out[o] = _mm512_reduce_add_ps(a) + dot_f16_scalar(w, x, i, C);
  }
#elif defined(WB_QUANT_AVX2) && defined(__F16C__)
  for (; o + 4 <= row_end; o += 4) {
    const uint16_t* w0 = W + o * C;
    const uint16_t* w1 = w0 + C;
    const uint16_t* w2 = w1 + C;
    const uint16_t* w3 = w2 + C;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= C; i += 8) {
      const __m256 xv = _mm256_loadu_ps(x + i);
      a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w0 + i))), xv, a0);
      a1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w1 + i))), xv, a1);
      a2 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w2 + i))), xv, a2);
      a3 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w3 + i))), xv, a3);
    }
    out[o] = hsum_ps256(a0) + dot_f16_scalar(w0, x, i, C);
    out[o + 1] = hsum_ps256(a1) + dot_f16_scalar(w1, x, i, C);
    out[o + 2] = hsum_ps256(a2) + dot_f16_scalar(w2, x, i, C);
    out[o + 3] = hsum_ps256(a3) + dot_f16_scalar(w3, x, i, C);
  }
  for (; o < row_end; ++o) {
    const uint16_t* w = W + o * C;
    __m256 a = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= C; i += 8)
      a = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w + i))), _mm256_loadu_ps(x + i), a);
    out[o] = hsum_ps256(a) + dot_f16_scalar(w, x, i, C);
  }
#endif
  for (; o < row_end; ++o) out[o] = dot_f16_scalar(W + o * C, x, 0, C);
}

}  // namespace engine
