// What the GRPO and PPO objective tests share: two arithmetic prompts given as token ids (the tiny fixtures have no
// tokenizer), and one LoRA policy built two ways -- as adapters on the base with the base as reference, and merged
// into a full copy with a copy of the base as reference -- so that both must sample the same rollouts.
#pragma once

#include <memory>
#include <string>

#include "engine/align/prompt_data.h"
#include "engine/align/reference_policy.h"
#include "engine/backend.h"
#include "engine/model_loader.h"
#include "engine/train/lora_io.h"
#include "engine/train/train_model.h"
#include "support/lora_fixture.h"

// With no end-of-sequence token every completion runs to max_new_tokens, and with no text every reward is 0.
inline engine::PromptSet tiny_id_prompts() {
  using engine::PromptKind;
  return {{{"What is 1 + 1?", "2", PromptKind::Arith, 1}, {"What is 2 + 2?", "4", PromptKind::Arith, 2}},
          {{11, 12, 13, 14}, {21, 22}}};
}

// `dir` and its `dir`-lora adapters (PEFT's, all linear layers).
struct LoraPolicyTwoWays {
  std::unique_ptr<engine::Model> model, merged_model, base_model;
  std::unique_ptr<engine::TrainModel> lora, merged;
  std::unique_ptr<engine::ReferencePolicy> lora_ref, base_ref;

  LoraPolicyTwoWays(const std::string& dir, engine::Backend& be) {
    const engine::LoadOptions f32{.dequantize = true};
    model = engine::load_model(dir, {}, f32);
    lora = std::make_unique<engine::TrainModel>(*model, be, all_linear_lora(*model));
    engine::load_lora_adapters(*lora, dir + "-lora");
    lora_ref = engine::ReferencePolicy::lora_base(*lora);
    merged_model = engine::load_model(dir, {}, f32);
    {
      engine::TrainModel adapted(*merged_model, be, all_linear_lora(*merged_model));
      engine::load_lora_adapters(adapted, dir + "-lora");
      adapted.merge_lora();
    }
    merged = std::make_unique<engine::TrainModel>(*merged_model, be);
    base_model = engine::load_model(dir, {}, f32);
    base_ref = engine::ReferencePolicy::copy_of(*base_model, be);
  }
  // The LoRA policy's base weights are still the file's.
  bool base_untouched() const {
    return std::equal(model->all_params().begin(), model->all_params().end(), base_model->all_params().begin());
  }
};
