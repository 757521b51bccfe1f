// The losses of GRPO (group relative policy optimization) on per-token log-probs, with their gradients: pure
// functions over plain arrays, tested against hand-computed values and finite differences apart from any model.
//
// Group-relative advantage (TRL's GRPOTrainer with scale_rewards on): the K completions of one prompt form a
// group; A_i = (r_i - mean_group) / (std_group + 1e-4) with the unbiased standard deviation (torch.std), so a
// group whose rewards are all equal -- all right or all wrong -- teaches nothing (A = 0).
//
// k3 KL estimator (Schulman's "approximating KL divergence"), per token, of KL(policy || reference) from samples
// of the policy: with d = ref_logp - logp, kl = exp(d) - d - 1 >= 0, = 0 exactly when the two agree;
// d kl / d logp = 1 - exp(d).
//
// The per-token objective (TRL's loss_type "grpo"): ratio = exp(logp - old_logp),
//   loss_t = -min(ratio A, clamp(ratio, 1 - eps, 1 + eps) A) + beta kl_t,
// averaged over each completion's tokens, then over the completions (GrpoLossType::Grpo, the default), or
// summed over every completion token of the batch and divided by their count (GrpoLossType::Bnpo, TRL's
// "bnpo"; its "dapo" is the same on one process). The per-sequence mean gives each token of a completion of n
// tokens the weight 1 / (n B): a 8-token reply "7 - 3 = 4." moves each of its tokens about seven times as far
// as a worked 3-digit sum moves each of its 60, which biases updates towards short replies; the token mean
// weights every completion token alike. With a single update per rollout the
// ratio is 1 (old_logp is the policy's own log-prob, detached) and the gradient is -A d logp: the clipping only
// matters for completeness. A token is "clipped" when the clamped branch is the smaller (its gradient is cut).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace engine {

// rewards: G groups of group_size consecutive completions -> their advantages. Throws engine::Error when
// group_size < 2 or the count is not a multiple of it.
std::vector<float> group_advantages(std::span<const float> rewards, int group_size, double eps = 1e-4);
// Per group (G): the unbiased standard deviation of its rewards.
std::vector<float> group_reward_std(std::span<const float> rewards, int group_size);

double k3_kl(double ref_logp, double logp);
double k3_kl_grad(double ref_logp, double logp);  // d k3_kl / d logp

// The clipped surrogate of one token (PPO's policy objective, also GRPO's): with ratio = exp(logp - old_logp),
// loss = -min(ratio A, clamp(ratio, 1 - clip, 1 + clip) A); `cut` when the clamped branch is the smaller, where
// the gradient is 0; else d loss / d logp = -ratio A.
struct ClippedTokenLoss {
  double loss = 0;
  bool cut = false;
  double dlogp = 0;
};
inline ClippedTokenLoss clipped_token_loss(double ratio, double advantage, double clip) {
  const double unclipped = ratio * advantage;
  const double bounded = std::clamp(ratio, 1.0 - clip, 1.0 + clip) * advantage;
  const bool cut = bounded < unclipped;
  return {-std::min(unclipped, bounded), cut, cut ? 0.0 : -unclipped};
}

enum class GrpoLossType { Grpo, Bnpo };
// "grpo" / "bnpo" -> the type; throws engine::Error naming the accepted values otherwise.
GrpoLossType grpo_loss_type_from_name(const std::string& name);
const char* grpo_loss_type_name(GrpoLossType t);

struct GrpoLossResult {
  double loss = 0;
  double kl = 0;             // mean k3 KL over the completion tokens
  double clip_ratio = 0;     // share of completion tokens whose gradient the clipping cut
  int64_t tokens = 0;        // completion tokens
  std::vector<float> dlogp;  // (B*T) d loss / d logp; 0 outside the mask
};
// logp, old_logp, ref_logp, mask: (B*T), B completions of T positions; mask[i] != 0 where position i is a
// completion token. advantages: (B). Throws engine::Error for mismatched sizes, clip < 0 or beta < 0.
GrpoLossResult grpo_loss(std::span<const float> logp, std::span<const float> old_logp, std::span<const float> ref_logp,
                         std::span<const uint8_t> mask, std::span<const float> advantages, int B, int T, double clip,
                         double beta, GrpoLossType type = GrpoLossType::Grpo);

}  // namespace engine
