// Training settings (a QVariantMap keyed like the `train` CLI's flags, with '_' for '-') and the engine
// objects one run needs, built from them. TrainingJobs builds a session on its worker thread; the
// wizard shows trainCliCommand() so the same run can be started from a terminal.
//
// Invariants
// - Every key of defaultTrainingSettings() has the CLI's default; a key the map lacks takes it, an
//   unknown key is ignored, a value out of range is refused with engine::Error naming the key.
// - The run itself is built by engine::build_training_run, as the CLI's `train` builds it.
#pragma once

#include <QString>
#include <QStringList>
#include <QVariantMap>

#include <memory>
#include <string>

#include "engine/train/training_run.h"

// The CLI's defaults (app/cli/cmd_train.cpp) for every setting a job understands, but the alignment ones.
QVariantMap defaultTrainingSettings();

// The alignment recipes' own settings (beta, group_size, ..., reward_model: the CLI's --beta, --group-size, ...,
// --reward-model) that apply to `recipe`, with the CLI's defaults for it (beta: 0.1 for dpo, 0.04 for grpo).
// Empty for pretrain and sft. A setting that does not apply to the run's recipe is ignored by trainingRunSpec and
// left out of trainCliCommand, whose CLI refuses it (--beta with --recipe ppo).
QVariantMap defaultAlignmentSettings(const QString& recipe);

// `llm-workbench-cli train ...` for these settings (only values that differ from the defaults, plus the
// required recipe/model/data/out, and of the alignment settings only those of the recipe), quoted for a POSIX
// shell.
QString trainCliCommand(const QVariantMap& settings, const QString& outDir);

// Memory a run needs, in bytes, from the model's shape ({parameters, layers, width, heads, vocab})
// and the settings (batch, seq, lora_rank): f32 weights 4P; full fine-tuning adds gradients 4P and
// AdamW's m and v 8P; LoRA trains r·(C+3C) + r·(C+C) per layer (qkv and attention output) with
// gradients and moments for those only; activations kept for the backward pass ≈ 4·B·T·(L·(16·C +
// 2·NH·T) + 2·V) (per layer: the norms, qkv, attention scores and probabilities, MLP in and out;
// then logits and probabilities). Returns {weights, gradients, optimizer, activations, total,
// trainable}. An estimate, meant to say "fits" or "does not fit", not a measurement.
QVariantMap estimateTrainingMemory(const QVariantMap& shape, const QVariantMap& settings);

// The settings as the engine's run spec (range-checked; a bad value is an engine::Error naming its key).
engine::TrainingRunSpec trainingRunSpec(const QVariantMap& settings, const QString& outDir);

// Loads the model named by settings["model"] and builds the run (engine::build_training_run). Throws
// engine::Error (bad settings, unreadable model or data, data too short for one batch).
std::unique_ptr<engine::TrainingRun> buildTrainingSession(const QVariantMap& settings, const QString& outDir);
