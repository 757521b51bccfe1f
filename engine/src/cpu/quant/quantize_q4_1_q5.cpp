// Quantizers for q4_1, q5_0, q5_1 and q5_K (f32 -> blocks), our own rounding over the block layouts of
// engine/quant.h; the dequantizers (q4_1_q5.cpp, q5_k.cpp) read back exactly what these write.
//
// Every block's grid is chosen so that it covers the block's values and every value then takes the
// nearest point of that grid:
//  - q4_1 / q5_1 (w = d*q + m, q in 0..L with L = 15 / 31): m is the block's minimum and d its range
//    over L, both stored as f16 rounded outwards (m down, d up) so that neither end of the block is
//    cut off by the f16 rounding.
//  - q5_0 (w = d*(q - 16)): the value of largest magnitude maps to q = 0 (d = it / -16, to f16
//    rounding), the side with 16 steps; the other side has 15, so a value of the opposite sign and nearly the same
//    magnitude is at most one step off instead of half a step.
//  - q5_K (w = d*sc_j*q - dmin*m_j per sub-block j of 32, sc_j and m_j 6-bit): each sub-block's offset
//    m_j covers its minimum (or 0 when the sub-block is all positive: m_j only moves the grid down),
//    rounded up to a step of dmin; then sc_j covers its maximum above that offset, rounded up to a step
//    of d. dmin and d are the largest offset and span over 63, stored as f16 rounded up.
// Rounding up keeps every value inside its grid, at the price of a step up to 1/sc_j larger than
// the exact fit: at most one part in 63 for the sub-block with the largest span.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

namespace {

// The f16 neighbours of h towards +inf and -inf (finite values only; weights never come near 65504).
uint16_t f16_up(uint16_t h) { return h == 0x8000 ? 0x0001 : (h & 0x8000) ? h - 1 : h + 1; }
uint16_t f16_down(uint16_t h) { return h == 0x0000 ? 0x8001 : (h & 0x8000) ? h + 1 : h - 1; }

// The nearest f16 at least / at most x.
uint16_t f16_at_least(float x) {
  uint16_t h = f32_to_fp16(x);
  while (fp16_to_f32(h) < x) h = f16_up(h);
  return h;
}
uint16_t f16_at_most(float x) {
  uint16_t h = f32_to_fp16(x);
  while (fp16_to_f32(h) > x) h = f16_down(h);
  return h;
}

// The nearest of 0..top to v (v may be outside; NaN is 0).
int nearest_level(float v, int top) {
  if (!(v > 0.f)) return 0;
  return std::min(top, static_cast<int>(std::lround(v)));
}

// 32 unsigned values in weight order -> q4_0's nibble placement plus the fifth bits (bit j of the
// little-endian word for weight j); the inverse of q5_unsigned_values.
void place_32(const uint8_t u[32], uint8_t qs[16], uint8_t qh[4]) {
  uint32_t high = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((u[j] & 15) | (u[j + 16] & 15) << 4);
    high |= uint32_t(u[j] >> 4) << j | uint32_t(u[j + 16] >> 4) << (j + 16);
  }
  if (qh) std::memcpy(qh, &high, 4);
}

// q4_1 / q5_1: the block's [min, max] on a grid of `top` steps.
template <typename Block>
void quantize_with_min(const float* src, void* dst, int64_t n, int top, const char* what) {
  require_multiple(n, k_qblock, what);
  auto* out = static_cast<Block*>(dst);
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    const float* x = src + b * k_qblock;
    const auto [lo, hi] = std::minmax_element(x, x + k_qblock);
    out[b].m = f16_at_most(*lo);
    const float m = fp16_to_f32(out[b].m);
    out[b].d = f16_at_least((*hi - m) / static_cast<float>(top));
    const float d = fp16_to_f32(out[b].d), id = d > 0.f ? 1.f / d : 0.f;
    uint8_t u[k_qblock];
    for (int j = 0; j < k_qblock; ++j) u[j] = static_cast<uint8_t>(nearest_level((x[j] - m) * id, top));
    if constexpr (std::is_same_v<Block, block_q5_1>) place_32(u, out[b].qs, out[b].qh);
    else place_32(u, out[b].qs, nullptr);
  }
}

}  // namespace

