// Candidates: building the list from raw logits, and the ordering / softmax / lookup helpers that
// every stage shares (declared in sampler_internal.h).
//
// Invariants: after reset_from_logits, data[i].id == i, p == 0, sorted == false, selected == -1,
// and no logit is NaN (NaN becomes -inf, i.e. the token is banned, so one broken logit cannot
// poison the softmax or break the strict ordering that sort / nth_element require).
#include "sampler_internal.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace engine {

void Candidates::reset_from_logits(std::span<const float> logits) {
  // resize keeps the capacity, so a chain that samples every token allocates only once.
  data.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    data[i] = Candidate{static_cast<int32_t>(i), std::isnan(l) ? sampler_detail::k_neg_inf : l, 0.f};
  }
  sorted = false;
  selected = -1;
}

namespace sampler_detail {

float max_logit(const Candidates& cands) {
  const auto& d = cands.data;
  if (d.empty()) return k_neg_inf;
  if (cands.sorted) return d.front().logit;
  // Independent accumulators: a single running max is one long dependency chain (the loop would
  // run at the latency of one compare per element); logits are never NaN, so order is irrelevant.
  float m[4] = {k_neg_inf, k_neg_inf, k_neg_inf, k_neg_inf};
  const size_t n = d.size();
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (size_t j = 0; j < 4; ++j) m[j] = d[i + j].logit > m[j] ? d[i + j].logit : m[j];
  }
  for (; i < n; ++i) m[0] = d[i].logit > m[0] ? d[i].logit : m[0];
  return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}

int32_t best_index(const Candidates& cands) {
  const auto& d = cands.data;
  if (d.empty()) return -1;
  if (cands.sorted) return 0;
  // Max first (fast, see above), then the lowest id holding it: cheaper than one pass with the
  // two-key comparison.
  const float m = max_logit(cands);
  size_t best = d.size();
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i].logit == m && (best == d.size() || d[i].id < d[best].id)) best = i;
  }
  return static_cast<int32_t>(best);
}

double store_weights(Candidates& cands, float max) {
  auto& d = cands.data;
  if (!std::isfinite(max)) {  // all banned, or +inf present: the rare paths of softmax_weight
    double total = 0.0;
    for (Candidate& c : d) {
      c.p = static_cast<float>(softmax_weight(c.logit, max));
      total += c.p;
    }
    return total;
  }
  // Finite max: exp(-inf) is 0 in IEEE arithmetic, so the hot loop needs no branch.
  const double dm = max;
  for (Candidate& c : d) c.p = static_cast<float>(std::exp(static_cast<double>(c.logit) - dm));
  // Sum the stored (rounded) values, so later partial sums over p agree with this total; four
  // accumulators break the add latency chain.
  double t[4] = {0.0, 0.0, 0.0, 0.0};
  const size_t n = d.size();
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (size_t j = 0; j < 4; ++j) t[j] += d[i + j].p;
  }
  for (; i < n; ++i) t[0] += d[i].p;
  return (t[0] + t[1]) + (t[2] + t[3]);
}

void normalise_weights(Candidates& cands, double total) {
  if (total <= 0.0) {
    for (Candidate& c : cands.data) c.p = 0.f;
    return;
  }
  const double inv = 1.0 / total;
  for (Candidate& c : cands.data) c.p = static_cast<float>(c.p * inv);
}

double softmax_in_place(Candidates& cands) {
  const double total = store_weights(cands, max_logit(cands));
  normalise_weights(cands, total);
  return total;
}

size_t sort_top(Candidates& cands, size_t k) {
  auto& d = cands.data;
  const size_t n = d.size();
  k = std::min(k, n);
  if (cands.sorted || k == 0) return k;
  const auto first = d.begin();
  const auto mid = d.begin() + static_cast<std::ptrdiff_t>(k);
  if (k == n) {
    std::sort(first, d.end(), ranks_before);
    cands.sorted = true;
    return k;
  }
  if (k <= 1024 && k * 16 <= n) {
    // Bounded heap with the worst of the best-so-far on top: a candidate that does not beat it
    // costs one comparison, which for top_k = 40 of 50k is most of them (nth_element would move
    // every element several times).
    std::make_heap(first, mid, ranks_before);
    for (auto it = mid; it != d.end(); ++it) {
      if (ranks_before(*it, *first)) {
        std::pop_heap(first, mid, ranks_before);
        std::iter_swap(mid - 1, it);  // the evicted candidate stays in the tail
        std::push_heap(first, mid, ranks_before);
      }
    }
    std::sort_heap(first, mid, ranks_before);
  } else {
    std::nth_element(first, mid, d.end(), ranks_before);
    std::sort(first, mid, ranks_before);
  }
  return k;
}

size_t select_crossing(Candidates& cands, double target, bool strict) {
  auto& d = cands.data;
  const size_t n = d.size();
  auto crosses = [&](double cum) { return strict ? cum > target : cum >= target; };
  size_t lo = 0;
  size_t hi = n;
  double before = 0.0;  // total weight of data[0, lo), all of which rank before data[lo, hi)
  // Quickselect needs about 2 log2(n) rounds on any ordinary input; past that budget the range is
  // sorted instead, so an adversarial order cannot make it quadratic.
  int budget = 2 * static_cast<int>(std::bit_width(n)) + 8;
  while (true) {
    if (hi - lo <= 32 || budget-- <= 0) {
      std::sort(d.begin() + static_cast<std::ptrdiff_t>(lo), d.begin() + static_cast<std::ptrdiff_t>(hi), ranks_before);
      double cum = before;
      for (size_t i = lo; i < hi; ++i) {
        cum += d[i].p;
        if (crosses(cum)) return i;
      }
      return n;
    }
    // Median-of-three pivot, parked at hi - 1 during a Lomuto partition of [lo, hi - 1).
    size_t a = lo, b = lo + (hi - lo) / 2, c = hi - 1;
    if (ranks_before(d[b], d[a])) std::swap(a, b);
    if (ranks_before(d[c], d[b])) std::swap(b, c);
    if (ranks_before(d[b], d[a])) std::swap(a, b);
    std::swap(d[b], d[hi - 1]);
    const Candidate pivot = d[hi - 1];
    size_t mid = lo;
    double mass = 0.0;  // weight of the candidates ranked before the pivot
    for (size_t i = lo; i + 1 < hi; ++i) {
      if (ranks_before(d[i], pivot)) {
        mass += d[i].p;
        std::swap(d[i], d[mid]);
        ++mid;
      }
    }
    std::swap(d[mid], d[hi - 1]);
    if (mid > lo && crosses(before + mass)) {
      hi = mid;  // the crossing lies among the better-ranked part
      continue;
    }
    before += mass;
    if (crosses(before + pivot.p)) return mid;
    before += pivot.p;
    lo = mid + 1;
  }
}

int32_t IdIndex::operator()(int32_t id) {
  if (id < 0) return -1;
  const auto& d = m_cands.data;
  // Ids are unique, so a hit at position `id` is the answer without any table.
  if (!m_built && static_cast<size_t>(id) < d.size() && d[static_cast<size_t>(id)].id == id) return id;
  if (!m_built) {
    int32_t max_id = -1;
    for (const Candidate& c : d) max_id = std::max(max_id, c.id);
    m_pos.assign(static_cast<size_t>(max_id + 1), -1);
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i].id >= 0) m_pos[static_cast<size_t>(d[i].id)] = static_cast<int32_t>(i);
    }
    m_built = true;
  }
  return static_cast<size_t>(id) < m_pos.size() ? m_pos[static_cast<size_t>(id)] : -1;
}

}  // namespace sampler_detail
}  // namespace engine
