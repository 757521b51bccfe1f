// CPU LayerNorm and RMSNorm, forward beside backward (shapes and accumulate rules: backend.h).
#include <cmath>

#include "cpu/cpu_ops.h"
#include "cpu/simd_dot.h"

namespace engine::cpu {

void layernorm_forward(ThreadPool& pool, float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C, float eps) {
  pool.parallel_for(N, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const float* x = inp + n * C;
      float* o = out + n * C;
      float m = 0.f;
      for (int i = 0; i < C; ++i) m += x[i];
      m /= C;
      float v = 0.f;
      for (int i = 0; i < C; ++i) {
        const float d = x[i] - m;
        v += d * d;
      }
      v /= C;
      const float s = 1.0f / std::sqrt(v + eps);
      for (int i = 0; i < C; ++i) o[i] = (x[i] - m) * s * weight[i] + (bias ? bias[i] : 0.f);
      if (mean) mean[n] = m;
      if (rstd) rstd[n] = s;
    }
  });
}

void layernorm_backward(ThreadPool& pool, float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd, int N, int C) {
  // dx = rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), dnorm = dout * weight.
  pool.parallel_for(N, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const float* x = inp + n * C;
      const float* d = dout + n * C;
      const float m = mean[n], s = rstd[n];
      float sum_dn = 0.f, sum_dnn = 0.f;
      for (int i = 0; i < C; ++i) {
        const float dn = d[i] * weight[i];
        sum_dn += dn;
        sum_dnn += dn * (x[i] - m) * s;
      }
      const float mean_dn = sum_dn / C, mean_dnn = sum_dnn / C;
      float* dx = dinp + n * C;
      for (int i = 0; i < C; ++i) dx[i] += s * (d[i] * weight[i] - mean_dn - (x[i] - m) * s * mean_dnn);
    }
  });
  if (!dweight && !dbias) return;  // frozen gains (LoRA)
  for_column_blocks(pool, C, [&](int64_t c0, int64_t c1) {
    for (int64_t n = 0; n < N; ++n) {
      const float* x = inp + n * C;
      const float* d = dout + n * C;
      const float m = mean[n], s = rstd[n];
      for (int64_t i = c0; i < c1; ++i) {
        if (dweight) dweight[i] += d[i] * (x[i] - m) * s;
        if (dbias) dbias[i] += d[i];
      }
    }
  });
}

void rmsnorm_forward(ThreadPool& pool, float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                     float eps) {
  pool.parallel_for(N, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const float* x = inp + n * C;
      float* o = out + n * C;
      // dot_f32 is the vectorised reduction; the scale is applied in a loop GCC vectorises.
      const float s = 1.0f / std::sqrt(dot_f32(x, x, C) / C + eps);
      for (int i = 0; i < C; ++i) o[i] = x[i] * s * weight[i];
      if (rstd) rstd[n] = s;
    }
  });
}

void rmsnorm_backward(ThreadPool& pool, float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int N, int C) {
  // y = x * r * w with r = (mean(x^2) + eps)^-1/2, dr/dx_j = -r^3 x_j / C:
  // dx_j = r w_j d_j - x_j r^3 / C * sum_i d_i w_i x_i.
  pool.parallel_for(N, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const float* x = inp + n * C;
      const float* d = dout + n * C;
      const float r = rstd[n];
      float dot = 0.f;
      for (int i = 0; i < C; ++i) dot += d[i] * weight[i] * x[i];
      const float k = r * r * r * dot / C;
      float* dx = dinp + n * C;
      for (int i = 0; i < C; ++i) dx[i] += r * weight[i] * d[i] - x[i] * k;
    }
  });
  if (!dweight) return;  // frozen gain (LoRA)
  for_column_blocks(pool, C, [&](int64_t c0, int64_t c1) {
    for (int64_t n = 0; n < N; ++n) {
      const float* x = inp + n * C;
      const float* d = dout + n * C;
      for (int64_t i = c0; i < c1; ++i) dweight[i] += d[i] * x[i] * rstd[n];
    }
  });
}

}  // namespace engine::cpu
