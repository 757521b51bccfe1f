// Learning-rate schedules, as functions of the step number (0-based: the step about to be taken).
//
// Every schedule is  lr(step) = base_lr * factor(step)  with a linear warmup first:
//   step < warmup:  factor = step / warmup        (so step 0 trains with lr 0, as Hugging Face's
//                                                  get_*_schedule_with_warmup do)
// and after the warmup, with progress p = (step - warmup) / max(1, total - warmup) clamped to [0, 1]:
//   constant:  1
//   cosine:    min_ratio + (1 - min_ratio) * 0.5 * (1 + cos(pi * p))   (HF cosine_with_min_lr)
//   linear:    min_ratio + (1 - min_ratio) * (1 - p)                   (HF linear when min_ratio = 0)
//   step:      gamma ^ floor((step - warmup) / step_size)               (torch StepLR after the warmup)
// Pure functions of their arguments, so resuming at step k gives exactly the rate of an uninterrupted run.
#pragma once

#include <optional>
#include <string>

namespace engine {

enum class LrScheduleKind { Constant, Cosine, Linear, Step };

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  float base_lr = 1e-3f;
  int warmup_steps = 0;
  int total_steps = 1;        // cosine / linear reach their floor here
  float min_lr_ratio = 0.0f;  // cosine / linear: the final lr as a fraction of base_lr
  int step_size = 1;          // step: decay every step_size steps after the warmup
  float gamma = 0.1f;         // step: multiply by gamma at each decay

  // Throws engine::Error naming the first value out of range.
  void validate() const;
};

float lr_at(const LrSchedule& schedule, int step);

// "constant", "cosine", "linear", "step"; nullopt for anything else.
std::optional<LrScheduleKind> lr_schedule_from_name(const std::string& name);
const char* lr_schedule_name(LrScheduleKind kind);

}  // namespace engine
