// AdamW: see engine/train/adamw.h for the update rule (PyTorch's, term for term).
//
// The scalars (bias corrections, 1 - beta, step size) are computed in double and rounded once, as PyTorch
// computes them from Python floats; the per-element arithmetic is float, in PyTorch's order and
// association (decay, moments, then the step), so our trajectory follows torch.optim.AdamW to a few ulps.
#include "engine/train/adamw.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"

namespace engine {

namespace {

uint64_t total_of(const std::vector<TrainableTensor>& ts) {
  uint64_t n = 0;
  for (const TrainableTensor& t : ts) n += t.numel;
  return n;
}

}  // namespace

AdamW::AdamW(std::vector<TrainableTensor> tensors, const AdamWParams& params, Backend* backend)
    : AdamW(std::move(tensors), params, backend, kAllValues) {}

AdamW::AdamW(std::vector<TrainableTensor> tensors, const AdamWParams& params, Backend* backend, FlatRange shard)
    : m_tensors(std::move(tensors)), m_params(params), m_backend(backend), m_total(total_of(m_tensors)) {
  if (shard == kAllValues) shard = {0, m_total};
  if (shard.begin > shard.end || shard.end > m_total)
    throw Error("AdamW: shard [" + std::to_string(shard.begin) + ", " + std::to_string(shard.end) +
                ") is not inside the " + std::to_string(m_total) + " trainable values");
  m_shard = shard;
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
  uint64_t offset = 0;
  for (const TrainableTensor& t : m_tensors) {
    // The part of [offset, offset + numel) inside the shard, as indices into the tensor.
    const uint64_t lo = std::clamp(m_shard.begin, offset, offset + t.numel) - offset;
    const uint64_t hi = std::clamp(m_shard.end, offset, offset + t.numel) - offset;
    m_lo.push_back(lo);
    m_m.emplace_back(hi - lo, 0.0f);
    m_v.emplace_back(hi - lo, 0.0f);
    offset += t.numel;
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
    const auto n = static_cast<int64_t>(m_m[i].size());
    if (n == 0) continue;
    float* value = tt.value + m_lo[i];
    const float* grad = tt.grad + m_lo[i];
    if (m_backend)
      m_backend->adamw_update(value, grad, m_m[i].data(), m_v[i].data(), n, s);
    else
      adamw_update_host(value, grad, m_m[i].data(), m_v[i].data(), n, s);
  }
  m_t = t;
}

void AdamW::set_step_count(int64_t t) {
  if (t < 0) throw Error("AdamW: negative step count " + std::to_string(t));
  m_t = t;
}

}  // namespace engine
