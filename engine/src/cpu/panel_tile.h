// Register tiles for a product with one operand in column panels (internal).
//
// A panel holds 16 lanes column by column: panel[k * 16 + j] is lane j's value at column k. The
// other operand is a set of rows, each read one scalar at a time and broadcast. A tile keeps the
// lanes x rows outputs in registers over a run of kc columns:
//
//   out[t * ld + p * 16 + j] (+)= sum over k < kc of panel[p * panel_stride + k * 16 + j] * rows[t * row_stride + k]
//
// The classic outer-product tile: per column, one load per 16 lanes (widened in registers when the
// panel is f16), one broadcast per row, and an FMA per lanes x row pair, so each panel value is
// read once per tile of rows and each row value once per tile of lanes. It serves two products:
//   - f16 weights packed into panels of 16 output rows (quant/f16_panels.cpp): lanes are outputs,
//     rows are tokens of X;
//   - f32 prefill over row-major weights (cpu_gemm_f32.cpp): X is packed into panels of 16 tokens
//     once per call, lanes are tokens, rows are weight rows, and the output comes out transposed.
#pragma once

#include <cstdint>

#include "simd_intrinsics.h"

namespace engine::panel_detail {

inline constexpr int k_lanes = 16;

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define WB_PANEL_TILE_AVX2 1

inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

// 256-bit: one panel (two ymm of lanes) x RN rows in 2 * RN accumulators; RN = 6 uses 12 of the 16
// registers, two for the panel column and one for the broadcast.
template <class E, int RN>
void tile256(float* out, int64_t ld, const E* panel, const float* rows, int64_t row_stride, int kc, bool first) {
  // One flat array with fully unrolled loops: GCC then keeps every accumulator in a register (a
  // nested [RN][2] array was spilled to the stack on every column).
  __m256 acc[2 * RN];
#pragma GCC unroll 12
  for (int i = 0; i < 2 * RN; ++i) acc[i] = _mm256_setzero_ps();
  for (int k = 0; k < kc; ++k) {
    const __m256 w0 = load8(panel + static_cast<int64_t>(k) * k_lanes);
    const __m256 w1 = load8(panel + static_cast<int64_t>(k) * k_lanes + 8);
#pragma GCC unroll 6
    for (int t = 0; t < RN; ++t) {
      const __m256 b = _mm256_broadcast_ss(rows + t * row_stride + k);
      acc[2 * t] = _mm256_fmadd_ps(w0, b, acc[2 * t]);
      acc[2 * t + 1] = _mm256_fmadd_ps(w1, b, acc[2 * t + 1]);
    }
  }
#pragma GCC unroll 6
  for (int t = 0; t < RN; ++t) {
    float* o = out + t * ld;
    if (!first) {
      acc[2 * t] = _mm256_add_ps(_mm256_loadu_ps(o), acc[2 * t]);
      acc[2 * t + 1] = _mm256_add_ps(_mm256_loadu_ps(o + 8), acc[2 * t + 1]);
    }
    _mm256_storeu_ps(o, acc[2 * t]);
    _mm256_storeu_ps(o + 8, acc[2 * t + 1]);
  }
}

// `count` rows against one panel: whole 6-row tiles, but a remainder of 1 or 2 rows is merged with
// the last whole tile into two tiles of 3-4: a 1- or 2-row tile has too few independent FMA chains
// to keep both FMA units busy.
template <class E>
void sweep256(float* out, int64_t ld, const E* panel, const float* rows, int64_t row_stride, int count, int kc,
              bool first) {
  constexpr int tile_rows = 6;
  const int whole =
      count % tile_rows != 0 && count % tile_rows <= 2 && count > tile_rows ? count / tile_rows - 1 : count / tile_rows;
  int r = 0;
  const auto at = [&](auto tile) { tile(out + r * ld, ld, panel, rows + r * row_stride, row_stride, kc, first); };
  for (; r < whole * tile_rows; r += tile_rows) at(tile256<E, tile_rows>);
  if (count - r >= 7) {
    const int first_half = (count - r) / 2;
    at(first_half == 4 ? tile256<E, 4> : tile256<E, 3>);
    r += first_half;
  }
  switch (count - r) {
    case 5: at(tile256<E, 5>); break;
    case 4: at(tile256<E, 4>); break;
    case 3: at(tile256<E, 3>); break;
    case 2: at(tile256<E, 2>); break;
    case 1: at(tile256<E, 1>); break;
    default: break;
  }
}
#endif

#if defined(WB_PANEL_TILE_AVX2) && defined(__AVX512F__)
#define WB_PANEL_TILE_AVX512 1

inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// AVX-512: one zmm holds a panel column's 16 lanes, so the tile is RP panels x RN rows in RP * RN
// accumulators, the broadcast folded into the FMA's memory operand. Two panels by 12 rows use 24 of
// the 32 registers and issue 24 FMAs per 2 panel loads and 12 broadcasts, which keeps both FMA
// ports busy.
inline constexpr int k_tile_rows512 = 12;

template <class E, int RP, int RN>
void tile512(float* out, int64_t ld, const E* panel, int64_t panel_stride, const float* rows, int64_t row_stride,
             int kc, bool first) {
  __m512 acc[RP * RN];
#pragma GCC unroll 24
  for (int i = 0; i < RP * RN; ++i) acc[i] = _mm512_setzero_ps();
  for (int k = 0; k < kc; ++k) {
    __m512 w[RP];
#pragma GCC unroll 2
    for (int p = 0; p < RP; ++p) w[p] = load16(panel + p * panel_stride + static_cast<int64_t>(k) * k_lanes);
#pragma GCC unroll 12
    for (int t = 0; t < RN; ++t) {
      const __m512 b = _mm512_set1_ps(rows[t * row_stride + k]);
#pragma GCC unroll 2
      for (int p = 0; p < RP; ++p) acc[p * RN + t] = _mm512_fmadd_ps(w[p], b, acc[p * RN + t]);
    }
  }
#pragma GCC unroll 12
  for (int t = 0; t < RN; ++t)
#pragma GCC unroll 2
    for (int p = 0; p < RP; ++p) {
      float* o = out + t * ld + p * k_lanes;
      const __m512 v = first ? acc[p * RN + t] : _mm512_add_ps(_mm512_loadu_ps(o), acc[p * RN + t]);
      _mm512_storeu_ps(o, v);
    }
}

// `count` rows against RP panels: whole 12-row tiles, then one tile of the remainder.
template <class E, int RP>
void sweep512(float* out, int64_t ld, const E* panel, int64_t panel_stride, const float* rows, int64_t row_stride,
              int count, int kc, bool first) {
  int r = 0;
  for (; r + k_tile_rows512 <= count; r += k_tile_rows512)
    tile512<E, RP, k_tile_rows512>(out + r * ld, ld, panel, panel_stride, rows + r * row_stride, row_stride, kc, first);
  using Tile = void (*)(float*, int64_t, const E*, int64_t, const float*, int64_t, int, bool);
  static constexpr Tile rest[k_tile_rows512] = {nullptr,           tile512<E, RP, 1>,  tile512<E, RP, 2>,
                                                tile512<E, RP, 3>, tile512<E, RP, 4>,  tile512<E, RP, 5>,
                                                tile512<E, RP, 6>, tile512<E, RP, 7>,  tile512<E, RP, 8>,
                                                tile512<E, RP, 9>, tile512<E, RP, 10>, tile512<E, RP, 11>};
  if (count > r) rest[count - r](out + r * ld, ld, panel, panel_stride, rows + r * row_stride, row_stride, kc, first);
}
#endif

}  // namespace engine::panel_detail
