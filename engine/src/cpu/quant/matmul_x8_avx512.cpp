// The x8 kernels on 512-bit vectors (x8_kernels.h), AVX-512 with VNNI: two groups side by side in
// one zmm, so every instruction serves 16 rows. A range's odd last group goes to the 256-bit set
// (matmul_x8_avx2.cpp), whose sums are the same integers times the same scales, so every row of
// the product gets the same value whichever set computed it.
#include "x8_kernels.h"

#if defined(WB_X8_AVX512)

#include <cstring>
#include <type_traits>

namespace engine::quant_detail {

namespace {

// Group g sits in the low 256 bits, g + 1 in the high; the activation broadcast is the same for
// both halves, and the 16 outputs of a token are contiguous (rows 8g .. 8g + 15), one store.
inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

inline __m512i load_pair(const void* a, const void* b) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(load(a)), load(b), 1);
}

inline __m512 row_scales_pair(const uint16_t* a, const uint16_t* b) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

inline __m512i bcast4_512(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Tokens [n, n + T) x groups (a, b). Both types reduce to vpdpbusd over an unsigned operand u and
// the signed activations, corrected by the block's activation sum: q8_0 flips the sign bit
// (u = w + 128, so sum(w*x) = sum(u*x) - 128*sum(x)), q4_0 uses the nibble (u = n, minus 8*sum(x)).
// The correction is exact integer arithmetic, so the result equals the 256-bit kernels' exactly.
template <typename BlockX8, int T>
WB_KERNEL_INLINE void tile_pair(float* og, const BlockX8* wa, const BlockX8* wb, const ActRows& X, int64_t n,
                                int64_t OC) {
  constexpr bool q8 = std::is_same_v<BlockX8, block_q8_0x8>;
  __m512 acc[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < X.nb; ++b) {
    if constexpr (T == 1) {  // decode: both groups' streams, 2 KiB ahead
      constexpr int lines = (sizeof(BlockX8) + 63) / 64;
      prefetch_lines(wa + b, 2048, lines);
      prefetch_lines(wb + b, 2048, lines);
    }
    __m512i dot[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) dot[t] = _mm512_setzero_si512();
    if constexpr (q8) {
      const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
      for (int c = 0; c < 8; ++c) {
        const __m512i u = _mm512_xor_si512(load_pair(wa[b].qs + 32 * c, wb[b].qs + 32 * c), flip);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) dot[t] = _mm512_dpbusd_epi32(dot[t], u, bcast4_512(X.block(n + t, b) + 4 * c));
      }
    } else {
      const __m512i m = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m512i v = load_pair(wa[b].qs + 32 * c, wb[b].qs + 32 * c);
        const __m512i lo = _mm512_and_si512(v, m), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const int8_t* x = X.block(n + t, b);
          dot[t] = _mm512_dpbusd_epi32(dot[t], lo, bcast4_512(x + 4 * c));
          dot[t] = _mm512_dpbusd_epi32(dot[t], hi, bcast4_512(x + 16 + 4 * c));
        }
      }
    }
    const __m512 dw = row_scales_pair(wa[b].d, wb[b].d);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const int64_t i = X.at(n + t, b);
      const __m512i exact = _mm512_sub_epi32(dot[t], _mm512_set1_epi32((q8 ? 128 : 8) * X.sum[i]));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact), _mm512_mul_ps(dw, _mm512_set1_ps(X.d[i])), acc[t]);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(og + (n + t) * OC, acc[t]);
}

// 16 rows' 8 unsigned bytes (group a's, then b's) as f32.
inline __m512 bytes_pair(const uint8_t* a, const uint8_t* b) {
  const __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                                       _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v));
}

