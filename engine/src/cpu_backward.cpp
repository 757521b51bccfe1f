// CPU backward passes of the elementwise, norm, embedding and matmul ops (llm.c's *_backward, threaded).
//
// Invariants: every op ADDS into its gradient buffers (backend.h), and no two threads ever write the same
// float: row-wise results (dinp) are split by rows, reductions over rows (dweight, dbias, embedding
// tables, where one token may appear in many rows) are split by columns, so every column's sum is made
// by one thread in a fixed order and results do not depend on the thread count.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu_ops_train.h"
#include "dropout_mask.h"
#include "fast_math.h"

namespace engine::cpu {

namespace {

// Column blocks of 16 floats (one cache line) per task, so threads never share a line of an output row.
constexpr int64_t kColBlock = 16;

template <typename Fn>
void for_column_blocks(ThreadPool& pool, int64_t cols, Fn&& fn) {
  const int64_t blocks = (cols + kColBlock - 1) / kColBlock;
  pool.parallel_for(blocks, [&](int64_t bb, int64_t be) { fn(bb * kColBlock, std::min(be * kColBlock, cols)); });
}

}  // namespace

void encoder_backward(ThreadPool& pool, float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B,
                      int T, int C) {
  const int64_t N = static_cast<int64_t>(B) * T;
  for_column_blocks(pool, C, [&](int64_t c0, int64_t c1) {
    for (int64_t n = 0; n < N; ++n) {
      const float* d = dout + n * C;
      float* te = dwte + static_cast<int64_t>(tokens[n]) * C;
      for (int64_t i = c0; i < c1; ++i) te[i] += d[i];
      if (dwpe) {
        float* pe = dwpe + (n % T) * C;
        for (int64_t i = c0; i < c1; ++i) pe[i] += d[i];
      }
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

void matmul_backward(ThreadPool& pool, float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC) {
  // As in the forward, OpenBLAS runs single-threaded inside our pool and each task owns a block of
  // output columns: one sgemm per thread (chunks_per_thread = 1), since each call has a fixed cost.
  if (dinp) {
    // dinp[:, b:e] += dout (N,OC) @ W[:, b:e]
    const int64_t blocks = (C + kColBlock - 1) / kColBlock;
    pool.parallel_for(blocks, [&](int64_t bb, int64_t be) {
      const int64_t b = bb * kColBlock, e = std::min<int64_t>(be * kColBlock, C);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, static_cast<int>(e - b), OC, 1.0f, dout, OC,
                  weight + b, C, 1.0f, dinp + b, C);
    }, /*chunks_per_thread=*/1);
  }
  if (dweight) {
    // dW[b:e, :] += dout[:, b:e]^T @ inp (N,C)
    const int64_t blocks = (OC + kColBlock - 1) / kColBlock;
    pool.parallel_for(blocks, [&](int64_t bb, int64_t be) {
      const int64_t b = bb * kColBlock, e = std::min<int64_t>(be * kColBlock, OC);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(e - b), C, N, 1.0f, dout + b, OC, inp, C,
                  1.0f, dweight + b * C, C);
    }, /*chunks_per_thread=*/1);
  }
  if (dbias) {
    for_column_blocks(pool, OC, [&](int64_t c0, int64_t c1) {
      for (int64_t n = 0; n < N; ++n) {
        const float* d = dout + n * OC;
        for (int64_t i = c0; i < c1; ++i) dbias[i] += d[i];
      }
    });
  }
}

void rope_rotate(ThreadPool& pool, float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS,
                 int pos0, float theta, bool interleaved, float sign) {
  const int half = HS / 2;
  // cos/sin per (row, pair), shared by every head of q and k. Angles in double: pos * freq reaches
  // ~1e6 radians at long contexts, where float would lose the fractional part.
  std::vector<float> cs(static_cast<size_t>(T) * half), sn(cs.size());
  for (int i = 0; i < half; ++i) {
    const double freq = std::pow(static_cast<double>(theta), -2.0 * i / HS);
    for (int t = 0; t < T; ++t) {
      const double a = static_cast<double>(pos0 + t) * freq;
      cs[static_cast<size_t>(t) * half + i] = static_cast<float>(std::cos(a));
      sn[static_cast<size_t>(t) * half + i] = static_cast<float>(sign * std::sin(a));
    }
  }
  // Pair i of a head is (x[i*step], x[i*step + off]): step 1, off HS/2 for rotate-half; step 2, off 1
  // interleaved.
  const int step = interleaved ? 2 : 1, off = interleaved ? 1 : half;
  auto rotate_rows = [&](float* x, int stride, int heads) {
    pool.parallel_for(T, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const float* c = cs.data() + t * half;
        const float* s = sn.data() + t * half;
        for (int h = 0; h < heads; ++h) {
          float* v = x + t * stride + static_cast<int64_t>(h) * HS;
          for (int i = 0; i < half; ++i) {
            const float a = v[i * step], b = v[i * step + off];
            v[i * step] = a * c[i] - b * s[i];
            v[i * step + off] = b * c[i] + a * s[i];
          }
        }
      }
    });
  };
  rotate_rows(q, q_stride, NH);
  if (k) rotate_rows(k, k_stride, KVH);
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

void swiglu_backward(ThreadPool& pool, float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int64_t n) {
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

void dropout_apply(ThreadPool& pool, float* out, const float* inp, int64_t n, float p, uint64_t seed) {
  if (p <= 0.0f) {
    if (out != inp) std::memmove(out, inp, sizeof(float) * static_cast<size_t>(n));
    return;
  }
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = inp[i] * dropout_scale(seed, static_cast<uint64_t>(i), p);
  });
}

}  // namespace engine::cpu
