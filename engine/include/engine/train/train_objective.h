// What a training step minimizes over one batch, when it is not TrainModel's language-model loss: the
// reward model's Bradley-Terry loss, DPO's loss, GRPO's and PPO's. The Trainer's loop -- gradient
// accumulation, clipping, the non-finite guard, the schedule, AdamW, validation, checkpoints -- is the same for
// every objective; an objective only turns a batch into a loss, gradients and named metrics, through
// TrainModel's forward/backward calls (there is one forward and one backward for all recipes).
//
// Most objectives make one optimizer update per step. PPO learns several times from one rollout (epochs of
// minibatch updates): it says so with updates_per_step() > 1, and the Trainer then makes that many updates in
// the step, each with its own clipping, non-finite guard and AdamW step, calling forward_backward_update with
// update = 0, 1, ... on the same batch. Keeping the rollout inside one step keeps resume exact without storing
// it; what an objective carries from step to step (PPO's adaptive KL coefficient) goes into the checkpoint
// through checkpoint_state / restore_state.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/train/data_loader.h"
#include "engine/train/train_model.h"

namespace engine {

// One sampled completion and its score, for the user to read (a few per step, not a data set).
struct CompletionSample {
  std::string prompt, completion;
  double score = 0;
};

struct ObjectiveResult {
  double loss = 0;
  double weight = 1;                      // how much the batch counts in a mean over batches (e.g. its pairs)
  std::map<std::string, double> metrics;  // the batch's means, by the name they are reported under
  std::vector<CompletionSample> samples;  // online recipes: a few of the step's completions
};

class TrainObjective {
 public:
  virtual ~TrainObjective() = default;
  // Forward + backward over one micro-batch; gradients are added into the model's, scaled by grad_scale.
  virtual ObjectiveResult forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                           float grad_scale) = 0;
  // Forward only (no dropout, no gradient): the loss and metrics of one validation batch.
  virtual ObjectiveResult evaluate(TrainModel& model, const Batch& batch) = 0;

  // Optimizer updates per training step (see above); > 1 needs grad_accum 1.
  virtual int updates_per_step() const { return 1; }
  // Update `update` (0 .. updates_per_step() - 1) of a step, on the step's batch. A metric reported by only some
  // updates is averaged over those that report it.
  virtual ObjectiveResult forward_backward_update(TrainModel& model, const Batch& batch,
                                                  const TrainStepOptions& options, float grad_scale, int update) {
    (void)update;
    return forward_backward(model, batch, options, grad_scale);
  }

  // State carried from one step to the next, as text stored in checkpoints ("" = none), and its restore on resume.
  // Throws engine::Error from restore_state when the text is not what checkpoint_state writes.
  virtual std::string checkpoint_state() const { return {}; }
  virtual void restore_state(const std::string& state) { (void)state; }
};

}  // namespace engine
