// f16 weights in column panels (quant.h): out = X * W^T with W widened in registers, no copy.
//
// Prefill: the classic register-blocked outer product (the tiles are panel_tile.h's, shared with
// the f32 prefill GEMM). For each column k, one panel row holds the
// 16 weights W[o..o+16][k] (two F16C loads), each of 6 tokens broadcasts X[n][k], and 12 FMAs
// update a 6 x 16 output tile held in 12 accumulators (15 of the 16 ymm registers). Weights are
// read once per 6 tokens from L1, activations once per 16 rows, and the f32 widening happens in
// registers, so the weights are never expanded in memory (widening tiles for sgemm moved every
// weight byte three times and re-packed X for every tile). Measured on a 2-core AVX2 EPYC, one
// thread, N = 126, C = 2048, OC = 5632: 88 GFLOP/s, about the machine's FMA peak, where OpenBLAS's
// sgemm on the same f32 values reached 68.
// Columns are walked in chunks of up to k_max_chunk; shorter chunks (more passes, with the tile
// read back and added each time) measured slower, so the chunk only splits very long rows.
// Decode (N = 1) uses the same tile with one token: per column, two weight loads, one broadcast and
// two FMAs, four columns in flight to cover the FMA latency; the panel is one sequential stream.
#include <algorithm>
#include <cstring>

#include "cpu/panel_tile.h"
#include "engine/checked.h"
#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine {
using namespace quant_detail;

namespace {

constexpr int k_max_chunk = 2048;

int64_t panels_of(int64_t OC) { return OC / k_panel_rows; }

// Portable: one output at a time, columns in order; f32 products of the widened weights.
[[maybe_unused]] void panels_portable(float* out, const uint16_t* P, const float* X, int N, int C, int64_t OC,
                                      int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    const uint16_t* panel = P + p * C * k_panel_rows;
    for (int64_t n = 0; n < N; ++n)
      for (int j = 0; j < k_panel_rows; ++j) {
        float s = 0.f;
        for (int k = 0; k < C; ++k) s += half_to_f32(panel[static_cast<int64_t>(k) * k_panel_rows + j]) * X[n * C + k];
        out[n * OC + p * k_panel_rows + j] = s;
      }
  }
}

#if defined(WB_PANEL_TILE_AVX2)
#define WB_F16_PANELS_AVX2 1
using panel_detail::load8;

// One token: four columns per step into separate accumulators (FMA latency), summed at the end.
void matvec_panel(float* out, const uint16_t* panel, const float* x, int C) {
  __m256 a[4][2];
  for (auto& r : a) r[0] = r[1] = _mm256_setzero_ps();
  int k = 0;
  for (; k + 4 <= C; k += 4) {
    // 64 columns (2 KiB) ahead; the 4 columns of a step are 128 bytes, 2 lines.
    prefetch_lines(panel + static_cast<int64_t>(k) * k_panel_rows, 64 * k_panel_rows * 2, 2);
    for (int u = 0; u < 4; ++u) {
      const uint16_t* p = panel + static_cast<int64_t>(k + u) * k_panel_rows;
      const __m256 b = _mm256_broadcast_ss(x + k + u);
      a[u][0] = _mm256_fmadd_ps(load8(p), b, a[u][0]);
      a[u][1] = _mm256_fmadd_ps(load8(p + 8), b, a[u][1]);
    }
  }
  for (; k < C; ++k) {
    const uint16_t* p = panel + static_cast<int64_t>(k) * k_panel_rows;
    const __m256 b = _mm256_broadcast_ss(x + k);
    a[0][0] = _mm256_fmadd_ps(load8(p), b, a[0][0]);
    a[0][1] = _mm256_fmadd_ps(load8(p + 8), b, a[0][1]);
  }
  for (int h = 0; h < 2; ++h)
    _mm256_storeu_ps(out + 8 * h, _mm256_add_ps(_mm256_add_ps(a[0][h], a[1][h]), _mm256_add_ps(a[2][h], a[3][h])));
}

// Prefill: per column chunk, each panel against all N tokens in 6-token tiles (panel_tile.h).
void panels_avx2(float* out, const uint16_t* P, const float* X, int N, int C, int64_t OC, int64_t p0, int64_t p1) {
  if (N == 1) {
    for (int64_t p = p0; p < p1; ++p) matvec_panel(out + p * k_panel_rows, P + p * C * k_panel_rows, X, C);
    return;
  }
  const int chunks = (C + k_max_chunk - 1) / k_max_chunk;
  for (int c = 0; c < chunks; ++c) {
    const int k0 = static_cast<int>(static_cast<int64_t>(C) * c / chunks);
    const int k1 = static_cast<int>(static_cast<int64_t>(C) * (c + 1) / chunks);
    for (int64_t p = p0; p < p1; ++p)
      panel_detail::sweep256(out + p * k_panel_rows, OC, P + (p * C + k0) * k_panel_rows, X + k0, C, N, k1 - k0,
                             c == 0);
  }
}
#endif

