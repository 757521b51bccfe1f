// The q4_1 / q5_0 / q5_1 / q5_K x8 kernels on 256-bit vectors (x8_kernels.h): AVX2 + FMA + F16C,
// vpdpbusd where the build has VNNI. One group of 8 rows per ymm, as matmul_x8_avx2.cpp does for
// q4_0 / q4_K: a weight load holds the same 4 positions of the 8 rows, 4 activation bytes are
// broadcast to all lanes, and the 8 int32 lanes end as the 8 rows' integer block sums. An AVX-512 build
// runs these too (there is no 512-bit set for these types).
//
// The unsigned values come from the nibbles plus, for q5, the fifth bit moved to bit 4 by one shift and
// mask per 32-byte chunk (the x8 layouts of quant_blocks.h put each chunk's fifth bits where one shift
// reaches them). Per block, with s = sum(q*xq) and the activation block's sum(xq):
//   q5_0:        dx*d*(s - 16*sum(xq));   q4_1 / q5_1: dx*(d*s + m*sum(xq))
//   q5_K:        per sub-block dx*(d*sc*s - dmin*m*sum(xq))
// Without VNNI the products go through maddubs (u8 x s8 pairs to int16): a value of up to 31 times
// |x| <= 127 gives |pair| <= 7874, so four maddubs results add in int16 (31496 < 32767) before each
// madd widens them. Prefill takes k_tile_tokens tokens per weight unpack; decode is the one-token tile.
#include "x8_avx2_ops.h"
#include "x8_groups.h"

#if defined(WB_QUANT_AVX2)

#include <type_traits>

namespace engine::quant_detail {

namespace {

using namespace x8_avx2_ops;

template <typename BlockX8>
inline constexpr bool k_has_min = !std::is_same_v<BlockX8, block_q5_0x8>;
template <typename BlockX8>
inline constexpr bool k_has_high = !std::is_same_v<BlockX8, block_q4_1x8>;

// A q4_1 / q5_0 / q5_1 x8 block's unsigned values: lo[c] positions 4c..4c+3 of each row, hi[c]
// positions 16+4c... (lane r = row r).
template <typename BlockX8>
struct Values32 {
  __m256i lo[4], hi[4];
  explicit Values32(const BlockX8& w) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256i v = load(w.qs + 32 * c);
      lo[c] = _mm256_and_si256(v, m4);
      hi[c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    }
    if constexpr (k_has_high<BlockX8>) {
      // Bit c of each qh byte is the fifth bit of chunk c's low nibble, bit 4 + c of its high one.
      const __m256i h = load(w.qh), bit4 = _mm256_set1_epi8(0x10);
      lo[0] = _mm256_or_si256(lo[0], _mm256_and_si256(_mm256_slli_epi16(h, 4), bit4));
      lo[1] = _mm256_or_si256(lo[1], _mm256_and_si256(_mm256_slli_epi16(h, 3), bit4));
      lo[2] = _mm256_or_si256(lo[2], _mm256_and_si256(_mm256_slli_epi16(h, 2), bit4));
      lo[3] = _mm256_or_si256(lo[3], _mm256_and_si256(_mm256_slli_epi16(h, 1), bit4));
      hi[0] = _mm256_or_si256(hi[0], _mm256_and_si256(h, bit4));
      hi[1] = _mm256_or_si256(hi[1], _mm256_and_si256(_mm256_srli_epi16(h, 1), bit4));
      hi[2] = _mm256_or_si256(hi[2], _mm256_and_si256(_mm256_srli_epi16(h, 2), bit4));
      hi[3] = _mm256_or_si256(hi[3], _mm256_and_si256(_mm256_srli_epi16(h, 3), bit4));
    }
  }
  // Per row: sum(q * x) over the block, exact.
  __m256i dot(const int8_t* x) const {
#if defined(WB_X8_VNNI)
    __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      acc = dot_u8s8_acc(acc, lo[c], bcast4(x + 4 * c));
      acc = dot_u8s8_acc(acc, hi[c], bcast4(x + 16 + 4 * c));
    }
    return acc;
#else
    __m256i s[2];
#pragma GCC unroll 2
    for (int p = 0; p < 2; ++p) {
      const int c = 2 * p;
      s[p] = _mm256_add_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(lo[c], bcast4(x + 4 * c)),
                                               _mm256_maddubs_epi16(hi[c], bcast4(x + 16 + 4 * c))),
                              _mm256_add_epi16(_mm256_maddubs_epi16(lo[c + 1], bcast4(x + 4 * c + 4)),
                                               _mm256_maddubs_epi16(hi[c + 1], bcast4(x + 20 + 4 * c))));
    }
    return _mm256_add_epi32(widen_pairs(s[0]), widen_pairs(s[1]));
#endif
  }
};

// Tokens [n, n + T) x one group of 8 rows: each block unpacked once for the T tokens.
template <typename BlockX8, int T>
WB_KERNEL_INLINE void tile_32(float* og, const BlockX8* wg, const ActRows& X, int64_t n, int64_t OC) {
  __m256 acc[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < X.nb; ++b) {
    if constexpr (T == 1) prefetch_lines(wg + b, 2048, (sizeof(BlockX8) + 63) / 64);  // decode
    const Values32<BlockX8> w(wg[b]);
    const __m256 dw = row_scales(wg[b].d);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
      const int64_t i = X.at(n + t, b);
      __m256i dot = w.dot(X.q + i * k_qblock);
      if constexpr (!k_has_min<BlockX8>) dot = _mm256_sub_epi32(dot, _mm256_set1_epi32(16 * X.sum[i]));
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw, _mm256_set1_ps(X.d[i])), acc[t]);
      if constexpr (k_has_min<BlockX8>)
        acc[t] = _mm256_fmadd_ps(row_scales(wg[b].m), _mm256_set1_ps(X.d[i] * float(X.sum[i])), acc[t]);
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(og + (n + t) * OC, acc[t]);
}

