// Before and after an alignment run (reward, dpo, grpo, ppo): the starting model against the trained one on the
// run's own held-out part of its data, so the wizard's Evaluate step can put them side by side.
//
// Held-out data: rebuilt from the run's settings as training splits it -- the last val_fraction of the preference
// pairs (engine/train/training_data.h), or of the prompts that leave room for max_new_tokens within seq
// (engine::split_prompt_set) -- so the numbers are about data neither model trained on.
//
// What is measured, per recipe
// - reward: the trained reward model's pair accuracy (its score ranks chosen over rejected) and mean margin
//   (engine::evaluate_reward_model); the starting model, which has no score head, is measured by its own
//   log-probability of each reply (a language model's preference before any training).
// - dpo: preference accuracy by DPO's implicit reward -- the trained policy's log-prob of chosen minus rejected,
//   each relative to the starting model (the reference): accuracy and mean margin (times beta, as TRL logs
//   rewards/margins); beside it each model's own log-prob preference (chosen more likely than rejected).
// - grpo, ppo: held-out task accuracy, greedy replies scored by the exact-match reward (as the dashboard's
//   val_accuracy: engine/align/rollouts.h), and the first few held-out prompts answered by both.
// One model is in memory at a time (plus the starting model's log-probs, kept as numbers), loaded in f32.
//
// Errors are engine::Error (no held-out data, unreadable model or data); a stopped call's result is meaningless.
#pragma once

#include <QString>
#include <QVariantMap>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "services/finetuneservice.h"

namespace finetune {

struct AlignmentMeasure {
  QString name;         // what is measured, in plain words
  QString explanation;  // one line on how
  double before = std::numeric_limits<double>::quiet_NaN();  // NaN: does not apply to that model
  double after = std::numeric_limits<double>::quiet_NaN();
  bool share = true;  // a share in [0, 1] (shown as a percentage); false: a plain number
};

struct TaskAnswer {
  QString prompt, expected, base, tuned;
  bool baseCorrect = false, tunedCorrect = false;
};

struct AlignmentEvaluation {
  QString recipe;
  int64_t heldOut = 0;  // pairs or prompts evaluated
  std::vector<AlignmentMeasure> measures;
  std::vector<TaskAnswer> answers;  // grpo, ppo: the first held-out prompts, answered by both models
};

// True for the recipes evaluateAlignment measures.
bool isAlignmentRecipe(const QString& recipe);

// The starting model (settings["model"]) against the trained one (`tunedDir`) for the run with these settings.
// `examples`: how many held-out prompts to show answered by both (grpo, ppo).
AlignmentEvaluation evaluateAlignment(const QVariantMap& settings, const QString& tunedDir, int examples = 4,
                                      const Progress& progress = {});

}  // namespace finetune
