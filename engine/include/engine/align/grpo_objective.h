// GRPO as an objective the Trainer runs (engine/train/train_objective.h), on PromptIndexLoader batches of P
// prompts (engine/align/prompt_data.h).
//
// One micro-batch:
//   1. rollouts: K completions per prompt sampled from the current policy (engine/align/rollouts.h), their
//      sampler seeds functions of the Trainer's per-step seed (dropout_seed: seed, step, micro-batch), so a
//      resumed run samples what an uninterrupted one would have;
//   2. rewards from the programmatic scorer (1 right, 0 wrong), group-relative advantages per prompt;
//   3. the P*K rows prompt + completion (targets only on completion tokens; an end-of-sequence token that
//      stopped the sample is a completion token, so stopping is learned too) through the reference
//      (no gradient) and the policy's forward_token_logprobs, the loss of align/grpo_losses.h, its dlogp
//      handed to backward_token_logprobs. One update per rollout: old_logp is the policy's own log-prob.
// Metrics as TRL's GRPOTrainer logs them: "reward", "reward_std" (mean of the groups' standard deviations),
// "kl", "completion_length", "clip_ratio", "frac_reward_zero_std".
// evaluate(): greedy replies to the validation prompts of the batch; loss = share answered wrong, metric
// "accuracy" (reported as val_accuracy).
//
// The sampler runs the Model's own weights, so LoRA (whose adapters live beside them) is not supported here:
// the rollouts would come from the base model.
#pragma once

#include <cstdint>

#include "engine/align/grpo_losses.h"
#include "engine/align/prompt_data.h"
#include "engine/chat_template.h"
#include "engine/train/train_objective.h"

namespace engine {

class Backend;
class ReferencePolicy;

struct GrpoOptions {
  int group_size = 4;  // K completions per prompt
  float temperature = 1.0f;
  int max_new_tokens = 24;
  double clip = 0.2;   // PPO-style ratio clipping epsilon
  double beta = 0.04;  // weight of the k3 KL to the reference
  int seq = 128;       // tokens per row: prompt + completion must fit (longer prompts are not in the sets)
  GrpoLossType loss_type = GrpoLossType::Grpo;  // how the loss averages over tokens (align/grpo_losses.h)
  // Throws engine::Error naming the first value out of range.
  void validate() const;
};

class GrpoObjective : public TrainObjective {
 public:
  // train, val: the prompts the train and validation loaders index. `reference` and `backend` must outlive the
  // objective. Throws engine::Error for bad options.
  GrpoObjective(ReferencePolicy& reference, Backend& backend, const ChatTemplate& tmpl, PromptSet train, PromptSet val,
                const GrpoOptions& options);
  ObjectiveResult forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                   float grad_scale) override;
  ObjectiveResult evaluate(TrainModel& model, const Batch& batch) override;

 private:
  ReferencePolicy& m_ref;
  Backend& m_backend;
  std::vector<std::string> m_stop;
  PromptSet m_train, m_val;
  GrpoOptions m_o;
};

}  // namespace engine
