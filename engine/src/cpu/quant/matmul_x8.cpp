// Integer kernels over the x8 layout (quant.h): out = X * W^T for q8_0 / q4_0 / q4_K / q6_K weights packed
// 8 rows to a group, X rounded to int8 per 32-block (quantize_act_q8_rows), as the decode matvecs do.
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
// With VNNI both use vpdpbusd (no int16 stage). Prefill takes 4 tokens per step so each weight
// block is loaded and unpacked once for four tokens; a group's blocks (8 rows) stay in L1 while
// every token passes over them, so each weight byte comes from memory once per call.
//   q4_K: each 32-weight sub-block is an unsigned nibble dot like q4_0's, then per sub-block
//         dx * (d*sc*sum - dmin*m*sum(xq)) with the rows' unpacked scales and mins (AVX2 and
//         AVX-512; without AVX2 x8_worth_packing keeps q4_K in the file layout).
//   q6_K: the weights w = u - 32 (-32..31) are the signed operand and the activations the unsigned
//         one, as x + 128 (prepare_act_x8, once per product): sum((x + 128) * w) = sum(x*w) + 128*sum(w), and
//         sum(w) per row and 16-group comes from one more vpdpbusd against ones, shared by every
//         token. A group with int8 scale sc then adds dx * d*sc * (sum - 128*sum(w)). Without VNNI
//         maddubs is safe: a lane's pair reaches 2*255*32 = 16320. Its weights take several ops
//         each to rebuild, so prefill rebuilds each super-block once per call, not once per tile.
#include <cstring>
#include <type_traits>
#include <vector>

#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

namespace {

constexpr int k_tile_tokens = 4;

// Row n's activation block b: quants at q + (n * nb + b) * 32, scale and sum at [n * nb + b].
struct ActRows {
  const int8_t* q;
  const float* d;
  const int32_t* sum;
  int64_t nb;
  // q6_K's SIMD kernels only: the quants plus 128 as unsigned bytes, laid out as q.
  const uint8_t* qu = nullptr;
  const uint8_t* ublock(int64_t n, int64_t b) const { return qu + at(n, b) * k_qblock; }
  int64_t at(int64_t n, int64_t b) const { return n * nb + b; }
  const int8_t* block(int64_t n, int64_t b) const { return q + at(n, b) * k_qblock; }
};

// qu[i] = q[i] + 128 as an unsigned byte (q6_K's activation operand). Plain pointers, so the loop
// vectorises: through a vector member every byte store could alias the member's data pointer.
[[maybe_unused]] void offset_act_bytes(const int8_t* q, uint8_t* qu, size_t n) {
  for (size_t i = 0; i < n; ++i) qu[i] = static_cast<uint8_t>(static_cast<uint8_t>(q[i]) ^ 0x80u);
}

// --- portable reference (and the path on machines without AVX2) ---

[[maybe_unused]] int32_t row_dot(const block_q8_0x8& w, int r, const int8_t* x) {
  int32_t s = 0;
  for (int j = 0; j < k_qblock; ++j) s += int32_t{w.qs[32 * (j / 4) + 4 * r + j % 4]} * x[j];
  return s;
}

[[maybe_unused]] int32_t row_dot(const block_q4_0x8& w, int r, const int8_t* x) {
  int32_t s = 0;
  for (int j = 0; j < k_qblock / 2; ++j) {
    const uint8_t byte = w.qs[32 * (j / 4) + 4 * r + j % 4];
    s += (int32_t{byte & 15} - 8) * x[j] + (int32_t{byte >> 4} - 8) * x[j + 16];
  }
  return s;
}

template <typename BlockX8>
[[maybe_unused]] void matmul_portable(float* out, const BlockX8* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) {
        float s = 0.f;
        for (int64_t b = 0; b < X.nb; ++b) {
          const BlockX8& w = P[g * X.nb + b];
          s += float(row_dot(w, r, X.block(n, b))) * (half_to_f32(w.d[r]) * X.d[X.at(n, b)]);
        }
        out[n * OC + g * k_x8_rows + r] = s;
      }
}

