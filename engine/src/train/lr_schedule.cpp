// Learning-rate schedules: see engine/train/lr_schedule.h for the formulas.
#include "engine/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/error.h"

namespace engine {

void LrSchedule::validate() const {
  auto fail = [](const std::string& m) { throw Error("learning-rate schedule: " + m); };
  if (!(base_lr >= 0.0f && std::isfinite(base_lr))) fail("the learning rate must be a finite number >= 0");
  if (warmup_steps < 0) fail("warmup steps must be >= 0");
  if (total_steps < 1) fail("total steps must be >= 1");
  if (!(min_lr_ratio >= 0.0f && min_lr_ratio <= 1.0f)) fail("the minimum lr ratio must be in [0, 1]");
  if (step_size < 1) fail("the step size of the step schedule must be >= 1");
  if (!(gamma > 0.0f && gamma <= 1.0f)) fail("gamma of the step schedule must be in (0, 1]");
}

float lr_at(const LrSchedule& s, int step) {
  if (step < 0) step = 0;
  if (step < s.warmup_steps) return static_cast<float>(double(s.base_lr) * double(step) / double(s.warmup_steps));
  double factor = 1.0;
  const double progress =
      std::clamp(double(step - s.warmup_steps) / double(std::max(1, s.total_steps - s.warmup_steps)), 0.0, 1.0);
  const double floor = s.min_lr_ratio;
  switch (s.kind) {
    case LrScheduleKind::Constant: break;
    case LrScheduleKind::Cosine:
      factor = floor + (1.0 - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
      break;
    case LrScheduleKind::Linear: factor = floor + (1.0 - floor) * (1.0 - progress); break;
    case LrScheduleKind::Step: factor = std::pow(double(s.gamma), double((step - s.warmup_steps) / s.step_size)); break;
  }
  return static_cast<float>(double(s.base_lr) * factor);
}

std::optional<LrScheduleKind> lr_schedule_from_name(const std::string& name) {
  if (name == "constant") return LrScheduleKind::Constant;
  if (name == "cosine") return LrScheduleKind::Cosine;
  if (name == "linear") return LrScheduleKind::Linear;
  if (name == "step") return LrScheduleKind::Step;
  return std::nullopt;
}

const char* lr_schedule_name(LrScheduleKind kind) {
  switch (kind) {
    case LrScheduleKind::Constant: return "constant";
    case LrScheduleKind::Cosine: return "cosine";
    case LrScheduleKind::Linear: return "linear";
    case LrScheduleKind::Step: return "step";
  }
  return "constant";
}

}  // namespace engine
