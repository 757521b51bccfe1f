// q5_K dequantization (blocks -> f32), the K type of Q5_K_M / Q5_K_S files.
// quantize_q4_1_q5.cpp writes it.
//
// q4_K's super-block (8 sub-blocks of 32, 6-bit scales and mins packed in 12 bytes, read by
// q4_K_scale_min) with a fifth bit per weight: qh[l] bit j is the top bit of weight l of sub-block j,
// so values run 0..31 and w = d*sc*q - dmin*m.
#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

void dequantize_row_q5_K(const void* src, float* dst, int64_t n) {
  require_multiple(n, k_kblock, "dequantize_row_q5_K");
  const auto* in = static_cast<const block_q5_K*>(src);
  uint8_t u[k_kblock];
  for (int64_t b = 0; b < n / k_kblock; ++b) {
    const float d = half_to_f32(in[b].d), dmin = half_to_f32(in[b].dmin);
    q5_K_unsigned_values(in[b], u);
    float* y = dst + b * k_kblock;
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      q4_K_scale_min(in[b].scales, j, sc, m);
      const float dj = d * static_cast<float>(sc), mj = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) y[32 * j + l] = dj * static_cast<float>(u[32 * j + l]) - mj;
    }
  }
}

}  // namespace engine
