// CPU causal attention, forward beside backward.
//
// attention_forward reads a KV cache (inference: T new queries against P cached + T new keys). The
// training pair works on B causal sequences of T tokens with no KV cache: the same math (same scale, same
// max-subtracted softmax), but reading q/k/v through row strides so GPT-2's fused qkv rows need no copy,
// and keeping the probabilities (B,NH,T,T) for the backward. Dropout acts on the probabilities that
// multiply v; its mask is a pure function of (seed, index into att) and is recomputed, not stored.
//
// Threads: the forwards split (b, h, t) rows; the backward splits (b, key/value head) so that the
// dk/dv rows of one key/value head, which every query head of its group adds into, belong to one thread.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/cpu_ops.h"
#include "cpu/dropout_mask.h"
#include "cpu/simd_dot.h"

namespace engine::cpu {

void attention_forward(ThreadPool& pool, float* out, const float* q, int q_stride, const float* k_cache,
                       const float* v_cache, int P, int T, int NH, int KVH, int HS, float* att_probs) {
  const int kv_stride = KVH * HS;
  const int group = NH / KVH;
  const int total = P + T;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  pool.parallel_for(static_cast<int64_t>(NH) * T, [&](int64_t begin, int64_t end) {
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

void attention_train_forward(ThreadPool& pool, float* out, float* att, const float* q, int q_stride, const float* k,
                             const float* v, int kv_stride, int B, int T, int NH, int KVH, int HS, float dropout,
                             uint64_t seed) {
  const int group = NH / KVH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const int64_t out_stride = static_cast<int64_t>(NH) * HS;
  pool.parallel_for(static_cast<int64_t>(B) * NH * T, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int t = static_cast<int>(item % T);
      const int h = static_cast<int>((item / T) % NH);
      const int b = static_cast<int>(item / (static_cast<int64_t>(T) * NH));
      const int kvh = h / group;
      const int64_t row0 = static_cast<int64_t>(b) * T;  // first row of this sequence
      const float* qv = q + (row0 + t) * q_stride + static_cast<int64_t>(h) * HS;
      float* p = att + item * T;  // item == (b*NH + h)*T + t
      float maxv = -INFINITY;
      for (int j = 0; j <= t; ++j) {
        p[j] = dot_f32(qv, k + (row0 + j) * kv_stride + static_cast<int64_t>(kvh) * HS, HS) * scale;
        maxv = std::max(maxv, p[j]);
      }
      float sum = 0.f;
      for (int j = 0; j <= t; ++j) {
        p[j] = std::exp(p[j] - maxv);
        sum += p[j];
      }
      const float inv = 1.0f / sum;
      for (int j = 0; j <= t; ++j) p[j] *= inv;
      std::fill(p + t + 1, p + T, 0.f);
      float* o = out + (row0 + t) * out_stride + static_cast<int64_t>(h) * HS;
      std::fill(o, o + HS, 0.f);
      for (int j = 0; j <= t; ++j) {
        const float w = dropout > 0.f ? p[j] * dropout_scale(seed, static_cast<uint64_t>(item * T + j), dropout) : p[j];
        const float* vv = v + (row0 + j) * kv_stride + static_cast<int64_t>(kvh) * HS;
        for (int i = 0; i < HS; ++i) o[i] += w * vv[i];
      }
    }
  });
}

void attention_backward(ThreadPool& pool, float* dq, float* dk, float* dv, const float* dout, const float* att,
                        const float* q, int q_stride, const float* k, const float* v, int kv_stride, int B, int T,
                        int NH, int KVH, int HS, float dropout, uint64_t seed) {
  const int group = NH / KVH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const int64_t out_stride = static_cast<int64_t>(NH) * HS;
  pool.parallel_for(static_cast<int64_t>(B) * KVH, [&](int64_t begin, int64_t end) {
    std::vector<float> dp(static_cast<size_t>(T));
    for (int64_t item = begin; item < end; ++item) {
      const int b = static_cast<int>(item / KVH);
      const int kvh = static_cast<int>(item % KVH);
      const int64_t row0 = static_cast<int64_t>(b) * T;
      const int64_t kv_off = static_cast<int64_t>(kvh) * HS;
      for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
        for (int t = 0; t < T; ++t) {
          const int64_t arow = (static_cast<int64_t>(b) * NH + h) * T + t;
          const float* p = att + arow * T;
          const float* d = dout + (row0 + t) * out_stride + static_cast<int64_t>(h) * HS;
          // Through out = sum_j (p_j m_j) v_j: d(p_j) = m_j (d . v_j), dv_j += p_j m_j d.
          float sum = 0.f;
          for (int j = 0; j <= t; ++j) {
            const float m = dropout > 0.f ? dropout_scale(seed, static_cast<uint64_t>(arow * T + j), dropout) : 1.0f;
            const float* vv = v + (row0 + j) * kv_stride + kv_off;
            float* dvv = dv + (row0 + j) * kv_stride + kv_off;
            dp[j] = m * dot_f32(d, vv, HS);
            const float w = p[j] * m;
            for (int i = 0; i < HS; ++i) dvv[i] += w * d[i];
            sum += p[j] * dp[j];
          }
          // Softmax: ds_j = p_j (dp_j - sum_i p_i dp_i); scores = scale * q . k_j.
          const float* qv = q + (row0 + t) * q_stride + static_cast<int64_t>(h) * HS;
          float* dqv = dq + (row0 + t) * q_stride + static_cast<int64_t>(h) * HS;
          for (int j = 0; j <= t; ++j) {
            const float ds = p[j] * (dp[j] - sum) * scale;
            const float* kk = k + (row0 + j) * kv_stride + kv_off;
            float* dkk = dk + (row0 + j) * kv_stride + kv_off;
            for (int i = 0; i < HS; ++i) {
              dqv[i] += ds * kk[i];
              dkk[i] += ds * qv[i];
            }
          }
        }
      }
    }
  });
}

}  // namespace engine::cpu
