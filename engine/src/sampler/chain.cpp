// SamplerChain: runs its stages in order over one candidates list and returns the picked token;
// from_params builds the default chain documented in sampler.h.
//
// Invariants: a chain owns its stages exclusively, so copying deep-clones every stage (with its
// history and RNG state) and a copy samples exactly as the original would from then on. The
// candidates buffer is reused across calls so steady-state sampling does not allocate.
#include "sampler_internal.h"

#include "engine/error.h"

#include <string>
#include <utility>

namespace engine {

SamplerChain SamplerChain::from_params(const SamplerParams& params) {
  SamplerChain chain;
  if (!params.logit_bias.empty()) chain.add(make_logit_bias_stage(params.logit_bias));
  // An inactive penalties stage would only cost a history update per token; leave it out.
  const bool penalties_active =
      params.repeat_last_n != 0 &&
      (params.repeat_penalty != 1.0f || params.frequency_penalty != 0.f || params.presence_penalty != 0.f);
  if (penalties_active) {
    chain.add(make_penalties_stage(params.repeat_last_n, params.repeat_penalty, params.frequency_penalty,
                                   params.presence_penalty));
  }
  if (params.temperature <= 0.f) {
    // Greedy: top-k / top-p / min-p never remove the argmax and temperature does not move it, so
    // they are skipped; bias and penalties above do change the argmax and stay.
    chain.add(make_greedy_stage());
    return chain;
  }
  if (params.top_k > 0) chain.add(make_top_k_stage(params.top_k));
  if (params.top_p < 1.0f) chain.add(make_top_p_stage(params.top_p));
  if (params.min_p > 0.f) chain.add(make_min_p_stage(params.min_p));
  if (params.temperature != 1.0f) chain.add(make_temperature_stage(params.temperature));
  chain.add(make_dist_stage(params.seed));
  return chain;
}

SamplerChain::SamplerChain(const SamplerChain& other) : m_cands(other.m_cands) {
  m_stages.reserve(other.m_stages.size());
  for (const auto& stage : other.m_stages) m_stages.push_back(stage->clone());
}

SamplerChain& SamplerChain::operator=(const SamplerChain& other) {
  if (this != &other) {
    SamplerChain copy(other);  // clone first so a throwing clone leaves *this untouched
    *this = std::move(copy);
  }
  return *this;
}

void SamplerChain::add(std::unique_ptr<SamplerStage> stage) {
  if (!stage) throw Error("SamplerChain::add: null stage");
  m_stages.push_back(std::move(stage));
}

int32_t SamplerChain::sample(std::span<const float> logits) {
  if (m_stages.empty()) throw Error("SamplerChain::sample: the chain has no stages");
  if (logits.empty()) throw Error("SamplerChain::sample: empty logits (n_vocab = 0)");
  m_cands.reset_from_logits(logits);
  for (const auto& stage : m_stages) stage->apply(m_cands);
  const int32_t sel = m_cands.selected;
  if (sel < 0 || static_cast<size_t>(sel) >= m_cands.data.size()) {
    throw Error(
        "SamplerChain::sample: no stage selected a token (the chain needs a greedy or dist stage "
        "last; last stage is '" +
        std::string(m_stages.back()->name()) + "')");
  }
  return m_cands.data[static_cast<size_t>(sel)].id;
}

std::vector<std::pair<int32_t, double>> SamplerChain::distribution(std::span<const float> logits) const {
  if (m_stages.empty()) throw Error("SamplerChain::distribution: the chain has no stages");
  if (logits.empty()) throw Error("SamplerChain::distribution: empty logits (n_vocab = 0)");
  // Stages keep state (a draw counter, penalties' history): run clones so this chain stays as it is.
  Candidates cands;
  cands.reset_from_logits(logits);
  for (size_t i = 0; i + 1 < m_stages.size(); ++i) m_stages[i]->clone()->apply(cands);
  std::vector<std::pair<int32_t, double>> out;
  if (cands.data.empty()) return out;
  if (std::string(m_stages.back()->name()) == "greedy") {
    out.push_back({cands.data[size_t(sampler_detail::best_index(cands))].id, 1.0});
    return out;
  }
  const double total = sampler_detail::softmax_in_place(cands);
  if (total <= 0.0) {  // everything banned: the dist stage falls back to the first candidate in canonical order
    out.push_back({cands.data[size_t(sampler_detail::best_index(cands))].id, 1.0});
    return out;
  }
  out.reserve(cands.data.size());
  for (const Candidate& c : cands.data)
    if (c.p > 0.f) out.push_back({c.id, double(c.p)});
  double sum = 0;
  for (const auto& [id, p] : out) sum += p;
  for (auto& [id, p] : out) p /= sum;
  return out;
}

void SamplerChain::accept(int32_t token) {
  for (const auto& stage : m_stages) stage->accept(token);
}

void SamplerChain::reset() {
  for (const auto& stage : m_stages) stage->reset();
}

}  // namespace engine
