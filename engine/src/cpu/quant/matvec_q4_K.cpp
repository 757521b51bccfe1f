// q4_K weights x f32 vector: out[o] = dot(W[o], x) for GGUF q4_K tensors.
//
// Each 32-weight sub-block j of a super-block is w = (d*sc_j)*q - (dmin*m_j) with q in 0..15, and
// sub-blocks line up with the 32-element int8 activation blocks, so per sub-block
//   sum(w*x) = dx * (d*sc_j * sum(q*xq) - dmin*m_j * sum(xq))
// with sum(xq) already stored by quantize_act_q8. The portable byte loop is the fallback for the
// AVX2 path; scales come from q4_K_scale_min / q4_K_scales_bytes (quant_blocks.h), shared with the
// dequantizer.
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
// Same arithmetic, vectorised across the super-block's 8 sub-blocks: each sub-block's 32 weights
// are one vpdpbusd (low nibbles: sub-block 2c, high nibbles: 2c + 1, both unsigned, so no sign
// trick), a hadd tree turns the 8 vectors of partial sums into one vector whose lane j is
// sub-block j's sum, and the scales, mins, activation scales and sums (all 8 per super-block and
// contiguous) are then applied in one vector step instead of sixteen scalar ones.
float dot_row_q4_K_avx2(const block_q4_K* w, const q8_act& x, int nsb) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  for (int s = 0; s < nsb; ++s) {
    const int8_t* xs = x.q.data() + static_cast<size_t>(s) * k_kblock;
    prefetch_lines(w + s, 16 * sizeof(block_q4_K), 3);  // 16 super-blocks (2.3 KiB) ahead
    __m256i p[8];
    for (int c = 0; c < 4; ++c) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[s].qs + 32 * c));
      const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + 64 * c));
      const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + 64 * c + 32));
      p[2 * c] = dot_u8s8_acc(_mm256_setzero_si256(), _mm256_and_si256(q, m4), x0);
      p[2 * c + 1] = dot_u8s8_acc(_mm256_setzero_si256(), _mm256_and_si256(_mm256_srli_epi16(q, 4), m4), x1);
    }
    // hadd works within 128-bit halves: after two levels lane j (j < 4) of h0123 holds sub-block
    // j's low-half sum and lane j + 4 its high-half sum; likewise h4567 for sub-blocks 4..7.
    const __m256i h0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
    const __m256i h4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
    const __m256i sums =
        _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20), _mm256_permute2x128_si256(h0123, h4567, 0x31));
    alignas(16) uint8_t scm[16];
    q4_K_scales_bytes(w[s].scales, scm);
    const __m128i scm_v = _mm_load_si128(reinterpret_cast<const __m128i*>(scm));
    const __m256 sc = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(scm_v));
    const __m256 mn = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(scm_v, scm_v)));
    const __m256 xd = _mm256_loadu_ps(x.d.data() + static_cast<size_t>(s) * 8);
    const __m256 xsum = _mm256_cvtepi32_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.sum.data() + static_cast<size_t>(s) * 8)));
    // Per sub-block: dx * (d*sc*sum(q*xq) - dmin*m*sum(xq)).
    const __m256 scaled =
        _mm256_mul_ps(_mm256_cvtepi32_ps(sums), _mm256_mul_ps(sc, _mm256_set1_ps(half_to_f32(w[s].d))));
    const __m256 minus = _mm256_mul_ps(_mm256_mul_ps(mn, xsum), _mm256_set1_ps(half_to_f32(w[s].dmin)));
    acc = _mm256_fmadd_ps(_mm256_sub_ps(scaled, minus), xd, acc);
  }
  return hsum_ps256(acc);
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
