// AdamW: see engine/train/adamw.h for the update rule (PyTorch's, term for term).
//
// The scalars (bias corrections, 1 - beta, step size) are computed in double and rounded once, as PyTorch
// computes them from Python floats; the per-element arithmetic is float, in PyTorch's order and
// association (decay, moments, then the step), so our trajectory follows torch.optim.AdamW to a few ulps.
#include "engine/train/adamw.h"

#include <cmath>

#include "engine/error.h"

namespace engine {

void adamw_update(float* params, const float* grads, float* m, float* v, uint64_t n, double lr, double beta1,
                  double beta2, double eps, double weight_decay, int64_t t) {
  // Scalars as PyTorch forms them: in double, rounded to float where they meet float tensors.
  const double bc1 = 1.0 - std::pow(beta1, double(t));
  const double bc2 = 1.0 - std::pow(beta2, double(t));
  const float neg_step_size = static_cast<float>(-(lr / bc1));
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float decay = static_cast<float>(1.0 - lr * weight_decay);
  const float w1 = static_cast<float>(1.0 - beta1), b2 = static_cast<float>(beta2),
              w2 = static_cast<float>(1.0 - beta2);
  const float epsf = static_cast<float>(eps);
  const bool decays = weight_decay != 0.0;
  for (uint64_t i = 0; i < n; ++i) {
    const float g = grads[i];
    float p = params[i];
    if (decays) p *= decay;                   // param.mul_(1 - lr * wd)
    const float mi = m[i] + w1 * (g - m[i]);  // exp_avg.lerp_(grad, 1 - beta1)
    const float vi = v[i] * b2 + w2 * g * g;  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / bc2_sqrt + epsf;
    params[i] = p + neg_step_size * mi / denom;  // param.addcdiv_(exp_avg, denom, value=-step_size)
  }
}

AdamW::AdamW(std::vector<TrainableTensor> tensors, const AdamWParams& params)
    : m_tensors(std::move(tensors)), m_params(params) {
  auto bad = [](const std::string& what, double v) {
    return Error("AdamW: " + what + " out of range: " + std::to_string(v));
  };
  if (!(params.beta1 >= 0.0 && params.beta1 < 1.0)) throw bad("beta1 (must be in [0, 1))", params.beta1);
  if (!(params.beta2 >= 0.0 && params.beta2 < 1.0)) throw bad("beta2 (must be in [0, 1))", params.beta2);
  if (!(params.eps > 0.0 && std::isfinite(params.eps))) throw bad("eps (must be > 0)", params.eps);
  if (!(params.weight_decay >= 0.0 && std::isfinite(params.weight_decay)))
    throw bad("weight decay (must be >= 0)", params.weight_decay);
  m_m.reserve(m_tensors.size());
  m_v.reserve(m_tensors.size());
  for (const TrainableTensor& t : m_tensors) {
    m_m.emplace_back(t.numel, 0.0f);
    m_v.emplace_back(t.numel, 0.0f);
  }
}

void AdamW::step(float lr) {
  const int64_t t = m_t + 1;
  for (size_t i = 0; i < m_tensors.size(); ++i) {
    const TrainableTensor& tt = m_tensors[i];
    adamw_update(tt.value, tt.grad, m_m[i].data(), m_v[i].data(), tt.numel, lr, m_params.beta1, m_params.beta2,
                 m_params.eps, tt.weight_decay ? m_params.weight_decay : 0.0, t);
  }
  m_t = t;
}

void AdamW::set_step_count(int64_t t) {
  if (t < 0) throw Error("AdamW: negative step count " + std::to_string(t));
  m_t = t;
}

}  // namespace engine
