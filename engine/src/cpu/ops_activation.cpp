// CPU GELU (GPT-2's tanh approximation) and SwiGLU, forward beside backward (backend.h).
#include <cmath>

#include "cpu/cpu_ops.h"
#include "cpu/fast_math.h"

namespace engine::cpu {

void gelu_forward(ThreadPool& pool, float* out, const float* inp, int64_t n) {
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
#if defined(__AVX2__) && defined(__FMA__)
    for (; i + 8 <= end; i += 8) _mm256_storeu_ps(out + i, gelu_tanh8(_mm256_loadu_ps(inp + i)));
#endif
    for (; i < end; ++i) out[i] = gelu_tanh(inp[i]);
  });
}

void gelu_backward(ThreadPool& pool, float* dinp, const float* inp, const float* dout, int64_t n) {
  // gelu(x) = x/2 (1 + tanh u), u = s (x + 0.044715 x^3):
  // gelu'(x) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) s (1 + 3 * 0.044715 x^2).
  constexpr float s = 0.7978845608028654f, k = 0.044715f;
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float x = inp[i];
      const float th = std::tanh(s * (x + k * x * x * x));
      const float g = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * s * (1.0f + 3.0f * k * x * x);
      dinp[i] += g * dout[i];
    }
  });
}

void swiglu_forward(ThreadPool& pool, float* out, const float* gate, const float* up, int64_t n) {
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
#if defined(__AVX2__) && defined(__FMA__)
    for (; i + 8 <= end; i += 8) {
      const __m256 g = _mm256_loadu_ps(gate + i);
      const __m256 silu =
          _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), fast_expf8(_mm256_sub_ps(_mm256_setzero_ps(), g))));
      _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
    }
#endif
    for (; i < end; ++i) {
      const float g = gate[i];
      out[i] = g / (1.0f + fast_expf(-g)) * up[i];
    }
  });
}

void swiglu_backward(ThreadPool& pool, float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                     int64_t n) {
  // silu(g) = g sigma(g), silu'(g) = sigma(g) (1 + g (1 - sigma(g))).
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float g = gate[i];
      const float sg = 1.0f / (1.0f + fast_expf(-g));
      dgate[i] += dout[i] * up[i] * sg * (1.0f + g * (1.0f - sg));
      dup[i] += dout[i] * g * sg;
    }
  });
}

}  // namespace engine::cpu
