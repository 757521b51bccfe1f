// The training loop around a TrainModel: gradient accumulation, global-norm clipping, the learning-rate
// schedule, AdamW, a guard against non-finite steps, validation loss and sample generations every N
// steps, checkpoints, and a per-step callback that can stop the run (the app runs this on its worker
// thread; the CLI prints each step as a JSON line).
//
// One optimizer step k (1-based) = grad_accum micro-batches, each forward_backward with
// grad_scale 1/grad_accum (so the gradient is that of the mean loss over all of them), then
//   norm = clip_grad_norm(max = grad_clip), lr = lr_at(schedule, k - 1), AdamW.step(lr), zero_grads().
// The reported loss is the mean of the micro-batch losses. An objective with several updates per step (PPO:
// TrainObjective::updates_per_step) makes them all in step k on its one batch, each as above with the step's lr;
// loss, grad_norm and metrics are then means over the updates. Each micro-batch is the loader's next batch,
// so with grad_accum = 1 and an in-order text loader step k reads tokens [(k-1)*B*T, (k-1)*B*T + B*T].
//
// Invariants:
//   - everything random in a step (dropout masks) is seeded from (seed, step, micro-batch), the learning
//     rate is a function of the step and the data order a function of the loader's position, so a run
//     resumed from a checkpoint produces exactly the losses and weights of an uninterrupted one;
//   - a step whose loss or gradient norm is not finite never touches the weights or the optimizer
//     state: its update is skipped (and counted; with several updates per step, the non-finite one and the
//     step's later ones are skipped, the earlier ones stand); after more than max_skipped_steps such steps the run
//     stops with an engine::Error that says which step, what was non-finite and where.
//
// Data parallelism (options.communicator with world size N > 1; pretrain and SFT, full or LoRA): every rank's loader
// produces the same global batch of B rows and rank r trains on rows [r*B/N, (r+1)*B/N) of it; its gradient is
// scaled by its share of the global batch's counted loss weight (tokens) before the backward, the gradients are
// summed over the ranks (engine/train/gradient_sync.h) and every rank takes the same clipped AdamW step. So N ranks
// give the loss curve of one rank with the same --batch (to float rounding: sums are taken in another order), also
// when SFT's masks give the ranks different token counts. Loss, gradient norm, the non-finite guard, validation
// loss (each rank takes its rows of every validation batch) and tokens_per_s are global values, equal on every
// rank; a stop asked for on any rank stops all after the same step. Rank 0 alone generates samples and writes
// checkpoints. The data position is the global loader's, so a checkpoint resumes at any world size with the same
// data order. Dropout masks are drawn per rank (rank 0 keeps the one-process masks), so with dropout the curves of
// different world sizes agree in distribution, not bit for bit.
//
// ZeRO stage 1 (options.zero_stage = 1; pretrain and SFT, full or LoRA): each rank keeps the AdamW state of its
// 1/N of the flattened trainable values only (engine/train/zero_shard.h); the gradients are reduce-scattered instead
// of all-reduced, each rank clips (by the global norm) and updates its range, and the updated ranges are all-gathered.
// The weights after every update are those of the unsharded run (the same sums of the same gradients, an elementwise
// rule); a checkpoint holds the whole optimizer state, gathered to rank 0, so it resumes at any world size with or
// without ZeRO, and save_checkpoint_now() is then collective. At world size 1 the one shard is everything.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/dist/communicator.h"
#include "engine/train/adamw.h"
#include "engine/train/checkpoint.h"
#include "engine/train/data_loader.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/lr_schedule.h"
#include "engine/train/train_model.h"
#include "engine/train/train_objective.h"
#include "engine/train/zero_shard.h"

namespace engine {

class Backend;

struct TrainerOptions {
  int64_t steps = 100;     // total optimizer steps of the run (a resumed run counts from the start)
  int grad_accum = 1;      // micro-batches per optimizer step
  float grad_clip = 1.0f;  // global L2 norm; <= 0 disables clipping
  LrSchedule schedule;
  AdamWParams adam;
  float dropout = 0.0f;
  float label_smoothing = 0.0f;
  uint64_t seed = 0;

  int val_every = 0;    // 0: never; else after every val_every-th step and after the last
  int val_batches = 8;  // batches of the validation loader (from its start) per evaluation

  int sample_every = 0;  // 0: never; else a greedy generation from sample_prompt
  std::vector<int32_t> sample_prompt;
  int sample_tokens = 32;

  int save_every = 0;          // 0: only at the end (when checkpoint_dir is set)
  std::string checkpoint_dir;  // "" = no checkpoints
  int keep_checkpoints = 3;    // newest kept; <= 0 keeps all
  std::string config_json;     // stored in each checkpoint

