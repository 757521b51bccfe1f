// Activation quantization for the integer kernels: x (f32) -> int8 per 32-block + scale.
//
// Once per matvec (or once per x shared by several matrices via the *_act kernels) its cost is C
// operations against the OC*C of the product, but prefill quantizes every token's activations
// before each quantized matmul, and on a 124M model that was ~8% of the prefill when scalar (with
// std::fmax a library call). So blocks are vectorised with AVX2, giving bit-identical results to
// the portable loop: the same f32 product x * (1/d), rounded to nearest-even by the same MXCSR mode
// std::nearbyint uses. The scale stays f32 (ggml stores f16) since it never leaves memory: one
// less rounding for free. Per-element activation error is at most d/2 = amax/254.
#include <cmath>

#include "engine/checked.h"
#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

void quantize_act_blocks(const float* x, int64_t nb, int8_t* q, float* d, int32_t* sum) {
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * k_qblock;
    int8_t* qb = q + b * k_qblock;
#if defined(WB_QUANT_AVX2)
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4];
    for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(xb + 8 * i);
    __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v[0]), _mm256_andnot_ps(sign, v[1])),
                             _mm256_max_ps(_mm256_andnot_ps(sign, v[2]), _mm256_andnot_ps(sign, v[3])));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const float amax = _mm_cvtss_f32(h);
    const float scale = amax / 127.f;
    const __m256 id = _mm256_set1_ps(scale != 0.f ? 1.f / scale : 0.f);
    __m256i r[4];
    // Clamped to the bytes stored: a non-finite activation converts to INT_MIN, and the block's sum must be the
    // sum of what packs writes (-128 there), or the kernels' 128 * sum overflows.
    const __m256i lo8 = _mm256_set1_epi32(-128), hi8 = _mm256_set1_epi32(127);
    for (int i = 0; i < 4; ++i)
      r[i] = _mm256_max_epi32(_mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(v[i], id)), hi8), lo8);
    // Lane-wise packs interleave the 128-bit halves; the permute restores element order.
    const __m256i p16a = _mm256_packs_epi32(r[0], r[1]), p16b = _mm256_packs_epi32(r[2], r[3]);
    const __m256i p8 =
        _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qb), p8);
    const __m256i s8 = _mm256_add_epi32(_mm256_add_epi32(r[0], r[1]), _mm256_add_epi32(r[2], r[3]));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
    d[b] = scale;
    sum[b] = _mm_cvtsi128_si32(s4);
#else
    float amax = 0.f;
    for (int j = 0; j < k_qblock; ++j) amax = std::fmax(amax, std::fabs(xb[j]));
    const float scale = amax / 127.f;
    const float id = scale != 0.f ? 1.f / scale : 0.f;
    int32_t s = 0;
    for (int j = 0; j < k_qblock; ++j) {
      // fmax/fmin also map NaN to a bound: the cast below is then always defined.
      const int v = static_cast<int>(std::nearbyint(std::fmin(127.f, std::fmax(-128.f, xb[j] * id))));
      qb[j] = static_cast<int8_t>(v);
      s += v;
    }
    d[b] = scale;
    sum[b] = s;
#endif
  }
}

void quantize_act_q8(const float* x, int C, q8_act& out) {
  require_multiple(C, k_qblock, "quantize_act_q8");
  const int nb = C / k_qblock;
  out.C = C;
  out.qu.clear();
  out.half_sums.clear();
  out.q.resize(static_cast<size_t>(C));
  out.d.resize(static_cast<size_t>(nb));
  out.sum.resize(static_cast<size_t>(nb));
  quantize_act_blocks(x, nb, out.q.data(), out.d.data(), out.sum.data());
}

void resize_act_q8(int N, int C, q8_act& out) {
  require_multiple(C, k_qblock, "quantize_act_q8_rows");
  if (N < 1) throw Error("quantize_act_q8_rows: no rows");
  const uint64_t n = checked_mul(static_cast<uint64_t>(N), static_cast<uint64_t>(C), "quantize_act_q8_rows");
  if (n > static_cast<uint64_t>(INT32_MAX)) throw Error("quantize_act_q8_rows: more than 2^31 activations");
  out.C = C;
  out.qu.clear();
  out.half_sums.clear();
  out.q.resize(static_cast<size_t>(n));
  out.d.resize(static_cast<size_t>(n / k_qblock));
  out.sum.resize(static_cast<size_t>(n / k_qblock));
}

void quantize_act_q8_rows(const float* X, int N, int C, q8_act& out) {
  resize_act_q8(N, C, out);
  // Blocks never straddle rows (C % 32 == 0), so the rows quantize as one long run of blocks.
  quantize_act_blocks(X, static_cast<int64_t>(out.d.size()), out.q.data(), out.d.data(), out.sum.data());
}

}  // namespace engine
