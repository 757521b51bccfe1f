// The x8 kernels on 256-bit vectors (x8_kernels.h), AVX2 + FMA + F16C, vpdpbusd where the build
// has VNNI: one group of 8 rows per ymm. On an AVX-512 build they take the odd last group of a
// range (matmul_x8_avx512.cpp takes the pairs).
//
// For one block and one group, the 8 int32 lanes of one vector are the 8 rows' integer dot products
// with the block's 32 activations: a weight load holds the same 4 positions of every row (lane r =
// row r) and the matching 4 activation bytes are broadcast to all lanes. After the block one fmadd
// with the rows' 8 scales (one f16 vector load) times the activation scale accumulates all 8
// outputs; there is no per-row horizontal sum at all.
//   q4_0: sum((n-8)*x) = sum(n*x) - 8*sum(x) as in matvec_q4_0.cpp; the nibble n is the unsigned
//         operand maddubs wants. Plain AVX2 adds the eight maddubs results in int16 before one
//         madd: each int16 lane holds two products |n*x| <= 15*127, so eight reach 30480 < 32767.
//   q8_0: sum(w*x) = sum(|w| * sign(x, w)); a lane's pair reaches 2*127*127 = 32258, so each
//         maddubs result is widened (madd) before adding.
// With VNNI both use vpdpbusd (no int16 stage). Without it, a single token (decode) of q4_0 and q4_K
// takes its own functions (single_q4, single_q4_K) with fewer instructions per block than the tile's
// one-token form. Prefill takes 4 tokens per step so each weight
// block is loaded and unpacked once for four tokens; a group's blocks (8 rows) stay in L1 while
// every token passes over them, so each weight byte comes from memory once per call.
//   q4_K: each 32-weight sub-block is an unsigned nibble dot like q4_0's, then per sub-block
//         dx * (d*sc*sum - dmin*m*sum(xq)) with the rows' unpacked scales and mins.
//   q6_K: the weights w = u - 32 (-32..31) are the signed operand and the activations the unsigned
//         one, as x + 128 (prepare_act_x8, once per product): sum((x + 128) * w) = sum(x*w) + 128*sum(w), and
//         sum(w) per row and 16-group comes from one more dot against ones, shared by every
//         token. A group with int8 scale sc then adds dx * d*sc * (sum - 128*sum(w)). Without VNNI
//         maddubs is safe: a lane's pair reaches 2*255*32 = 16320. Its weights take several ops
//         each to rebuild, so prefill rebuilds each super-block once per call, not once per tile.
#include "x8_avx2_ops.h"
#include "x8_groups.h"

#if defined(WB_QUANT_AVX2)

namespace engine::quant_detail {

namespace {

using namespace x8_avx2_ops;

// A q4_0x8 block's nibbles: lo[c] holds positions 4c..4c+3 of each row, hi[c] positions 16+4c...
struct Q4Nibbles {
  __m256i lo[4], hi[4];
  explicit Q4Nibbles(const block_q4_0x8& w) {
    const __m256i m = _mm256_set1_epi8(0x0f);
    for (int c = 0; c < 4; ++c) {
      const __m256i v = load(w.qs + 32 * c);
      lo[c] = _mm256_and_si256(v, m);
      hi[c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
    }
  }
  // Per row: sum(n * x) - 8 * sum(x), the block's exact integer dot product.
  __m256i dot(const int8_t* x, int32_t xsum) const {
    const __m256i offset = _mm256_set1_epi32(8 * xsum);
#if defined(WB_X8_VNNI)
    __m256i acc = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      acc = dot_u8s8_acc(acc, lo[c], bcast4(x + 4 * c));
      acc = dot_u8s8_acc(acc, hi[c], bcast4(x + 16 + 4 * c));
    }
    return _mm256_sub_epi32(acc, offset);
#else
    __m256i s = _mm256_maddubs_epi16(lo[0], bcast4(x));
    s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi[0], bcast4(x + 16)));
    for (int c = 1; c < 4; ++c) {
      s = _mm256_add_epi16(s, _mm256_maddubs_epi16(lo[c], bcast4(x + 4 * c)));
      s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi[c], bcast4(x + 16 + 4 * c)));
    }
    return _mm256_sub_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)), offset);