  int max_skipped_steps = 0;  // non-finite steps tolerated before the run stops

  // The ranks of a data-parallel run (must outlive the Trainer); null: this process alone.
  Communicator* communicator = nullptr;
  // 0: every rank holds the whole optimizer state; 1: ZeRO stage 1, each rank the state of its shard (see above).
  int zero_stage = 0;

  // Throws engine::Error naming the first value out of range.
  void validate() const;
};

struct StepMetrics {
  int64_t step = 0;
  float loss = 0;
  float lr = 0;
  float grad_norm = 0;  // before clipping
  double tokens_per_s = 0;
  std::optional<float> val_loss;
  std::map<std::string, float> metrics;      // an objective's own (e.g. "accuracy"), means over the micro-batches
  std::map<std::string, float> val_metrics;  // the same on the validation data, when val_loss is set
  std::optional<std::string> sample;         // the generated continuation (raw bytes, may be cut mid-character)
  std::vector<CompletionSample> samples;     // online recipes: a few sampled completions with their scores
  bool skipped = false;                      // non-finite loss or gradient: an update was skipped
  std::string checkpoint;                    // path of a checkpoint written after this step, if any (rank 0)
  int world_size = 1;                        // ranks that trained this step together
  double comm_seconds = 0;                   // world_size > 1: time exchanging gradients and the loss
  double wait_seconds = 0;                   // world_size > 1: time waiting for slower ranks before the exchange
  uint64_t allreduce_bytes = 0;              // world_size > 1: gradient bytes each rank all-reduced this step
                                             // (ZeRO: reduce-scattered)
  uint64_t optimizer_bytes = 0;              // AdamW state (m, v) held by this rank
  int zero_stage = 0;                        // as in the options
};

// Called after every step; return false to stop the run (after that step).
using StepCallback = std::function<bool(const StepMetrics&)>;

struct TrainResult {
  int64_t steps_done = 0;  // the step count reached (including steps before a resume)
  bool stopped = false;    // the callback asked to stop before opts.steps
  int64_t skipped_steps = 0;
  std::string last_checkpoint;
};

class Trainer {
 public:
  // `val` may be null (no validation). `backend` is used for sample generation (may be null when
  // sample_every is 0). `objective` null: the language-model loss. The loaders, model and objective must
  // outlive the Trainer; a scalar head (TrainModel::set_scalar_head) must be set before. With a communicator of
  // world size > 1: throws engine::Error for an objective (data parallelism covers the language-model loss) or a
  // batch of fewer rows than ranks.
  Trainer(TrainModel& model, BatchLoader& train, BatchLoader* val, Backend* backend, const TrainerOptions& options,
          TrainObjective* objective = nullptr);

  // Continues from the newest loadable checkpoint in options.checkpoint_dir: weights/adapters, optimizer,
  // step and data position. `warnings` receives a line per unreadable checkpoint skipped. Returns the
  // state loaded (its config_json is the caller's to compare).
  TrainState resume(std::vector<std::string>* warnings = nullptr);

  TrainResult run(const StepCallback& on_step = {});

  // Mean loss over options.val_batches batches from the start of the validation loader.
  float validation_loss();
  // The same, with the objective's metrics (weighted by each batch's ObjectiveResult::weight).
  struct Validation {
    float loss = 0;
    std::map<std::string, float> metrics;
  };
  Validation validate();
  // Writes a checkpoint of the current state now; returns its path. With ZeRO every rank must call it (the state is
  // gathered to rank 0, which alone writes it; the others return "").
  std::string save_checkpoint_now();

  int64_t step() const { return m_step; }
  AdamW& optimizer() { return m_opt; }
  int rank() const;
  int world_size() const;

 private:
  std::string sample();
  // This rank's rows of `global` (world size > 1).
  const Batch& shard_of(const Batch& global);

  TrainModel& m_model;
  BatchLoader& m_train;
  BatchLoader* m_val;
  Backend* m_backend;
  TrainerOptions m_o;
  TrainObjective* m_objective;
  std::unique_ptr<Communicator> m_local;  // when options.communicator is null
  Communicator& m_comm;
  std::unique_ptr<ZeroShard> m_zero;  // zero_stage 1 (before m_opt: it sizes the optimizer's shard)
  AdamW m_opt;
  int64_t m_step = 0;
  Batch m_batch;
  std::unique_ptr<GradientSync> m_sync;  // world size > 1 without ZeRO
  Batch m_shard;
};

}  // namespace engine
