// From a data file to the trainer's loaders, for each recipe -- the one place the CLI's `train` and the
// app's training jobs turn (recipe, file, batch shape, split) into BatchLoaders.
//   pretrain: plain UTF-8 text, one token stream; the last val_fraction of the tokens is validation
//             (a short validation part gets fewer rows per batch rather than none).
//   sft:      JSONL chats / Alpaca rows rendered with `chat_template`; the last val_fraction of the
//             conversations is validation; loss on assistant tokens only.
//   reward, dpo: JSONL preference pairs (engine/train/preference_data.h) rendered with `chat_template`,
//             batches of B pairs = 2B rows (engine/train/pair_loader.h); the last val_fraction of the pairs
//             is validation.
//   grpo, ppo: prompts with checkable answers (engine/align/prompt_data.h); build_training_run prepares them
//             itself (the online objectives need the prompts, not only a loader), so they are refused here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/chat_template.h"
#include "engine/model_loader.h"
#include "engine/train/data_loader.h"

namespace engine {

class Tokenizer;

enum class Recipe { Pretrain, Sft, Reward, Dpo, Grpo, Ppo };
// "pretrain", "sft", "reward", "dpo", "grpo", "ppo"
std::optional<Recipe> recipe_from_name(const std::string& name);
// The recipes whose data is chat-formatted (rendered with a chat template): sft, reward, dpo, grpo, ppo.
bool recipe_uses_chat_template(Recipe r);
bool recipe_uses_preference_pairs(Recipe r);  // reward, dpo
bool recipe_uses_prompts(Recipe r);           // grpo, ppo: sampled online from prompts with checkable answers

struct TrainingDataOptions {
  Recipe recipe = Recipe::Pretrain;
  std::string path;
  int B = 4, T = 128;  // reward / dpo: B pairs per batch
  bool shuffle = true;
  uint64_t seed = 1;
  double val_fraction = 0.05;  // 0 = no validation split
  bool validation = true;      // false: keep all data for training, no validation loader
  ChatTemplate chat_template;  // sft, reward, dpo
};

struct TrainingData {
  std::unique_ptr<BatchLoader> train;
  std::unique_ptr<BatchLoader> val;  // null when there is none
  std::vector<std::string> notes;    // one line each, for the user ("6 conversations (messages), template 'chatml'")
};

// Throws engine::Error naming the file (and line) for unreadable or invalid data, or data too small
// for one batch.
TrainingData prepare_training_data(const TrainingDataOptions& options, const Tokenizer& tokenizer);

// The chat template a model's files name (tokenizer_config.json beside it, or GGUF metadata): the
// family recognised, or nullopt with *unrecognised = true when there is a template we do not render,
// or nullopt with *unrecognised = false when there is none.
std::optional<ChatTemplate> model_chat_template(const ModelFileInfo& info, bool* unrecognised = nullptr);

}  // namespace engine