#endif
  }
};

// Tokens [n, n + T) x one group of 8 rows, q4_0: out rows' 8 outputs per token. The block is
// unpacked once for all T tokens.
template <int T>
WB_KERNEL_INLINE void tile_q4(float* og, const block_q4_0x8* wg, const ActRows& X, int64_t n, int64_t OC) {
  __m256 acc[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < X.nb; ++b) {
    if constexpr (T == 1) prefetch_lines(wg + b, 2048, (sizeof(block_q4_0x8) + 63) / 64);  // decode
    const Q4Nibbles w(wg[b]);
    const __m256 dw = row_scales(wg[b].d);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
      const int64_t i = X.at(n + t, b);
      const __m256 s = _mm256_mul_ps(dw, _mm256_set1_ps(X.d[i]));
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(w.dot(X.q + i * k_qblock, X.sum[i])), s, acc[t]);
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(og + (n + t) * OC, acc[t]);
}

#if !defined(WB_X8_VNNI)
// One token x one group, q4_0, without VNNI (decode): the tile's arithmetic in fewer instructions,
// since a decode token reads every block once and nothing is shared across tokens. Low and high
// nibbles go to two int16 sums (two short dependency chains instead of one of eight adds; each lane
// at most four products of 2*15*127, and their sum 30480 < 32767); the -8*sum(x) correction is
// one shift and subtract on a broadcast from memory instead of a scalar multiply moved into a
// vector; two blocks per step with an accumulator each; one prefetch per cache line of the pair
// (288 bytes, five lines) rather than three per block. Integer arithmetic as the tile's, so the
// same exact block dot products.
WB_KERNEL_INLINE __m256 block_dot_q4_0(__m256 acc, const block_q4_0x8& w, const int8_t* x, const float* dx,
                                       const int32_t* xsum) {
  const __m256i m = _mm256_set1_epi8(0x0f);
  const __m256i v0 = load(w.qs);
  __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(v0, m), bcast4(x));
  __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m), bcast4(x + 16));
#pragma GCC unroll 3
  for (int c = 1; c < 4; ++c) {
    const __m256i v = load(w.qs + 32 * c);
    lo = _mm256_add_epi16(lo, _mm256_maddubs_epi16(_mm256_and_si256(v, m), bcast4(x + 4 * c)));
    hi = _mm256_add_epi16(hi,
                          _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m), bcast4(x + 16 + 4 * c)));
  }
  const __m256i dot = _mm256_sub_epi32(_mm256_madd_epi16(_mm256_add_epi16(lo, hi), _mm256_set1_epi16(1)),
                                       _mm256_slli_epi32(_mm256_set1_epi32(*xsum), 3));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(row_scales(w.d), _mm256_set1_ps(*dx)), acc);
}

WB_KERNEL_INLINE void single_q4(float* og, const block_q4_0x8* wg, const ActRows& X, int64_t n, int64_t OC) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  const int64_t i = X.at(n, 0);
  const int8_t* x = X.q + i * k_qblock;
  int64_t b = 0;
  for (; b + 2 <= X.nb; b += 2) {
    prefetch_lines(wg + b, 2048, (2 * sizeof(block_q4_0x8) + 63) / 64);
    acc0 = block_dot_q4_0(acc0, wg[b], x + b * k_qblock, X.d + i + b, X.sum + i + b);
    acc1 = block_dot_q4_0(acc1, wg[b + 1], x + (b + 1) * k_qblock, X.d + i + b + 1, X.sum + i + b + 1);
  }
  if (b < X.nb) acc0 = block_dot_q4_0(acc0, wg[b], x + b * k_qblock, X.d + i + b, X.sum + i + b);
  _mm256_storeu_ps(og + n * OC, _mm256_add_ps(acc0, acc1));
}
#else
// With VNNI the tile's one-token form is already one instruction per product.
WB_KERNEL_INLINE void single_q4(float* og, const block_q4_0x8* wg, const ActRows& X, int64_t n, int64_t OC) {
  tile_q4<1>(og, wg, X, n, OC);
}
#endif

