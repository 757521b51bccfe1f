// q4_K weights x f32 vector: out[o] = dot(W[o], x) for GGUF q4_K tensors.
//
// Each 32-weight sub-block j of a super-block is w = (d*sc_j)*q - (dmin*m_j) with q in 0..15, and
// sub-blocks line up with the 32-element int8 activation blocks, so per sub-block
//   sum(w*x) = dx * (d*sc_j * sum(q*xq) - dmin*m_j * sum(xq))
// with sum(xq) already stored by quantize_act_q8. The portable byte loop is the fallback for the
// AVX2 path; scales come from q4_K_scale_min (quant_blocks.h), shared with the dequantizer.
#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

namespace {


[[maybe_unused]] float dot_row_q4_K(const block_q4_K* w, const q8_act& x, int nsb) {
  float acc = 0.f;
  for (int s = 0; s < nsb; ++s) {
    const float d = half_to_f32(w[s].d), dmin = half_to_f32(w[s].dmin);
    for (int c = 0; c < 4; ++c) {
      const uint8_t* q = w[s].qs + 32 * c;
      const int b0 = s * 8 + 2 * c;  // activation blocks of the low / high nibble sub-blocks
      const int8_t* x0 = x.q.data() + (size_t)b0 * k_qblock;
      const int8_t* x1 = x0 + k_qblock;
      int32_t s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        s0 += (int32_t)(q[l] & 15) * x0[l];
        s1 += (int32_t)(q[l] >> 4) * x1[l];
      }
      int sc0, m0, sc1, m1;
      q4_K_scale_min(w[s].scales, 2 * c, sc0, m0);
      q4_K_scale_min(w[s].scales, 2 * c + 1, sc1, m1);
      acc += x.d[b0] * (d * (float)(sc0 * s0) - dmin * (float)(m0 * x.sum[b0]));
      acc += x.d[b0 + 1] * (d * (float)(sc1 * s1) - dmin * (float)(m1 * x.sum[b0 + 1]));
    }
  }
  return acc;
}

#if defined(WB_QUANT_AVX2)
// Same arithmetic, 32 weights per vpdpbusd: a chunk's 32 bytes give sub-block 2c in the low
// nibbles and 2c+1 in the high nibbles, both unsigned, so no sign trick is needed. The min terms
// are per-sub-block scalars and stay in a scalar accumulator.
float dot_row_q4_K_avx2(const block_q4_K* w, const q8_act& x, int nsb) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.f;
  for (int s = 0; s < nsb; ++s) {
    const float d = half_to_f32(w[s].d), dmin = half_to_f32(w[s].dmin);
    for (int c = 0; c < 4; ++c) {
      const int b0 = s * 8 + 2 * c;
      const __m256i q = _mm256_loadu_si256((const __m256i*)(w[s].qs + 32 * c));
      const __m256i x0 = _mm256_loadu_si256((const __m256i*)(x.q.data() + (size_t)b0 * k_qblock));
      const __m256i x1 = _mm256_loadu_si256((const __m256i*)(x.q.data() + (size_t)(b0 + 1) * k_qblock));
      const __m256i p0 = dot_u8s8_acc(_mm256_setzero_si256(), _mm256_and_si256(q, m4), x0);
      const __m256i p1 = dot_u8s8_acc(_mm256_setzero_si256(), _mm256_and_si256(_mm256_srli_epi16(q, 4), m4), x1);
      int sc0, m0, sc1, m1;
      q4_K_scale_min(w[s].scales, 2 * c, sc0, m0);
      q4_K_scale_min(w[s].scales, 2 * c + 1, sc1, m1);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(x.d[b0] * d * (float)sc0), acc);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(x.d[b0 + 1] * d * (float)sc1), acc);
      mins += x.d[b0] * dmin * (float)(m0 * x.sum[b0]) + x.d[b0 + 1] * dmin * (float)(m1 * x.sum[b0 + 1]);
    }
  }
  return hsum_ps256(acc) - mins;
}
#endif

}  // namespace

void matvec_q4_K_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  require_multiple(x.C, k_kblock, "matvec_q4_K");
  const int nsb = x.C / k_kblock;
  const auto* rows = static_cast<const block_q4_K*>(W);
#if defined(WB_QUANT_AVX2)
  for (int64_t o = row_begin; o < row_end; ++o) out[o] = dot_row_q4_K_avx2(rows + o * nsb, x, nsb);
#else
  for (int64_t o = row_begin; o < row_end; ++o) out[o] = dot_row_q4_K(rows + o * nsb, x, nsb);
#endif
}

void matvec_q4_K(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end) {
  require_multiple(C, k_kblock, "matvec_q4_K");
  thread_local q8_act xq;
  quantize_act_q8(x, C, xq);
  matvec_q4_K_act(out, W, xq, row_begin, row_end);
}

}  // namespace engine
