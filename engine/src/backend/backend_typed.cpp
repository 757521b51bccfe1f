// Default *_typed ops of Backend (see backend.h): f32 weights go to the plain op unchanged; any
// other encoding is widened to f32 on the host first. A backend with its own quantized kernels
// (the CPU backend) overrides matmul_forward_typed; the encoder needs no more than this, since it
// only ever widens T rows.
#include "engine/backend.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "engine/quant.h"

namespace engine {

void Backend::encoder_forward_typed(float* out, const int32_t* tokens, const WeightRef& wte, const float* wpe, int pos0,
                                    int T, int C) {
  if (const float* f = wte.f32()) return encoder_forward(out, tokens, f, wpe, pos0, T, C);
  for (int t = 0; t < T; ++t) {
    float* o = out + static_cast<int64_t>(t) * C;
    dequantize_rows(wte.dtype, wte.data, C, tokens[t], 1, o);
    if (wpe) {
      const float* pe = wpe + static_cast<int64_t>(pos0 + t) * C;
      for (int i = 0; i < C; ++i) o[i] += pe[i];
    }
  }
}

void Backend::matmul_forward_typed(float* out, const float* inp, const WeightRef& weight, const float* bias, int N,
                                   int C, int OC) {
  if (const float* f = weight.f32()) return matmul_forward(out, inp, f, bias, N, C, OC);
  if (C < 0 || OC < 0) throw Error("matmul_forward_typed: negative shape");
  m_widened.resize(checked_mul(static_cast<uint64_t>(OC), static_cast<uint64_t>(C), "matmul_forward_typed scratch"));
  dequantize_rows(weight.dtype, weight.data, C, 0, OC, m_widened.data());
  matmul_forward(out, inp, m_widened.data(), bias, N, C, OC);
}

}  // namespace engine
