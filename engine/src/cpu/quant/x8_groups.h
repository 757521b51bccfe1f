// The loops every x8 kernel set runs over its range of groups (internal; x8_kernels.h): one driver for
// the 256-bit sets, one for the portable sets, shared by q8_0 / q4_0 / q4_K / q6_K and q4_1 / q5_0 /
// q5_1 / q5_K so a change to the tiling reaches every encoding at once. The encodings differ only in
// what they hand in: a tile function (tokens x one group of 8 rows) or a row function (one row x one
// token). A group holds per_group x8 blocks: X.nb for the 32-weight encodings, X.nb / 8 for the K ones.
#pragma once

#include "x8_kernels.h"

namespace engine::quant_detail {

// Every group in [g0, g1): whole k_tile_tokens tiles through Tile, then the remaining tokens one at a
// time through One (decode is N = 1, so One alone). Both take (og, wg, X, n, OC), og the group's first
// output column, and write out[(n + t) * OC + 8g + r] for their tokens.
template <typename BlockX8, auto Tile, auto One>
WB_KERNEL_INLINE void tile_groups(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0,
                                  int64_t g1, int64_t per_group) {
  const auto* W = static_cast<const BlockX8*>(P);
  for (int64_t g = g0; g < g1; ++g) {
    const BlockX8* wg = W + g * per_group;
    float* og = out + g * k_x8_rows;
    int64_t n = 0;
    for (; n + k_tile_tokens <= N; n += k_tile_tokens) Tile(og, wg, X, n, OC);
    for (; n < N; ++n) One(og, wg, X, n, OC);
  }
}

// The portable form: every group in [g0, g1), token and row through Row(wg, r, X, n), which returns
// that row's output for that token.
template <typename BlockX8, auto Row>
void row_groups(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1,
                int64_t per_group) {
  const auto* W = static_cast<const BlockX8*>(P);
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) out[n * OC + g * k_x8_rows + r] = Row(W + g * per_group, r, X, n);
}

// A portable row over a 32-weight group: per block Term(w, r, x, i), the block's contribution for row r
// and the token's activation block at X.block(n, b) = x, X index i, added in block order.
template <typename BlockX8, auto Term>
float row_blocks_32(const BlockX8* wg, int r, const ActRows& X, int64_t n) {
  float s = 0.f;
  for (int64_t b = 0; b < X.nb; ++b) s += Term(wg[b], r, X.block(n, b), X.at(n, b), X);
  return s;
}

// A portable row over a K group (q4_K, q5_K): per sub-block j, dx_j * (d*sc_j*sum(q*xq) -
// dmin*m_j*sum(xq)), as matvec_q4_K.cpp computes from the file layout. Unpack(b, c, r, lo, hi) writes
// row r's 32 values of sub-blocks 2c (lo) and 2c + 1 (hi): the low and the high nibbles of chunk c, plus
// q5_K's fifth bits. Unpacking to bytes first keeps the dot products plain loops over arrays (reading
// the bits inside them cost the compiler its registers: 3x slower for q5_K).
template <typename BlockKx8, auto Unpack>
float row_dot_K(const BlockKx8* w, int r, const ActRows& X, int64_t n) {
  float acc = 0.f;
  uint8_t lo[32], hi[32];
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const BlockKx8& b = w[s];
    const float d = half_to_f32(b.d[r]), dmin = half_to_f32(b.dmin[r]);
    for (int c = 0; c < 4; ++c) {
      Unpack(b, c, r, lo, hi);
      const int64_t i0 = X.at(n, 8 * s + 2 * c);
      const int8_t* x0 = X.q + i0 * k_qblock;
      int32_t s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        s0 += int32_t{lo[l]} * x0[l];
        s1 += int32_t{hi[l]} * x0[32 + l];
      }
      acc += X.d[i0] * (d * float(b.sc[2 * c][r] * s0) - dmin * float(b.m[2 * c][r] * X.sum[i0]));
      acc += X.d[i0 + 1] * (d * float(b.sc[2 * c + 1][r] * s1) - dmin * float(b.m[2 * c + 1][r] * X.sum[i0 + 1]));
    }
  }
  return acc;
}

}  // namespace engine::quant_detail
