// Shared test helpers for whole-model tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "engine/kv_cache.h"
#include "engine/model.h"

// Full forward of one sequence from an empty cache: (T, V) logits.
inline std::vector<float> full_logits(const engine::Model& m, engine::Backend& be, const std::vector<int32_t>& ids) {
  engine::Runner r(m, be);
  engine::KVCache cache(m.config(), static_cast<int>(ids.size()));
  engine::ForwardOptions o;
  o.all_logits = true;
  auto s = r.forward(ids, cache, o);
  return {s.begin(), s.end()};
}

inline double max_abs_diff(std::span<const float> a, std::span<const float> b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::abs(a[i] - b[i])));
  return m;
}
