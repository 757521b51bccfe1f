// Training checkpoints: everything needed to continue a run exactly, in one safetensors file.
//
// <dir>/ckpt_<step, 8 digits>.safetensors holds, for every trainable tensor (the optimizer's list),
// "value/<name>", "adam_m/<name>" and "adam_v/<name>" as flat F32 tensors, and in its metadata:
//   format "llm-workbench-train-checkpoint", version "1", step, adam_t, data_epoch, data_cursor, seed,
//   config (the run's settings as JSON, compared on resume), checksums (JSON: tensor -> FNV-1a 64 hex), and,
//   only when the objective carries state between steps (PPO's adaptive KL coefficient), objective_state (its
//   text, with its checksum under "objective_state" in checksums; absent reads as "").
// For full fine-tuning the trainables are all the model's weights; for LoRA only the adapters (the
// frozen base is re-read from the model the run started from).
//
// Invariants:
//   - a checkpoint file exists only when complete: it is written to a temp file beside it, fsynced and
//     renamed (io::write_file_atomic), so a crash or full disk leaves the previous checkpoints intact;
//   - loading validates everything -- the safetensors structure, format, version, every expected tensor
//     present with the right size, no unexpected tensor, every checksum -- BEFORE it writes a single value,
//     so a bad file leaves the weights and optimizer as they were;
//   - a bit flipped anywhere in the file is detected (structure checks or checksums).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/train/adamw.h"
#include "engine/train/data_loader.h"

namespace engine {

struct TrainState {
  int64_t step = 0;         // optimizer steps completed
  DataPosition data;        // the training loader's position after those steps
  uint64_t seed = 0;        // the run's seed (data order, dropout masks, samples)
  std::string config_json;  // the run's settings; the caller decides which must match on resume
  std::string objective_state;  // TrainObjective::checkpoint_state(); "" = none
};

// Writes the checkpoint of `state.step` into `dir` (created if missing), then deletes all but the
// newest `keep` checkpoints there (keep <= 0 keeps all) and stale temp files of interrupted writes.
// Returns the path written. Throws engine::Error (e.g. disk full) with older checkpoints untouched.
std::string save_checkpoint(const std::string& dir, const AdamW& optimizer, const TrainState& state, int keep = 0);

// Loads `path` into the optimizer's tensors (values), moments and step count; returns the state. A sharded optimizer
// (ZeRO) takes the moments of its shard. save_checkpoint refuses a sharded optimizer (engine::Error): the file holds
// the whole state, gathered first (Trainer::save_checkpoint_now), so it resumes at any world size, sharded or not.
TrainState load_checkpoint(const std::string& path, AdamW& optimizer);

// Checkpoint files in `dir`, newest (highest step) first; empty when there are none or no such dir.
std::vector<std::string> list_checkpoints(const std::string& dir);

// Tries list_checkpoints(dir) newest first and loads the first good one; `warnings` receives one line per
// checkpoint skipped as unreadable. Throws engine::Error when there is no loadable checkpoint.
TrainState load_latest_checkpoint(const std::string& dir, AdamW& optimizer, std::string* path_loaded,
                                  std::vector<std::string>* warnings);

}  // namespace engine
