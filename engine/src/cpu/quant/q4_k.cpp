// q4_K dequantization (blocks -> f32). Downloaded GGUF models use it; we do not quantize to it.
//
// A 256-weight super-block is 8 sub-blocks of 32. Each sub-block j has a 6-bit scale sc_j and a
// 6-bit min m_j, packed into 12 bytes:
//   j < 4:  sc = scales[j] & 63,                            m = scales[j+4] & 63
//   j >= 4: sc = (scales[j+4] & 15) | (scales[j-4] >> 6) << 4,
//           m  = (scales[j+4] >> 4) | (scales[j]   >> 6) << 4
// (the top two bits of bytes 0..7 carry the high bits of sub-blocks 4..7).
// qs holds 4 chunks of 32 bytes; chunk c gives sub-block 2c in the low nibbles and 2c+1 in the
// high nibbles. w = d*sc*q - dmin*m with q in 0..15.
#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

void dequantize_row_q4_K(const void* src, float* dst, int64_t n) {
  require_multiple(n, k_kblock, "dequantize_row_q4_K");
  const auto* in = static_cast<const block_q4_K*>(src);
  for (int64_t b = 0; b < n / k_kblock; ++b) {
    const float d = half_to_f32(in[b].d);
    const float dmin = half_to_f32(in[b].dmin);
    float* y = dst + b * k_kblock;
    for (int c = 0; c < 4; ++c) {
      int sc0, m0, sc1, m1;
      q4_K_scale_min(in[b].scales, 2 * c, sc0, m0);
      q4_K_scale_min(in[b].scales, 2 * c + 1, sc1, m1);
      const float d0 = d * (float)sc0, min0 = dmin * (float)m0;
      const float d1 = d * (float)sc1, min1 = dmin * (float)m1;
      const uint8_t* q = in[b].qs + 32 * c;
      for (int l = 0; l < 32; ++l) {
        y[64 * c + l] = d0 * (float)(q[l] & 15) - min0;
        y[64 * c + 32 + l] = d1 * (float)(q[l] >> 4) - min1;
      }
    }
  }
}

}  // namespace engine
