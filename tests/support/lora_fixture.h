// The LoRA configuration of tests/data/tiny-{gpt2,llama}-lora (tests/tools/make_tiny_lora_fixture.py): PEFT
// adapters of rank 4, alpha 8, on every linear layer.
#pragma once

#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/train/train_model.h"

inline engine::LoraConfig all_linear_lora(const engine::Model& m, int rank = 4, float alpha = 8.0f) {
  engine::LoraConfig c;
  c.rank = rank;
  c.alpha = alpha;
  c.targets = m.config().arch == engine::Arch::GPT2
                  ? std::vector<std::string>{"h.qkv.weight", "h.attn_proj.weight", "h.fc.weight", "h.fc_proj.weight"}
                  : std::vector<std::string>{"h.wq.weight",     "h.wk.weight",   "h.wv.weight",    "h.wo.weight",
                                             "h.w_gate.weight", "h.w_up.weight", "h.w_down.weight"};
  return c;
}
