// PPO for RLHF (TRL's PPOTrainer) as an objective the Trainer runs (engine/train/train_objective.h), on
// PromptIndexLoader batches of P prompts (engine/align/prompt_data.h).
//
// Models: the policy (trained), a frozen reference (ReferencePolicy), and a value head -- a scalar per token on the
// policy's final-norm output (TrainModel's scalar head, kValueHeadName), sharing the policy's trunk as TRL's
// AutoModelForCausalLMWithValueHead does; the value loss trains the trunk too. Only the policy is saved at the end.
//
// One Trainer step = one PPO iteration: a rollout, then ppo_epochs passes over it in num_minibatches minibatches,
// each minibatch one optimizer update (updates_per_step() = ppo_epochs * num_minibatches). The rollout lives only
// within its step, so a checkpoint never needs it; the adaptive KL coefficient is carried across steps in the
// checkpoint (checkpoint_state).
//
// The rollout (update 0):
//   1. one completion per prompt sampled from the current policy (engine/align/rollouts.h; the sampler seeds are
//      functions of the Trainer's step seed, so a resumed run samples what an uninterrupted one would);
//   2. its score: the programmatic reward (exact match, 1 or 0), or a trained reward model's score of
//      prompt + completion;
//   3. per completion token: the policy's log-prob (old_logp), the reference's, the value head's value; the KL
//      estimate (k1 or k3) and the rewards -kl_coef kl_t plus the score at the last token; GAE advantages and
//      returns; advantages whitened over the rollout (engine/align/ppo_losses.h);
//   4. with a target KL, the adaptive controller updates the coefficient from this rollout's KL (the rollout
//      itself used the coefficient from before).
// Each update: the minibatch's rows through the policy (log-probs: clipped policy loss; minus entropy_coef times the
// mean exact entropy of its distributions over the completion tokens, differentiated through the logits)
// and the value head (clipped value loss times vf_coef); the minibatches of each epoch are a permutation of the
// rows drawn from the step seed.
//
// Metrics, TRL's names: objective/kl (per-completion KL sum, mean over completions), objective/entropy (the
// policy's exact entropy at each completion token, logsumexp(z) - sum softmax(z) z, summed per completion, mean
// over completions: TRL's scale, whose sum of the sampled tokens' -logp has this as its expectation),
// objective/non_score_reward, objective/rlhf_reward (score + non-score reward), objective/scores, objective/kl_coef,
// val/num_eos_tokens (completions that ended -- the end-of-sequence token or a template stop string -- rather than
// being cut at max_new_tokens), completion_length (rollout, reported once per step); policy/clipfrac_avg,
// policy/approxkl_avg, policy/entropy_avg (the exact entropy per token, mean over the minibatch's completion tokens, as
// the update's forward computes it), loss/policy_avg, loss/value_avg, val/clipfrac_avg, val/ratio (means over the
// step's updates), val/ratio_var (variance of the updates' mean ratios). The first samples_per_step completions of each
// rollout come back as CompletionSamples. evaluate(): greedy replies to the validation prompts; loss = share answered
// wrong, metric "accuracy".
//
// The sampler runs the Model's own weights, so LoRA is not supported (the rollouts would come from the base).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/align/ppo_losses.h"
#include "engine/align/prompt_data.h"
#include "engine/chat_template.h"
#include "engine/train/train_objective.h"

namespace engine {

class Backend;
class ReferencePolicy;
class RewardModel;

// The value head's name among the trainable tensors (TRL's value head is "v_head.summary").
inline constexpr const char* kValueHeadName = "v_head.weight";

enum class KlEstimator { K1, K3 };

struct PpoOptions {
  float temperature = 1.0f;
  int max_new_tokens = 24;
  int seq = 128;              // tokens per row: prompt + completion must fit
  int ppo_epochs = 4;         // passes over each rollout
  int num_minibatches = 1;    // per pass; must divide the prompts per step
  double kl_coef = 0.05;      // the initial coefficient when target_kl > 0
  double target_kl = 0;       // > 0: adaptive coefficient towards this per-completion KL
  double kl_horizon = 10000;  // adaptive: completions over which the coefficient may move by at most 20%
  KlEstimator kl_estimator = KlEstimator::K1;
  double gamma = 1.0, lam = 0.95;  // GAE
  double cliprange = 0.2, cliprange_value = 0.2;
  double vf_coef = 0.1;
  double entropy_coef = 0;
  int samples_per_step = 2;  // completions reported per step
  // Throws engine::Error naming the first value out of range.
  void validate() const;
};

class PpoObjective : public TrainObjective {
 public:
  // train, val: the prompts the loaders index. `reference`, `backend` and `reward_model` (null: the programmatic
  // reward) must outlive the objective. Throws engine::Error for bad options.
  PpoObjective(ReferencePolicy& reference, Backend& backend, const ChatTemplate& tmpl, PromptSet train, PromptSet val,
               const PpoOptions& options, RewardModel* reward_model = nullptr);
  ~PpoObjective() override;

  int updates_per_step() const override { return m_o.ppo_epochs * m_o.num_minibatches; }
  // Update 0 collects the rollout first. The model needs the value head (kValueHeadName); engine::Error without,
  // or when the batch's prompts do not split into num_minibatches.
  ObjectiveResult forward_backward_update(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                          float grad_scale, int update) override;
  // A step of one update: the rollout and the first minibatch.
  ObjectiveResult forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                   float grad_scale) override {
    return forward_backward_update(model, batch, options, grad_scale, 0);
  }
  ObjectiveResult evaluate(TrainModel& model, const Batch& batch) override;

  std::string checkpoint_state() const override;
  void restore_state(const std::string& state) override;
  double kl_coef() const { return m_adaptive ? m_adaptive->coef() : m_o.kl_coef; }

 private:
  struct Rollout;
  ObjectiveResult collect_rollout(TrainModel& model, const Batch& batch, const TrainStepOptions& options);

  ReferencePolicy& m_ref;
  Backend& m_backend;
  RewardModel* m_reward_model;
  std::vector<std::string> m_stop;
  PromptSet m_train, m_val;
  PpoOptions m_o;
  std::optional<AdaptiveKlController> m_adaptive;  // with a target KL
  std::unique_ptr<Rollout> m_rollout;              // the current step's
};

}  // namespace engine
