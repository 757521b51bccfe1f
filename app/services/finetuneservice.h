// The fine-tuning wizard's engine work, as plain calls usable without a UI: reading a base model's
// shape, checking a data file (format, bad rows with their line numbers, token counts, the split),
// timing real training steps, and comparing the base model with the tuned one. Exporting a run is
// exportTrainedModel (trainingexport.h). Every call blocks its caller for as long as the work takes
// (seconds to minutes: each one loads its own copy of the model), so a UI runs them off its thread
// on taskPool(), one at a time (LatestTask, latesttask.h).
//
// Errors are engine::Error with a readable message naming the file or setting at fault. `progress`
// (0..1) may be empty; it returns false to stop, and a stopped call's result is meaningless (the
// caller that stopped it drops it).
#pragma once

#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <QVariantMap>

#include <functional>
#include <vector>

#include "engine/train/dataset_inspection.h"
#include "engine/train/finetune_eval.h"
#include "services/modelinfo.h"

namespace finetune {

using Progress = std::function<bool(double fraction)>;

// The one thread these calls run on when run in the background: a replaced task finishes stopping (at
// its next progress report) before the next one starts, so at most one extra copy of a model is in
// memory, and the shared global pool stays free for short work such as the Inspect page's images.
QThreadPool* taskPool();

// The shape of the model at `path` (weights stay as stored: nothing is widened to f32). Throws when
// the model cannot be read or has no tokenizer (it could not be trained on text).
ModelInfo inspectBaseModel(const QString& path, const Progress& progress = {});

// Format, rows, problems (with line numbers), a preview and, when `modelPath` is given, token counts
// with that model's tokenizer and chat template, for training at sequence length `seq` with
// `valFraction` of the data held out.
engine::DatasetInspection inspectTrainingData(const QString& path, const QString& modelPath, int seq,
                                              double valFraction, const Progress& progress = {});

struct TimeEstimate {
  double secondsPerStep = 0;
  double totalSeconds = 0;  // secondsPerStep × the settings' steps (validation and samples add to it)
  int steps = 0;
  QString backend;  // which backend ran the steps, and why
};

// Times two real optimizer steps of these training settings (trainingsetup.h) on a throwaway run:
// the first pays for warm-up (allocation, caches), the second is what every further step costs.
TimeEstimate estimateTrainingTime(const QVariantMap& settings, const Progress& progress = {});

struct AnswerPair {
  QString prompt, base, tuned;
};

struct Evaluation {
  engine::ValidationLoss before, after;  // on the run's own validation split
  std::vector<AnswerPair> answers;       // greedy answers of both models to each non-blank prompt
};

// The base model (settings["model"]) against the tuned one (`tunedDir`), loaded one after the other
// so one model is in memory at a time.
Evaluation evaluateFineTune(const QVariantMap& settings, const QString& tunedDir, const QStringList& prompts,
                            const Progress& progress = {});

// Hyper-parameters that suit a model of `parameters` weights: {lr, batch, steps, warmup, lora_rank}.
// Smaller models take larger steps; LoRA adapters start at zero and take a higher rate.
QVariantMap suggestedHyperParameters(double parameters, bool lora);

}  // namespace finetune
