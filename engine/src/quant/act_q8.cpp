// Activation quantization for the integer matvec kernels: x (f32) -> int8 per 32-block + scale.
//
// Done once per matvec (or once per x shared by several matrices via the *_act kernels), so its
// cost is C operations against the OC*C of the product; it is kept simple and scalar. The scale
// stays f32 (ggml stores f16) since it never leaves memory: one less rounding for free.
// Rounding is to nearest, so the per-element activation error is at most d/2 = amax/254.
#include <cmath>

#include "engine/checked.h"
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

void quantize_act_q8_rows(const float* X, int N, int C, q8_act& out) {
  require_multiple(C, k_qblock, "quantize_act_q8_rows");
  if (N < 1) throw Error("quantize_act_q8_rows: no rows");
  // Blocks never straddle rows (C % 32 == 0), so the rows quantize as one long vector.
  const uint64_t n = checked_mul(static_cast<uint64_t>(N), static_cast<uint64_t>(C), "quantize_act_q8_rows");
  if (n > static_cast<uint64_t>(INT32_MAX)) throw Error("quantize_act_q8_rows: more than 2^31 activations");
  quantize_act_q8(X, static_cast<int>(n), out);
  out.C = C;
}

}  // namespace engine
