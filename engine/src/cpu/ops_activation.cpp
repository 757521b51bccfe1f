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
  // gelu(x) = x/2 (1 + tanh u), u = s (x + k x^3):
  // gelu'(x) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) s (1 + 3 k x^2). With sg = sigmoid(2u) = (1 + tanh u)/2,
  // 1 - tanh^2 u = 4 sg (1 - sg), so gelu'(x) = sg + 2 x sg (1 - sg) s (1 + 3 k x^2): one exp, no tanh (libm's
  // scalar tanhf was the largest elementwise cost of a GPT-2 training step).
  constexpr float s = 0.7978845608028654f, k = 0.044715f;
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
#if defined(__AVX2__) && defined(__FMA__)
    const __m256 one = _mm256_set1_ps(1.0f), vk = _mm256_set1_ps(k), k3 = _mm256_set1_ps(3.0f * k);
    const __m256 two_s = _mm256_set1_ps(2.0f * s), minus_two_s = _mm256_set1_ps(-2.0f * s);
    for (; i + 8 <= end; i += 8) {
      const __m256 x = _mm256_loadu_ps(inp + i);
      const __m256 x2 = _mm256_mul_ps(x, x);
      const __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(vk, x2), x, x);  // x + k x^3
      const __m256 sg = _mm256_div_ps(one, _mm256_add_ps(one, fast_expf8(_mm256_mul_ps(minus_two_s, inner))));
      const __m256 sg_slope = _mm256_mul_ps(sg, _mm256_sub_ps(one, sg));
      const __m256 slope = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(two_s, x), sg_slope), _mm256_fmadd_ps(k3, x2, one));
      const __m256 g = _mm256_add_ps(sg, slope);
      _mm256_storeu_ps(dinp + i, _mm256_fmadd_ps(g, _mm256_loadu_ps(dout + i), _mm256_loadu_ps(dinp + i)));
    }
#endif
    for (; i < end; ++i) {
      const float x = inp[i];
      const float sg = 1.0f / (1.0f + fast_expf(-2.0f * s * (x + k * x * x * x)));
      const float g = sg + 2.0f * s * x * (sg * (1.0f - sg)) * (1.0f + 3.0f * k * x * x);
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
    int64_t i = begin;
#if defined(__AVX2__) && defined(__FMA__)
    const __m256 one = _mm256_set1_ps(1.0f);
    for (; i + 8 <= end; i += 8) {
      const __m256 g = _mm256_loadu_ps(gate + i), u = _mm256_loadu_ps(up + i), d = _mm256_loadu_ps(dout + i);
      const __m256 sg = _mm256_div_ps(one, _mm256_add_ps(one, fast_expf8(_mm256_sub_ps(_mm256_setzero_ps(), g))));
      const __m256 dsilu = _mm256_mul_ps(sg, _mm256_fmadd_ps(g, _mm256_sub_ps(one, sg), one));
      _mm256_storeu_ps(dgate + i, _mm256_fmadd_ps(_mm256_mul_ps(d, u), dsilu, _mm256_loadu_ps(dgate + i)));
      _mm256_storeu_ps(dup + i, _mm256_fmadd_ps(_mm256_mul_ps(d, g), sg, _mm256_loadu_ps(dup + i)));
    }
#endif
    for (; i < end; ++i) {
      const float g = gate[i];
      const float sg = 1.0f / (1.0f + fast_expf(-g));
      dgate[i] += dout[i] * up[i] * sg * (1.0f + g * (1.0f - sg));
      dup[i] += dout[i] * g * sg;
    }
  });
}

}  // namespace engine::cpu