// q4_K, one row of a group against one token: per sub-block j, dx_j * (d*sc_j*sum(q*xq) -
// dmin*m_j*sum(xq)), as matvec_q4_K.cpp computes from the file layout.
[[maybe_unused]] float row_dot_q4_K(const block_q4_Kx8* w, int r, const ActRows& X, int64_t n) {
  float acc = 0.f;
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q4_Kx8& b = w[s];
    for (int c = 0; c < 4; ++c) {
      const int64_t i0 = X.at(n, 8 * s + 2 * c);
      const int8_t* x0 = X.q + i0 * k_qblock;
      int32_t s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        const uint8_t byte = b.qs[c][32 * (l / 4) + 4 * r + l % 4];
        s0 += int32_t{byte & 15} * x0[l];
        s1 += int32_t{byte >> 4} * x0[32 + l];
      }
      const float d = half_to_f32(b.d[r]), dmin = half_to_f32(b.dmin[r]);
      acc += X.d[i0] * (d * float(b.sc[2 * c][r] * s0) - dmin * float(b.m[2 * c][r] * X.sum[i0]));
      acc += X.d[i0 + 1] * (d * float(b.sc[2 * c + 1][r] * s1) - dmin * float(b.m[2 * c + 1][r] * X.sum[i0 + 1]));
    }
  }
  return acc;
}

[[maybe_unused]] void matmul_portable_q4_K(float* out, const block_q4_Kx8* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) out[n * OC + g * k_x8_rows + r] = row_dot_q4_K(P + g * (X.nb / 8), r, X, n);
}

// q6_K's 6-bit value at position p (0..31) of activation block `blk` (0..7) of row r's super-block.
[[maybe_unused]] int q6_K_value(const block_q6_Kx8& b, int r, int blk, int p) {
  const uint8_t(&v)[3][32] = b.q[blk / 4][p / 4];
  const int at = 4 * r + p % 4;
  if (blk % 4 < 3) return v[blk % 4][at] & 63;
  return v[0][at] >> 6 | (v[1][at] >> 6) << 2 | (v[2][at] >> 6) << 4;
}

// q6_K, one row of a group against one token: per 16-group g, d * sc_g * dx * sum((u - 32) * x).
[[maybe_unused]] float row_dot_q6_K(const block_q6_Kx8* w, int r, const ActRows& X, int64_t n) {
  float acc = 0.f;
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q6_Kx8& b = w[s];
    const float d = half_to_f32(b.d[r]);
    for (int blk = 0; blk < 8; ++blk) {
      const int64_t i = X.at(n, 8 * s + blk);
      const int8_t* x = X.q + i * k_qblock;
      int32_t sum = 0;
      for (int g = 0; g < 2; ++g) {
        int32_t part = 0;
        for (int p = 16 * g; p < 16 * g + 16; ++p) part += (q6_K_value(b, r, blk, p) - 32) * x[p];
        sum += int32_t{b.sc[2 * blk + g][r]} * part;
      }
      acc += d * X.d[i] * float(sum);
    }
  }
  return acc;
}

[[maybe_unused]] void matmul_portable_q6_K(float* out, const block_q6_Kx8* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) out[n * OC + g * k_x8_rows + r] = row_dot_q6_K(P + g * (X.nb / 8), r, X, n);
}

#if defined(WB_QUANT_AVX2)
#if (defined(__AVX512VNNI__) && defined(__AVX512VL__)) || defined(__AVXVNNI__)
#define WB_X8_VNNI 1
#endif

// 4 activation bytes broadcast to all 8 lanes.
inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline __m256 row_scales(const uint16_t* d) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d))); }

inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

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
void tile_q4(float* og, const block_q4_0x8* wg, const ActRows& X, int64_t n, int64_t OC) {
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

// The same for q8_0: per chunk, |w| is computed once for all T tokens (the unsigned operand) and
// each token's activations take w's signs.
template <int T>
void tile_q8(float* og, const block_q8_0x8* wg, const ActRows& X, int64_t n, int64_t OC) {
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
      for (int t = 0; t < T; ++t) dot[t] = dot_u8s8_acc(dot[t], w_abs, _mm256_sign_epi8(bcast4(X.block(n + t, b) + 4 * c), w));
    }
    const __m256 dw = row_scales(wg[b].d);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t)
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[t]), _mm256_mul_ps(dw, _mm256_set1_ps(X.d[X.at(n + t, b)])), acc[t]);
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(og + (n + t) * OC, acc[t]);
}

#if defined(WB_X8_VNNI) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define WB_X8_AVX512 1

// AVX-512: two groups side by side in one zmm (group g in the low 256 bits, g + 1 in the high),
// so every instruction serves 16 rows; the activation broadcast is the same for both halves. The
// 16 outputs of a token are contiguous (rows 8g .. 8g + 15), one store.
inline __m512i load_pair(const void* a, const void* b) { return _mm512_inserti64x4(_mm512_castsi256_si512(load(a)), load(b), 1); }

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
void tile_pair(float* og, const BlockX8* wa, const BlockX8* wb, const ActRows& X, int64_t n, int64_t OC) {
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
void tile_pair_q4_K(float* og, const block_q4_Kx8* wa, const block_q4_Kx8* wb, const ActRows& X, int64_t n, int64_t OC) {
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
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi_sum[t]), _mm512_mul_ps(sc1, _mm512_set1_ps(X.d[i0 + 1])), acc[t]);
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
      for (int t = 0; t < T; ++t) sum[t] = _mm512_dpbusd_epi32(sum[t], bcast4_512(X.ublock(n + t, b) + 4 * (4 * half + kk)), w);
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
inline void decode_block_pair_q6_K(__m512 (&acc)[1], const block_q6_Kx8& A, const block_q6_Kx8& B, __m512 d,
                                   const ActRows& X, int64_t s, int h) {
  Q6KBlockPair u;
  unpack_block_pair_q6_K<J>(u, A, B, d, h);
  block_tokens_q6_K<1>(acc, u, X, 0, 8 * s + 4 * h + J);
}

void decode_pair_q6_K(float* og, const block_q6_Kx8* wa, const block_q6_Kx8* wb, const ActRows& X) {
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
void tile_unpacked_pair_q6_K(float* og, const Q6KBlockPair (&u)[8], const ActRows& X, int64_t n, int64_t s, int64_t OC) {
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
void pair_tile(float* og, const BlockX8* wa, const BlockX8* wb, const ActRows& X, int64_t n, int64_t OC) {
  if constexpr (std::is_same_v<BlockX8, block_q4_Kx8>)
    tile_pair_q4_K<T>(og, wa, wb, X, n, OC);
  else
    tile_pair<BlockX8, T>(og, wa, wb, X, n, OC);
}
#endif

// q4_K, one group (8 rows) x tokens [n, n + T), 256 bits: the same steps as tile_pair_q4_K above.
// Without VNNI a chunk's eight nibble products per token are summed in int16 before one madd (as
// tile_q4: each int16 lane holds two products <= 15*127, eight of them 30480 < 32767).
template <int T>
void tile_q4_K(float* og, const block_q4_Kx8* wg, const ActRows& X, int64_t n, int64_t OC) {
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
      const auto bytes8 = [](const uint8_t* b) {
        return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b))));
      };
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
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(hi_sum[t]), _mm256_mul_ps(sc1, _mm256_set1_ps(X.d[i0 + 1])), acc[t]);
        acc[t] = _mm256_fnmadd_ps(mn1, _mm256_set1_ps(X.d[i0 + 1] * float(X.sum[i0 + 1])), acc[t]);
      }
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(og + (n + t) * OC, acc[t]);
}

