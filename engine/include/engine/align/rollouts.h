// Rollouts of the online alignment recipes (GRPO, PPO): completions sampled from the current policy for a batch of
// prompt indices (engine/align/prompt_data.h: PromptIndexLoader), laid out as training rows; and the greedy
// held-out accuracy both report at validation.
//
// Sampling: all of a step's completions decoded together by the batch scheduler (engine/serve/batch_scheduler.h) on
// the policy's own weights (so LoRA adapters, which live beside them, would not be seen), temperature sampling, at
// most max_new_tokens, ending at the end-of-sequence token or a template stop string. The sampler seed of each
// completion is rollout_sample_seed(step_seed, row, k) with step_seed the Trainer's per-step seed, so a resumed run
// samples what an uninterrupted one would have.
//
// Rows: prompt + completion, cut to seq tokens, padded with the end-of-sequence id (0 without one); targets only on
// completion tokens, so position i of a row predicts its completion token i+1. An end-of-sequence token that
// stopped the sample is a completion token, so stopping is learned too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/align/prompt_data.h"
#include "engine/train/data_loader.h"
#include "engine/train/train_objective.h"

namespace engine {

class Backend;
class Model;

struct RolloutOptions {
  int per_prompt = 1;  // completions sampled per prompt (GRPO's group size)
  float temperature = 1.0f;
  int max_new_tokens = 24;
  int seq = 128;  // tokens per row
};

struct Rollouts {
  Batch rows;  // P * per_prompt rows of seq tokens, the completions of one prompt together
  std::vector<const PromptItem*> items;  // per row: its prompt (pointing into the PromptSet)
  std::vector<std::string> texts;        // per row: the completion's text (cut before a stop string)
  std::vector<int> completion_tokens;    // per row: completion tokens in the row (targets counted)
  std::vector<uint8_t> ended;            // per row: the sample ended (end-of-sequence token or stop string), not cut
  // rows.targets >= 0, per position (B*T): the completion tokens the losses run over.
  std::vector<uint8_t> completion_mask() const;
};

// The sampler seed of completion k of row `row` of the micro-batch whose Trainer seed is `step_seed`.
uint64_t rollout_sample_seed(uint64_t step_seed, int row, int k);

// The prompt a PromptIndexLoader batch names in row `row` of `set`. Throws engine::Error for an index outside it.
const std::vector<int32_t>& batch_prompt_ids(const PromptSet& set, const Batch& batch, int row);
const PromptItem& batch_prompt_item(const PromptSet& set, const Batch& batch, int row);

// Samples the completions of every prompt the batch names (see above). `stop`: the chat template's stop strings.
Rollouts sample_rollouts(const Model& policy, Backend& backend, const std::vector<std::string>& stop,
                         const PromptSet& set, const Batch& batch, const RolloutOptions& options, uint64_t step_seed);

// The programmatic reward (prompt_data.h) of each row.
std::vector<float> programmatic_rewards(const Rollouts& rollouts);

// Greedy replies to the prompts the batch names; the share answered right (programmatic reward > 0).
double greedy_accuracy(const Model& policy, Backend& backend, const std::vector<std::string>& stop, const PromptSet& set,
                       const Batch& batch, int max_new_tokens);
// The held-out evaluation of the online recipes (GRPO, PPO): greedy_accuracy as metric "accuracy" (logged as
// val_accuracy), loss = the share answered wrong, weighted by the batch's rows.
ObjectiveResult greedy_accuracy_result(const Model& policy, Backend& backend, const std::vector<std::string>& stop,
                                       const PromptSet& set, const Batch& batch, int max_new_tokens);

}  // namespace engine