// The same for q8_0: per chunk, |w| is computed once for all T tokens (the unsigned operand) and
// each token's activations take w's signs.
template <int T>
WB_KERNEL_INLINE void tile_q8(float* og, const block_q8_0x8* wg, const ActRows& X, int64_t n, int64_t OC) {
  __m256 acc[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < X.nb; ++b) {
    if constexpr (T == 1) prefetch_lines(wg + b, 2048, (sizeof(block_q8_0x8) + 63) / 64);  // decode
    __m256i dot[T];
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) dot[t] = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c) {
      const __m256i w = load(wg[b].qs + 32 * c);
      const __m256i w_abs = _mm256_abs_epi8(w);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
        dot[t] = dot_u8s8_acc(dot[t], w_abs, _mm256_sign_epi8(bcast4(X.block(n + t, b) + 4 * c), w));
    }
    const __m256 dw = row_scales(wg[b].d);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t)
      acc[t] =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[t]), _mm256_mul_ps(dw, _mm256_set1_ps(X.d[X.at(n + t, b)])), acc[t]);
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(og + (n + t) * OC, acc[t]);
}

// q4_K, one group (8 rows) x tokens [n, n + T), 256 bits: the same steps as tile_pair_q4_K (matmul_x8_avx512.cpp).
// Without VNNI a chunk's eight nibble products per token are summed in int16 before one madd (as
// tile_q4: each int16 lane holds two products <= 15*127, eight of them 30480 < 32767).
template <int T>
WB_KERNEL_INLINE void tile_q4_K(float* og, const block_q4_Kx8* wg, const ActRows& X, int64_t n, int64_t OC) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  __m256 acc[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q4_Kx8& w = wg[s];
    if constexpr (T == 1) prefetch_lines(&w, 2048, (sizeof(block_q4_Kx8) + 63) / 64);  // decode
    const __m256 d = row_scales(w.d), dmin = row_scales(w.dmin);
    for (int c = 0; c < 4; ++c) {
      __m256i lo_sum[T], hi_sum[T];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) lo_sum[t] = hi_sum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m256i v = load(w.qs[c] + 32 * k);
        const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const int8_t* x = X.block(n + t, 8 * s + 2 * c);
#if defined(WB_X8_VNNI)
          lo_sum[t] = dot_u8s8_acc(lo_sum[t], lo, bcast4(x + 4 * k));
          hi_sum[t] = dot_u8s8_acc(hi_sum[t], hi, bcast4(x + 32 + 4 * k));
#else
          lo_sum[t] = _mm256_add_epi16(lo_sum[t], _mm256_maddubs_epi16(lo, bcast4(x + 4 * k)));
          hi_sum[t] = _mm256_add_epi16(hi_sum[t], _mm256_maddubs_epi16(hi, bcast4(x + 32 + 4 * k)));
#endif
        }
      }
      const __m256 sc0 = _mm256_mul_ps(d, bytes8(w.sc[2 * c])), sc1 = _mm256_mul_ps(d, bytes8(w.sc[2 * c + 1]));
      const __m256 mn0 = _mm256_mul_ps(dmin, bytes8(w.m[2 * c])), mn1 = _mm256_mul_ps(dmin, bytes8(w.m[2 * c + 1]));
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
#if !defined(WB_X8_VNNI)
        lo_sum[t] = _mm256_madd_epi16(lo_sum[t], _mm256_set1_epi16(1));
        hi_sum[t] = _mm256_madd_epi16(hi_sum[t], _mm256_set1_epi16(1));
#endif
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

