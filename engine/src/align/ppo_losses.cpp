// PPO's rewards, GAE, whitening, clipped losses, entropy and KL controller: see engine/align/ppo_losses.h.
#include "engine/align/ppo_losses.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/align/grpo_losses.h"
#include "engine/error.h"

namespace engine {

namespace {

void check_sizes(const char* what, size_t n, std::initializer_list<size_t> others) {
  for (size_t m : others)
    if (m != n)
      throw Error(std::string("PPO ") + what + ": the arrays differ in length (" + std::to_string(n) + " vs " +
                  std::to_string(m) + ")");
}

void check_rows(const char* what, size_t n, int B, int T) {
  if (B < 1 || T < 1 || n != size_t(B) * size_t(T))
    throw Error(std::string("PPO ") + what + ": " + std::to_string(n) + " values are not B = " + std::to_string(B) +
                " rows of T = " + std::to_string(T));
}

int64_t count_mask(std::span<const uint8_t> mask) {
  int64_t n = 0;
  for (uint8_t m : mask) n += m ? 1 : 0;
  return n;
}

}  // namespace

double k1_kl(double ref_logp, double logp) { return logp - ref_logp; }

std::vector<float> ppo_token_rewards(std::span<const float> kl, std::span<const uint8_t> mask,
                                     std::span<const float> scores, int B, int T, double kl_coef) {
  check_rows("rewards", kl.size(), B, T);
  check_sizes("rewards", kl.size(), {mask.size()});
  check_sizes("rewards (scores per row)", size_t(B), {scores.size()});
  std::vector<float> r(kl.size(), 0.0f);
  for (int b = 0; b < B; ++b) {
    const size_t row = size_t(b) * size_t(T);
    int last = -1;
    for (int t = 0; t < T; ++t)
      if (mask[row + size_t(t)]) {
        r[row + size_t(t)] = static_cast<float>(-kl_coef * kl[row + size_t(t)]);
        last = t;
      }
    if (last >= 0) r[row + size_t(last)] += scores[size_t(b)];
  }
  return r;
}

GaeResult gae(std::span<const float> rewards, std::span<const float> values, std::span<const uint8_t> mask, int B,
              int T, double gamma, double lambda) {
  check_rows("GAE", rewards.size(), B, T);
  check_sizes("GAE", rewards.size(), {values.size(), mask.size()});
  if (!(gamma >= 0 && gamma <= 1) || !(lambda >= 0 && lambda <= 1))
    throw Error("PPO GAE: gamma and lambda must be in [0, 1]");
  GaeResult g;
  g.advantages.assign(rewards.size(), 0.0f);
  g.returns.assign(rewards.size(), 0.0f);
  for (int b = 0; b < B; ++b) {
    const size_t row = size_t(b) * size_t(T);
    double next_value = 0, next_adv = 0;  // past the last completion token: V = 0, A = 0
    for (int t = T - 1; t >= 0; --t) {
      const size_t i = row + size_t(t);
      if (!mask[i]) continue;
      const double delta = rewards[i] + gamma * next_value - values[i];
      const double a = delta + gamma * lambda * next_adv;
      g.advantages[i] = static_cast<float>(a);
      g.returns[i] = static_cast<float>(a + values[i]);
      next_value = values[i];
      next_adv = a;
    }
  }
  return g;
}

std::vector<float> whiten(std::span<const float> x, std::span<const uint8_t> mask, bool shift_mean) {
  check_sizes("whiten", x.size(), {mask.size()});
  const int64_t n = count_mask(mask);
  std::vector<float> out(x.size(), 0.0f);
  if (n == 0) return out;
  double mean = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (mask[i]) mean += x[i];
  mean /= double(n);
  double var = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (mask[i]) var += (x[i] - mean) * (x[i] - mean);
  const double scale = n >= 2 ? 1.0 / std::sqrt(var / double(n - 1) + 1e-8) : 1.0;
  for (size_t i = 0; i < x.size(); ++i)
    if (mask[i]) out[i] = static_cast<float>((x[i] - mean) * scale + (shift_mean ? 0.0 : mean));
  return out;
}

PpoPolicyLoss ppo_policy_loss(std::span<const float> logp, std::span<const float> old_logp,
                              std::span<const float> advantages, std::span<const uint8_t> mask, double clip) {
  check_sizes("policy loss", logp.size(), {old_logp.size(), advantages.size(), mask.size()});
  if (!(clip > 0 && clip < 1)) throw Error("PPO policy loss: the clip range must be in (0, 1)");
  PpoPolicyLoss out;
  out.dlogp.assign(logp.size(), 0.0f);
  out.tokens = count_mask(mask);
  if (out.tokens == 0) return out;
  const double inv_n = 1.0 / double(out.tokens);
  for (size_t i = 0; i < logp.size(); ++i) {
    if (!mask[i]) continue;
    const double diff = double(logp[i]) - double(old_logp[i]);
    const double ratio = std::exp(diff);
    const ClippedTokenLoss policy = clipped_token_loss(ratio, advantages[i], clip);
    out.loss += policy.loss * inv_n;
    out.clipfrac += policy.cut ? inv_n : 0.0;
    out.approxkl += 0.5 * diff * diff * inv_n;
    out.ratio_mean += ratio * inv_n;
    out.dlogp[i] = static_cast<float>(policy.dlogp * inv_n);
  }
  return out;
}

PpoValueLoss ppo_value_loss(std::span<const float> values, std::span<const float> old_values,
                            std::span<const float> returns, std::span<const uint8_t> mask, double clip_value) {
  check_sizes("value loss", values.size(), {old_values.size(), returns.size(), mask.size()});
  if (!(clip_value > 0) || !std::isfinite(clip_value)) throw Error("PPO value loss: the clip range must be > 0");
  PpoValueLoss out;
  out.dvalues.assign(values.size(), 0.0f);
  out.tokens = count_mask(mask);
  if (out.tokens == 0) return out;
  const double inv_n = 1.0 / double(out.tokens);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!mask[i]) continue;
    const double v = values[i], old = old_values[i], R = returns[i];
    const double step = v - old;
    // Inside the range the clipped value is v itself (not old + step, which rounding could set apart from v).
    const bool inside = std::fabs(step) < clip_value;
    const double v_clip = inside ? v : old + std::clamp(step, -clip_value, clip_value);
    const double l1 = (v - R) * (v - R), l2 = (v_clip - R) * (v_clip - R);
    const bool clipped_larger = l2 > l1;  // only outside the range; there the clipped branch is constant in v
    out.loss += 0.5 * std::max(l1, l2) * inv_n;
    out.clipfrac += clipped_larger ? inv_n : 0.0;
    const double d = clipped_larger ? 0.0 : (v - R);
    out.dvalues[i] = static_cast<float>(d * inv_n);
  }
  return out;
}

