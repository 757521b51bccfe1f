// Filtering stages: top-k, top-p (nucleus) and min-p. Each removes candidates and never changes
// a logit.
//
// Invariants:
//   * Survivors are always a prefix of the canonical order (logit desc, ties -> lower id), so the
//     filters compose and the argmax is never removed; at least one candidate (and at least
//     min_keep) survives whenever the input had one.
//   * top-k leaves the survivors sorted. top-p keeps a sorted input sorted, but on unsorted input
//     finds its cut by weighted quickselect and leaves the survivors unordered (sorted = false).
//     min-p keeps the incoming order (and `sorted` flag): it decides per candidate.
//   * When top-p or min-p filter, they leave p = softmax over the survivors (renormalised), so
//     last_candidates() shows the distribution the remaining stages see.
//   * Nothing sorts the whole vocabulary: top-k selects with a bounded heap or nth_element and
//     sorts only the k survivors; top-p uses a walk (sorted input) or an expected O(n) selection.
#include "sampler_internal.h"

#include <algorithm>

namespace engine {
namespace {

using namespace sampler_detail;

class TopKStage final : public SamplerStage {
 public:
  explicit TopKStage(int32_t k) : m_k(k) {}
  const char* name() const override { return "top_k"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<TopKStage>(*this); }

  void apply(Candidates& cands) override {
    const size_t n = cands.data.size();
    if (m_k <= 0 || static_cast<size_t>(m_k) >= n) return;
    const size_t k = static_cast<size_t>(m_k);
    sort_top(cands, k);
    cands.data.resize(k);
    cands.sorted = true;
    cands.selected = -1;
  }

 private:
  int32_t m_k;
};

class TopPStage final : public SamplerStage {
 public:
  TopPStage(float p, size_t min_keep) : m_p(p), m_min_keep(std::max<size_t>(min_keep, 1)) {}
  const char* name() const override { return "top_p"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<TopPStage>(*this); }

  void apply(Candidates& cands) override {
    auto& d = cands.data;
    const size_t n = d.size();
    if (m_p >= 1.0f || n <= 1) return;
    const double total = store_weights(cands, max_logit(cands));
    if (total <= 0.0) {  // every logit is -inf: nothing to rank by mass, leave it to the pick
      normalise_weights(cands, total);
      return;
    }
    const double target = (static_cast<double>(m_p) - k_prob_tolerance) * total;

    size_t keep = n;
    if (cands.sorted) {
      // Already in canonical order (e.g. after top_k): a plain cumulative walk.
      double cum = 0.0;
      for (size_t i = 0; i < n; ++i) {
        cum += d[i].p;
        if (cum >= target) {
          keep = i + 1;
          break;
        }
      }
      keep = std::min(std::max(keep, m_min_keep), n);
    } else {
      // Weighted quickselect finds the cut without sorting the nucleus, which for a flat
      // distribution over the whole vocabulary can be thousands of tokens.
      const size_t r = select_crossing(cands, target, /*strict=*/false);
      keep = r < n ? r + 1 : n;
      if (keep < m_min_keep && m_min_keep < n) {
        // data(r, n) all rank after the cut; the next best of them make up min_keep.
        std::nth_element(d.begin() + static_cast<std::ptrdiff_t>(keep),
                         d.begin() + static_cast<std::ptrdiff_t>(m_min_keep), d.end(), ranks_before);
      }
      keep = std::min(std::max(keep, m_min_keep), n);
    }
    if (keep < n) d.resize(keep);
    cands.selected = -1;  // removed or (quickselect) reordered: no earlier index stays valid
    // The max survives, so the stored weights are still relative to the survivors' max.
    double kept_total = 0.0;
    for (const Candidate& c : d) kept_total += c.p;
    normalise_weights(cands, kept_total);
  }

 private:
  float m_p;
  size_t m_min_keep;
};

class MinPStage final : public SamplerStage {
 public:
  MinPStage(float p, size_t min_keep) : m_p(p), m_min_keep(std::max<size_t>(min_keep, 1)) {}
  const char* name() const override { return "min_p"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<MinPStage>(*this); }

  void apply(Candidates& cands) override {
    const size_t n = cands.data.size();
    if (m_p <= 0.f || n <= 1) return;
    const float m = max_logit(cands);
    if (m == k_neg_inf) return;  // all banned: no p_max to be relative to

    // p_i >= min_p * p_max  <=>  exp(l_i - l_max) >= min_p: the stored weights decide it without
    // normalising, and they are reused for the survivors' p.
    store_weights(cands, m);
    const float threshold = static_cast<float>(static_cast<double>(m_p) - k_prob_tolerance);
    auto& d = cands.data;
    size_t kept = 0;
    for (const Candidate& c : d) kept += c.p >= threshold ? 1 : 0;

    if (kept >= m_min_keep) {
      if (kept < n) {
        // Stable compaction: the incoming order (sorted or not) is preserved.
        size_t out = 0;
        for (size_t i = 0; i < n; ++i) {
          if (d[i].p >= threshold) d[out++] = d[i];
        }
        d.resize(out);
        cands.selected = -1;
      }
    } else {
      // The threshold is monotone in the logit, so "at least min_keep" means the best min_keep.
      const size_t keep = std::min(m_min_keep, n);
      sort_top(cands, keep);
      d.resize(keep);
      cands.sorted = true;
      cands.selected = -1;
    }
    double kept_total = 0.0;
    for (const Candidate& c : d) kept_total += c.p;
    normalise_weights(cands, kept_total);  // p over the survivors
  }

 private:
  float m_p;
  size_t m_min_keep;
};

}  // namespace

std::unique_ptr<SamplerStage> make_top_k_stage(int32_t k) { return std::make_unique<TopKStage>(k); }

std::unique_ptr<SamplerStage> make_top_p_stage(float p, size_t min_keep) {
  return std::make_unique<TopPStage>(p, min_keep);
}

std::unique_ptr<SamplerStage> make_min_p_stage(float p, size_t min_keep) {
  return std::make_unique<MinPStage>(p, min_keep);
}

}  // namespace engine
