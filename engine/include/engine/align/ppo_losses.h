// The pieces of PPO for RLHF (TRL's PPOTrainer) on per-token arrays, with their gradients: pure functions over plain
// arrays, tested against hand-computed values and finite differences apart from any model.
//
// Layout: B rows of T positions, row-major; mask[i] != 0 where position i predicts a completion token (the rows
// of engine/align/rollouts.h). Per-token values live at the same positions: value[i] estimates the return from the
// state that predicts token i.
//
// KL estimators of KL(policy || reference) from samples of the policy, per token (Schulman, "approximating KL
// divergence"): k1 = logp - ref_logp (TRL PPO's default: unbiased, can be negative); k3 (grpo_losses.h: k3_kl).
//
// Rewards (TRL): r_t = -kl_coef * kl_t at every completion token ("non-score reward"), plus the score of the
// completion at its last completion token.
//
// GAE (Schulman et al. 2016), per row over its completion tokens t = 0 .. n-1, V_n = 0:
//   delta_t = r_t + gamma V_{t+1} - V_t;  A_t = delta_t + gamma lambda A_{t+1};  return_t = A_t + V_t.
//
// Whitening (TRL's masked_whiten): over the masked entries of the whole rollout batch,
//   (x - mean) / sqrt(var + 1e-8), var the unbiased variance (n / (n - 1)); the mean is added back when
//   shift_mean is false. Fewer than 2 entries: x - mean (there is no spread to scale by).
//
// Policy loss (clipped surrogate): ratio = exp(logp - old_logp),
//   l_t = max(-A_t ratio, -A_t clamp(ratio, 1 - eps, 1 + eps)),  loss = mean over the masked tokens.
//   A token is "clipped" when the clamped branch is the larger (its gradient is cut); approxkl =
//   0.5 mean (logp - old_logp)^2.
// Value loss (clipped): v_clip = old_v + clamp(v - old_v, -eps_v, eps_v),
//   l_t = 0.5 max((v - R_t)^2, (v_clip - R_t)^2),  loss = mean over the masked tokens; "clipped" when the
//   clipped branch is the larger. On a tie the unclipped branch carries the gradient.
// Entropy: H = mean over the masked tokens of H_t, the exact entropy of the policy's distribution over the
//   vocabulary at token t (TrainModel::forward_token_logprobs computes it from the logits and backpropagates
//   d objective / d H_t). The entropy bonus subtracts coef * H from the loss: dH/dH_t = 1/n on the masked tokens.
//
// Adaptive KL controller (Ziegler et al. 2019, TRL's AdaptiveKLController): after each rollout of n_steps
// completions with mean per-completion KL `kl`,
//   coef *= 1 + clamp(kl / target - 1, -0.2, 0.2) * n_steps / horizon.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace engine {

double k1_kl(double ref_logp, double logp);  // logp - ref_logp; d/dlogp = 1

// Per-token rewards (B*T; 0 outside the mask): -kl_coef * kl[i] on completion tokens, plus scores[b] at row
// b's last completion token (a row with none gets no score). Throws engine::Error for mismatched sizes.
std::vector<float> ppo_token_rewards(std::span<const float> kl, std::span<const uint8_t> mask,
                                     std::span<const float> scores, int B, int T, double kl_coef);

struct GaeResult {
  std::vector<float> advantages, returns;  // (B*T); 0 outside the mask
};
// Throws engine::Error for mismatched sizes or gamma, lambda outside [0, 1].
GaeResult gae(std::span<const float> rewards, std::span<const float> values, std::span<const uint8_t> mask, int B,
              int T, double gamma, double lambda);

// Whitens the masked entries of x (others are returned as 0).
std::vector<float> whiten(std::span<const float> x, std::span<const uint8_t> mask, bool shift_mean = true);

struct PpoPolicyLoss {
  double loss = 0;
  double clipfrac = 0;    // share of masked tokens whose gradient the clipping cut
  double approxkl = 0;    // 0.5 mean (logp - old_logp)^2
  double ratio_mean = 0;  // mean probability ratio over the masked tokens
  int64_t tokens = 0;
  std::vector<float> dlogp;  // d loss / d logp; 0 outside the mask
};
// Throws engine::Error for mismatched sizes or clip outside (0, 1).
PpoPolicyLoss ppo_policy_loss(std::span<const float> logp, std::span<const float> old_logp,
                              std::span<const float> advantages, std::span<const uint8_t> mask, double clip);

struct PpoValueLoss {
  double loss = 0;
  double clipfrac = 0;  // share of masked tokens where the clipped branch is the larger
  int64_t tokens = 0;
  std::vector<float> dvalues;  // d loss / d value; 0 outside the mask
};
// Throws engine::Error for mismatched sizes or clip_value <= 0.
PpoValueLoss ppo_value_loss(std::span<const float> values, std::span<const float> old_values,
                            std::span<const float> returns, std::span<const uint8_t> mask, double clip_value);

struct MeanEntropy {
  double entropy = 0;           // mean over the masked tokens of the per-token entropies
  std::vector<float> dentropy;  // d entropy / d per-token entropy: 1/n on the masked tokens, 0 elsewhere
};
// Throws engine::Error for mismatched sizes.
MeanEntropy mean_entropy(std::span<const float> token_entropy, std::span<const uint8_t> mask);

class AdaptiveKlController {
 public:
  // Throws engine::Error unless init_coef >= 0, target > 0 and horizon > 0 (all finite).
  AdaptiveKlController(double init_coef, double target, double horizon);
  double coef() const { return m_coef; }
  void set_coef(double coef) { m_coef = coef; }  // a resumed run's value
  // One rollout of n_steps completions whose mean per-completion KL was `kl`.
  void update(double kl, int64_t n_steps);

 private:
  double m_coef, m_target, m_horizon;
};

}  // namespace engine
