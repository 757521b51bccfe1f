// The CPU backend's training ops (declared in engine/backend.h), as free functions over a ThreadPool so
// they live in their own files (cpu_backward.cpp, cpu_attention_train.cpp, cpu_softmax_xent.cpp) and
// backend_cpu.cpp only forwards to them. Shapes and accumulate/overwrite rules are backend.h's.
#pragma once

#include <cstdint>

#include "engine/thread_pool.h"

namespace engine::cpu {

void encoder_backward(ThreadPool& pool, float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B,
                      int T, int C);
void layernorm_backward(ThreadPool& pool, float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd, int N, int C);
void rmsnorm_backward(ThreadPool& pool, float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int N, int C);
void matmul_backward(ThreadPool& pool, float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC);
// Turns every pair by sign * angle (sign +1: rope_forward, -1: rope_backward).
void rope_rotate(ThreadPool& pool, float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS,
                 int pos0, float theta, bool interleaved, float sign);
void gelu_backward(ThreadPool& pool, float* dinp, const float* inp, const float* dout, int64_t n);
void swiglu_backward(ThreadPool& pool, float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int64_t n);
void dropout_apply(ThreadPool& pool, float* out, const float* inp, int64_t n, float p, uint64_t seed);

void attention_train_forward(ThreadPool& pool, float* out, float* att, const float* q, int q_stride, const float* k,
                             const float* v, int kv_stride, int B, int T, int NH, int KVH, int HS, float dropout,
                             uint64_t seed);
void attention_backward(ThreadPool& pool, float* dq, float* dk, float* dv, const float* dout, const float* att,
                        const float* q, int q_stride, const float* k, const float* v, int kv_stride, int B, int T,
                        int NH, int KVH, int HS, float dropout, uint64_t seed);

void softmax_xent_forward(ThreadPool& pool, float* losses, float* logits, const int32_t* targets, int N, int V,
                          float label_smoothing);
void softmax_xent_backward(ThreadPool& pool, float* dlogits, const float* probs, const int32_t* targets,
                           const float* dlosses, int N, int V, float label_smoothing);

}  // namespace engine::cpu
