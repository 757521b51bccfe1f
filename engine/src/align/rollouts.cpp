// Sampling rollouts and the greedy held-out accuracy: see engine/align/rollouts.h.
#include "engine/align/rollouts.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "engine/error.h"
#include "engine/generator.h"
#include "engine/serve/batch_scheduler.h"
#include "engine/model.h"
#include "engine/tokenizer.h"

namespace engine {

std::vector<uint8_t> Rollouts::completion_mask() const {
  std::vector<uint8_t> mask(rows.targets.size());
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = rows.targets[i] >= 0 ? 1 : 0;
  return mask;
}

namespace {

// Every request of a rollout runs at once: a slot each, the prompts prefilled in the first step.
BatchSchedulerOptions rollout_batch_options(const std::vector<const std::vector<int32_t>*>& prompts, int per_prompt,
                                            int max_new_tokens) {
  BatchSchedulerOptions o;
  o.parallel = std::max(1, int(prompts.size()) * per_prompt);
  o.max_queue = 0;
  int64_t longest = 1, total = 0;
  for (const std::vector<int32_t>* p : prompts) {
    longest = std::max<int64_t>(longest, int64_t(p->size()));
    total += int64_t(p->size()) * per_prompt;
  }
  o.slot_capacity = int(std::min<int64_t>(longest + max_new_tokens, INT32_MAX));
  o.prefill_budget = int(std::clamp<int64_t>(total, 1, INT32_MAX));
  return o;
}

}  // namespace

uint64_t rollout_sample_seed(uint64_t step_seed, int row, int k) {
  uint64_t s = step_seed ^ (uint64_t(row) << 32) ^ (uint64_t(k) * 0xD1B54A32D192ED03ull) ^ 0x6A09E667F3BCC909ull;
  return splitmix64_next(s);
}

const std::vector<int32_t>& batch_prompt_ids(const PromptSet& set, const Batch& batch, int row) {
  const int32_t index = batch.inputs[size_t(row) * size_t(batch.T)];
  if (index < 0 || size_t(index) >= set.ids.size() || set.items.size() != set.ids.size())
    throw Error("the batch names prompt " + std::to_string(index) + ", outside the " + std::to_string(set.ids.size()) +
                " prompts of its set");
  return set.ids[size_t(index)];
}

const PromptItem& batch_prompt_item(const PromptSet& set, const Batch& batch, int row) {
  batch_prompt_ids(set, batch, row);  // the range check
  return set.items[size_t(batch.inputs[size_t(row) * size_t(batch.T)])];
}

Rollouts sample_rollouts(const Model& policy, Backend& backend, const std::vector<std::string>& stop,
                         const PromptSet& set, const Batch& batch, const RolloutOptions& o, uint64_t step_seed) {
  const int P = batch.B, K = o.per_prompt, T = o.seq, R = P * K;
  const std::optional<int32_t> eos_opt = policy.tokenizer() ? policy.tokenizer()->eos_id() : std::nullopt;
  const int32_t eos = eos_opt.value_or(0);
  Rollouts out;
  out.rows.B = R;
  out.rows.T = T;
  out.rows.inputs.assign(size_t(R) * size_t(T), eos);
  out.rows.targets.assign(size_t(R) * size_t(T), -1);
  out.items.resize(size_t(R));
  out.texts.resize(size_t(R));
  out.completion_tokens.assign(size_t(R), 0);
  out.ended.assign(size_t(R), 0);
  // Every completion of the step decodes in one batch (decode is bound by reading the weights, so R streams cost
  // little more than one); each keeps its own seed, so a completion does not depend on the others.
  std::vector<const std::vector<int32_t>*> prompts(static_cast<size_t>(P));
  for (int p = 0; p < P; ++p) prompts[size_t(p)] = &batch_prompt_ids(set, batch, p);
  std::vector<GenerationResult> results(static_cast<size_t>(R));
  {
    BatchScheduler scheduler(policy, backend, rollout_batch_options(prompts, K, o.max_new_tokens));
    GenerateParams gp;
    gp.max_tokens = o.max_new_tokens;
    gp.sampler.temperature = o.temperature;
    gp.stop = stop;
    for (int p = 0; p < P; ++p)
      for (int k = 0; k < K; ++k) {
        gp.sampler.seed = rollout_sample_seed(step_seed, p, k);
        scheduler.submit(*prompts[size_t(p)], gp, {},
                         [&results, r = p * K + k](const GenerationResult& g) { results[size_t(r)] = g; });
      }
    while (scheduler.step()) {
    }
  }
  for (int p = 0; p < P; ++p) {
    const std::vector<int32_t>& prompt = *prompts[size_t(p)];
    const PromptItem& item = batch_prompt_item(set, batch, p);
    for (int k = 0; k < K; ++k) {
      const int r = p * K + k;
      const GenerationResult& g = results[size_t(r)];
      out.items[size_t(r)] = &item;
      out.texts[size_t(r)] = g.text;
      std::vector<int32_t> ids = prompt;
      for (const GeneratedToken& t : g.tokens) ids.push_back(t.id);
      const bool stopped_by_eos = g.finish == FinishReason::Eos && eos_opt.has_value();
      if (stopped_by_eos) ids.push_back(eos);
      const size_t L = std::min(ids.size(), size_t(T));
      out.completion_tokens[size_t(r)] = int(L - std::min(L, prompt.size()));
      const bool ended = stopped_by_eos || g.finish == FinishReason::Stop;
      out.ended[size_t(r)] = ended && L == ids.size() ? 1 : 0;
      int32_t* in = out.rows.inputs.data() + size_t(r) * size_t(T);
      int32_t* tg = out.rows.targets.data() + size_t(r) * size_t(T);
      for (size_t t = 0; t < L; ++t) {
        in[t] = ids[t];
        if (t + 1 < L && t + 1 >= prompt.size()) tg[t] = ids[t + 1];
      }
    }
  }
  return out;
}

std::vector<float> programmatic_rewards(const Rollouts& rollouts) {
  std::vector<float> r(rollouts.texts.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = programmatic_reward(*rollouts.items[i], rollouts.texts[i]);
  return r;
}

double greedy_accuracy(const Model& policy, Backend& backend, const std::vector<std::string>& stop, const PromptSet& set,
                       const Batch& batch, int max_new_tokens) {
  std::vector<const std::vector<int32_t>*> prompts(static_cast<size_t>(batch.B));
  for (int p = 0; p < batch.B; ++p) prompts[size_t(p)] = &batch_prompt_ids(set, batch, p);
  int right = 0;
  BatchScheduler scheduler(policy, backend, rollout_batch_options(prompts, 1, max_new_tokens));
  GenerateParams gp;
  gp.max_tokens = max_new_tokens;
  gp.sampler.temperature = 0.0f;  // greedy: the accuracy of the policy's most likely answers
  gp.sampler.seed = 1;
  gp.stop = stop;
  for (int p = 0; p < batch.B; ++p)
    scheduler.submit(*prompts[size_t(p)], gp, {}, [&, p](const GenerationResult& g) {
      right += programmatic_reward(batch_prompt_item(set, batch, p), g.text) > 0 ? 1 : 0;
    });
  while (scheduler.step()) {
  }
  return batch.B > 0 ? double(right) / batch.B : 0.0;
}

ObjectiveResult greedy_accuracy_result(const Model& policy, Backend& backend, const std::vector<std::string>& stop,
                                       const PromptSet& set, const Batch& batch, int max_new_tokens) {
  const double accuracy = greedy_accuracy(policy, backend, stop, set, batch, max_new_tokens);
  ObjectiveResult out;
  out.loss = 1.0 - accuracy;
  out.weight = batch.B;
  out.metrics = {{"accuracy", accuracy}};
  return out;
}

}  // namespace engine
