// CPU backend: register-tiled f32 GEMM for multi-row matmuls (prefill, batches; cpu_gemm_f32.cpp,
// OpenBLAS sgemm in builds without AVX2), a threaded SIMD matrix-vector
// product for single rows (decode, where the cost is reading the weights once, so the loop must
// stream memory at full bandwidth), and ThreadPool-parallel loops for everything else.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/blas_core.h"
#include "engine/error.h"
#include "engine/thread_pool.h"
#include "cpu_gemm_f32.h"
#include "cpu_matmul_typed.h"
#include "cpu_ops_train.h"
#include "fast_math.h"
#include "simd_dot.h"

extern "C" {
// Declared by OpenBLAS; not in every cblas.h.
void openblas_set_num_threads(int num_threads);
}

namespace engine {
namespace {

class CpuBackend final : public Backend {
 public:
  // OpenBLAS runs single-threaded inside our pool's threads: two thread pools on the same cores
  // (ours spinning between jobs, OpenBLAS's spinning between calls) would steal time from each other.
  explicit CpuBackend(int threads) : m_pool(threads) { openblas_set_num_threads(1); }

  std::string name() const override { return "CPU"; }
  std::string description() const override {
    // "(SkylakeX, not Prescott)" when restart_with_better_blas_core overrode the library's choice.
    const std::string replaced = blas_core_replaced();
    return "CPU, " + std::to_string(m_pool.size()) + " threads, OpenBLAS (" + blas_core_name() +
           (replaced.empty() ? "" : ", not " + replaced) + ")";
  }
  int threads() const override { return m_pool.size(); }

  void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int pos0,
                       int T, int C) override {
    for (int t = 0; t < T; ++t) {
      const float* te = wte + static_cast<int64_t>(tokens[t]) * C;
      float* o = out + static_cast<int64_t>(t) * C;
      if (wpe) {
        const float* pe = wpe + static_cast<int64_t>(pos0 + t) * C;
        for (int i = 0; i < C; ++i) o[i] = te[i] + pe[i];
      } else {
        std::memcpy(o, te, sizeof(float) * C);
      }
    }
  }