void quantize_row_q4_1(const float* src, void* dst, int64_t n) {
  quantize_with_min<block_q4_1>(src, dst, n, 15, "quantize_row_q4_1");
}

void quantize_row_q5_1(const float* src, void* dst, int64_t n) {
  quantize_with_min<block_q5_1>(src, dst, n, 31, "quantize_row_q5_1");
}

void quantize_row_q5_0(const float* src, void* dst, int64_t n) {
  require_multiple(n, k_qblock, "quantize_row_q5_0");
  auto* out = static_cast<block_q5_0*>(dst);
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    const float* x = src + b * k_qblock;
    float amax = 0.f, max = 0.f;  // the first value of largest magnitude, with its sign
    for (int j = 0; j < k_qblock; ++j)
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    out[b].d = f32_to_fp16(max / -16.f);
    const float d = fp16_to_f32(out[b].d), id = d != 0.f ? 1.f / d : 0.f;
    uint8_t u[k_qblock];
    for (int j = 0; j < k_qblock; ++j) u[j] = static_cast<uint8_t>(nearest_level(x[j] * id + 16.f, 31));
    place_32(u, out[b].qs, out[b].qh);
  }
}

void quantize_row_q5_K(const float* src, void* dst, int64_t n) {
  require_multiple(n, k_kblock, "quantize_row_q5_K");
  auto* out = static_cast<block_q5_K*>(dst);
  for (int64_t b = 0; b < n / k_kblock; ++b) {
    const float* x = src + b * k_kblock;
    float lo[8], hi[8];
    float max_offset = 0.f;
    for (int j = 0; j < 8; ++j) {
      const auto [mn, mx] = std::minmax_element(x + 32 * j, x + 32 * j + 32);
      lo[j] = std::min(0.f, *mn);
      hi[j] = *mx;
      max_offset = std::max(max_offset, -lo[j]);
    }
    out[b].dmin = f16_at_least(max_offset / 63.f);
    const float dmin = fp16_to_f32(out[b].dmin);
    int sc[8], m[8];
    float offset[8], max_span = 0.f;
    for (int j = 0; j < 8; ++j) {
      // The smallest whole number of dmin steps that reaches -lo (a hair of slack against the
      // division's rounding turning an exact 63 into 64).
      m[j] = dmin > 0.f ? std::clamp(static_cast<int>(std::ceil(-lo[j] / dmin - 1e-4f)), 0, 63) : 0;
      offset[j] = dmin * static_cast<float>(m[j]);
      max_span = std::max(max_span, (hi[j] + offset[j]) / 31.f);
    }
    out[b].d = f16_at_least(max_span / 63.f);
    const float d = fp16_to_f32(out[b].d);
    for (int j = 0; j < 8; ++j)
      sc[j] = d > 0.f ? std::clamp(static_cast<int>(std::ceil((hi[j] + offset[j]) / (31.f * d) - 1e-4f)), 0, 63) : 0;
    // The 12-byte packing q4_K_scale_min reads: sub-blocks 0..3 in the low 6 bits of bytes j (scale)
    // and j + 4 (min); 4..7 with their low 4 bits in byte j + 4 and their top 2 bits in the top of
    // bytes j - 4 (scale) and j (min).
    uint8_t* s = out[b].scales;
    for (int j = 0; j < 4; ++j) {
      s[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
      s[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
      s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
    }
    uint8_t u[k_kblock];
    for (int j = 0; j < 8; ++j) {
      const float step = d * static_cast<float>(sc[j]), istep = step > 0.f ? 1.f / step : 0.f;
      for (int l = 0; l < 32; ++l)
        u[32 * j + l] = static_cast<uint8_t>(nearest_level((x[32 * j + l] + offset[j]) * istep, 31));
    }
    // The layout q5_K_unsigned_values reads: chunk c of qs has sub-block 2c in its low nibbles and
    // 2c + 1 in its high ones; bit j of qh[l] is the fifth bit of weight l of sub-block j.
    std::memset(out[b].qh, 0, sizeof out[b].qh);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        const uint8_t a = u[64 * c + l], z = u[64 * c + 32 + l];
        out[b].qs[32 * c + l] = static_cast<uint8_t>((a & 15) | (z & 15) << 4);
        out[b].qh[l] |= static_cast<uint8_t>((a >> 4) << (2 * c) | (z >> 4) << (2 * c + 1));
      }
  }
}

}  // namespace engine
