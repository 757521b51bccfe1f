// The CPU backend's ops (declared, with their shapes and accumulate / overwrite rules, in
// engine/backend.h) as free functions over a ThreadPool: one file per op family with the forward beside
// its backward (ops_embedding, ops_norm, ops_matmul, ops_attention, ops_activation, ops_dropout,
// ops_softmax_xent, ops_optimizer), so backend_cpu.cpp only forwards to them.
//
// Threads never write the same float: row-wise results are split by rows; reductions over rows (weight
// and bias gradients, embedding tables, where one token may appear in many rows) are split by columns,
// so every column's sum is made by one thread in a fixed order and results do not depend on the thread
// count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/thread_pool.h"

namespace engine {
struct AdamWStep;
}

namespace engine::cpu {

// Column blocks of 16 floats (one cache line) per task, so threads never share a line of an output row.
constexpr int64_t kColBlock = 16;

template <typename Fn>
void for_column_blocks(ThreadPool& pool, int64_t cols, Fn&& fn) {
  const int64_t blocks = (cols + kColBlock - 1) / kColBlock;
  pool.parallel_for(blocks, [&](int64_t bb, int64_t be) { fn(bb * kColBlock, std::min(be * kColBlock, cols)); });
}

// ops_embedding.cpp
void encoder_forward(ThreadPool& pool, float* out, const int32_t* tokens, const float* wte, const float* wpe, int pos0,
                     int T, int C);
void encoder_backward(ThreadPool& pool, float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B,
                      int T, int C);
// Turns every pair by sign * angle (sign +1: rope_forward, -1: rope_backward).
void rope_rotate(ThreadPool& pool, float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS,
                 int pos0, float theta, bool interleaved, float sign);

// ops_norm.cpp
void layernorm_forward(ThreadPool& pool, float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C, float eps);
void layernorm_backward(ThreadPool& pool, float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd, int N, int C);
void rmsnorm_forward(ThreadPool& pool, float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                     float eps);
void rmsnorm_backward(ThreadPool& pool, float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int N, int C);

// ops_matmul.cpp (f32 weights; x_panels is the caller's reused packing scratch, cpu_gemm_f32.h)
void matmul_forward(ThreadPool& pool, std::vector<float>& x_panels, float* out, const float* inp, const float* weight,
                    const float* bias, int N, int C, int OC);
void matmul_backward(ThreadPool& pool, float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC);

// ops_attention.cpp
void attention_forward(ThreadPool& pool, float* out, const float* q, int q_stride, const float* k_cache,
                       const float* v_cache, int P, int T, int NH, int KVH, int HS, float* att_probs);
void attention_train_forward(ThreadPool& pool, float* out, float* att, const float* q, int q_stride, const float* k,
                             const float* v, int kv_stride, int B, int T, int NH, int KVH, int HS, float dropout,
                             uint64_t seed);
void attention_backward(ThreadPool& pool, float* dq, float* dk, float* dv, const float* dout, const float* att,
                        const float* q, int q_stride, const float* k, const float* v, int kv_stride, int B, int T,
                        int NH, int KVH, int HS, float dropout, uint64_t seed);

// ops_activation.cpp
void gelu_forward(ThreadPool& pool, float* out, const float* inp, int64_t n);
void gelu_backward(ThreadPool& pool, float* dinp, const float* inp, const float* dout, int64_t n);
void swiglu_forward(ThreadPool& pool, float* out, const float* gate, const float* up, int64_t n);
void swiglu_backward(ThreadPool& pool, float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                     int64_t n);

// ops_dropout.cpp: out = inp * mask(seed) / (1 - p), the forward and (with dout) the backward.
void dropout_apply(ThreadPool& pool, float* out, const float* inp, int64_t n, float p, uint64_t seed);

// ops_softmax_xent.cpp
void softmax_xent_forward(ThreadPool& pool, float* losses, float* entropy, float* logits, const int32_t* targets, int N,
                          int V, float label_smoothing);
void softmax_xent_backward(ThreadPool& pool, float* dlogits, const float* probs, const int32_t* targets,
                           const float* dlosses, const float* entropy, const float* dentropy, int N, int V,
                           float label_smoothing);

// ops_optimizer.cpp: whole-buffer ops of the optimizer step (engine/backend.h)
void adamw_update(ThreadPool& pool, float* params, const float* grads, float* m, float* v, int64_t n,
                  const AdamWStep& s);
double sum_squares(ThreadPool& pool, const float* p, int64_t n);
void scale(ThreadPool& pool, float* p, float a, int64_t n);
void fill_zero(ThreadPool& pool, float* p, int64_t n);

}  // namespace engine::cpu
