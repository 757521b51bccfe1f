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

// Logits of one token at a time from an empty cache (every matmul has N = 1: the decode kernels), position
// after position.
inline std::vector<float> decode_logits(const engine::Model& m, engine::Backend& be, const std::vector<int32_t>& ids) {
  engine::Runner r(m, be);
  engine::KVCache cache(m.config(), static_cast<int>(ids.size()));
  std::vector<float> out;
  for (int32_t id : ids) {
    const int32_t tok[1] = {id};
    auto s = r.forward(tok, cache);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

// max |a - b| / max |b|, the measure the quantized-model tests bound: infinite when a has a non-finite
// value or the sizes differ.
inline double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || b.empty()) return INFINITY;
  double d = 0, m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    d = std::max(d, double(std::abs(a[i] - b[i])));
    m = std::max(m, double(std::abs(b[i])));
  }
  return d / m;
}

inline double max_abs_diff(std::span<const float> a, std::span<const float> b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::abs(a[i] - b[i])));
  return m;
}

// Three sequences at different positions advanced in one Runner::forward_batch step (a 3-token chunk and two
// single-token decodes) against each advanced alone: the same logits and the same cache contents, within
// `tol` (stacked rows go through the multi-row matmul kernels, single rows through the matrix-vector ones).
// Also: refusals leave every cache as it was. Returns "" or what differed.
inline std::string batched_step_mismatch(const engine::Model& m, engine::Backend& be, double tol) {
  const int V = m.config().vocab_size;
  auto ids = [&](std::vector<int32_t> v) {
    for (int32_t& x : v) x %= V;
    return v;
  };
  const std::vector<std::vector<int32_t>> prompts = {ids({5, 77, 300, 12}), ids({9}), ids({31, 8, 100, 4, 2, 7})};
  const std::vector<std::vector<int32_t>> next = {ids({12}), ids({499, 0, 256}), ids({8})};
  engine::Runner alone(m, be), together(m, be);
  std::vector<engine::KVCache> ca, cb;
  for (size_t i = 0; i < prompts.size(); ++i) {
    ca.emplace_back(m.config(), 12);
    cb.emplace_back(m.config(), 12);
    alone.forward(prompts[i], ca[i]);
    together.forward(prompts[i], cb[i]);
  }
  std::vector<std::vector<float>> want;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto s = alone.forward(next[i], ca[i]);
    want.emplace_back(s.begin(), s.end());
  }
  std::vector<engine::SequenceStep> steps;
  for (size_t i = 0; i < prompts.size(); ++i) steps.push_back({next[i], &cb[i]});
  const auto got = together.forward_batch(steps);
  if (got.size() != prompts.size() * static_cast<size_t>(V)) return "forward_batch returned the wrong number of logits";
  for (size_t i = 0; i < prompts.size(); ++i) {
    const double d = max_abs_diff(got.subspan(i * V, V), want[i]);
    if (!(d <= tol)) return "sequence " + std::to_string(i) + ": logits differ by " + std::to_string(d);
    if (cb[i].size() != ca[i].size()) return "sequence " + std::to_string(i) + ": cache size differs";
    const size_t n = static_cast<size_t>(ca[i].size()) * ca[i].row_width();
    for (int l = 0; l < m.config().n_layer; ++l) {
      const double dk = max_abs_diff({cb[i].keys(l), n}, {ca[i].keys(l), n});
      const double dv = max_abs_diff({cb[i].values(l), n}, {ca[i].values(l), n});
      if (!(dk <= tol && dv <= tol))
        return "sequence " + std::to_string(i) + " layer " + std::to_string(l) + ": cache differs";
    }
  }
  // Refused steps write nothing: one cache given twice, or one sequence past its capacity.
  const std::vector<int32_t> one = ids({3}), many = ids({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  const int before0 = cb[0].size(), before1 = cb[1].size();
  for (const std::vector<engine::SequenceStep>& bad :
       {std::vector<engine::SequenceStep>{{one, &cb[0]}, {one, &cb[0]}},
        std::vector<engine::SequenceStep>{{one, &cb[0]}, {many, &cb[1]}}}) {
    try {
      together.forward_batch(bad);
      return "a bad batch was accepted";
    } catch (const std::exception&) {
    }
    if (cb[0].size() != before0 || cb[1].size() != before1) return "a refused batch changed a cache";
  }
  return "";
}
