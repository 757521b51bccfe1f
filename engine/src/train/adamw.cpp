// AdamW: see engine/train/adamw.h for the update rule (PyTorch's, term for term).
//
// The scalars (bias corrections, 1 - beta, step size) are computed in double and rounded once, as PyTorch
// computes them from Python floats; the per-element arithmetic is float, in PyTorch's order and
// association (decay, moments, then the step), so our trajectory follows torch.optim.AdamW to a few ulps.
#include "engine/train/adamw.h"

#include <cmath>

#include "engine/error.h"

namespace engine {

AdamW::AdamW(std::vector<TrainableTensor> tensors, const AdamWParams& params, Backend* backend)
    : m_tensors(std::move(tensors)), m_params(params), m_backend(backend) {
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
  // Scalars as PyTorch forms them: in double, rounded to float where they meet float tensors.
  const double bc1 = 1.0 - std::pow(m_params.beta1, double(t));
  const double bc2 = 1.0 - std::pow(m_params.beta2, double(t));
  AdamWStep s;
  s.neg_step_size = static_cast<float>(-(double(lr) / bc1));
  s.bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  s.one_minus_beta1 = static_cast<float>(1.0 - m_params.beta1);
  s.beta2 = static_cast<float>(m_params.beta2);
  s.one_minus_beta2 = static_cast<float>(1.0 - m_params.beta2);
  s.eps = static_cast<float>(m_params.eps);
  for (size_t i = 0; i < m_tensors.size(); ++i) {
    const TrainableTensor& tt = m_tensors[i];
    const double wd = tt.weight_decay ? m_params.weight_decay : 0.0;
    s.decays = wd != 0.0;
    s.decay = static_cast<float>(1.0 - double(lr) * wd);
    const auto n = static_cast<int64_t>(tt.numel);
    if (m_backend)
      m_backend->adamw_update(tt.value, tt.grad, m_m[i].data(), m_v[i].data(), n, s);
    else
      adamw_update_host(tt.value, tt.grad, m_m[i].data(), m_v[i].data(), n, s);
  }
  m_t = t;
}

void AdamW::set_step_count(int64_t t) {
  if (t < 0) throw Error("AdamW: negative step count " + std::to_string(t));
  m_t = t;
}

}  // namespace engine
