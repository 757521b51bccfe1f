// q4_0 weights x f32 vector: out[o] = dot(W[o], x), the decode-time hot loop for q4_0 models.
//
// x is quantized to int8 blocks once. A weight is d_w*(n-8) with nibble n in 0..15, so
//   sum((n-8)*x) = sum(n*x) - 8*sum(x),
// where sum(n*x) is a u8 x s8 dot (one vpdpbusd, no sign juggling) and sum(x) per block was
// stored by quantize_act_q8. The correction is subtracted in int32 before the f32 scale, so it is
// exact. Nibbles are unpacked in-register: low nibbles are weights 0..15, high nibbles 16..31,
// which is exactly the order of x when the two halves go in the low and high 128-bit lanes.
// With AVX-512 (BW, VBMI, VNNI) rows with an even block count take two blocks per step; odd
// counts, AVX2 machines and the last OC % 4 rows use the 256-bit one-block path.
#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

namespace {

#if defined(WB_QUANT_AVX2)
inline __m256i dot_block_q4(const block_q4_0& w, __m256i xv, int32_t xsum) {
  const __m128i packed = _mm_loadu_si128((const __m128i*)w.qs);
  const __m128i m4 = _mm_set1_epi8(0x0f);
  const __m256i n = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), m4), _mm_and_si128(packed, m4));
  // 8*sum(x) folded into lane 0; the lanes are summed later anyway.
  return dot_u8s8_acc(_mm256_castsi128_si256(_mm_cvtsi32_si128(-8 * xsum)), n, xv);
}
#endif

#if defined(WB_QUANT_AVX2) && defined(__AVX512BW__) && defined(__AVX512VBMI__) && defined(__AVX512VNNI__) && \
    defined(__AVX512DQ__)
#define WB_QUANT_Q4_AVX512 1
// Two blocks (64 weights) per step. One masked load takes both blocks' 36 bytes (never reading
// past the row's end); vpermb lays out [qsA, qsA, qsB, qsB] by 128-bit lane, a per-word shift by
// 0 or 4 then selects low / high nibbles, giving weights in the natural order of x. vpermw
// gathers the two f16 scales as [dA x8, dB x8], matching the int32 lanes vpdpbusd produces.
struct q4_pair_consts {
  __m512i byte_idx, shift, nibble, scale_idx;
  q4_pair_consts() {
    alignas(64) int8_t b[64];
    alignas(64) int16_t sh[32], si[32];
    for (int lane = 0; lane < 4; ++lane)
      for (int j = 0; j < 16; ++j) b[lane * 16 + j] = (int8_t)((lane < 2 ? 2 : 20) + j);
    for (int w = 0; w < 32; ++w) {
      sh[w] = (int16_t)((w / 8) % 2 ? 4 : 0);
      si[w] = (int16_t)(w < 8 ? 0 : 9);
    }
    byte_idx = _mm512_load_si512(b);
    shift = _mm512_load_si512(sh);
    scale_idx = _mm512_load_si512(si);
    nibble = _mm512_set1_epi8(0x0f);
  }
};

inline __m512 dot_pair_q4(__m512 acc, const block_q4_0* w, const q4_pair_consts& k, __m512i xv, __m512i init,
                          __m512 dx) {
  const __m512i raw = _mm512_maskz_loadu_epi8((__mmask64)0xFFFFFFFFFull, w);
  const __m512i n = _mm512_and_si512(_mm512_srlv_epi16(_mm512_permutexvar_epi8(k.byte_idx, raw), k.shift), k.nibble);
  const __m512 dw = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(k.scale_idx, raw)));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init, n, xv)), _mm512_mul_ps(dw, dx), acc);
}
#endif

}  // namespace

void matvec_q4_0_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  const int C = x.C;
  const int nb = C / k_qblock;
  const auto* rows = static_cast<const block_q4_0*>(W);
  int64_t o = row_begin;
