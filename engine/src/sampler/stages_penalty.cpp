// Logit-adjusting stages that look at ids rather than at the distribution: logit bias, and the
// repetition / frequency / presence penalties over recently accepted tokens.
//
// Invariants:
//   * Neither stage removes or reorders candidates; they only edit logits, and they clear
//     `sorted` when they edited anything (an edit can change the order).
//   * Ids the list does not contain (out of range, or already filtered out) are ignored: settings
//     are validated upstream, and a sampler must not fail a generation over a stale bias entry.
//   * The penalties' window counts are kept incrementally on accept(), so apply() costs
//     O(distinct tokens in the window), independent of the vocabulary size.
#include "sampler_internal.h"

#include <cmath>
#include <deque>
#include <unordered_map>
#include <utility>

namespace engine {
namespace {

using namespace sampler_detail;

class LogitBiasStage final : public SamplerStage {
 public:
  explicit LogitBiasStage(std::vector<std::pair<int32_t, float>> bias) : m_bias(std::move(bias)) {}
  const char* name() const override { return "logit_bias"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<LogitBiasStage>(*this); }

  void apply(Candidates& cands) override {
    IdIndex index(cands);
    bool changed = false;
    for (const auto& [id, bias] : m_bias) {
      const int32_t i = index(id);
      if (i < 0) continue;
      // Adding -inf bans the token (it keeps weight 0 in every softmax); a NaN bias would poison
      // the ordering, so it is ignored like any other invalid entry.
      if (std::isnan(bias)) continue;
      cands.data[static_cast<size_t>(i)].logit += bias;
      changed = true;
    }
    if (changed) cands.sorted = false;
  }

 private:
  std::vector<std::pair<int32_t, float>> m_bias;  // entries for the same id add up
};

class PenaltiesStage final : public SamplerStage {
 public:
  PenaltiesStage(int32_t last_n, float repeat, float frequency, float presence)
      : m_last_n(last_n), m_repeat(repeat), m_frequency(frequency), m_presence(presence) {}
  const char* name() const override { return "penalties"; }
  std::unique_ptr<SamplerStage> clone() const override { return std::make_unique<PenaltiesStage>(*this); }

  void apply(Candidates& cands) override {
    if (!active() || m_counts.empty()) return;
    IdIndex index(cands);
    bool changed = false;
    // Each distinct token is edited independently, so the map's iteration order does not matter.
    for (const auto& [token, count] : m_counts) {
      const int32_t i = index(token);
      if (i < 0) continue;
      float& logit = cands.data[static_cast<size_t>(i)].logit;
      // CTRL-style repetition penalty: shrink towards "less likely" whatever the sign, once per
      // distinct token (not per occurrence; frequency covers counts).
      if (m_repeat != 1.0f) logit = logit > 0.f ? logit / m_repeat : logit * m_repeat;
      logit -= static_cast<float>(count) * m_frequency + (count > 0 ? m_presence : 0.f);
      changed = true;
    }
    if (changed) cands.sorted = false;
  }

  void accept(int32_t token) override {
    if (m_last_n == 0) return;  // window of zero tokens: nothing to remember
    ++m_counts[token];
    if (m_last_n < 0) return;  // whole history: counts alone suffice, nothing ever leaves
    m_window.push_back(token);
    if (m_window.size() > static_cast<size_t>(m_last_n)) {
      const int32_t old = m_window.front();
      m_window.pop_front();
      auto it = m_counts.find(old);
      if (--it->second == 0) m_counts.erase(it);
    }
  }

  void reset() override {
    m_window.clear();
    m_counts.clear();
  }

 private:
  bool active() const { return m_last_n != 0 && (m_repeat != 1.0f || m_frequency != 0.f || m_presence != 0.f); }

  int32_t m_last_n;  // 0: off, -1: whole history, else the last m_last_n accepted tokens
  float m_repeat;
  float m_frequency;
  float m_presence;
  std::deque<int32_t> m_window;                   // last_n > 0: accepted tokens inside the window
  std::unordered_map<int32_t, int32_t> m_counts;  // token -> occurrences in the window (never 0)
};

}  // namespace

std::unique_ptr<SamplerStage> make_logit_bias_stage(std::vector<std::pair<int32_t, float>> bias) {
  return std::make_unique<LogitBiasStage>(std::move(bias));
}

std::unique_ptr<SamplerStage> make_penalties_stage(int32_t last_n, float repeat, float frequency, float presence) {
  return std::make_unique<PenaltiesStage>(last_n, repeat, frequency, presence);
}

}  // namespace engine
