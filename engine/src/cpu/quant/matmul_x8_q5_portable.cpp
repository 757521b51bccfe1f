// The q4_1 / q5_0 / q5_1 / q5_K x8 kernels in plain C (x8_kernels.h): the path on machines without
// AVX2 and the reference matmul_x8_q5_avx2.cpp is tested against (tests/engine_portable). One row of a
// group against one token at a time, per activation block the exact integer dot product of the
// unsigned values, then the block's affine terms (matvec_q4_1_q5.cpp has the algebra).
#include <type_traits>

#include "x8_kernels.h"

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

template <typename BlockX8>
void matmul_32(float* out, const BlockX8* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) {
        float s = 0.f;
        for (int64_t b = 0; b < X.nb; ++b) {
          const BlockX8& w = P[g * X.nb + b];
          const int64_t i = X.at(n, b);
          const int8_t* x = X.block(n, b);
          int32_t dot = 0;
          for (int p = 0; p < k_qblock; ++p) dot += value_32(w, r, p) * x[p];
          const float dw = half_to_f32(w.d[r]), dx = X.d[i];
          if constexpr (std::is_same_v<BlockX8, block_q5_0x8>) {
            s += float(dot - 16 * X.sum[i]) * (dw * dx);
          } else {
            s += float(dot) * (dw * dx) + half_to_f32(w.m[r]) * (dx * float(X.sum[i]));
          }
        }
        out[n * OC + g * k_x8_rows + r] = s;
      }
}

// q5_K, one row of a group against one token: per sub-block j, dx_j * (d*sc_j*sum(q*xq) -
// dmin*m_j*sum(xq)) with q the 5-bit value.
float row_dot_q5_K(const block_q5_Kx8* w, int r, const ActRows& X, int64_t n) {
  float acc = 0.f;
  for (int64_t s = 0; s < X.nb / 8; ++s) {
    const block_q5_Kx8& b = w[s];
    const float d = half_to_f32(b.d[r]), dmin = half_to_f32(b.dmin[r]);
    for (int c = 0; c < 4; ++c) {
      const int64_t i0 = X.at(n, 8 * s + 2 * c);
      const int8_t* x0 = X.q + i0 * k_qblock;
      int32_t s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        const int at = 32 * (l / 4) + 4 * r + l % 4;
        const uint8_t byte = b.qs[c][at], high = b.qh[at];
        s0 += int32_t((byte & 15) | ((high >> (2 * c)) & 1) << 4) * x0[l];
        s1 += int32_t((byte >> 4) | ((high >> (2 * c + 1)) & 1) << 4) * x0[32 + l];
      }
      acc += X.d[i0] * (d * float(b.sc[2 * c][r] * s0) - dmin * float(b.m[2 * c][r] * X.sum[i0]));
      acc += X.d[i0 + 1] * (d * float(b.sc[2 * c + 1][r] * s1) - dmin * float(b.m[2 * c + 1][r] * X.sum[i0 + 1]));
    }
  }
  return acc;
}

}  // namespace

namespace x8_portable {

void matmul_q4_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_32(out, static_cast<const block_q4_1x8*>(P), X, N, OC, g0, g1);
}

void matmul_q5_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_32(out, static_cast<const block_q5_0x8*>(P), X, N, OC, g0, g1);
}

void matmul_q5_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_32(out, static_cast<const block_q5_1x8*>(P), X, N, OC, g0, g1);
}

void matmul_q5_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  const auto* W = static_cast<const block_q5_Kx8*>(P);
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) out[n * OC + g * k_x8_rows + r] = row_dot_q5_K(W + g * (X.nb / 8), r, X, n);
}

}  // namespace x8_portable

}  // namespace engine::quant_detail