#if !defined(WB_X8_VNNI)
// One token x one group, q4_K, without VNNI (decode). Per super-block the float work is moved out of
// the sub-blocks: the madd that widens a sub-block's int16 sums to int32 multiplies by the rows'
// 6-bit scales on the way (both int16 halves of a lane hold sc; |sum| <= 2*30480*63, far from
// 2^31), so a sub-block costs one conversion and one fma with its activation scale; the rows' d
// multiplies the super-block's sum once. The mins term dmin*m_j*dx_j*sum(xq_j) takes dx_j*sum_j of
// all eight sub-blocks from one vector multiply, applied with dmin once per super-block too.
WB_KERNEL_INLINE void single_q4_K(float* og, const block_q4_Kx8* wg, const ActRows& X, int64_t n, int64_t OC) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const auto scale_pairs = [](const uint8_t* b) {  // 8 bytes -> 8 lanes of (b, b) int16 pairs
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
    return _mm256_or_si256(v, _mm256_slli_epi32(v, 16));
  };
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q4_Kx8& w = wg[s];
    prefetch_lines(&w, 2048, (sizeof(block_q4_Kx8) + 63) / 64);
    const int64_t i = X.at(n, 8 * s);
    alignas(32) float dx_sum[8];  // dx_j * sum(xq_j), broadcast from memory below
    _mm256_store_ps(dx_sum,
                    _mm256_mul_ps(_mm256_loadu_ps(X.d + i),
                                  _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(X.sum + i)))));
    __m256 sb = _mm256_setzero_ps(), mins = _mm256_setzero_ps();
    for (int c = 0; c < 4; ++c) {
      const int8_t* x = X.q + (i + 2 * c) * k_qblock;
      const __m256i v0 = load(w.qs[c]);
      __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(v0, m4), bcast4(x));
      __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m4), bcast4(x + 32));
#pragma GCC unroll 7
      for (int k = 1; k < 8; ++k) {
        const __m256i v = load(w.qs[c] + 32 * k);
        lo = _mm256_add_epi16(lo, _mm256_maddubs_epi16(_mm256_and_si256(v, m4), bcast4(x + 4 * k)));
        hi = _mm256_add_epi16(hi, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                                                       bcast4(x + 32 + 4 * k)));
      }
      sb = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(lo, scale_pairs(w.sc[2 * c]))),
                           _mm256_set1_ps(X.d[i + 2 * c]), sb);
      sb = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(hi, scale_pairs(w.sc[2 * c + 1]))),
                           _mm256_set1_ps(X.d[i + 2 * c + 1]), sb);
      mins = _mm256_fmadd_ps(bytes8(w.m[2 * c]), _mm256_set1_ps(dx_sum[2 * c]), mins);
      mins = _mm256_fmadd_ps(bytes8(w.m[2 * c + 1]), _mm256_set1_ps(dx_sum[2 * c + 1]), mins);
    }
    acc = _mm256_fmadd_ps(row_scales(w.d), sb, acc);
    acc_min = _mm256_fmadd_ps(row_scales(w.dmin), mins, acc_min);
  }
  _mm256_storeu_ps(og + n * OC, _mm256_sub_ps(acc, acc_min));
}
#else
WB_KERNEL_INLINE void single_q4_K(float* og, const block_q4_Kx8* wg, const ActRows& X, int64_t n, int64_t OC) {
  tile_q4_K<1>(og, wg, X, n, OC);
}
#endif

// q6_K, one group (8 rows), 256 bits: the same steps as the pair functions of matmul_x8_avx512.cpp (without ternary
// logic the fourth block's value takes two more ops).
template <int J>
inline __m256i q6_K_weights(const block_q6_Kx8& w, int h, int k) {
  const __m256i m6 = _mm256_set1_epi8(0x3f);
  __m256i u;
  if constexpr (J < 3) {
    u = _mm256_and_si256(load(w.q[h][k][J]), m6);
  } else {
    const __m256i v0 = _mm256_and_si256(_mm256_srli_epi16(load(w.q[h][k][0]), 6), _mm256_set1_epi8(0x03));
    const __m256i v1 = _mm256_and_si256(_mm256_srli_epi16(load(w.q[h][k][1]), 4), _mm256_set1_epi8(0x0c));
    const __m256i v2 = _mm256_and_si256(_mm256_srli_epi16(load(w.q[h][k][2]), 2), _mm256_set1_epi8(0x30));
    u = _mm256_or_si256(_mm256_or_si256(v0, v1), v2);
  }
  return _mm256_sub_epi8(u, _mm256_set1_epi8(32));
}

