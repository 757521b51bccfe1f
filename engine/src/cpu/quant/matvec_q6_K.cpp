// q6_K weights x f32 vector: out[o] = dot(W[o], x) for GGUF q6_K tensors.
//
// Each super-block is unpacked to its 256 values u = q + 32 (natural order, q6_K_unsigned_values) in a
// stack buffer, then every 16-weight group g with int8 scale
// sc_g contributes sc_g * sum(q*xq); the two groups of one 32-element activation block share its
// scale dx, so per activation block: d * dx * (sc_2b * s_2b + sc_2b+1 * s_2b+1), exact in int32.
// The portable loops are the fallback; with AVX2 the weights are unpacked in-register instead.
#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

namespace {

#if defined(WB_QUANT_AVX2)
// One super-block, 32 weights per step. The 6-bit values are rebuilt in-register from ql/qh
// (the four runs of a half are 32 contiguous weights each), made signed with -32, and dotted
// with the sign trick sum(|w| * (x*sign(w))). vpdpbusd yields 8 int32 lanes: lanes 0-3 belong to
// the first 16-group and 4-7 to the second, so one f32 vector [s0 x4, s1 x4] applies both scales.
float dot_row_q6_K_avx2(const block_q6_K* w, const q8_act& x, int nsb) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x03), off = _mm256_set1_epi8(32);
  __m256 acc = _mm256_setzero_ps();
  for (int s = 0; s < nsb; ++s) {
    prefetch_lines(w + s, 12 * sizeof(block_q6_K), 4);  // 12 super-blocks (2.5 KiB) ahead
    const float d = half_to_f32(w[s].d);
    for (int h = 0; h < 2; ++h) {
      const __m256i lo = _mm256_loadu_si256((const __m256i*)(w[s].ql + 64 * h));
      const __m256i hi = _mm256_loadu_si256((const __m256i*)(w[s].ql + 64 * h + 32));
      const __m256i qh = _mm256_loadu_si256((const __m256i*)(w[s].qh + 32 * h));
      __m256i v[4];
      // Byte shifts do not exist; 16-bit shifts are fine because each result is masked per byte.
      v[0] = _mm256_or_si256(_mm256_and_si256(lo, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4));
      v[1] = _mm256_or_si256(_mm256_and_si256(hi, m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4));
      v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lo, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4));
      v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(hi, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4));
      for (int k = 0; k < 4; ++k) {
        const int b = s * 8 + h * 4 + k;  // activation block of weights 128h + 32k .. +31
        const __m256i wv = _mm256_sub_epi8(v[k], off);
        const __m256i xv = _mm256_loadu_si256((const __m256i*)(x.q.data() + (size_t)b * k_qblock));
        const __m256i p = dot_u8s8_acc(_mm256_setzero_si256(), _mm256_abs_epi8(wv), _mm256_sign_epi8(xv, wv));
        const int8_t* sc = w[s].scales + 8 * h + 2 * k;
        const float f = d * x.d[b];
        const __m256 scale = _mm256_set_m128(_mm_set1_ps(f * (float)sc[1]), _mm_set1_ps(f * (float)sc[0]));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), scale, acc);
      }
    }
  }
  return hsum_ps256(acc);
}
#endif

[[maybe_unused]] float dot_row_q6_K(const block_q6_K* w, const q8_act& x, int nsb) {
  float acc = 0.f;
  uint8_t u[k_kblock];
  for (int s = 0; s < nsb; ++s) {
    q6_K_unsigned_values(w[s], u);
    const float d = half_to_f32(w[s].d);
    const int8_t* xs = x.q.data() + (size_t)s * k_kblock;
    for (int b = 0; b < 8; ++b) {
      int32_t g0 = 0, g1 = 0;
      for (int l = 0; l < 16; ++l) {
        g0 += (int32_t{u[32 * b + l]} - 32) * xs[32 * b + l];
        g1 += (int32_t{u[32 * b + 16 + l]} - 32) * xs[32 * b + 16 + l];
      }
      const int32_t isum = (int32_t)w[s].scales[2 * b] * g0 + (int32_t)w[s].scales[2 * b + 1] * g1;
      acc += d * x.d[s * 8 + b] * (float)isum;
    }
  }
  return acc;
}

}  // namespace

void matvec_q6_K_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  require_multiple(x.C, k_kblock, "matvec_q6_K");
  const int nsb = x.C / k_kblock;
  const auto* rows = static_cast<const block_q6_K*>(W);
#if defined(WB_QUANT_AVX2)
  for (int64_t o = row_begin; o < row_end; ++o) out[o] = dot_row_q6_K_avx2(rows + o * nsb, x, nsb);
#else
  for (int64_t o = row_begin; o < row_end; ++o) out[o] = dot_row_q6_K(rows + o * nsb, x, nsb);
#endif
}

void matvec_q6_K(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end) {
  require_multiple(C, k_kblock, "matvec_q6_K");
  thread_local q8_act xq;
  quantize_act_q8(x, C, xq);
  matvec_q6_K_act(out, W, xq, row_begin, row_end);
}

}  // namespace engine
