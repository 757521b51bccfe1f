// The x8 kernels in plain C (x8_kernels.h): the path on machines without AVX2, and the reference
// the SIMD sets are tested against (tests/engine_portable). One row of a group against one token
// at a time, block by block, in the order the SIMD kernels add: per block the exact integer dot
// product, then times the row's and the token's scales.
#include "x8_kernels.h"

namespace engine::quant_detail {

namespace {

int32_t row_dot(const block_q8_0x8& w, int r, const int8_t* x) {
  int32_t s = 0;
  for (int j = 0; j < k_qblock; ++j) s += int32_t{w.qs[32 * (j / 4) + 4 * r + j % 4]} * x[j];
  return s;
}

int32_t row_dot(const block_q4_0x8& w, int r, const int8_t* x) {
  int32_t s = 0;
  for (int j = 0; j < k_qblock / 2; ++j) {
    const uint8_t byte = w.qs[32 * (j / 4) + 4 * r + j % 4];
    s += (int32_t{byte & 15} - 8) * x[j] + (int32_t{byte >> 4} - 8) * x[j + 16];
  }
  return s;
}

template <typename BlockX8>
void matmul_portable(float* out, const BlockX8* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
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
float row_dot_q4_K(const block_q4_Kx8* w, int r, const ActRows& X, int64_t n) {
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

void matmul_portable_q4_K(float* out, const block_q4_Kx8* P, const ActRows& X, int N, int64_t OC, int64_t g0,
                          int64_t g1) {
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) out[n * OC + g * k_x8_rows + r] = row_dot_q4_K(P + g * (X.nb / 8), r, X, n);
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

void matmul_portable_q6_K(float* out, const block_q6_Kx8* P, const ActRows& X, int N, int64_t OC, int64_t g0,
                          int64_t g1) {
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t n = 0; n < N; ++n)
      for (int r = 0; r < k_x8_rows; ++r) out[n * OC + g * k_x8_rows + r] = row_dot_q6_K(P + g * (X.nb / 8), r, X, n);
}

}  // namespace

namespace x8_portable {

void matmul_q8_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_portable(out, static_cast<const block_q8_0x8*>(P), X, N, OC, g0, g1);
}

void matmul_q4_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_portable(out, static_cast<const block_q4_0x8*>(P), X, N, OC, g0, g1);
}

void matmul_q4_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_portable_q4_K(out, static_cast<const block_q4_Kx8*>(P), X, N, OC, g0, g1);
}

void matmul_q6_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1) {
  matmul_portable_q6_K(out, static_cast<const block_q6_Kx8*>(P), X, N, OC, g0, g1);
}

}  // namespace x8_portable

}  // namespace engine::quant_detail