// With VNNI each 16-group's integer sum is one vpdpbusd per weight vector and takes its d*sc in
// float, as the pair functions (matmul_x8_avx512.cpp) do. Without VNNI a vpdpbusd is three ops (maddubs, madd with
// ones, add), so the scales go into the integer sum instead: two maddubs results add in int16 (each lane |pair| <=
// 2*255*32 = 16320, two of them 32640 < 32767), and the madd that widens them to int32 multiplies by the row's sc (both
// int16 halves of a lane hold it) on the way. The block's two 16-groups then meet in one int32 sum per row (|sum| <=
// 32*128*255*32, far from 2^31) that starts at -128 * (sc0*sum(w0) + sc1*sum(w1)); each token costs 8 maddubs, 4 int16
// adds, 4 madds and 4 adds, then one conversion, multiply and fma with d*dx, against 24 + 5 the other way.
struct Q6KBlockGroup {
  __m256i w[2][4];
#if defined(WB_X8_VNNI)
  __m256i start[2];
  __m256 scale[2];
#else
  __m256i sc16[2];
  __m256i start;
  __m256 d;
#endif
};

template <int J>
inline void unpack_block_group_q6_K(Q6KBlockGroup& u, const block_q6_Kx8& w, __m256 d, int h) {
  const int blk = 4 * h + J;
  const __m256i ones = _mm256_set1_epi8(1);
#if !defined(WB_X8_VNNI)
  u.start = _mm256_setzero_si256();
  u.d = d;
#endif
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
    const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.sc[2 * blk + half])));
#if defined(WB_X8_VNNI)
    __m256i wsum = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int kk = 0; kk < 4; ++kk) {
      u.w[half][kk] = q6_K_weights<J>(w, h, 4 * half + kk);
      wsum = dot_u8s8_acc(wsum, ones, u.w[half][kk]);
    }
    u.start[half] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(wsum, 7));
    u.scale[half] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(sc));
#else
    // sum(w) in int16 pairs (|pair| <= 64, four of them 256), and sc*sum(w) from the madd that widens it.
    __m256i wsum16 = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int kk = 0; kk < 4; ++kk) {
      u.w[half][kk] = q6_K_weights<J>(w, h, 4 * half + kk);
      wsum16 = _mm256_add_epi16(wsum16, _mm256_maddubs_epi16(ones, u.w[half][kk]));
    }
    u.sc16[half] = _mm256_or_si256(_mm256_and_si256(sc, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(sc, 16));
    u.start = _mm256_sub_epi32(u.start, _mm256_slli_epi32(_mm256_madd_epi16(wsum16, u.sc16[half]), 7));
#endif
  }
}

template <int T>
inline void block_tokens_q6_K(__m256 (&acc)[T], const Q6KBlockGroup& u, const ActRows& X, int64_t n, int64_t b) {
  const auto x4 = [&](int t, int k) { return bcast4(reinterpret_cast<const int8_t*>(X.ublock(n + t, b)) + 4 * k); };
#if defined(WB_X8_VNNI)
  __m256 part[T];
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
    __m256i sum[T];
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) sum[t] = u.start[half];
#pragma GCC unroll 4
    for (int kk = 0; kk < 4; ++kk) {
      const __m256i w = u.w[half][kk];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) sum[t] = dot_u8s8_acc(sum[t], x4(t, 4 * half + kk), w);
    }
    if (half == 0) {
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) part[t] = _mm256_mul_ps(_mm256_cvtepi32_ps(sum[t]), u.scale[0]);
    } else {
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const __m256 p = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[t]), u.scale[1], part[t]);
        acc[t] = _mm256_fmadd_ps(p, _mm256_set1_ps(X.d[X.at(n + t, b)]), acc[t]);
      }
    }
  }
#else
  __m256i sum[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) sum[t] = u.start;
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half)
#pragma GCC unroll 2
    for (int kk = 0; kk < 4; kk += 2) {
      const __m256i w0 = u.w[half][kk], w1 = u.w[half][kk + 1];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(x4(t, 4 * half + kk), w0),
                                           _mm256_maddubs_epi16(x4(t, 4 * half + kk + 1), w1));
        sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(p, u.sc16[half]));
      }
    }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t)
    acc[t] =
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[t]), _mm256_mul_ps(u.d, _mm256_set1_ps(X.d[X.at(n + t, b)])), acc[t]);
#endif
}

