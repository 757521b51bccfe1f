// Helpers shared by the sampler stages (private to engine/src/sampler/).
//
// Invariants every stage relies on:
//   * The canonical candidate order is "logit descending, ties -> lower id first" (ranks_before).
//     Ids are unique, so this is a strict total order and every sort / nth_element result is
//     deterministic whatever order the candidates arrived in.
//   * Logits are never NaN: reset_from_logits maps NaN to -inf, and the stages only divide,
//     multiply and subtract finite settings, so the order above stays a strict weak order.
//   * Softmax weights are exp(logit - max) computed in double (stored in p as float while a stage
//     works, summed in double); -inf gets weight 0; when the max is +inf the +inf candidates
//     share the mass equally (a +inf bias forces a token).
//   * A stage that removes or reorders candidates sets `selected = -1`, so a stale index from an
//     earlier pick can never survive into SamplerChain::sample's result.
#pragma once

#include "engine/sampler.h"

#include <cmath>
#include <cstddef>
#include <limits>

namespace engine::sampler_detail {

// Probabilities derived from float logits carry ~1e-7 relative noise, so a threshold that a user
// sets "exactly" on a cumulative or relative probability (top_p = 0.9 over p = {0.6, 0.3, 0.1})
// would otherwise flip on rounding. Threshold comparisons allow this much slack.
inline constexpr double k_prob_tolerance = 1e-6;

inline constexpr float k_neg_inf = -std::numeric_limits<float>::infinity();

// Canonical order: higher logit first, ties -> lower id first.
// Written without branches: partitions and heaps over random logits would mispredict half of them.
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  return (a.logit > b.logit) | ((a.logit == b.logit) & (a.id < b.id));
}

// Largest logit (k_neg_inf for an empty list). O(1) when sorted.
float max_logit(const Candidates& cands);

// Index of the candidate ranked first (greedy's choice; lowest id among ties). -1 when empty.
int32_t best_index(const Candidates& cands);

// Unnormalised softmax weight of `logit` given the list's max logit `max`.
inline double softmax_weight(float logit, float max) {
  if (max == std::numeric_limits<float>::infinity()) return logit == max ? 1.0 : 0.0;
  if (logit == k_neg_inf) return 0.0;
  return std::exp(static_cast<double>(logit) - static_cast<double>(max));
}

// Stores each candidate's unnormalised weight softmax_weight(logit, max) in its p (as float, so
// the weights travel with the candidates through partitions) and returns their sum in double.
double store_weights(Candidates& cands, float max);

// Divides every p by `total` (all p = 0 when total is 0: every candidate is banned).
void normalise_weights(Candidates& cands, double total);

// Fills every p with the softmax of the current logits; returns the total weight (0 when every
// logit is -inf, in which case every p is 0).
double softmax_in_place(Candidates& cands);

// Makes data[0, k) the k best candidates in canonical order; the rest stay in data[k, n) in no
// particular order. Small k use a bounded heap (one comparison per candidate that does not make
// the cut), larger ones nth_element: O(n) plus O(k log k), a full sort only when k reaches n
// (then `sorted` is set). Returns min(k, n).
size_t sort_top(Candidates& cands, size_t k);

// Weighted selection (top-p cut, dist draw) without sorting. Requires p = weights (store_weights).
// Finds the first candidate c in canonical order whose cumulative weight (c included) is
// >= target (or > target with strict, so zero-weight candidates never qualify), and rearranges
// data so that data[0, r) are exactly the candidates ranked before c (in no particular order),
// data[r] = c, and data(r, n) rank after c. Returns r, or n (order unspecified) if the
// cumulative weight never gets there, which only rounding can cause. Expected O(n).
size_t select_crossing(Candidates& cands, double target, bool strict);

// Id -> index lookup for bias / penalties: tries the O(1) id-order position first and builds an id -> index
// table (once, on the first miss) only when the candidates have been reordered or filtered, so the
// common case (bias / penalties first in the chain) costs nothing extra.
class IdIndex {
 public:
  explicit IdIndex(const Candidates& cands) : m_cands(cands) {}
  int32_t operator()(int32_t id);

 private:
  const Candidates& m_cands;
  bool m_built = false;
  std::vector<int32_t> m_pos;  // id -> index, -1 for absent ids; only valid when m_built
};

}  // namespace engine::sampler_detail
