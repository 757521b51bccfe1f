// Activation quantization for the integer matvec kernels: x (f32) -> int8 per 32-block + scale.
//
// Done once per matvec (or once per x shared by several matrices via the *_act kernels), so its
// cost is C operations against the OC*C of the product; it is kept simple and scalar. The scale
// stays f32 (ggml stores f16) since it never leaves memory: one less rounding for free.
// Rounding is to nearest, so the per-element activation error is at most d/2 = amax/254.
#include <cmath>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

void quantize_act_q8(const float* x, int C, q8_act& out) {
  require_multiple(C, k_qblock, "quantize_act_q8");
  const int nb = C / k_qblock;
  out.C = C;
  out.q.resize((size_t)C);
  out.d.resize((size_t)nb);
  out.sum.resize((size_t)nb);
  for (int b = 0; b < nb; ++b) {
    const float* xb = x + (int64_t)b * k_qblock;
    float amax = 0.f;
    for (int j = 0; j < k_qblock; ++j) amax = std::fmax(amax, std::fabs(xb[j]));
    const float d = amax / 127.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    int32_t s = 0;
    for (int j = 0; j < k_qblock; ++j) {
      const int q = (int)std::nearbyint(xb[j] * id);
      out.q[(size_t)b * k_qblock + j] = (int8_t)q;
      s += q;
    }
    out.d[b] = d;
    out.sum[b] = s;
  }
}

}  // namespace engine