// q6_K, one group (8 rows), 256 bits: the same steps as the pair functions above (without ternary
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
// float, as the pair functions do. Without VNNI a vpdpbusd is three ops (maddubs, madd with ones,
// add), so the scales go into the integer sum instead: two maddubs results add in int16 (each lane
// |pair| <= 2*255*32 = 16320, two of them 32640 < 32767), and the madd that widens them to int32
// multiplies by the row's sc (both int16 halves of a lane hold it) on the way. The block's two
// 16-groups then meet in one int32 sum per row (|sum| <= 32*128*255*32, far from 2^31) that starts
// at -128 * (sc0*sum(w0) + sc1*sum(w1)); each token costs 8 maddubs, 4 int16 adds, 4 madds and 4
// adds, then one conversion, multiply and fma with d*dx, against 24 + 5 the other way.
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
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[t]), _mm256_mul_ps(u.d, _mm256_set1_ps(X.d[X.at(n + t, b)])), acc[t]);
#endif
}

template <int J>
inline void decode_block_group_q6_K(__m256 (&acc)[1], const block_q6_Kx8& w, __m256 d, const ActRows& X, int64_t s, int h) {
  Q6KBlockGroup u;
  unpack_block_group_q6_K<J>(u, w, d, h);
  block_tokens_q6_K<1>(acc, u, X, 0, 8 * s + 4 * h + J);
}

