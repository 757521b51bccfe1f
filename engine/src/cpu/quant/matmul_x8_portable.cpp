// The x8 kernels in plain C (x8_kernels.h): the path on machines without AVX2, and the reference
// the SIMD sets are tested against (tests/engine_portable). One row of a group against one token
// at a time, block by block, in the order the SIMD kernels add: per block the exact integer dot
// product, then times the row's and the token's scales.
#include "x8_groups.h"

namespace engine::quant_detail {

namespace {

// Block terms for row_blocks_32: the exact integer dot product, then times the row's and the token's scales.
float term_q8_0(const block_q8_0x8& w, int r, const int8_t* x, int64_t i, const ActRows& X) {
  int32_t s = 0;
  for (int j = 0; j < k_qblock; ++j) s += int32_t{w.qs[32 * (j / 4) + 4 * r + j % 4]} * x[j];
  return float(s) * (half_to_f32(w.d[r]) * X.d[i]);
}

float term_q4_0(const block_q4_0x8& w, int r, const int8_t* x, int64_t i, const ActRows& X) {
  int32_t s = 0;
  for (int j = 0; j < k_qblock / 2; ++j) {
    const uint8_t byte = w.qs[32 * (j / 4) + 4 * r + j % 4];
    s += (int32_t{byte & 15} - 8) * x[j] + (int32_t{byte >> 4} - 8) * x[j + 16];
  }
  return float(s) * (half_to_f32(w.d[r]) * X.d[i]);
}

// q4_K's values for row_dot_K: the two nibbles of chunk c's bytes.
void q4_K_values(const block_q4_Kx8& b, int c, int r, uint8_t lo[32], uint8_t hi[32]) {
  for (int l = 0; l < 32; ++l) {
    const uint8_t byte = b.qs[c][32 * (l / 4) + 4 * r + l % 4];
    lo[l] = byte & 15;
    hi[l] = byte >> 4;
  }
}

// q6_K's 6-bit value at position p (0..31) of activation block `blk` (0..7) of row r's super-block.
int q6_K_value(const block_q6_Kx8& b, int r, int blk, int p) {
  const uint8_t(&v)[3][32] = b.q[blk / 4][p / 4];
  const int at = 4 * r + p % 4;
  if (blk % 4 < 3) return v[blk % 4][at] & 63;
  return v[0][at] >> 6 | (v[1][at] >> 6) << 2 | (v[2][at] >> 6) << 4;
}

// q6_K, one row of a group against one token: per 16-group g, d * sc_g * dx * sum((u - 32) * x).
float row_dot_q6_K(const block_q6_Kx8* w, int r, const ActRows& X, int64_t n) {
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

}  // namespace

namespace x8_portable {

void matmul_q8_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q8_0x8, row_blocks_32<block_q8_0x8, term_q8_0>>(out, P, X, N, OC, g0, g1, X.nb);
}

void matmul_q4_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q4_0x8, row_blocks_32<block_q4_0x8, term_q4_0>>(out, P, X, N, OC, g0, g1, X.nb);
}

void matmul_q4_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q4_Kx8, row_dot_K<block_q4_Kx8, q4_K_values>>(out, P, X, N, OC, g0, g1, X.nb / 8);
}

void matmul_q6_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q6_Kx8, row_dot_q6_K>(out, P, X, N, OC, g0, g1, X.nb / 8);
}

}  // namespace x8_portable

}  // namespace engine::quant_detail