template <int J>
WB_KERNEL_INLINE void decode_block_group_q6_K(__m256 (&acc)[1], const block_q6_Kx8& w, __m256 d, const ActRows& X,
                                              int64_t s, int h) {
  Q6KBlockGroup u;
  unpack_block_group_q6_K<J>(u, w, d, h);
  block_tokens_q6_K<1>(acc, u, X, 0, 8 * s + 4 * h + J);
}

#if !defined(WB_X8_VNNI)
// Decode without VNNI takes the operands the other way round: the 6-bit values u = w + 32 (0..63, one
// mask away from the packed bytes for three blocks of four, no subtract) are the unsigned operand and
// the int8 activations the signed one, so sum(w*x) = sum(u*x) - 32*sum(x) per 16-group. The weight
// sums the unsigned-activation form needs per block and row (four more maddubs, a madd and a shift)
// become one madd per block: the rows' (sc0, sc1) int16 pairs times the token's two half-block sums
// (X.half_sums), which gives sc0*sum0 + sc1*sum1 per row. Two maddubs results add in int16 (each
// |pair| <= 2*63*128 = 16128, two of them 32256 < 32767) before the madd with the row's scale; the
// rows' d multiplies the super-block's sum once.
template <int J>
WB_KERNEL_INLINE __m256i q6_K_unsigned(const block_q6_Kx8& w, int h, int k) {
  if constexpr (J < 3) {
    return _mm256_and_si256(load(w.q[h][k][J]), _mm256_set1_epi8(0x3f));
  } else {
    const __m256i v0 = _mm256_and_si256(_mm256_srli_epi16(load(w.q[h][k][0]), 6), _mm256_set1_epi8(0x03));
    const __m256i v1 = _mm256_and_si256(_mm256_srli_epi16(load(w.q[h][k][1]), 4), _mm256_set1_epi8(0x0c));
    const __m256i v2 = _mm256_and_si256(_mm256_srli_epi16(load(w.q[h][k][2]), 2), _mm256_set1_epi8(0x30));
    return _mm256_or_si256(_mm256_or_si256(v0, v1), v2);
  }
}

template <int J>
WB_KERNEL_INLINE __m256 block_q6_K_signed_act(__m256 sb, const block_q6_Kx8& w, const ActRows& X, int64_t i, int h) {
  const int blk = 4 * h + J;
  const int8_t* x = X.q + i * k_qblock;
  const __m256i sc0 = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.sc[2 * blk])));
  const __m256i sc1 = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.sc[2 * blk + 1])));
  const __m256i low16 = _mm256_set1_epi32(0xffff);
  const __m256i pair0 = _mm256_or_si256(_mm256_and_si256(sc0, low16), _mm256_slli_epi32(sc0, 16));
  const __m256i pair1 = _mm256_or_si256(_mm256_and_si256(sc1, low16), _mm256_slli_epi32(sc1, 16));
  const auto two = [&](int k) {  // positions 4k .. 4k + 7 of the block, in int16
    return _mm256_add_epi16(_mm256_maddubs_epi16(q6_K_unsigned<J>(w, h, k), bcast4(x + 4 * k)),
                            _mm256_maddubs_epi16(q6_K_unsigned<J>(w, h, k + 1), bcast4(x + 4 * k + 4)));
  };
  __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(two(0), pair0), _mm256_madd_epi16(two(2), pair0));
  sum = _mm256_add_epi32(sum, _mm256_add_epi32(_mm256_madd_epi16(two(4), pair1), _mm256_madd_epi16(two(6), pair1)));
  const __m256i scales = _mm256_or_si256(_mm256_and_si256(sc0, low16), _mm256_slli_epi32(sc1, 16));
  const __m256i offset = _mm256_madd_epi16(scales, _mm256_set1_epi32(X.half_sums[i]));
  sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(offset, 5));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(X.d[i]), sb);
}