void decode_group_q6_K(float* og, const block_q6_Kx8* wg, const ActRows& X) {
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

template <int T>
void tile_unpacked_group_q6_K(float* og, const Q6KBlockGroup (&u)[8], const ActRows& X, int64_t n, int64_t s, int64_t OC) {
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

// q6_K over groups [g0, g1): one token through the decode functions, more through the prefill ones
// (with AVX-512, pairs of groups first and an odd last group by the 256-bit functions).
void matmul_q6_K(float* out, const block_q6_Kx8* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  const int64_t per_group = X.nb / 8;
#if defined(WB_X8_AVX512)
  for (; g0 + 2 <= g1; g0 += 2) {
    const block_q6_Kx8* wa = P + g0 * per_group;
    if (N == 1)
      decode_pair_q6_K(out + g0 * k_x8_rows, wa, wa + per_group, X);
    else
      prefill_pair_q6_K(out + g0 * k_x8_rows, wa, wa + per_group, X, N, OC);
  }
#endif
  for (; g0 < g1; ++g0) {
    if (N == 1)
      decode_group_q6_K(out + g0 * k_x8_rows, P + g0 * per_group, X);
    else
      prefill_group_q6_K(out + g0 * k_x8_rows, P + g0 * per_group, X, N, OC);
  }
}

// Every group in [g0, g1): whole k_tile_tokens tiles, then single tokens (with AVX-512, pairs of
// groups first, and an odd last group by the 256-bit tiles). A group holds X.nb blocks of 32, or
// X.nb / 8 super-blocks for q4_K. (q6_K has its own loop, matmul_q6_K.)
template <typename BlockX8, void (*Tile)(float*, const BlockX8*, const ActRows&, int64_t, int64_t),
          void (*One)(float*, const BlockX8*, const ActRows&, int64_t, int64_t)>
void matmul_groups(float* out, const BlockX8* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  const int64_t per_group = std::is_same_v<BlockX8, block_q4_Kx8> ? X.nb / 8 : X.nb;
#if defined(WB_X8_AVX512)
  for (; g0 + 2 <= g1; g0 += 2) {
    const BlockX8* wa = P + g0 * per_group;
    float* og = out + g0 * k_x8_rows;
    int64_t n = 0;
    constexpr int T = k_tile_tokens512<BlockX8>;
    for (; n + T <= N; n += T) pair_tile<BlockX8, T>(og, wa, wa + per_group, X, n, OC);
    for (; n < N; ++n) pair_tile<BlockX8, 1>(og, wa, wa + per_group, X, n, OC);
  }
#endif
  for (int64_t g = g0; g < g1; ++g) {
    const BlockX8* wg = P + g * per_group;
    float* og = out + g * k_x8_rows;
    int64_t n = 0;
    for (; n + k_tile_tokens <= N; n += k_tile_tokens) Tile(og, wg, X, n, OC);
    for (; n < N; ++n) One(og, wg, X, n, OC);
  }
}
#endif

}  // namespace

bool x8_worth_packing(DType t) {
  if (t == DType::Q8_0 || t == DType::Q4_0) return true;
#if defined(WB_QUANT_AVX2)
  return t == DType::Q4_K || t == DType::Q6_K;
#else
  return false;
#endif
}

void prepare_act_x8(DType t, q8_act& act) {
#if defined(WB_QUANT_AVX2)
  if (t != DType::Q6_K) return;
  act.qu.resize(act.q.size());
  offset_act_bytes(act.q.data(), act.qu.data(), act.q.size());
#else
  (void)t;
  (void)act;  // the portable loops read the signed quants
#endif
}

void matmul_x8(DType t, float* out, const void* P, const q8_act& X, int N, int64_t OC, int64_t group_begin,
               int64_t group_end) {
  if (!has_x8_layout(t)) throw Error(std::string("matmul_x8: no x8 kernel for ") + std::string(dtype_name(t)));
  require_multiple(X.C, x8_block_weights(t), "matmul_x8");
  if (N < 1 || OC < 0 || group_begin < 0 || group_begin > group_end || group_end > OC / k_x8_rows ||
      X.q.size() != static_cast<size_t>(N) * static_cast<size_t>(X.C))
    throw Error("matmul_x8: bad shape, row group range or activation count");
  ActRows rows{X.q.data(), X.d.data(), X.sum.data(), X.C / k_qblock};
#if defined(WB_QUANT_AVX2)
  if (t == DType::Q6_K) {
    // The activations as unsigned bytes: from prepare_act_x8 (once per product, for every thread and
    // row group) or else this call's own copy. Flipping in a general register on the way to each
    // broadcast instead (no copy) ran 12 % slower: a broadcast from a register takes the shuffle
    // port, one from memory only a load.
    if (X.qu.size() == X.q.size()) {
      rows.qu = X.qu.data();
    } else {
      thread_local std::vector<uint8_t> qu;
      qu.resize(X.q.size());
      offset_act_bytes(X.q.data(), qu.data(), qu.size());
      rows.qu = qu.data();
    }
  }
  if (t == DType::Q8_0)
    matmul_groups<block_q8_0x8, tile_q8<k_tile_tokens>, tile_q8<1>>(out, static_cast<const block_q8_0x8*>(P), rows, N,
                                                                     OC, group_begin, group_end);
  else if (t == DType::Q4_0)
    matmul_groups<block_q4_0x8, tile_q4<k_tile_tokens>, tile_q4<1>>(out, static_cast<const block_q4_0x8*>(P), rows, N,
                                                                     OC, group_begin, group_end);
  else if (t == DType::Q4_K)
    matmul_groups<block_q4_Kx8, tile_q4_K<k_tile_tokens>, tile_q4_K<1>>(out, static_cast<const block_q4_Kx8*>(P), rows,
                                                                         N, OC, group_begin, group_end);
  else
    matmul_q6_K(out, static_cast<const block_q6_Kx8*>(P), rows, N, OC, group_begin, group_end);
#else
  if (t == DType::Q8_0)
    matmul_portable(out, static_cast<const block_q8_0x8*>(P), rows, N, OC, group_begin, group_end);
  else if (t == DType::Q4_0)
    matmul_portable(out, static_cast<const block_q4_0x8*>(P), rows, N, OC, group_begin, group_end);
  else if (t == DType::Q4_K)
    matmul_portable_q4_K(out, static_cast<const block_q4_Kx8*>(P), rows, N, OC, group_begin, group_end);
  else
    matmul_portable_q6_K(out, static_cast<const block_q6_Kx8*>(P), rows, N, OC, group_begin, group_end);
#endif
}

}  // namespace engine
