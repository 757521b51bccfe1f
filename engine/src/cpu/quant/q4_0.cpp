// q4_0 rows: quantize (f32 -> blocks) and dequantize (blocks -> f32).
//
// ggml's rounding, reproduced for byte-identical files: the scale comes from the element of
// largest magnitude *with its sign* (first one on ties), d = max / -8, so that element maps to
// nibble 0 exactly and the asymmetric range [-8, 7] is used on the side that needs the extra step.
// q = min(15, trunc(x * (1/d) + 8.5)) — truncation after +8.5 is round-half-up of x/d + 8.
#include <algorithm>
#include <cmath>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

void quantize_row_q4_0(const float* src, void* dst, int64_t n) {
  require_multiple(n, k_qblock, "quantize_row_q4_0");
  auto* out = static_cast<block_q4_0*>(dst);
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    const float* x = src + b * k_qblock;
    float amax = 0.f, max = 0.f;
    for (int j = 0; j < k_qblock; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    out[b].d = f32_to_fp16(d);
    for (int j = 0; j < k_qblock / 2; ++j) {
      // x*id + 8.5 lies in [0.5, 16.5] by construction, so the cast never sees a negative value.
      const int lo = std::min(15, (int)(x[j] * id + 8.5f));
      const int hi = std::min(15, (int)(x[j + 16] * id + 8.5f));
      out[b].qs[j] = (uint8_t)(lo | hi << 4);
    }
  }
}

void dequantize_row_q4_0(const void* src, float* dst, int64_t n) {
  require_multiple(n, k_qblock, "dequantize_row_q4_0");
  const auto* in = static_cast<const block_q4_0*>(src);
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    const float d = half_to_f32(in[b].d);
    float* y = dst + b * k_qblock;
    for (int j = 0; j < k_qblock / 2; ++j) {
      y[j] = d * (float)((in[b].qs[j] & 0x0f) - 8);
      y[j + 16] = d * (float)((in[b].qs[j] >> 4) - 8);
    }
  }
}

}  // namespace engine