WB_KERNEL_INLINE void decode_group_q6_K(float* og, const block_q6_Kx8* wg, const ActRows& X) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q6_Kx8& w = wg[s];
    prefetch_lines(&w, 2048, (sizeof(block_q6_Kx8) + 63) / 64);
    __m256 sb = _mm256_setzero_ps();
    for (int h = 0; h < 2; ++h) {
      const int64_t i = 8 * s + 4 * h;
      sb = block_q6_K_signed_act<0>(sb, w, X, i, h);
      sb = block_q6_K_signed_act<1>(sb, w, X, i + 1, h);
      sb = block_q6_K_signed_act<2>(sb, w, X, i + 2, h);
      sb = block_q6_K_signed_act<3>(sb, w, X, i + 3, h);
    }
    acc = _mm256_fmadd_ps(row_scales(w.d), sb, acc);
  }
  _mm256_storeu_ps(og, acc);
}
#else
WB_KERNEL_INLINE void decode_group_q6_K(float* og, const block_q6_Kx8* wg, const ActRows& X) {
  __m256 acc[1] = {_mm256_setzero_ps()};
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q6_Kx8& w = wg[s];
    prefetch_lines(&w, 2048, (sizeof(block_q6_Kx8) + 63) / 64);
    const __m256 d = row_scales(w.d);
    for (int h = 0; h < 2; ++h) {
      decode_block_group_q6_K<0>(acc, w, d, X, s, h);
      decode_block_group_q6_K<1>(acc, w, d, X, s, h);
      decode_block_group_q6_K<2>(acc, w, d, X, s, h);
      decode_block_group_q6_K<3>(acc, w, d, X, s, h);
    }
  }
  _mm256_storeu_ps(og, acc[0]);
}
#endif

template <int T>
void tile_unpacked_group_q6_K(float* og, const Q6KBlockGroup (&u)[8], const ActRows& X, int64_t n, int64_t s,
                              int64_t OC) {
  __m256 acc[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = s == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(og + (n + t) * OC);
  for (int blk = 0; blk < 8; ++blk) block_tokens_q6_K<T>(acc, u[blk], X, n, 8 * s + blk);
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(og + (n + t) * OC, acc[t]);
}

void prefill_group_q6_K(float* og, const block_q6_Kx8* wg, const ActRows& X, int N, int64_t OC) {
  Q6KBlockGroup u[8];
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const __m256 d = row_scales(wg[s].d);
    for (int h = 0; h < 2; ++h) {
      unpack_block_group_q6_K<0>(u[4 * h], wg[s], d, h);
      unpack_block_group_q6_K<1>(u[4 * h + 1], wg[s], d, h);
      unpack_block_group_q6_K<2>(u[4 * h + 2], wg[s], d, h);
      unpack_block_group_q6_K<3>(u[4 * h + 3], wg[s], d, h);
    }
    int64_t n = 0;
    for (; n + k_tile_tokens <= N; n += k_tile_tokens) tile_unpacked_group_q6_K<k_tile_tokens>(og, u, X, n, s, OC);
    for (; n < N; ++n) tile_unpacked_group_q6_K<1>(og, u, X, n, s, OC);
  }
}

}  // namespace

namespace x8_avx2 {

void matmul_q8_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  tile_groups<block_q8_0x8, tile_q8<k_tile_tokens>, tile_q8<1>>(out, P, X, N, OC, g0, g1, X.nb);
}

void matmul_q4_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  tile_groups<block_q4_0x8, tile_q4<k_tile_tokens>, single_q4>(out, P, X, N, OC, g0, g1, X.nb);
}

void matmul_q4_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  tile_groups<block_q4_Kx8, tile_q4_K<k_tile_tokens>, single_q4_K>(out, P, X, N, OC, g0, g1, X.nb / 8);
}

// One token through the decode functions, more through the prefill ones.
void matmul_q6_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  const auto* W = static_cast<const block_q6_Kx8*>(P);
  const int64_t per_group = X.nb / 8;
  for (; g0 < g1; ++g0) {
    if (N == 1) decode_group_q6_K(out + g0 * k_x8_rows, W + g0 * per_group, X);
    else prefill_group_q6_K(out + g0 * k_x8_rows, W + g0 * per_group, X, N, OC);
  }
}

}  // namespace x8_avx2

}  // namespace engine::quant_detail

#endif  // WB_QUANT_AVX2
