// The two preference-pair objectives the Trainer runs (engine/train/train_objective.h), on PairLoader
// batches (pair i = rows i and P+i, P = B/2; engine/train/pair_loader.h):
//   - RewardModelObjective: a scalar head ("score.weight") on the final-norm output of each row's last token
//     (lengths[r] - 1) gives r_chosen and r_rejected; Bradley-Terry loss; metrics "accuracy" and "margin".
//   - DpoObjective: per-sequence log-probs of the replies under the policy (one forward over both halves)
//     and under the frozen reference (computed per batch, no gradient); DPO's sigmoid loss; metrics as TRL
//     names them: "rewards/chosen", "rewards/rejected", "rewards/margins", "rewards/accuracies",
//     "logps/chosen", "logps/rejected".
// The loss formulas and their gradients are align/preference_losses.h; these classes only gather the
// scalars from the model and hand the gradients back to it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/train/train_objective.h"

namespace engine {

class ReferencePolicy;

// The name of the reward model's head, as Hugging Face's *ForSequenceClassification stores it.
inline constexpr const char* kRewardHeadName = "score.weight";

// The reward head's starting values: normal(0, 0.02) (HF's initializer_range), deterministic in `seed`.
std::vector<float> initial_reward_head(int n_embd, uint64_t seed);

// Each row's reward: the head's value at its last token (batch.lengths; engine::Error without them).
std::vector<float> last_token_values(const std::vector<float>& values, const Batch& batch);

class RewardModelObjective : public TrainObjective {
 public:
  ObjectiveResult forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                   float grad_scale) override;
  ObjectiveResult evaluate(TrainModel& model, const Batch& batch) override;
};

class DpoObjective : public TrainObjective {
 public:
  // `reference` must outlive the objective. Throws engine::Error for beta <= 0.
  DpoObjective(ReferencePolicy& reference, double beta);
  ObjectiveResult forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                   float grad_scale) override;
  ObjectiveResult evaluate(TrainModel& model, const Batch& batch) override;

 private:
  ReferencePolicy& m_ref;
  double m_beta;
};

}  // namespace engine
