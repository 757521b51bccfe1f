// What a training step minimizes over one batch, when it is not TrainModel's language-model loss: the
// reward model's Bradley-Terry loss, DPO's loss, later PPO's and GRPO's. The Trainer's loop -- gradient
// accumulation, clipping, the non-finite guard, the schedule, AdamW, validation, checkpoints -- is the same for
// every objective; an objective only turns a batch into a loss, gradients and named metrics, through
// TrainModel's forward/backward calls (there is one forward and one backward for all recipes).
#pragma once

#include <map>
#include <string>

#include "engine/train/data_loader.h"
#include "engine/train/train_model.h"

namespace engine {

struct ObjectiveResult {
  double loss = 0;
  double weight = 1;                      // how much the batch counts in a mean over batches (e.g. its pairs)
  std::map<std::string, double> metrics;  // the batch's means, by the name they are reported under
};

class TrainObjective {
 public:
  virtual ~TrainObjective() = default;
  // Forward + backward over one micro-batch; gradients are added into the model's, scaled by grad_scale.
  virtual ObjectiveResult forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                           float grad_scale) = 0;
  // Forward only (no dropout, no gradient): the loss and metrics of one validation batch.
  virtual ObjectiveResult evaluate(TrainModel& model, const Batch& batch) = 0;
};

}  // namespace engine