#if defined(WB_QUANT_Q4_AVX512)
  if (nb % 2 == 0) {
    static const q4_pair_consts k;
    for (; o + 4 <= row_end; o += 4) {
      const block_q4_0* w0 = rows + o * nb;
      const block_q4_0* w1 = w0 + nb;
      const block_q4_0* w2 = w1 + nb;
      const block_q4_0* w3 = w2 + nb;
      __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
      for (int b = 0; b < nb; b += 2) {
        const __m512i xv = _mm512_loadu_si512(x.q.data() + (size_t)b * k_qblock);
        // -8*sum(x) of each block goes into the first int32 lane of that block's eight.
        const __m512i init =
            _mm512_maskz_set1_epi32(0x0001, -8 * x.sum[b]) | _mm512_maskz_set1_epi32(0x0100, -8 * x.sum[b + 1]);
        const __m512 dx = _mm512_insertf32x8(_mm512_set1_ps(x.d[b]), _mm256_set1_ps(x.d[b + 1]), 1);
        a0 = dot_pair_q4(a0, w0 + b, k, xv, init, dx);
        a1 = dot_pair_q4(a1, w1 + b, k, xv, init, dx);
        a2 = dot_pair_q4(a2, w2 + b, k, xv, init, dx);
        a3 = dot_pair_q4(a3, w3 + b, k, xv, init, dx);
      }
      out[o] = _mm512_reduce_add_ps(a0);
      out[o + 1] = _mm512_reduce_add_ps(a1);
      out[o + 2] = _mm512_reduce_add_ps(a2);
      out[o + 3] = _mm512_reduce_add_ps(a3);
    }
  }
#endif
#if defined(WB_QUANT_AVX2)
  for (; o + 4 <= row_end; o += 4) {
    const block_q4_0* w0 = rows + o * nb;
    const block_q4_0* w1 = w0 + nb;
    const block_q4_0* w2 = w1 + nb;
    const block_q4_0* w3 = w2 + nb;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const __m256i xv = _mm256_loadu_si256((const __m256i*)(x.q.data() + (size_t)b * k_qblock));
      const float dx = x.d[b];
      const int32_t xs = x.sum[b];
      a0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q4(w0[b], xv, xs)), _mm256_set1_ps(dx * half_to_f32(w0[b].d)),
                           a0);
      a1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q4(w1[b], xv, xs)), _mm256_set1_ps(dx * half_to_f32(w1[b].d)),
                           a1);
      a2 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q4(w2[b], xv, xs)), _mm256_set1_ps(dx * half_to_f32(w2[b].d)),
                           a2);
      a3 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q4(w3[b], xv, xs)), _mm256_set1_ps(dx * half_to_f32(w3[b].d)),
                           a3);
    }
    out[o] = hsum_ps256(a0);
    out[o + 1] = hsum_ps256(a1);
    out[o + 2] = hsum_ps256(a2);
    out[o + 3] = hsum_ps256(a3);
  }
  for (; o < row_end; ++o) {
    const block_q4_0* w = rows + o * nb;
    __m256 a = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const __m256i xv = _mm256_loadu_si256((const __m256i*)(x.q.data() + (size_t)b * k_qblock));
      a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_block_q4(w[b], xv, x.sum[b])),
                          _mm256_set1_ps(x.d[b] * half_to_f32(w[b].d)), a);
    }
    out[o] = hsum_ps256(a);
  }
#else
  for (; o < row_end; ++o) {
    const block_q4_0* w = rows + o * nb;
    float s = 0.f;
    for (int b = 0; b < nb; ++b) {
      const int8_t* xq = x.q.data() + (size_t)b * k_qblock;
      int32_t acc = -8 * x.sum[b];
      for (int j = 0; j < k_qblock / 2; ++j)
        acc += (int32_t)(w[b].qs[j] & 0x0f) * xq[j] + (int32_t)(w[b].qs[j] >> 4) * xq[j + 16];
      s += (float)acc * (x.d[b] * half_to_f32(w[b].d));
    }
    out[o] = s;
  }
#endif
}

void matvec_q4_0(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end) {
  thread_local q8_act xq;
  quantize_act_q8(x, C, xq);
  matvec_q4_0_act(out, W, xq, row_begin, row_end);
}

}  // namespace engine
