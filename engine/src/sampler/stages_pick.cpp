// Temperature and the two picking stages: greedy (argmax) and dist (seeded draw from the softmax).
//
// Invariants:
//   * A pick sets `selected`; it never removes candidates. Ties and all-banned lists resolve to
//     the first candidate in canonical order (logit desc, ties -> lower id), i.e. the lowest id.
//   * dist is reproducible across platforms and independent of the order earlier stages left the
//     candidates in: the uniform draw is built from the raw mt19937_64 output (the standard fixes
//     that engine's sequence, but not uniform_real_distribution's), and the cumulative walk runs
//     in canonical order. It consumes exactly one 64-bit draw per apply(), so the RNG position is
//     the number of tokens sampled, whatever the candidates looked like.
//   * dist leaves p = the softmax it drew from, for every candidate. It does not sort: on unsorted
//     input it finds the drawn candidate by weighted quickselect, which moves candidates around.
#include "sampler_internal.h"

#include <algorithm>
#include <random>

namespace engine {
namespace {

using namespace sampler_detail;

class TemperatureStage final : public SamplerStage {
 public:
  explicit TemperatureStage(float t) : m_t(t) {}
  const char* name() const override { return "temperature"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<TemperatureStage>(*this); }

  void apply(Candidates& cands) override {
    auto& d = cands.data;
    if (d.empty()) return;
    if (m_t <= 0.f) {
      // The limit t -> 0 of softmax(l / t) is the argmax, so a standalone temperature(0) followed
      // by dist behaves like greedy (from_params uses greedy directly).
      const int32_t best = best_index(cands);
      d[0] = d[static_cast<size_t>(best)];
      d.resize(1);
      cands.sorted = true;
      cands.selected = -1;
      return;
    }
    for (Candidate& c : d) c.logit /= m_t;
    // Division by t > 0 keeps the logit order, but rounding can turn a near-tie into an exact tie
    // whose canonical order (lower id first) differs; re-check rather than assume.
    if (cands.sorted) cands.sorted = std::is_sorted(d.begin(), d.end(), ranks_before);
  }

 private:
  float m_t;
};

class GreedyStage final : public SamplerStage {
 public:
  const char* name() const override { return "greedy"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<GreedyStage>(*this); }
  void apply(Candidates& cands) override { cands.selected = best_index(cands); }
};

class DistStage final : public SamplerStage {
 public:
  explicit DistStage(uint64_t seed) : m_seed(seed), m_rng(seed) {}
  const char* name() const override { return "dist"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<DistStage>(*this); }
  void reset() override { m_rng.seed(m_seed); }

  void apply(Candidates& cands) override {
    // Draw first and unconditionally: one draw per sampled token (see the file header).
    const double u = static_cast<double>(m_rng() >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    auto& d = cands.data;
    const size_t n = d.size();
    if (n == 0) {
      cands.selected = -1;
      return;
    }
    const double total = store_weights(cands, max_logit(cands));
    if (total <= 0.0) {
      normalise_weights(cands, total);
      cands.selected = best_index(cands);  // all banned: first in canonical order
      return;
    }
    const double target = u * total;
    // Strict '>' so a zero-weight (banned) candidate can never be the one that crosses.
    size_t pick = n;
    if (cands.sorted) {
      double cum = 0.0;
      for (size_t i = 0; i < n && pick == n; ++i) {
        cum += d[i].p;
        if (cum > target) pick = i;
      }
    } else {
      // Same answer as sorting and walking, in expected O(n): a full-vocabulary draw never sorts.
      pick = select_crossing(cands, target, /*strict=*/true);
    }
    if (pick == n) {
      // Only reachable through rounding (partial sums taken in another order than the total):
      // take the last-ranked candidate that has any weight.
      for (size_t i = 0; i < n; ++i) {
        if (d[i].p > 0.f && (pick == n || ranks_before(d[pick], d[i]))) pick = i;
      }
      if (pick == n) pick = static_cast<size_t>(best_index(cands));
    }
    cands.selected = static_cast<int32_t>(pick);
    normalise_weights(cands, total);
  }

 private:
  uint64_t m_seed;
  std::mt19937_64 m_rng;
};

}  // namespace

std::unique_ptr<SamplerStage> make_temperature_stage(float t) { return std::make_unique<TemperatureStage>(t); }
std::unique_ptr<SamplerStage> make_greedy_stage() { return std::make_unique<GreedyStage>(); }
std::unique_ptr<SamplerStage> make_dist_stage(uint64_t seed) { return std::make_unique<DistStage>(seed); }

}  // namespace engine
