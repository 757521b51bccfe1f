// q8_0 weights x f32 vector: out[o] = dot(W[o], x), the decode-time hot loop for q8_0 models.
//
// x is quantized to int8 blocks once (quantize_act_q8), so each weight block costs one 32-byte
// integer dot: sum(w*x) = sum(|w| * (x * sign(w))), the form vpdpbusd (u8 x s8) accepts. The block
// result is scaled by d_w*d_x in f32. Four rows share each load of x to keep the loop bound by the
// weight stream, which is the point: q8_0 is ~3.8x fewer bytes than f32.
#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

namespace {

inline float dot_block_scalar(const block_q8_0& w, const int8_t* xq) {
  int32_t s = 0;
  for (int j = 0; j < k_qblock; ++j) s += (int32_t)w.qs[j] * (int32_t)xq[j];
  return (float)s;
}

#if defined(WB_QUANT_AVX2)
inline __m256i dot_block_q8(const block_q8_0& w, __m256i xv) {
  const __m256i wv = _mm256_loadu_si256((const __m256i*)w.qs);
  return dot_u8s8_acc(_mm256_setzero_si256(), _mm256_abs_epi8(wv), _mm256_sign_epi8(xv, wv));
}
#endif

}  // namespace

void matvec_q8_0_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  const int C = x.C;
  const int nb = C / k_qblock;
  const auto* rows = static_cast<const block_q8_0*>(W);
  int64_t o = row_begin;
#if defined(WB_QUANT_AVX2)
  for (; o + 4 <= row_end; o += 4) {
    const block_q8_0* w0 = rows + o * nb;
    const block_q8_0* w1 = w0 + nb;
    const block_q8_0* w2 = w1 + nb;
    const block_q8_0* w3 = w2 + nb;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const __m256i xv = _mm256_loadu_si256((const __m256i*)(x.q.data() + (size_t)b * k_qblock));
      const float dx = x.d[b];
      a0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q8(w0[b], xv)), _mm256_set1_ps(dx * half_to_f32(w0[b].d)), a0);
      a1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q8(w1[b], xv)), _mm256_set1_ps(dx * half_to_f32(w1[b].d)), a1);
      a2 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q8(w2[b], xv)), _mm256_set1_ps(dx * half_to_f32(w2[b].d)), a2);
      a3 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q8(w3[b], xv)), _mm256_set1_ps(dx * half_to_f32(w3[b].d)), a3);
    }
    out[o] = hsum_ps256(a0);
    out[o + 1] = hsum_ps256(a1);
    out[o + 2] = hsum_ps256(a2);
    out[o + 3] = hsum_ps256(a3);
  }
  for (; o < row_end; ++o) {
    const block_q8_0* w = rows + o * nb;
    __m256 a = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const __m256i xv = _mm256_loadu_si256((const __m256i*)(x.q.data() + (size_t)b * k_qblock));
      a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q8(w[b], xv)), _mm256_set1_ps(x.d[b] * half_to_f32(w[b].d)), a);
    }
    out[o] = hsum_ps256(a);
  }
#else
  for (; o < row_end; ++o) {
    const block_q8_0* w = rows + o * nb;
    float s = 0.f;
    for (int b = 0; b < nb; ++b)
      s += dot_block_scalar(w[b], x.q.data() + (size_t)b * k_qblock) * (x.d[b] * half_to_f32(w[b].d));
    out[o] = s;
  }
#endif
}

void matvec_q8_0(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end) {
  // Thread-local so concurrent row ranges from a pool never share (or reallocate) the buffer.
  thread_local q8_act xq;
  quantize_act_q8(x, C, xq);
  matvec_q8_0_act(out, W, xq, row_begin, row_end);
}

}  // namespace engine
