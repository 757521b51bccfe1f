// CPU backend: the Backend interface over the CPU ops of cpu_ops.h (one file per op family, each forward
// beside its backward) and the typed matmul of cpu_matmul_typed.h, all run on one ThreadPool. What lives
// here is only what the ops share: the pool, the BLAS threading choice and the reused scratch.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/cpu_matmul_typed.h"
#include "cpu/cpu_ops.h"
#include "engine/backend.h"
#include "engine/blas_core.h"
#include "engine/thread_pool.h"

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

  // ---- embedding and positions (ops_embedding.cpp) ----
  void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int pos0, int T,
                       int C) override {
    cpu::encoder_forward(m_pool, out, tokens, wte, wpe, pos0, T, C);
  }
  void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T,
                        int C) override {
    cpu::encoder_backward(m_pool, dwte, dwpe, dout, tokens, B, T, C);
  }
  void rope_forward(float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS, int pos0,
                    float theta, bool interleaved) override {
    cpu::rope_rotate(m_pool, q, q_stride, NH, k, k_stride, KVH, T, HS, pos0, theta, interleaved, 1.0f);
  }
  void rope_backward(float* dq, int q_stride, int NH, float* dk, int k_stride, int KVH, int T, int HS, int pos0,
                     float theta, bool interleaved) override {
    cpu::rope_rotate(m_pool, dq, q_stride, NH, dk, k_stride, KVH, T, HS, pos0, theta, interleaved, -1.0f);
  }

  // ---- norms (ops_norm.cpp) ----
  void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                         int N, int C, float eps) override {
    cpu::layernorm_forward(m_pool, out, mean, rstd, inp, weight, bias, N, C, eps);
  }
  void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                          const float* weight, const float* mean, const float* rstd, int N, int C) override {
    cpu::layernorm_backward(m_pool, dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
  }
  void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                       float eps) override {
    cpu::rmsnorm_forward(m_pool, out, rstd, inp, weight, N, C, eps);
  }
  void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                        const float* rstd, int N, int C) override {
    cpu::rmsnorm_backward(m_pool, dinp, dweight, dout, inp, weight, rstd, N, C);
  }

  // ---- matmul (ops_matmul.cpp; other encodings: cpu_matmul_typed.cpp) ----
  void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C,
                      int OC) override {
    cpu::matmul_forward(m_pool, m_x_panels, out, inp, weight, bias, N, C, OC);
  }
  void matmul_forward_typed(float* out, const float* inp, const WeightRef& weight, const float* bias, int N, int C,
                            int OC) override {
    if (const float* f = weight.f32()) return cpu::matmul_forward(m_pool, m_x_panels, out, inp, f, bias, N, C, OC);
    cpu_matmul_typed(m_pool, m_act, out, inp, weight, bias, N, C, OC);
  }
  void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                       const float* weight, int N, int C, int OC) override {
    cpu::matmul_backward(m_pool, dinp, dweight, dbias, dout, inp, weight, N, C, OC);
  }

  // ---- attention (ops_attention.cpp) ----
  void attention_forward(float* out, const float* q, int q_stride, const float* k_cache, const float* v_cache, int P,
                         int T, int NH, int KVH, int HS, float* att_probs) override {
    cpu::attention_forward(m_pool, out, q, q_stride, k_cache, v_cache, P, T, NH, KVH, HS, att_probs);
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

  // ---- activations (ops_activation.cpp) ----
  void gelu_forward(float* out, const float* inp, int64_t n) override { cpu::gelu_forward(m_pool, out, inp, n); }
  void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) override {
    cpu::gelu_backward(m_pool, dinp, inp, dout, n);
  }
  void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) override {
    cpu::swiglu_forward(m_pool, out, gate, up, n);
  }
  void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                       int64_t n) override {
    cpu::swiglu_backward(m_pool, dgate, dup, dout, gate, up, n);
  }

  // ---- dropout (ops_dropout.cpp): the backward multiplies by the same mask and scale ----
  void dropout_forward(float* out, const float* inp, int64_t n, float p, uint64_t seed) override {
    cpu::dropout_apply(m_pool, out, inp, n, p, seed);
  }
  void dropout_backward(float* dinp, const float* dout, int64_t n, float p, uint64_t seed) override {
    cpu::dropout_apply(m_pool, dinp, dout, n, p, seed);
  }

  // ---- loss (ops_softmax_xent.cpp) ----
  void softmax_xent_forward(float* losses, float* entropy, float* logits, const int32_t* targets, int N, int V,
                            float label_smoothing) override {
    cpu::softmax_xent_forward(m_pool, losses, entropy, logits, targets, N, V, label_smoothing);
  }
  void softmax_xent_backward(float* dlogits, const float* probs, const int32_t* targets, const float* dlosses,
                             const float* entropy, const float* dentropy, int N, int V,
                             float label_smoothing) override {
    cpu::softmax_xent_backward(m_pool, dlogits, probs, targets, dlosses, entropy, dentropy, N, V, label_smoothing);
  }

  // ---- memory-bound one-liners: a thread hand-off would cost more than the loop ----
  void residual_forward(float* out, const float* a, const float* b, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  }
  void residual_backward(float* da, float* db, const float* dout, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) {
      if (da) da[i] += dout[i];
      if (db) db[i] += dout[i];
    }
  }
  void axpy(float* y, float a, const float* x, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
  }
  void copy_rows(float* dst, int dst_stride, const float* src, int src_stride, int rows, int cols) override {
    for (int r = 0; r < rows; ++r)
      std::memcpy(dst + static_cast<int64_t>(r) * dst_stride, src + static_cast<int64_t>(r) * src_stride,
                  sizeof(float) * cols);
  }

  // ---- the optimizer step (ops_optimizer.cpp) ----
  void fill_zero(float* p, int64_t n) override { cpu::fill_zero(m_pool, p, n); }
  void adamw_update(float* params, const float* grads, float* m, float* v, int64_t n, const AdamWStep& s) override {
    cpu::adamw_update(m_pool, params, grads, m, v, n, s);
  }
  double sum_squares(const float* p, int64_t n) override { return cpu::sum_squares(m_pool, p, n); }
  void scale(float* p, float a, int64_t n) override { cpu::scale(m_pool, p, a, n); }

 private:
  ThreadPool m_pool;
  q8_act m_act;                   // decode's int8 activations, reused so a token allocates nothing
  std::vector<float> m_x_panels;  // prefill's X in 16-token panels (cpu_gemm_f32.h), reused
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace engine