MeanEntropy mean_entropy(std::span<const float> token_entropy, std::span<const uint8_t> mask) {
  check_sizes("entropy", token_entropy.size(), {mask.size()});
  MeanEntropy out;
  out.dentropy.assign(token_entropy.size(), 0.0f);
  const int64_t n = count_mask(mask);
  if (n == 0) return out;
  for (size_t i = 0; i < token_entropy.size(); ++i)
    if (mask[i]) {
      out.entropy += double(token_entropy[i]) / double(n);
      out.dentropy[i] = static_cast<float>(1.0 / double(n));
    }
  return out;
}

AdaptiveKlController::AdaptiveKlController(double init_coef, double target, double horizon)
    : m_coef(init_coef), m_target(target), m_horizon(horizon) {
  if (!(init_coef >= 0) || !std::isfinite(init_coef)) throw Error("adaptive KL: the initial coefficient must be >= 0");
  if (!(target > 0) || !std::isfinite(target)) throw Error("adaptive KL: the target KL must be > 0");
  if (!(horizon > 0) || !std::isfinite(horizon)) throw Error("adaptive KL: the horizon must be > 0");
}

void AdaptiveKlController::update(double kl, int64_t n_steps) {
  if (!std::isfinite(kl)) return;  // a broken rollout (its step is skipped) must not poison the coefficient
  const double error = std::clamp(kl / m_target - 1.0, -0.2, 0.2);
  m_coef *= 1.0 + error * double(n_steps) / m_horizon;
}

}  // namespace engine
