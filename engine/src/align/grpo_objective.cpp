// The GRPO objective: see engine/align/grpo_objective.h.
#include "engine/align/grpo_objective.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/align/grpo_losses.h"
#include "engine/align/reference_policy.h"
#include "engine/error.h"
#include "engine/generator.h"
#include "engine/tokenizer.h"

namespace engine {

namespace {

const std::vector<int32_t>& prompt_ids(const PromptSet& set, const Batch& batch, int row, const char* part) {
  const int32_t index = batch.inputs[size_t(row) * size_t(batch.T)];
  if (index < 0 || size_t(index) >= set.ids.size())
    throw Error(std::string("GRPO: the batch names prompt ") + std::to_string(index) + ", outside the " + part +
                " prompts");
  return set.ids[size_t(index)];
}

const PromptItem& prompt_item(const PromptSet& set, const Batch& batch, int row) {
  return set.items[size_t(batch.inputs[size_t(row) * size_t(batch.T)])];
}

}  // namespace

void GrpoOptions::validate() const {
  auto fail = [](const std::string& m) { throw Error("GRPO: " + m); };
  if (group_size < 2) fail("the group size must be >= 2 (advantages compare completions of one prompt)");
  if (!(temperature > 0) || !std::isfinite(temperature)) fail("the temperature must be > 0");
  if (max_new_tokens < 1) fail("max new tokens must be >= 1");
  if (!(clip > 0 && clip < 1)) fail("clip must be in (0, 1)");
  if (!(beta >= 0) || !std::isfinite(beta)) fail("beta must be >= 0");
  if (seq <= max_new_tokens + 1) fail("the sequence length must exceed max new tokens + 1");
}

uint64_t grpo_sample_seed(uint64_t step_seed, int row, int k) {
  uint64_t s = step_seed ^ (uint64_t(row) << 32) ^ (uint64_t(k) * 0xD1B54A32D192ED03ull) ^ 0x6A09E667F3BCC909ull;
  return splitmix64_next(s);
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
  const int P = batch.B, K = m_o.group_size, T = m_o.seq, R = P * K;
  const Model& net = model.model();
  const std::optional<int32_t> eos_opt = net.tokenizer() ? net.tokenizer()->eos_id() : std::nullopt;
  const bool has_eos = eos_opt.has_value();
  const int32_t eos = eos_opt.value_or(0);

  // 1-2. Rollouts and rewards. The rows are laid out prompt by prompt, the K samples of one prompt together.
  Batch rows;
  rows.B = R;
  rows.T = T;
  rows.inputs.assign(size_t(R) * size_t(T), eos);
  rows.targets.assign(size_t(R) * size_t(T), -1);
  std::vector<float> rewards(static_cast<size_t>(R));
  double completion_tokens = 0;
  for (int p = 0; p < P; ++p) {
    const std::vector<int32_t>& prompt = prompt_ids(m_train, batch, p, "training");
    const PromptItem& item = prompt_item(m_train, batch, p);
    // One cache per prompt: its K samples share the prompt's prefill.
    Generator gen(net, m_backend, int(prompt.size()) + m_o.max_new_tokens);
    GenerateParams gp;
    gp.max_tokens = m_o.max_new_tokens;
    gp.sampler.temperature = m_o.temperature;
    gp.stop = m_stop;
    for (int k = 0; k < K; ++k) {
      gp.sampler.seed = grpo_sample_seed(options.dropout_seed, p, k);
      const GenerationResult g = gen.generate(prompt, gp);
      const int r = p * K + k;
      rewards[size_t(r)] = programmatic_reward(item, g.text);
      std::vector<int32_t> ids = prompt;
      for (const GeneratedToken& t : g.tokens) ids.push_back(t.id);
      if (g.finish == FinishReason::Eos && has_eos) ids.push_back(eos);
      const size_t L = std::min(ids.size(), size_t(T));
      completion_tokens += double(L - std::min(L, prompt.size()));
      int32_t* in = rows.inputs.data() + size_t(r) * size_t(T);
      int32_t* tg = rows.targets.data() + size_t(r) * size_t(T);
      for (size_t t = 0; t < L; ++t) {
        in[t] = ids[t];
        if (t + 1 < L && t + 1 >= prompt.size()) tg[t] = ids[t + 1];
      }
    }
  }
  const std::vector<float> advantages = group_advantages(rewards, K);
  const std::vector<float> group_std = group_reward_std(rewards, K);

  // 3. Log-probs: the reference first (under LoRA it would run the policy's own weights and overwrite the
  // activations the policy's backward needs), then the policy with what its backward keeps.
  const std::vector<float> ref = m_ref.token_logprobs(rows.view());
  const std::vector<float> logp = model.forward_token_logprobs(rows.view(), options);
  std::vector<uint8_t> mask(rows.targets.size());
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = rows.targets[i] >= 0 ? 1 : 0;
  GrpoLossResult loss = grpo_loss(logp, logp, ref, mask, advantages, R, T, m_o.clip, m_o.beta);
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
  const Model& net = model.model();
  int right = 0;
  for (int p = 0; p < batch.B; ++p) {
    const std::vector<int32_t>& prompt = prompt_ids(m_val, batch, p, "validation");
    Generator gen(net, m_backend, int(prompt.size()) + m_o.max_new_tokens);
    GenerateParams gp;
    gp.max_tokens = m_o.max_new_tokens;
    gp.sampler.temperature = 0.0f;  // greedy: the accuracy of the policy's most likely answers
    gp.sampler.seed = 1;
    gp.stop = m_stop;
    right += programmatic_reward(prompt_item(m_val, batch, p), gen.generate(prompt, gp).text) > 0 ? 1 : 0;
  }
  ObjectiveResult out;
  const double accuracy = batch.B > 0 ? double(right) / batch.B : 0.0;
  out.loss = 1.0 - accuracy;
  out.weight = batch.B;
  out.metrics = {{"accuracy", accuracy}};
  return out;
}

}  // namespace engine
