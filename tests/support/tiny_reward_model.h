// A tiny reward model folder for tests: the tiny GPT-2 of tiny_text_model.h with a seeded random scalar
// head, saved as `train --recipe reward` saves one (engine::save_reward_head). Its rewards mean nothing,
// but they are the engine's: deterministic, and different for different texts.
#pragma once

#include <QString>

#include <random>
#include <vector>

#include "engine/align/reward_model.h"
#include "support/tiny_text_model.h"

inline void writeTinyRewardModel(const QString& dir, uint64_t seed, int context) {
  writeTinyTextModel(dir, seed, context);
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> head(32);
  for (float& w : head) w = normal(rng);
  engine::save_reward_head(dir.toStdString(), head, "chatml");
}