  void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                         const float* bias, int N, int C, float eps) override {
    m_pool.parallel_for(N, [&](int64_t begin, int64_t end) {
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

  void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                       float eps) override {
    m_pool.parallel_for(N, [&](int64_t begin, int64_t end) {
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

  void rope_forward(float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS, int pos0,
                    float theta, bool interleaved) override {
    cpu::rope_rotate(m_pool, q, q_stride, NH, k, k_stride, KVH, T, HS, pos0, theta, interleaved, 1.0f);
  }

  void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) override {
    m_pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      int64_t i = begin;
#if defined(__AVX2__) && defined(__FMA__)
      for (; i + 8 <= end; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), fast_expf8(_mm256_sub_ps(_mm256_setzero_ps(), g))));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
      }
#endif
      for (; i < end; ++i) {
        const float g = gate[i];
        out[i] = g / (1.0f + fast_expf(-g)) * up[i];
      }
    });
  }

  void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C,
                      int OC) override {
    if (N == 1) {
      // One row: y[o] = dot(W[o], x). Threads split the output rows so each streams its own weights.
      m_pool.parallel_for(OC, [&](int64_t begin, int64_t end) {
        matvec_rows(out, weight, inp, C, begin, end);
        if (bias)
          for (int64_t o = begin; o < end; ++o) out[o] += bias[o];
      });
      return;
    }
    // From two rows on, even a mostly empty 16-token panel beats sgemm: with few rows both read the
    // weights once from memory, and sgemm also packs them (cpu_gemm_f32.cpp).
    if (C >= 1 && gemm_f32_panels_available())
      return gemm_f32_panels(m_pool, m_x_panels, out, inp, weight, bias, N, C, OC);
    // No AVX2 tiles in this build: each thread computes a block of output columns with sgemm,
    // out[:, b:e] = inp @ W[b:e]^T (+ bias[b:e]). Blocks are multiples of 16 columns so no two
    // threads write the same cache line of a row.
    const int64_t blocks = (OC + 15) / 16;
    m_pool.parallel_for(blocks, [&](int64_t bb, int64_t be) {
      const int64_t b = bb * 16, e = std::min<int64_t>(be * 16, OC);
      const int w = static_cast<int>(e - b);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, w, C, 1.0f, inp, C, weight + b * C, C, 0.0f, out + b, OC);
      if (bias)
        for (int64_t n = 0; n < N; ++n) {
          float* o = out + n * OC;
          for (int64_t i = b; i < e; ++i) o[i] += bias[i];
        }
    }, /*chunks_per_thread=*/1);
  }

  void matmul_forward_typed(float* out, const float* inp, const WeightRef& weight, const float* bias, int N, int C,
                            int OC) override {
    if (const float* f = weight.f32()) return matmul_forward(out, inp, f, bias, N, C, OC);
    cpu_matmul_typed(m_pool, m_act, out, inp, weight, bias, N, C, OC);
  }

  void attention_forward(float* out, const float* q, int q_stride, const float* k_cache, const float* v_cache,
                         int P, int T, int NH, int KVH, int HS, float* att_probs) override {
    const int kv_stride = KVH * HS;
    const int group = NH / KVH;
    const int total = P + T;
    const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
    m_pool.parallel_for(static_cast<int64_t>(NH) * T, [&](int64_t begin, int64_t end) {
      std::vector<float> scores(total);
      for (int64_t item = begin; item < end; ++item) {
        const int h = static_cast<int>(item / T);
        const int t = static_cast<int>(item % T);
        const int kvh = h / group;
        const float* qv = q + static_cast<int64_t>(t) * q_stride + h * HS;
        const int n_keys = P + t + 1;  // causal: keys 0 .. P+t
        float maxv = -INFINITY;
        for (int j = 0; j < n_keys; ++j) {
          const float s = dot_f32(qv, k_cache + static_cast<int64_t>(j) * kv_stride + kvh * HS, HS) * scale;
          scores[j] = s;
          maxv = std::max(maxv, s);
        }
        float sum = 0.f;
        for (int j = 0; j < n_keys; ++j) {
          scores[j] = std::exp(scores[j] - maxv);
          sum += scores[j];
        }
        const float inv = 1.0f / sum;
        float* o = out + static_cast<int64_t>(t) * NH * HS + h * HS;
        std::fill(o, o + HS, 0.f);
        for (int j = 0; j < n_keys; ++j) {
          const float p = scores[j] * inv;
          const float* vv = v_cache + static_cast<int64_t>(j) * kv_stride + kvh * HS;
          for (int i = 0; i < HS; ++i) o[i] += p * vv[i];
        }
        if (att_probs) {
          float* row = att_probs + (static_cast<int64_t>(h) * T + t) * total;
          for (int j = 0; j < n_keys; ++j) row[j] = scores[j] * inv;
          std::fill(row + n_keys, row + total, 0.f);
        }
      }
    });
  }

  void gelu_forward(float* out, const float* inp, int64_t n) override {
    m_pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      int64_t i = begin;
#if defined(__AVX2__) && defined(__FMA__)
      for (; i + 8 <= end; i += 8) _mm256_storeu_ps(out + i, gelu_tanh8(_mm256_loadu_ps(inp + i)));
#endif
      for (; i < end; ++i) out[i] = gelu_tanh(inp[i]);
    });
  }

  void residual_forward(float* out, const float* a, const float* b, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  }

  void copy_rows(float* dst, int dst_stride, const float* src, int src_stride, int rows, int cols) override {
    for (int r = 0; r < rows; ++r)
      std::memcpy(dst + static_cast<int64_t>(r) * dst_stride, src + static_cast<int64_t>(r) * src_stride,
                  sizeof(float) * cols);
  }

  // Training ops: implemented in cpu_backward.cpp, cpu_attention_train.cpp and cpu_softmax_xent.cpp.
  void fill_zero(float* p, int64_t n) override { std::fill(p, p + n, 0.0f); }
  void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T,
                        int C) override {
    cpu::encoder_backward(m_pool, dwte, dwpe, dout, tokens, B, T, C);
  }
  void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                          const float* weight, const float* mean, const float* rstd, int N, int C) override {
    cpu::layernorm_backward(m_pool, dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
  }
  void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                        const float* rstd, int N, int C) override {
    cpu::rmsnorm_backward(m_pool, dinp, dweight, dout, inp, weight, rstd, N, C);
  }
  void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                       const float* weight, int N, int C, int OC) override {
    cpu::matmul_backward(m_pool, dinp, dweight, dbias, dout, inp, weight, N, C, OC);
  }
  void rope_backward(float* dq, int q_stride, int NH, float* dk, int k_stride, int KVH, int T, int HS, int pos0,
                     float theta, bool interleaved) override {
    cpu::rope_rotate(m_pool, dq, q_stride, NH, dk, k_stride, KVH, T, HS, pos0, theta, interleaved, -1.0f);
  }
  void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) override {
    cpu::gelu_backward(m_pool, dinp, inp, dout, n);
  }
  void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                       int64_t n) override {
    cpu::swiglu_backward(m_pool, dgate, dup, dout, gate, up, n);
  }
  void axpy(float* y, float a, const float* x, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
  }
  void residual_backward(float* da, float* db, const float* dout, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) {
      if (da) da[i] += dout[i];
      if (db) db[i] += dout[i];
    }
  }
  void dropout_forward(float* out, const float* inp, int64_t n, float p, uint64_t seed) override {
    cpu::dropout_apply(m_pool, out, inp, n, p, seed);
  }
  void dropout_backward(float* dinp, const float* dout, int64_t n, float p, uint64_t seed) override {
    cpu::dropout_apply(m_pool, dinp, dout, n, p, seed);  // the same mask and scale: y = m x, dx = m dy
  }
  void attention_train_forward(float* out, float* att, const float* q, int q_stride, const float* k, const float* v,
                               int kv_stride, int B, int T, int NH, int KVH, int HS, float dropout,
                               uint64_t seed) override {
    cpu::attention_train_forward(m_pool, out, att, q, q_stride, k, v, kv_stride, B, T, NH, KVH, HS, dropout, seed);
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* att, const float* q,
                          int q_stride, const float* k, const float* v, int kv_stride, int B, int T, int NH, int KVH,
                          int HS, float dropout, uint64_t seed) override {
    cpu::attention_backward(m_pool, dq, dk, dv, dout, att, q, q_stride, k, v, kv_stride, B, T, NH, KVH, HS, dropout,
                            seed);
  }
  void softmax_xent_forward(float* losses, float* logits, const int32_t* targets, int N, int V,
                            float label_smoothing) override {
    cpu::softmax_xent_forward(m_pool, losses, logits, targets, N, V, label_smoothing);
  }
  void softmax_xent_backward(float* dlogits, const float* probs, const int32_t* targets, const float* dlosses, int N,
                             int V, float label_smoothing) override {
    cpu::softmax_xent_backward(m_pool, dlogits, probs, targets, dlosses, N, V, label_smoothing);
  }

 private:
  ThreadPool m_pool;
  q8_act m_act;                    // decode's int8 activations, reused so a token allocates nothing
  std::vector<float> m_x_panels;  // prefill's X in 16-token panels (cpu_gemm_f32.h), reused
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace engine