// q4_K, tokens [n, n + T) x groups (a, b), per super-block: for each chunk c, 8 weight vectors
// (positions 4k..4k+3 of 16 rows) give sub-block 2c (low nibbles) and 2c + 1 (high nibbles) with
// one vpdpbusd each per token, unsigned, so no correction inside the integer sum; then per sub-block
// dx * (d*sc * sum - dmin*m * sum(xq)) with the rows' d*sc and dmin*m built once for all T tokens.
template <int T>
WB_KERNEL_INLINE void tile_pair_q4_K(float* og, const block_q4_Kx8* wa, const block_q4_Kx8* wb, const ActRows& X,
                                     int64_t n, int64_t OC) {
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512 acc[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q4_Kx8& A = wa[s];
    const block_q4_Kx8& B = wb[s];
    if constexpr (T == 1) {  // decode: both groups' streams, 2 KiB ahead
      constexpr int lines = (sizeof(block_q4_Kx8) + 63) / 64;
      prefetch_lines(&A, 2048, lines);
      prefetch_lines(&B, 2048, lines);
    }
    const __m512 d = row_scales_pair(A.d, B.d), dmin = row_scales_pair(A.dmin, B.dmin);
    for (int c = 0; c < 4; ++c) {
      __m512i lo_sum[T], hi_sum[T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) lo_sum[t] = hi_sum[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m512i v = load_pair(A.qs[c] + 32 * k, B.qs[c] + 32 * k);
        const __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const int8_t* x = X.block(n + t, 8 * s + 2 * c);  // sub-block 2c; 2c + 1 follows
          lo_sum[t] = _mm512_dpbusd_epi32(lo_sum[t], lo, bcast4_512(x + 4 * k));
          hi_sum[t] = _mm512_dpbusd_epi32(hi_sum[t], hi, bcast4_512(x + 32 + 4 * k));
        }
      }
      const __m512 sc0 = _mm512_mul_ps(d, bytes_pair(A.sc[2 * c], B.sc[2 * c]));
      const __m512 sc1 = _mm512_mul_ps(d, bytes_pair(A.sc[2 * c + 1], B.sc[2 * c + 1]));
      const __m512 mn0 = _mm512_mul_ps(dmin, bytes_pair(A.m[2 * c], B.m[2 * c]));
      const __m512 mn1 = _mm512_mul_ps(dmin, bytes_pair(A.m[2 * c + 1], B.m[2 * c + 1]));
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const int64_t i0 = X.at(n + t, 8 * s + 2 * c);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo_sum[t]), _mm512_mul_ps(sc0, _mm512_set1_ps(X.d[i0])), acc[t]);
        acc[t] = _mm512_fnmadd_ps(mn0, _mm512_set1_ps(X.d[i0] * float(X.sum[i0])), acc[t]);
        acc[t] =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi_sum[t]), _mm512_mul_ps(sc1, _mm512_set1_ps(X.d[i0 + 1])), acc[t]);
        acc[t] = _mm512_fnmadd_ps(mn1, _mm512_set1_ps(X.d[i0 + 1] * float(X.sum[i0 + 1])), acc[t]);
      }
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(og + (n + t) * OC, acc[t]);
}

// 16 rows' 8 signed bytes (group a's, then b's) as f32.
inline __m512 signed_bytes_pair(const int8_t* a, const int8_t* b) {
  const __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                                       _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(v));
}

// q6_K's signed weights (u - 32) of 16 rows, positions 4k..4k+3 of activation block 4h + J: blocks
// 0-2 of a half are their byte's low 6 bits; block 3 gathers the three top-bit pairs (16-bit shifts
// are safe, the selects keep only bits that came from the byte itself).
template <int J>
inline __m512i q6_K_weights(const block_q6_Kx8& A, const block_q6_Kx8& B, int h, int k) {
  const __m512i m6 = _mm512_set1_epi8(0x3f), off = _mm512_set1_epi8(32);
  __m512i u;
  if constexpr (J < 3) {
    u = _mm512_and_si512(load_pair(A.q[h][k][J], B.q[h][k][J]), m6);
  } else {
    const __m512i v0 = _mm512_srli_epi16(load_pair(A.q[h][k][0], B.q[h][k][0]), 6);
    const __m512i v1 = _mm512_srli_epi16(load_pair(A.q[h][k][1], B.q[h][k][1]), 4);
    const __m512i v2 = _mm512_srli_epi16(load_pair(A.q[h][k][2], B.q[h][k][2]), 2);
    // 0xe4: c ? a : b, bit by bit. Bits 0-1 from v0, 2-3 from v1, 4-7 from v2, then the mask.
    const __m512i lo = _mm512_ternarylogic_epi32(v0, v1, _mm512_set1_epi8(0x03), 0xe4);
    u = _mm512_and_si512(_mm512_ternarylogic_epi32(lo, v2, _mm512_set1_epi8(0x0f), 0xe4), m6);
  }
  return _mm512_sub_epi8(u, off);
}

// One activation block (32 positions, two 16-groups) of a pair of groups' super-block, unpacked:
// per 16-group, the 4 signed weight vectors (positions 4k..4k+3 of 16 rows), the rows' -128*sum(w)
// (one vpdpbusd of each vector against ones) that every token's integer sum starts from so it ends
// exact, and the rows' d*sc.
struct Q6KBlockPair {
  __m512i w[2][4];
  __m512i start[2];
  __m512 scale[2];
};

