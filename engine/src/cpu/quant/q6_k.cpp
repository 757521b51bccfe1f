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
  uint8_t u[k_kblock];
  for (int64_t b = 0; b < n / k_kblock; ++b) {
    const float d = half_to_f32(in[b].d);
    q6_K_unsigned_values(in[b], u);
    float* y = dst + b * k_kblock;
    for (int i = 0; i < k_kblock; ++i) y[i] = d * (float)in[b].scales[i / 16] * (float)(int{u[i]} - 32);
  }
}

}  // namespace engine
