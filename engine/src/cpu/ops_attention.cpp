// CPU causal attention, forward beside backward.
//
// attention_forward reads a KV cache (inference: T new queries against P cached + T new keys). The
// training pair works on B causal sequences of T tokens with no KV cache: the same math (same scale, same
// max-subtracted softmax), but reading q/k/v through row strides so GPT-2's fused qkv rows need no copy,
// and keeping the probabilities (B,NH,T,T) for the backward. Dropout acts on the probabilities that
// multiply v; its mask is a pure function of (seed, index into att) and is recomputed, not stored.
//
// Threads: the inference forward splits (h, t) rows, the training forward (b, h) pairs; the backward
// splits (b, key/value head) so that the dk/dv rows of one key/value head, which every query head of its
// group adds into, belong to one thread. OpenBLAS runs single-threaded inside the pool (backend_cpu.cpp).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/cpu_ops.h"
#include "cpu/dropout_mask.h"
#include "cpu/fast_math.h"
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

namespace {

// p[0..n) = softmax(p[0..n)) and p[n..total) = 0: one causal row of attention probabilities.
void softmax_causal_row(float* p, int n, int total) {
  int j = 0;
  float maxv = -INFINITY;
  float sum = 0.f;
#if defined(__AVX2__) && defined(__FMA__)
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  for (; j + 8 <= n; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(p + j));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  for (float l : lanes) maxv = std::max(maxv, l);
#endif
  for (; j < n; ++j) maxv = std::max(maxv, p[j]);
  j = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 vm = _mm256_set1_ps(maxv);
  __m256 vsum = _mm256_setzero_ps();
  for (; j + 8 <= n; j += 8) {
    const __m256 e = fast_expf8(_mm256_sub_ps(_mm256_loadu_ps(p + j), vm));
    _mm256_storeu_ps(p + j, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  sum = hsum256(vsum);
#endif
  for (; j < n; ++j) {
    p[j] = fast_expf(p[j] - maxv);
    sum += p[j];
  }
  const float inv = 1.0f / sum;
  for (j = 0; j < n; ++j) p[j] *= inv;
  std::fill(p + n, p + total, 0.f);
}

// dst (T,T) = probs with the dropout mask of rows arow0.. applied (arow = index of the row in att).
void apply_dropout_rows(float* dst, const float* probs, int T, int64_t arow0, float dropout, uint64_t seed) {
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < T; ++j) {
      const int64_t idx = t * static_cast<int64_t>(T) + j;
      dst[idx] = j <= t ? probs[idx] * dropout_scale(seed, static_cast<uint64_t>((arow0 + t) * T + j), dropout) : 0.f;
    }
}

}  // namespace

// Training attention as matrix products, one (sequence, head) at a time: scores = scale q k^T and
// out = probs v are sgemm calls over the head's strided rows (the causal upper triangle is computed and
// then zeroed: at training lengths the dense products still run several times faster than row-by-row dot
// products), with the softmax between them vectorised.
void attention_train_forward(ThreadPool& pool, float* out, float* att, const float* q, int q_stride, const float* k,
                             const float* v, int kv_stride, int B, int T, int NH, int KVH, int HS, float dropout,
                             uint64_t seed) {
  const int group = NH / KVH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const int out_stride = NH * HS;
  const int64_t TT = static_cast<int64_t>(T) * T;
  pool.parallel_for(static_cast<int64_t>(B) * NH, [&](int64_t begin, int64_t end) {
    std::vector<float> dropped(dropout > 0.f ? static_cast<size_t>(TT) : 0);
    for (int64_t item = begin; item < end; ++item) {  // item == b * NH + h
      const int b = static_cast<int>(item / NH), h = static_cast<int>(item % NH), kvh = h / group;
      const int64_t row0 = static_cast<int64_t>(b) * T;
      const float* qh = q + row0 * q_stride + static_cast<int64_t>(h) * HS;
      const float* kh = k + row0 * kv_stride + static_cast<int64_t>(kvh) * HS;
      const float* vh = v + row0 * kv_stride + static_cast<int64_t>(kvh) * HS;
      float* probs = att + item * TT;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, HS, scale, qh, q_stride, kh, kv_stride, 0.0f, probs, T);
      for (int t = 0; t < T; ++t) softmax_causal_row(probs + static_cast<int64_t>(t) * T, t + 1, T);
      const float* weights = probs;
      if (dropout > 0.f) {
        apply_dropout_rows(dropped.data(), probs, T, item * T, dropout, seed);
        weights = dropped.data();
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, HS, T, 1.0f, weights, T, vh, kv_stride, 0.0f,
                  out + row0 * out_stride + static_cast<int64_t>(h) * HS, out_stride);
    }
  });
}

