// LoRA adapters on disk in PEFT's layout, so adapters trained here load in Hugging Face PEFT (and PEFT
// adapters load here):
//   DIR/adapter_model.safetensors  F32 tensors named as PEFT names them for the HF model, e.g.
//       base_model.model.transformer.h.0.attn.c_attn.lora_A.weight   (GPT-2; A (r, in), B (out, r))
//       base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight  (Llama family)
//   DIR/adapter_config.json        peft_type LORA, task_type CAUSAL_LM, r, lora_alpha, lora_dropout,
//       target_modules (module-path suffixes such as "attn.c_attn" or "q_proj"), fan_in_fan_out (true for
//       GPT-2's Conv1D), bias "none", base_model_name_or_path.
// Both files are written atomically. Models whose q/k rows are in the interleaved (GGUF) rotary layout
// store their q/k adapters' B rows in HF's rotate-half order, as the HF writer does for weights.
#pragma once

#include <string>

#include "engine/train/train_model.h"

namespace engine {

// Writes the adapters of a TrainModel built with lora.rank > 0. Throws engine::Error otherwise, or when
// a file cannot be written.
void save_lora_adapters(TrainModel& tm, const std::string& directory, const std::string& base_model_name_or_path);

// Reads DIR/adapter_model.safetensors into the adapters of `tm` (same targets and rank). Every adapter
// tensor must be present with the right shape; tensors for modules `tm` has no adapter on are an error.
void load_lora_adapters(TrainModel& tm, const std::string& directory);

}  // namespace engine