#if defined(WB_F16_PANELS_AVX2) && defined(WB_PANEL_TILE_AVX512)
#define WB_F16_PANELS_AVX512 1
using panel_detail::load16;

// AVX-512 prefill: two panels (32 rows) by 12 tokens per tile, columns in chunks of k_chunk512 so
// the X rows (12 x k_chunk512 floats) and the two panels' chunk (32 x k_chunk512 halves) stay in L1
// while the chunk is swept.
constexpr int k_chunk512 = 256;

// One token, zmm: one widening load and one FMA per column, eight columns in flight.
void matvec_panel512(float* out, const uint16_t* panel, const float* x, int C) {
  __m512 a[8];
  for (auto& r : a) r = _mm512_setzero_ps();
  int k = 0;
  for (; k + 8 <= C; k += 8) {
    // 64 columns (2 KiB) ahead; the 8 columns of a step are 256 bytes, 4 lines.
    prefetch_lines(panel + static_cast<int64_t>(k) * k_panel_rows, 64 * k_panel_rows * 2, 4);
#pragma GCC unroll 8
    for (int u = 0; u < 8; ++u)
      a[u] =
          _mm512_fmadd_ps(load16(panel + static_cast<int64_t>(k + u) * k_panel_rows), _mm512_set1_ps(x[k + u]), a[u]);
  }
  for (; k < C; ++k)
    a[0] = _mm512_fmadd_ps(load16(panel + static_cast<int64_t>(k) * k_panel_rows), _mm512_set1_ps(x[k]), a[0]);
  _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])),
                                      _mm512_add_ps(_mm512_add_ps(a[4], a[5]), _mm512_add_ps(a[6], a[7]))));
}

void panels_avx512(float* out, const uint16_t* P, const float* X, int N, int C, int64_t OC, int64_t p0, int64_t p1) {
  const int64_t stride = static_cast<int64_t>(C) * k_panel_rows;
  for (int64_t p = p0; p < p1; p += 2)
    for (int k0 = 0; k0 < C; k0 += k_chunk512) {
      const int kc = std::min(C - k0, k_chunk512);
      const uint16_t* panel = P + p * stride + static_cast<int64_t>(k0) * k_panel_rows;
      (p + 2 <= p1
           ? panel_detail::sweep512<uint16_t, 2>
           : panel_detail::sweep512<uint16_t, 1>)(out + p * k_panel_rows, OC, panel, stride, X + k0, C, N, kc, k0 == 0);
    }
}
#endif

}  // namespace

uint64_t f16_panel_bytes(int64_t OC, int C) {
  if (OC < 0 || C < 0) throw Error("f16 panels: negative shape");
  return checked_mul(checked_mul(static_cast<uint64_t>(panels_of(OC)) * k_panel_rows, static_cast<uint64_t>(C),
                                 "f16 panels"),
                     2, "f16 panels");
}

void pack_f16_panels(const uint16_t* W, int64_t OC, int C, uint16_t* dst) {
  if (OC < 0 || C < 0) throw Error("f16 panels: negative shape");
  for (int64_t p = 0; p < panels_of(OC); ++p) {
    uint16_t* panel = dst + p * C * k_panel_rows;
    for (int j = 0; j < k_panel_rows; ++j) {
      const uint16_t* row = W + (p * k_panel_rows + j) * C;
      for (int k = 0; k < C; ++k) panel[static_cast<int64_t>(k) * k_panel_rows + j] = row[k];
    }
  }
}

void matmul_f16_panels(float* out, const uint16_t* P, const float* X, int N, int C, int64_t OC, int64_t panel_begin,
                       int64_t panel_end) {
  if (N < 1 || C < 0 || OC < 0 || panel_begin < 0 || panel_begin > panel_end || panel_end > panels_of(OC))
    throw Error("matmul_f16_panels: bad shape or panel range");
#if defined(WB_F16_PANELS_AVX512)
  if (N > 1) return panels_avx512(out, P, X, N, C, OC, panel_begin, panel_end);
  for (int64_t p = panel_begin; p < panel_end; ++p)
    matvec_panel512(out + p * k_panel_rows, P + p * C * k_panel_rows, X, C);
  return;
#endif
#if defined(WB_F16_PANELS_AVX2)
  panels_avx2(out, P, X, N, C, OC, panel_begin, panel_end);
#else
  panels_portable(out, P, X, N, C, OC, panel_begin, panel_end);
#endif
}

}  // namespace engine