void attention_backward(ThreadPool& pool, float* dq, float* dk, float* dv, const float* dout, const float* att,
                        const float* q, int q_stride, const float* k, const float* v, int kv_stride, int B, int T,
                        int NH, int KVH, int HS, float dropout, uint64_t seed) {
  const int group = NH / KVH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const int out_stride = NH * HS;
  const int64_t TT = static_cast<int64_t>(T) * T;
  pool.parallel_for(static_cast<int64_t>(B) * KVH, [&](int64_t begin, int64_t end) {
    std::vector<float> dp(static_cast<size_t>(TT));
    std::vector<float> dropped(dropout > 0.f ? static_cast<size_t>(TT) : 0);
    for (int64_t item = begin; item < end; ++item) {
      const int b = static_cast<int>(item / KVH);
      const int kvh = static_cast<int>(item % KVH);
      const int64_t row0 = static_cast<int64_t>(b) * T;
      const int64_t kv_off = row0 * kv_stride + static_cast<int64_t>(kvh) * HS;
      for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
        const int64_t arow0 = (static_cast<int64_t>(b) * NH + h) * T;
        const float* probs = att + arow0 * T;
        const float* dh = dout + row0 * out_stride + static_cast<int64_t>(h) * HS;
        const int64_t q_off = row0 * q_stride + static_cast<int64_t>(h) * HS;
        // Through out = (P o M) v (M the dropout mask): dP = (d v^T) o M and dv += (P o M)^T d.
        const float* weights = probs;
        if (dropout > 0.f) {
          apply_dropout_rows(dropped.data(), probs, T, arow0, dropout, seed);
          weights = dropped.data();
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, HS, 1.0f, dh, out_stride, v + kv_off, kv_stride,
                    0.0f, dp.data(), T);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, HS, T, 1.0f, weights, T, dh, out_stride, 1.0f,
                    dv + kv_off, kv_stride);
        // Softmax: ds_j = p_j (dp_j - sum_i p_i dp_i), times the scores' scale; rows end at the diagonal.
        for (int t = 0; t < T; ++t) {
          const float* p = probs + static_cast<int64_t>(t) * T;
          float* d = dp.data() + static_cast<int64_t>(t) * T;
          if (dropout > 0.f)
            for (int j = 0; j <= t; ++j) d[j] *= dropout_scale(seed, static_cast<uint64_t>((arow0 + t) * T + j), dropout);
          float sum = 0.f;
          for (int j = 0; j <= t; ++j) sum += p[j] * d[j];
          for (int j = 0; j <= t; ++j) d[j] = p[j] * (d[j] - sum) * scale;
          std::fill(d + t + 1, d + T, 0.f);
        }
        // scores = scale q k^T (scale already in ds): dq += ds k, dk += ds^T q.
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, HS, T, 1.0f, dp.data(), T, k + kv_off, kv_stride,
                    1.0f, dq + q_off, q_stride);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, HS, T, 1.0f, dp.data(), T, q + q_off, q_stride, 1.0f,
                    dk + kv_off, kv_stride);
      }
    }
  });
}

}  // namespace engine::cpu
