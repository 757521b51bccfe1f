// The optimizer's elementwise rules on host memory (engine/backend.h): the one implementation that the
// Backend defaults and the CPU backend's threaded split both run, range by range.
#include "engine/backend.h"

#include <cmath>

namespace engine {

void adamw_update_host(float* params_in, const float* grads_in, float* m_in, float* v_in, int64_t n,
                       const AdamWStep& s) {
  // The four buffers never overlap; saying so lets the loop vectorize without run-time overlap checks.
  float* __restrict params = params_in;
  const float* __restrict grads = grads_in;
  float* __restrict m = m_in;
  float* __restrict v = v_in;
  // Two loops instead of a branch inside one, so each vectorizes (sqrt and division are exact in SIMD too,
  // so the floats equal the scalar rule's).
  auto update = [&](auto decay_param) {
    for (int64_t i = 0; i < n; ++i) {
      const float g = grads[i];
      const float p = decay_param(params[i]);                      // param.mul_(1 - lr * wd)
      const float mi = m[i] + s.one_minus_beta1 * (g - m[i]);      // exp_avg.lerp_(grad, 1 - beta1)
      const float vi = v[i] * s.beta2 + s.one_minus_beta2 * g * g;  // exp_avg_sq.mul_(b2).addcmul_(g, g, 1 - b2)
      m[i] = mi;
      v[i] = vi;
      const float denom = std::sqrt(vi) / s.bc2_sqrt + s.eps;
      params[i] = p + s.neg_step_size * mi / denom;  // param.addcdiv_(exp_avg, denom, value=-step_size)
    }
  };
  if (s.decays)
    update([&](float p) { return p * s.decay; });
  else
    update([](float p) { return p; });
}

double sum_squares_host(const float* p, int64_t n) {
  // Four independent partial sums: the adds do not wait on each other, and the compiler can pair them
  // into vector lanes without reassociating anything.
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 += double(p[i]) * double(p[i]);
    a1 += double(p[i + 1]) * double(p[i + 1]);
    a2 += double(p[i + 2]) * double(p[i + 2]);
    a3 += double(p[i + 3]) * double(p[i + 3]);
  }
  for (; i < n; ++i) a0 += double(p[i]) * double(p[i]);
  return (a0 + a1) + (a2 + a3);
}

void Backend::adamw_update(float* params, const float* grads, float* m, float* v, int64_t n, const AdamWStep& s) {
  adamw_update_host(params, grads, m, v, n, s);
}

double Backend::sum_squares(const float* p, int64_t n) { return sum_squares_host(p, n); }

void Backend::scale(float* p, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] *= a;
}

}  // namespace engine
