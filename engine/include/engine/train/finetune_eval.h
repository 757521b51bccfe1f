// Before and after a fine-tuning run: the validation loss (and its perplexity) of a model on the run's
// own validation split, and greedy answers to the same prompts, so the wizard can put the base model
// and the tuned model side by side.
//
// Same val set: the split is rebuilt from the run's spec exactly as build_training_run builds it
// (prepare_training_data with the same file, B, T, fraction and template), and the loss is the
// Trainer's validation loss -- the mean over the first val_batches batches, weighted by the positions
// each counts (assistant tokens only for SFT) -- so "after" equals the last val_loss on the dashboard.
//
// Answers: greedy (temperature 0) with a fixed seed, so a model always gives the same answer; chat
// data (sft) asks through the chat template with a generation prompt, plain text continues the prompt.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/model.h"
#include "engine/train/training_run.h"

namespace engine {

struct ValidationLoss {
  double loss = 0;
  double perplexity = 0;   // exp(loss)
  uint64_t positions = 0;  // predicted tokens the mean is over
};

// Throws engine::Error when the spec gives no validation split (val_fraction 0 or too little data).
// `model` must be in f32 (load with LoadOptions{.dequantize = true}); `chat_template` is the run's
// (training_chat_template of the base model), used for sft only. `progress(done, total)` is called
// after each batch and may return false to stop (engine::Error "stopped").
ValidationLoss validation_loss_of(Model& model, Backend& backend, const TrainingRunSpec& spec,
                                  const ChatTemplate& chat_template,
                                  const std::function<bool(int, int)>& progress = {});

// Greedy answers of `model` to each prompt, at most max_tokens each. Stops early (returning the
// answers so far) when `keep_going` returns false.
std::vector<std::string> greedy_answers(const Model& model, Backend& backend, const std::vector<std::string>& prompts,
                                        Recipe recipe, const ChatTemplate& chat_template, int max_tokens,
                                        const std::function<bool()>& keep_going = {});

}  // namespace engine