// q5_K, one group x tokens [n, n + T): tile_q4_K's steps (matmul_x8_avx2.cpp) with the fifth bits, and
// the int16 sums widened every four 32-byte pieces instead of every eight.
template <int T>
WB_KERNEL_INLINE void tile_q5_K(float* og, const block_q5_Kx8* wg, const ActRows& X, int64_t n, int64_t OC) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), bit4 = _mm256_set1_epi8(0x10);
  __m256 acc[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q5_Kx8& w = wg[s];
    if constexpr (T == 1) prefetch_lines(&w, 2048, (sizeof(block_q5_Kx8) + 63) / 64);  // decode
    const __m256 d = row_scales(w.d), dmin = row_scales(w.dmin);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      // Bits 2c and 2c + 1 of each qh byte, down to bits 0 and 1 (a 16-bit shift: a byte's own bits
      // reach bits 0..1, whatever comes in from the byte above is masked off).
      const __m128i to_bit0 = _mm_cvtsi32_si128(2 * c);
      __m256i lo_sum[T], hi_sum[T];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) lo_sum[t] = hi_sum[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {
#if !defined(WB_X8_VNNI)
        __m256i lo16[T], hi16[T];
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) lo16[t] = hi16[t] = _mm256_setzero_si256();
#endif
#pragma GCC unroll 4
        for (int kk = 0; kk < 4; ++kk) {
          const int k = 4 * half + kk;
          const __m256i v = load(w.qs[c] + 32 * k);
          const __m256i h = _mm256_srl_epi16(load(w.qh + 32 * k), to_bit0);
          const __m256i lo = _mm256_or_si256(_mm256_and_si256(v, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), bit4));
          const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                                             _mm256_and_si256(_mm256_slli_epi16(h, 3), bit4));
#pragma GCC unroll 4
          for (int t = 0; t < T; ++t) {
            const int8_t* x = X.block(n + t, 8 * s + 2 * c);
#if defined(WB_X8_VNNI)
            lo_sum[t] = dot_u8s8_acc(lo_sum[t], lo, bcast4(x + 4 * k));
            hi_sum[t] = dot_u8s8_acc(hi_sum[t], hi, bcast4(x + 32 + 4 * k));
#else
            lo16[t] = _mm256_add_epi16(lo16[t], _mm256_maddubs_epi16(lo, bcast4(x + 4 * k)));
            hi16[t] = _mm256_add_epi16(hi16[t], _mm256_maddubs_epi16(hi, bcast4(x + 32 + 4 * k)));
#endif
          }
        }
#if !defined(WB_X8_VNNI)
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          lo_sum[t] = _mm256_add_epi32(lo_sum[t], widen_pairs(lo16[t]));
          hi_sum[t] = _mm256_add_epi32(hi_sum[t], widen_pairs(hi16[t]));
        }
#endif
      }
      const __m256 sc0 = _mm256_mul_ps(d, bytes8(w.sc[2 * c])), sc1 = _mm256_mul_ps(d, bytes8(w.sc[2 * c + 1]));
      const __m256 mn0 = _mm256_mul_ps(dmin, bytes8(w.m[2 * c])), mn1 = _mm256_mul_ps(dmin, bytes8(w.m[2 * c + 1]));
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const int64_t i0 = X.at(n + t, 8 * s + 2 * c);
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo_sum[t]), _mm256_mul_ps(sc0, _mm256_set1_ps(X.d[i0])), acc[t]);
        acc[t] = _mm256_fnmadd_ps(mn0, _mm256_set1_ps(X.d[i0] * float(X.sum[i0])), acc[t]);
        acc[t] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(hi_sum[t]), _mm256_mul_ps(sc1, _mm256_set1_ps(X.d[i0 + 1])), acc[t]);
        acc[t] = _mm256_fnmadd_ps(mn1, _mm256_set1_ps(X.d[i0 + 1] * float(X.sum[i0 + 1])), acc[t]);
      }
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(og + (n + t) * OC, acc[t]);
}

}  // namespace

namespace x8_avx2 {

void matmul_q4_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  tile_groups<block_q4_1x8, tile_32<block_q4_1x8, k_tile_tokens>, tile_32<block_q4_1x8, 1>>(out, P, X, N, OC, g0, g1,
                                                                                            X.nb);
}

void matmul_q5_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  tile_groups<block_q5_0x8, tile_32<block_q5_0x8, k_tile_tokens>, tile_32<block_q5_0x8, 1>>(out, P, X, N, OC, g0, g1,
                                                                                            X.nb);
}

void matmul_q5_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  tile_groups<block_q5_1x8, tile_32<block_q5_1x8, k_tile_tokens>, tile_32<block_q5_1x8, 1>>(out, P, X, N, OC, g0, g1,
                                                                                            X.nb);
}

void matmul_q5_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  tile_groups<block_q5_Kx8, tile_q5_K<k_tile_tokens>, tile_q5_K<1>>(out, P, X, N, OC, g0, g1, X.nb / 8);
}

}  // namespace x8_avx2

}  // namespace engine::quant_detail

#endif  // WB_QUANT_AVX2
