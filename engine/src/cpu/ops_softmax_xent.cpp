// CPU fused softmax + cross-entropy with label smoothing (the loss of engine/train/train_model.h), and on request
// the entropy of each row's distribution (PPO's entropy bonus).
//
// One pass per row: the loss is taken from the logits through log-sum-exp (never log of a rounded
// probability, which underflows to -inf), then the row is overwritten with its probabilities, which is
// all the backward needs: d loss / d z_v = p_v - q_v with q the (smoothed) target distribution.
// The entropy comes from the same pass: with e_v = exp(z_v - max) and S = sum e_v,
//   H = log S - sum e_v (z_v - max) / S  (= logsumexp(z) - sum p_v z_v),
// every term finite whatever the logits. Its gradient dH/dz_v = -p_v (log p_v + H) needs log p_v, which the
// backward takes from the stored probability: a p_v that underflowed to 0 contributes 0, its limit.
#include <algorithm>
#include <cmath>

#include "cpu/cpu_ops.h"
#include "cpu/fast_math.h"

namespace engine::cpu {

namespace {

// One pass over the rows [begin, end); kEntropy adds the sum of e_v (z_v - max) the entropy needs (a separate
// instantiation, so the plain loss pays nothing for it).
template <bool kEntropy>
void xent_rows(int64_t begin, int64_t end, float* losses, float* entropy, float* logits, const int32_t* targets, int V,
               float label_smoothing) {
  for (int64_t n = begin; n < end; ++n) {
    float* z = logits + n * V;
    const float maxv = *std::max_element(z, z + V);
    const int32_t t = targets[n];
    const float zt = t >= 0 ? z[t] : 0.0f;
    double sum = 0.0, sum_z = 0.0, sum_ez = 0.0;
    int i = 0;
#if defined(__AVX2__) && defined(__FMA__)
    // Eight lanes at a time (a GPT-2 row is 50257 wide); the sums stay in double, four lanes per register.
    const __m256 vmax = _mm256_set1_ps(maxv);
    __m256d acc_e = _mm256_setzero_pd(), acc_z = _mm256_setzero_pd(), acc_ez = _mm256_setzero_pd();
    for (; i + 8 <= V; i += 8) {
      const __m256 x = _mm256_loadu_ps(z + i);
      const __m256 shifted = _mm256_sub_ps(x, vmax);
      const __m256 e = fast_expf8(shifted);
      if constexpr (kEntropy) {
        const __m256 ez = _mm256_mul_ps(e, shifted);
        acc_ez = _mm256_add_pd(acc_ez, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(ez)),
                                                     _mm256_cvtps_pd(_mm256_extractf128_ps(ez, 1))));
      }
      _mm256_storeu_ps(z + i, e);  // unnormalised for now
      acc_z = _mm256_add_pd(acc_z, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)),
                                                 _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))));
      acc_e = _mm256_add_pd(acc_e, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)),
                                                 _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1))));
    }
    alignas(32) double lanes_e[4], lanes_z[4], lanes_ez[4];
    _mm256_store_pd(lanes_e, acc_e);
    _mm256_store_pd(lanes_z, acc_z);
    _mm256_store_pd(lanes_ez, acc_ez);
    sum = (lanes_e[0] + lanes_e[1]) + (lanes_e[2] + lanes_e[3]);
    sum_z = (lanes_z[0] + lanes_z[1]) + (lanes_z[2] + lanes_z[3]);
    sum_ez = (lanes_ez[0] + lanes_ez[1]) + (lanes_ez[2] + lanes_ez[3]);
#endif
    for (; i < V; ++i) {
      sum_z += z[i];
      const float shifted = z[i] - maxv;
      const float e = fast_expf(shifted);
      sum += e;
      if constexpr (kEntropy) sum_ez += static_cast<double>(e) * shifted;
      z[i] = e;  // unnormalised for now
    }
    if (t >= 0) {
      const double lse = maxv + std::log(sum);
      const double nll = lse - zt;
      const double smooth = lse - sum_z / V;  // mean over v of -log p_v
      losses[n] = static_cast<float>((1.0 - label_smoothing) * nll + label_smoothing * smooth);
    } else {
      losses[n] = 0.0f;
    }
    // Rounding can leave a one-hot row a hair below 0; the entropy never is.
    if constexpr (kEntropy)
      entropy[n] = t >= 0 ? static_cast<float>(std::max(0.0, std::log(sum) - sum_ez / sum)) : 0.0f;
    const float inv = static_cast<float>(1.0 / sum);
    for (int i = 0; i < V; ++i) z[i] *= inv;
  }
}

}  // namespace

void softmax_xent_forward(ThreadPool& pool, float* losses, float* entropy, float* logits, const int32_t* targets, int N,
                          int V, float label_smoothing) {
  pool.parallel_for(N, [&](int64_t begin, int64_t end) {
    if (entropy) xent_rows<true>(begin, end, losses, entropy, logits, targets, V, label_smoothing);
    else xent_rows<false>(begin, end, losses, entropy, logits, targets, V, label_smoothing);
  });
}

void softmax_xent_backward(ThreadPool& pool, float* dlogits, const float* probs, const int32_t* targets,
                           const float* dlosses, const float* entropy, const float* dentropy, int N, int V,
                           float label_smoothing) {
  pool.parallel_for(N, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const float* p = probs + n * V;
      float* d = dlogits + n * V;
      const int32_t t = targets[n];
      if (t < 0) {
        std::fill(d, d + V, 0.0f);
        continue;
      }
      const float g = dlosses[n];
      const float uniform = label_smoothing / V;
      const float gh = dentropy ? dentropy[n] : 0.0f;
      if (gh == 0.0f) {
        for (int i = 0; i < V; ++i) d[i] = g * (p[i] - uniform);
      } else {
        // One loop for both terms: d may alias p, so each p[i] is read before its d[i] is written.
        const float H = entropy[n];
        for (int i = 0; i < V; ++i) {
          const float pi = p[i];
          const float dh = pi > 0.0f ? -pi * (std::log(pi) + H) : 0.0f;
          d[i] = g * (pi - uniform) + gh * dh;
        }
      }
      d[t] -= g * (1.0f - label_smoothing);
    }
  });
}

}  // namespace engine::cpu
