// q8_0 rows: quantize (f32 -> blocks) and dequantize (blocks -> f32).
//
// Rounding follows ggml's reference quantizer so files we write match other tools byte for byte:
// d = amax/127 in f32, q = roundf(x * (1/d)) (half away from zero), and only then is d stored as
// f16. The quants are therefore computed from the f32 scale, not the rounded f16 one.
#include <cmath>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

void quantize_row_q8_0(const float* src, void* dst, int64_t n) {
  require_multiple(n, k_qblock, "quantize_row_q8_0");
  auto* out = static_cast<block_q8_0*>(dst);
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    const float* x = src + b * k_qblock;
    float amax = 0.f;
    for (int j = 0; j < k_qblock; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    out[b].d = f32_to_fp16(d);
    for (int j = 0; j < k_qblock; ++j) out[b].qs[j] = (int8_t)std::roundf(x[j] * id);
  }
}

void dequantize_row_q8_0(const void* src, float* dst, int64_t n) {
  require_multiple(n, k_qblock, "dequantize_row_q8_0");
  const auto* in = static_cast<const block_q8_0*>(src);
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    const float d = half_to_f32(in[b].d);
    for (int j = 0; j < k_qblock; ++j) dst[b * k_qblock + j] = d * (float)in[b].qs[j];
  }
}

}  // namespace engine
