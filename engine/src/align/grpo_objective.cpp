// The GRPO objective: see engine/align/grpo_objective.h.
#include "engine/align/grpo_objective.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/align/grpo_losses.h"
#include "engine/align/reference_policy.h"
#include "engine/align/rollouts.h"
#include "engine/error.h"

namespace engine {

void GrpoOptions::validate() const {
  auto fail = [](const std::string& m) { throw Error("GRPO: " + m); };
  if (group_size < 2) fail("the group size must be >= 2 (advantages compare completions of one prompt)");
  if (!(temperature > 0) || !std::isfinite(temperature)) fail("the temperature must be > 0");
  if (max_new_tokens < 1) fail("max new tokens must be >= 1");
  if (!(clip > 0 && clip < 1)) fail("clip must be in (0, 1)");
  if (!(beta >= 0) || !std::isfinite(beta)) fail("beta must be >= 0");
  if (seq <= max_new_tokens + 1) fail("the sequence length must exceed max new tokens + 1");
}

GrpoObjective::GrpoObjective(ReferencePolicy& reference, Backend& backend, const ChatTemplate& tmpl, PromptSet train,
                             PromptSet val, const GrpoOptions& options)
    : m_ref(reference),
      m_backend(backend),
      m_stop(tmpl.stop_strings()),
      m_train(std::move(train)),
      m_val(std::move(val)),
      m_o(options) {
  m_o.validate();
}

ObjectiveResult GrpoObjective::forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                                float grad_scale) {
  const int P = batch.B, K = m_o.group_size, R = P * K, T = m_o.seq;

  // 1-2. Rollouts and rewards.
  RolloutOptions ro;
  ro.per_prompt = K;
  ro.temperature = m_o.temperature;
  ro.max_new_tokens = m_o.max_new_tokens;
  ro.seq = T;
  const Rollouts rollouts = [&] {
    const TrainModel::AdaptersInWeights adapted = model.adapters_in_weights();  // sample the LoRA policy
    return sample_rollouts(model.model(), m_backend, m_stop, m_train, batch, ro, options.dropout_seed);
  }();
  const Batch& rows = rollouts.rows;
  const std::vector<float> rewards = programmatic_rewards(rollouts);
  double completion_tokens = 0;
  for (int n : rollouts.completion_tokens) completion_tokens += n;
  const std::vector<float> advantages = group_advantages(rewards, K);
  const std::vector<float> group_std = group_reward_std(rewards, K);

  // 3. Log-probs: the reference first (under LoRA it runs the policy's own base weights and would overwrite the
  // activations the policy's backward needs), then the policy with what its backward keeps.
  const std::vector<float> ref = m_ref.token_logprobs(rows.view());
  const std::vector<float> logp = model.forward_token_logprobs(rows.view(), options);
  const std::vector<uint8_t> mask = rollouts.completion_mask();
  GrpoLossResult loss = grpo_loss(logp, logp, ref, mask, advantages, R, T, m_o.clip, m_o.beta, m_o.loss_type);
  for (float& d : loss.dlogp) d *= grad_scale;
  model.backward_token_logprobs(loss.dlogp.data());

  ObjectiveResult out;
  out.loss = loss.loss;
  out.weight = P;
  double mean_reward = 0, mean_std = 0, zero_std = 0;
  for (float r : rewards) mean_reward += r / R;
  for (float s : group_std) {
    mean_std += s / P;
    zero_std += s == 0.0f ? 1.0 / P : 0.0;
  }
  out.metrics = {{"reward", mean_reward},
                 {"reward_std", mean_std},
                 {"kl", loss.kl},
                 {"completion_length", completion_tokens / R},
                 {"clip_ratio", loss.clip_ratio},
                 {"frac_reward_zero_std", zero_std}};
  return out;
}

ObjectiveResult GrpoObjective::evaluate(TrainModel& model, const Batch& batch) {
  const TrainModel::AdaptersInWeights adapted = model.adapters_in_weights();
  return greedy_accuracy_result(model.model(), m_backend, m_stop, m_val, batch, m_o.max_new_tokens);
}

}  // namespace engine