template <int J>
inline void unpack_block_pair_q6_K(Q6KBlockPair& u, const block_q6_Kx8& A, const block_q6_Kx8& B, __m512 d, int h) {
  const int blk = 4 * h + J;
  const __m512i ones = _mm512_set1_epi8(1);
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
    __m512i wsum = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int kk = 0; kk < 4; ++kk) {
      u.w[half][kk] = q6_K_weights<J>(A, B, h, 4 * half + kk);
      wsum = _mm512_dpbusd_epi32(wsum, ones, u.w[half][kk]);
    }
    u.start[half] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(wsum, 7));
    u.scale[half] = _mm512_mul_ps(d, signed_bytes_pair(A.sc[2 * blk + half], B.sc[2 * blk + half]));
  }
}

// Tokens [n, n + T) x one unpacked block (activation block b of each token): one vpdpbusd per
// weight vector and token, then the halves' d*sc; the two halves meet before the one multiply by the
// token's dx, so a block costs each token 2 conversions, a multiply and 2 fmas.
template <int T>
inline void block_tokens_q6_K(__m512 (&acc)[T], const Q6KBlockPair& u, const ActRows& X, int64_t n, int64_t b) {
  __m512 part[T];
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
    __m512i sum[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) sum[t] = u.start[half];
#pragma GCC unroll 4
    for (int kk = 0; kk < 4; ++kk) {
      const __m512i w = u.w[half][kk];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t)
        sum[t] = _mm512_dpbusd_epi32(sum[t], bcast4_512(X.ublock(n + t, b) + 4 * (4 * half + kk)), w);
    }
    if (half == 0) {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) part[t] = _mm512_mul_ps(_mm512_cvtepi32_ps(sum[t]), u.scale[0]);
    } else {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m512 p = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[t]), u.scale[1], part[t]);
        acc[t] = _mm512_fmadd_ps(p, _mm512_set1_ps(X.d[X.at(n + t, b)]), acc[t]);
      }
    }
  }
}

// Decode (one token) x groups (a, b): each block unpacked in registers on its way to the one token.
template <int J>
WB_KERNEL_INLINE void decode_block_pair_q6_K(__m512 (&acc)[1], const block_q6_Kx8& A, const block_q6_Kx8& B, __m512 d,
                                             const ActRows& X, int64_t s, int h) {
  Q6KBlockPair u;
  unpack_block_pair_q6_K<J>(u, A, B, d, h);
  block_tokens_q6_K<1>(acc, u, X, 0, 8 * s + 4 * h + J);
}

WB_KERNEL_INLINE void decode_pair_q6_K(float* og, const block_q6_Kx8* wa, const block_q6_Kx8* wb, const ActRows& X) {
  __m512 acc[1] = {_mm512_setzero_ps()};
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q6_Kx8& A = wa[s];
    const block_q6_Kx8& B = wb[s];
    constexpr int lines = (sizeof(block_q6_Kx8) + 63) / 64;  // both groups' streams, 2 KiB ahead
    prefetch_lines(&A, 2048, lines);
    prefetch_lines(&B, 2048, lines);
    const __m512 d = row_scales_pair(A.d, B.d);
    for (int h = 0; h < 2; ++h) {
      decode_block_pair_q6_K<0>(acc, A, B, d, X, s, h);
      decode_block_pair_q6_K<1>(acc, A, B, d, X, s, h);
      decode_block_pair_q6_K<2>(acc, A, B, d, X, s, h);
      decode_block_pair_q6_K<3>(acc, A, B, d, X, s, h);
    }
  }
  _mm512_storeu_ps(og, acc[0]);
}

// Prefill: rebuilding the weights from the packed bytes costs about 6 vector ops per weight vector
// (the fourth block of each half most), as much as the token work it fed when a tile of 8 tokens
// shared it. So each super-block of the pair is unpacked once per call (8 blocks, 6 KiB, in L1
// while every token tile passes over it); the tiles' sums for earlier super-blocks wait in out.
// Measured on one core of the AVX-512 Xeon, 128 tokens: 2048 x 8192 240 -> 335 int8 GOP/s,
// 8192 x 2048 207 -> 362.
template <int T>
void tile_unpacked_pair_q6_K(float* og, const Q6KBlockPair (&u)[8], const ActRows& X, int64_t n, int64_t s,
                             int64_t OC) {
  __m512 acc[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t] = s == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(og + (n + t) * OC);
  for (int blk = 0; blk < 8; ++blk) block_tokens_q6_K<T>(acc, u[blk], X, n, 8 * s + blk);
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(og + (n + t) * OC, acc[t]);
}

