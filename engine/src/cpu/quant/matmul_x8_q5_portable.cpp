// The q4_1 / q5_0 / q5_1 / q5_K x8 kernels in plain C (x8_kernels.h): the path on machines without
// AVX2 and the reference matmul_x8_q5_avx2.cpp is tested against (tests/engine_portable). One row of a
// group against one token at a time, per activation block the exact integer dot product of the
// unsigned values, then the block's affine terms (matvec_q4_1_q5.cpp has the algebra).
#include <type_traits>

#include "x8_groups.h"

namespace engine::quant_detail {

namespace {

// Row r's unsigned value at position p (0..31) of a q4_1 / q5_0 / q5_1 x8 block (quant_blocks.h).
template <typename BlockX8>
int value_32(const BlockX8& w, int r, int p) {
  const int c = (p % 16) / 4, i = p % 4;
  const uint8_t byte = w.qs[32 * c + 4 * r + i];
  int v = p < 16 ? byte & 15 : byte >> 4;
  if constexpr (!std::is_same_v<BlockX8, block_q4_1x8>) v |= ((w.qh[4 * r + i] >> (c + (p < 16 ? 0 : 4))) & 1) << 4;
  return v;
}

// A block's term for row_blocks_32: the exact integer dot product of the unsigned values, then the
// block's affine terms.
template <typename BlockX8>
float term_32(const BlockX8& w, int r, const int8_t* x, int64_t i, const ActRows& X) {
  int32_t dot = 0;
  for (int p = 0; p < k_qblock; ++p) dot += value_32(w, r, p) * x[p];
  const float dw = half_to_f32(w.d[r]), dx = X.d[i];
  if constexpr (std::is_same_v<BlockX8, block_q5_0x8>) return float(dot - 16 * X.sum[i]) * (dw * dx);
  else return float(dot) * (dw * dx) + half_to_f32(w.m[r]) * (dx * float(X.sum[i]));
}

// q5_K's values for row_dot_K: the two nibbles of chunk c's bytes, each with its fifth bit from qh.
void q5_K_values(const block_q5_Kx8& b, int c, int r, uint8_t lo[32], uint8_t hi[32]) {
  for (int l = 0; l < 32; ++l) {
    const int at = 32 * (l / 4) + 4 * r + l % 4;
    const uint8_t byte = b.qs[c][at], high = b.qh[at];
    lo[l] = static_cast<uint8_t>((byte & 15) | ((high >> (2 * c)) & 1) << 4);
    hi[l] = static_cast<uint8_t>((byte >> 4) | ((high >> (2 * c + 1)) & 1) << 4);
  }
}

}  // namespace

namespace x8_portable {

void matmul_q4_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q4_1x8, row_blocks_32<block_q4_1x8, term_32<block_q4_1x8>>>(out, P, X, N, OC, g0, g1, X.nb);
}

void matmul_q5_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q5_0x8, row_blocks_32<block_q5_0x8, term_32<block_q5_0x8>>>(out, P, X, N, OC, g0, g1, X.nb);
}

void matmul_q5_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q5_1x8, row_blocks_32<block_q5_1x8, term_32<block_q5_1x8>>>(out, P, X, N, OC, g0, g1, X.nb);
}

void matmul_q5_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  row_groups<block_q5_Kx8, row_dot_K<block_q5_Kx8, q5_K_values>>(out, P, X, N, OC, g0, g1, X.nb / 8);
}

}  // namespace x8_portable

}  // namespace engine::quant_detail
