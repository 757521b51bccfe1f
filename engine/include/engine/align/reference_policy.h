// The frozen reference policy of DPO (and of PPO's and GRPO's KL terms): the model as training started,
// run forward only, for per-token and per-sequence log-probs with no gradient.
//
// Two ways to have it, both giving the starting policy's log-probs bit for bit (the same forward code):
//   - LoRA: the policy's own base weights with the adapters switched off -- the base never changes during a
//     LoRA run (only a final merge writes it), so this costs no memory;
//   - full fine-tuning: a frozen copy of the weights, taken when the run is built, before a resume loads a
//     checkpoint into the policy (so a resumed run keeps the original reference).
#pragma once

#include <memory>
#include <vector>

#include "engine/train/train_model.h"

namespace engine {

class Backend;
class Model;

class ReferencePolicy {
 public:
  // The base weights of a LoRA `policy` (throws engine::Error when it has no adapters). `policy` must
  // outlive the reference.
  static std::unique_ptr<ReferencePolicy> lora_base(TrainModel& policy);
  // A frozen copy of `model`'s f32 weights as they are now.
  static std::unique_ptr<ReferencePolicy> copy_of(Model& model, Backend& backend);
  ~ReferencePolicy();

  // log p_ref(targets[i] | inputs[..i]) per position (B*T), 0 where the position does not count.
  std::vector<float> token_logprobs(const BatchView& batch);
  // Per-row sums of token_logprobs (B).
  std::vector<float> sequence_logprobs(const BatchView& batch);

 private:
  ReferencePolicy() = default;
  std::unique_ptr<Model> m_copy;         // full fine-tuning: the frozen weights
  std::unique_ptr<TrainModel> m_frozen;  // ... run by this
  TrainModel* m_lora_policy = nullptr;   // LoRA: the policy, run without its adapters
};

}  // namespace engine