void prefill_pair_q6_K(float* og, const block_q6_Kx8* wa, const block_q6_Kx8* wb, const ActRows& X, int N, int64_t OC) {
  Q6KBlockPair u[8];
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const __m512 d = row_scales_pair(wa[s].d, wb[s].d);
    for (int h = 0; h < 2; ++h) {
      unpack_block_pair_q6_K<0>(u[4 * h], wa[s], wb[s], d, h);
      unpack_block_pair_q6_K<1>(u[4 * h + 1], wa[s], wb[s], d, h);
      unpack_block_pair_q6_K<2>(u[4 * h + 2], wa[s], wb[s], d, h);
      unpack_block_pair_q6_K<3>(u[4 * h + 3], wa[s], wb[s], d, h);
    }
    int64_t n = 0;
    for (; n + 8 <= N; n += 8) tile_unpacked_pair_q6_K<8>(og, u, X, n, s, OC);
    for (; n + 4 <= N; n += 4) tile_unpacked_pair_q6_K<4>(og, u, X, n, s, OC);
    for (; n < N; ++n) tile_unpacked_pair_q6_K<1>(og, u, X, n, s, OC);
  }
}

// Tokens per tile, measured: q4_0 and q4_K unpack nibbles once per block and gain from sharing
// that over 8 tokens (q4_K: ~7 % over 4); q8_0's weight vector costs one xor, and 4 tokens ran
// faster than 8.
template <typename BlockX8>
constexpr int k_tile_tokens512 = std::is_same_v<BlockX8, block_q8_0x8> ? 4 : 8;

template <typename BlockX8, int T>
WB_KERNEL_INLINE void pair_tile(float* og, const BlockX8* wa, const BlockX8* wb, const ActRows& X, int64_t n,
                                int64_t OC) {
  if constexpr (std::is_same_v<BlockX8, block_q4_Kx8>) tile_pair_q4_K<T>(og, wa, wb, X, n, OC);
  else tile_pair<BlockX8, T>(og, wa, wb, X, n, OC);
}

template <typename BlockX8>
WB_KERNEL_INLINE void matmul_pairs(float* out, const BlockX8* P, const ActRows& X, int N, int64_t OC, int64_t& g0,
                                   int64_t g1, int64_t per_group) {
  for (; g0 + 2 <= g1; g0 += 2) {
    const BlockX8* wa = P + g0 * per_group;
    float* og = out + g0 * k_x8_rows;
    int64_t n = 0;
    constexpr int T = k_tile_tokens512<BlockX8>;
    for (; n + T <= N; n += T) pair_tile<BlockX8, T>(og, wa, wa + per_group, X, n, OC);
    for (; n < N; ++n) pair_tile<BlockX8, 1>(og, wa, wa + per_group, X, n, OC);
  }
}

}  // namespace

namespace x8_avx512 {

void matmul_q8_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_pairs(out, static_cast<const block_q8_0x8*>(P), X, N, OC, g0, g1, X.nb);
  x8_avx2::matmul_q8_0(out, P, X, N, OC, g0, g1);
}

void matmul_q4_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_pairs(out, static_cast<const block_q4_0x8*>(P), X, N, OC, g0, g1, X.nb);
  x8_avx2::matmul_q4_0(out, P, X, N, OC, g0, g1);
}

void matmul_q4_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_pairs(out, static_cast<const block_q4_Kx8*>(P), X, N, OC, g0, g1, X.nb / 8);
  x8_avx2::matmul_q4_K(out, P, X, N, OC, g0, g1);
}

// One token through the decode functions, more through the prefill ones.
void matmul_q6_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  const auto* W = static_cast<const block_q6_Kx8*>(P);
  const int64_t per_group = X.nb / 8;
  for (; g0 + 2 <= g1; g0 += 2) {
    const block_q6_Kx8* wa = W + g0 * per_group;
    if (N == 1) decode_pair_q6_K(out + g0 * k_x8_rows, wa, wa + per_group, X);
    else prefill_pair_q6_K(out + g0 * k_x8_rows, wa, wa + per_group, X, N, OC);
  }
  x8_avx2::matmul_q6_K(out, P, X, N, OC, g0, g1);
}

}  // namespace x8_avx512

}  // namespace engine::quant_detail

#endif  // WB_X8_AVX512
