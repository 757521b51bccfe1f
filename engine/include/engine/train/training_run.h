// One training run, built from its settings: the base model (widened to f32), the backend, the data
// loaders, the TrainModel (full or LoRA) and the Trainer -- and, at the end, the trained model saved.
// The CLI's `train` and the app's training jobs both go through here, so the two cannot drift: what a
// flag means to the CLI is what the same setting means to a job.
//
// Invariants
// - TrainingRunSpec's defaults are the `train` CLI's defaults (DESIGN.md §5); the front ends only parse
//   and range-check their own input into it.
// - A TrainingRun is self-contained: the trainer refers to the TrainModel, loaders and backend it holds,
//   and is destroyed before them. Checkpoints go to <out_dir>/checkpoints.
// - save_training_result writes LoRA adapters (PEFT layout, <out_dir>/adapter) before merging them, so
//   the merge is the last change to the weights; the merged (or fully trained) model goes to <out_dir>.
// - reward: the model gets a scalar head "score.weight" (trained also under LoRA) and is saved as a reward
//   model (engine/align/reward_model.h). dpo: the reference policy is the starting model, fixed when the
//   run is built -- before a resume loads a checkpoint (engine/align/reference_policy.h).
// - grpo: prompts with checkable answers (engine/align/prompt_data.h), the last val_fraction held out for greedy
//   accuracy; prompts that leave no room for max_new_tokens within seq are skipped (a note says how many); the
//   reference is a frozen copy of the starting model; full fine-tuning only (engine/align/grpo_objective.h).
// - ppo: the same prompts; the policy gets a value head (kValueHeadName, not saved with the model), the reference
//   is a frozen copy of the starting model, the reward the programmatic scorer or the reward model at
//   reward_model_path (loaded when the run is built); full fine-tuning and grad_accum 1 only
//   (engine/align/ppo_objective.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/align/grpo_objective.h"
#include "engine/align/ppo_objective.h"
#include "engine/backend.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/train/lr_schedule.h"
#include "engine/train/train_model.h"
#include "engine/train/trainer.h"
#include "engine/train/training_data.h"

namespace engine {
class ReferencePolicy;
class RewardModel;
}

namespace engine {

struct TrainingRunSpec {
  Recipe recipe = Recipe::Pretrain;
  std::string data_path;
  std::string out_dir;
  LoraConfig lora;  // rank 0 = full fine-tuning; lora.seed is set from `seed`
  int batch = 4;    // reward / dpo: pairs per micro-batch
  int seq = 0;      // 0: min(128, the model's context)
  int grad_accum = 1;
  int64_t steps = 100;
  float lr = 3e-4f;  // peak learning rate
  LrScheduleKind schedule = LrScheduleKind::Cosine;
  int warmup = 0;
  float min_lr_ratio = 0.1f;
  int step_size = 100;  // step schedule
  float gamma = 0.5f;   // step schedule
  double beta1 = 0.9, beta2 = 0.95;
  double weight_decay = 0.1;
  float grad_clip = 1.0f;
  float dropout = 0.0f;
  float label_smoothing = 0.0f;
  bool shuffle = true;
  uint64_t seed = 1;
  double val_fraction = 0.05;
  int val_every = 50;  // 0: no validation split at all
  int val_batches = 8;
  int sample_every = 0;
  std::string sample_prompt = "Once upon a time";  // sft: a user turn, rendered in the chat template
  int sample_tokens = 32;
  int save_every = 0;
  int keep_checkpoints = 3;
  int max_skipped_steps = 0;
  std::string chat_template;  // sft, reward, dpo: a template name; empty: the model's own, else Plain
  double dpo_beta = 0.1;      // dpo: the strength of the pull towards the reference
  GrpoOptions grpo;           // grpo (its seq is set from `seq`)
  PpoOptions ppo;             // ppo (its seq is set from `seq`)
  std::string reward_model_path;  // ppo: a reward model (train --recipe reward); "": the programmatic reward
  int threads = 0;
  int zero_stage = 0;  // 1: ZeRO stage 1, the AdamW state sharded over the ranks (pretrain, sft; trainer.h)
  std::string config_json;  // stored in checkpoints (the front end's own record of the settings)
};

// The model a run starts from: a model file or directory (quantized weights widened to f32), or a
// config.json to start from random weights drawn from `seed` (tokenizer files beside it). Throws
// engine::Error when it cannot be read or has no tokenizer.
struct TrainingBase {
  ModelFileInfo info;
  std::string path;
  std::unique_ptr<Model> model;
};
TrainingBase load_training_base(const std::string& path, uint64_t seed);

struct TrainingRun {
  TrainingRunSpec spec;  // as built (seq resolved)
  TrainingBase base;
  BackendChoice backend;
  TrainingData data;
  std::unique_ptr<TrainModel> train_model;
  std::unique_ptr<ReferencePolicy> reference;  // dpo, grpo, ppo
  std::unique_ptr<RewardModel> reward_model;   // ppo with a reward model
  std::unique_ptr<TrainObjective> objective;   // reward, dpo, grpo, ppo; null: the language-model loss
  std::unique_ptr<Trainer> trainer;
  ChatTemplate chat_template;      // what sft / reward / dpo / grpo / ppo data was rendered with
  int64_t tokens_per_step = 0;     // B * T * grad_accum
  std::vector<std::string> notes;  // one line each, for the user (data summary, template fallback)
  ~TrainingRun();                  // the trainer first: it refers to the rest
};

// The chat template SFT renders with: the one named (engine::Error for an unknown name), else the
// model's own, else Plain -- with a line in *notes when the model has a template we do not render.
ChatTemplate training_chat_template(const std::string& name, const ModelFileInfo& info,
                                    std::vector<std::string>* notes);

// Builds the run on `base`. Throws engine::Error for a bad setting (named), unreadable or invalid data,
// or data too small for one batch. `communicator` (must outlive the run; null: this process alone): the ranks of a
// data-parallel run, each building the same run; spec.batch is then the global batch (engine/train/trainer.h), and
// a recipe other than pretrain and sft, or a batch smaller than the world, is refused.
std::unique_ptr<TrainingRun> build_training_run(TrainingBase base, const TrainingRunSpec& spec,
                                                Communicator* communicator = nullptr);

// Writes the result of a run into run.spec.out_dir (see the invariants above). `provenance_json` goes
// into workbench.json. Returns warnings for the user (e.g. a tokenizer that cannot be written as HF files).
std::vector<std::string> save_training_result(TrainingRun& run, const std::string& provenance_json);

}  // namespace engine
