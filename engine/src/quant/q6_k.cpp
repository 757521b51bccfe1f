// q6_K dequantization (blocks -> f32). Downloaded GGUF models use it; we do not quantize to it.
//
// A 256-weight super-block is two halves of 128. In half h (ql += 64h, qh += 32h, scales += 8h),
// for l in 0..31 the four 6-bit quants are
//   q0 = ql[l]    & 15 | (qh[l]>>0 & 3) << 4   -> weight 128h + l
//   q1 = ql[l+32] & 15 | (qh[l]>>2 & 3) << 4   -> weight 128h + l + 32
//   q2 = ql[l]    >> 4 | (qh[l]>>4 & 3) << 4   -> weight 128h + l + 64
//   q3 = ql[l+32] >> 4 | (qh[l]>>6 & 3) << 4   -> weight 128h + l + 96
// and weight i of the super-block uses int8 scale scales[i/16]: w = d * scale * (q - 32).
#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

void dequantize_row_q6_K(const void* src, float* dst, int64_t n) {
  require_multiple(n, k_kblock, "dequantize_row_q6_K");
  const auto* in = static_cast<const block_q6_K*>(src);
  for (int64_t b = 0; b < n / k_kblock; ++b) {
    const float d = half_to_f32(in[b].d);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = in[b].ql + 64 * h;
      const uint8_t* qh = in[b].qh + 32 * h;
      const int8_t* sc = in[b].scales + 8 * h;
      float* y = dst + b * k_kblock + 128 * h;
      for (int l = 0; l < 32; ++l) {
        const int q0 = ((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32;
        const int q1 = ((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32;
        const int q2 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
        const int q3 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
        // y index i uses scale i/16: l/16 within each 32-run, runs at offsets 0, 32, 64, 96.
        y[l] = d * (float)sc[l / 16] * (float)q0;
        y[l + 32] = d * (float)sc[l / 16 + 2] * (float)q1;
        y[l + 64] = d * (float)sc[l / 16 + 4] * (float)q2;
        y[l + 96] = d * (float)sc[l / 16 + 6] * (float)q3;
      }
    }
  }
}

}  // namespace engine
