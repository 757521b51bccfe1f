// The losses of preference training on per-pair scalars, with their gradients: pure functions over plain
// arrays, so each is tested against hand-computed values, finite differences and TRL's formulas
// (tests/tools/make_dpo_fixture.py), apart from any model.
//
// Bradley-Terry (the reward model; TRL's RewardTrainer without margin or centering):
//   d_i = r_chosen[i] - r_rejected[i];  loss = mean_i -log sigmoid(d_i) = mean_i softplus(-d_i)
//   d loss / d r_chosen[i] = -sigmoid(-d_i) / n,  d loss / d r_rejected[i] = +sigmoid(-d_i) / n
//   accuracy = share of pairs with d_i > 0;  margin = mean_i d_i
// DPO (TRL's DPOTrainer, loss_type "sigmoid", label_smoothing 0):
//   rc_i = beta (logp_chosen[i] - ref_chosen[i]),  rr_i = beta (logp_rejected[i] - ref_rejected[i])
//   z_i = rc_i - rr_i;  loss = mean_i -log sigmoid(z_i)
//   d loss / d logp_chosen[i] = -beta sigmoid(-z_i) / n,  d loss / d logp_rejected[i] = +beta sigmoid(-z_i) / n
//   metrics as TRL names them: rewards/chosen = mean rc, rewards/rejected = mean rr, rewards/margins =
//   mean z, rewards/accuracies = share of rc_i > rr_i, logps/chosen, logps/rejected = mean policy log-probs.
// softplus and sigmoid are evaluated in double in their overflow-free forms, so a margin of +-1000 gives a
// finite loss and gradient.
#pragma once

#include <span>
#include <vector>

namespace engine {

// softplus(x) = log(1 + e^x) and sigmoid(x) = 1 / (1 + e^-x), stable for any finite x.
double softplus(double x);
double sigmoid(double x);

struct BradleyTerryResult {
  double loss = 0;
  double accuracy = 0;
  double margin = 0;
  std::vector<float> d_chosen, d_rejected;  // d loss / d reward, per pair
};
// Throws engine::Error when the spans differ in length or are empty.
BradleyTerryResult bradley_terry_loss(std::span<const float> r_chosen, std::span<const float> r_rejected);

struct DpoResult {
  double loss = 0;
  double rewards_chosen = 0, rewards_rejected = 0, margins = 0, accuracies = 0;
  double logps_chosen = 0, logps_rejected = 0;
  std::vector<float> d_chosen, d_rejected;  // d loss / d policy sequence log-prob, per pair
};
// Throws engine::Error when the spans differ in length or are empty, or beta <= 0.
DpoResult dpo_loss(std::span<const float> logp_chosen, std::span<const float> logp_rejected,
                   std::span<const float> ref_chosen, std::span<const float> ref_rejected, double beta);

// Per-row sums of per-token log-probs: token_logprobs (B*T) -> (B). Positions that do not count hold 0
// (TrainModel::forward_token_logprobs), so a row's sum is its sequence log-prob over the masked tokens.
std::vector<float> sequence_logprobs(std::span<const float> token_logprobs, int B, int T);

}  // namespace engine
