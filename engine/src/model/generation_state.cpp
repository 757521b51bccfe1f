// GenerationState: sampling, end conditions, stop strings and streaming hold-back for one sequence.
#include "engine/generation_state.h"

#include <algorithm>

#include "engine/error.h"
#include "engine/inspect/top_k.h"

namespace engine {

GenerationState::GenerationState(const Model& model, std::span<const int32_t> prompt, const GenerateParams& params)
    : m_model(model), m_params(params), m_start(Clock::now()), m_first_token(m_start) {
  if (params.max_tokens < 0) throw Error("max_tokens must be >= 0");
  const int V = model.config().vocab_size;
  for (const auto& [id, bias] : params.sampler.logit_bias)
    if (id < 0 || id >= V) throw Error("logit bias names token " + std::to_string(id) + ", outside the vocabulary");
  m_sampler = SamplerChain::from_params(params.sampler);
  for (int32_t t : prompt) m_sampler.accept(t);
  if (const Tokenizer* tok = model.tokenizer()) m_eos = tok->eos_id();
  m_result.stats.prompt_tokens = static_cast<int>(prompt.size());
}

std::optional<int32_t> GenerationState::advance(std::span<const float> logits, bool cache_full,
                                                const TokenCallback& on_token) {
  if (m_done) return std::nullopt;
  if (static_cast<int>(m_result.tokens.size()) >= m_params.max_tokens) {  // max_tokens 0: the prompt only
    finish(FinishReason::Length, on_token);
    return std::nullopt;
  }
  return commit(m_sampler.sample(logits), logits, cache_full, on_token);
}

std::optional<int32_t> GenerationState::commit(int32_t id, std::span<const float> logits, bool cache_full,
                                               const TokenCallback& on_token) {
  if (m_done) return std::nullopt;
  GenerationStats& st = m_result.stats;
  const int i = static_cast<int>(m_result.tokens.size());
  if (i >= m_params.max_tokens) {
    finish(FinishReason::Length, on_token);
    return std::nullopt;
  }
  if (id < 0 || static_cast<size_t>(id) >= logits.size())
    throw Error("generation: token " + std::to_string(id) + " is outside the vocabulary");
  GeneratedToken gt;
  gt.id = id;
  log_softmax(logits, m_logprobs);
  gt.logprob = m_logprobs[size_t(id)];
  if (m_params.top_logprobs > 0)
    for (const int32_t j : top_k_indices(m_logprobs, m_params.top_logprobs)) gt.top.push_back({j, m_logprobs[size_t(j)]});
  if (i == 0) {
    m_first_token = Clock::now();
    st.time_to_first_token_ms = std::chrono::duration<double, std::milli>(m_first_token - m_start).count();
  }
  if (m_params.stop_at_eos && m_eos && id == *m_eos) {
    finish(FinishReason::Eos, on_token);
    return std::nullopt;
  }
  const Tokenizer* tok = m_model.tokenizer();
  gt.bytes = tok ? tok->token_bytes(id) : std::string();
  m_sampler.accept(id);
  m_full += gt.bytes;
  ++st.generated_tokens;

  // A stop string may end inside this token: cut the text before the earliest one and finish. (Nothing before
  // m_emitted can start a stop string: that text was held back otherwise.)
  size_t cut = std::string::npos;
  for (const std::string& s : m_params.stop) {
    if (s.empty()) continue;
    cut = std::min(cut, m_full.find(s, m_emitted));
  }
  const bool stopped = cut != std::string::npos;
  if (stopped) m_full.resize(cut);
  const size_t safe = stopped ? m_full.size() : stream_safe_length(m_full, m_params.stop);
  const std::string fresh = safe > m_emitted ? m_full.substr(m_emitted, safe - m_emitted) : std::string();
  m_emitted = std::max(m_emitted, safe);
  m_result.tokens.push_back(std::move(gt));
  const bool keep_going = on_token ? on_token(m_result.tokens.back(), fresh) : true;
  if (stopped) {
    finish(FinishReason::Stop, on_token);
    return std::nullopt;
  }
  if (!keep_going) {
    finish(FinishReason::Cancelled, on_token);
    return std::nullopt;
  }
  if (i + 1 == m_params.max_tokens) {  // no need to compute logits that would not be used
    finish(FinishReason::Length, on_token);
    return std::nullopt;
  }
  if (cache_full) {
    finish(FinishReason::ContextFull, on_token);
    return std::nullopt;
  }
  ++st.decode_steps;
  return id;
}

void GenerationState::cancel(const TokenCallback& on_token) {
  if (!m_done) finish(FinishReason::Cancelled, on_token);
}

void GenerationState::finish(FinishReason reason, const TokenCallback& on_token) {
  m_done = true;
  m_result.finish = reason;
  if (!m_result.tokens.empty())
    m_result.stats.decode_seconds = std::chrono::duration<double>(Clock::now() - m_first_token).count();
  // Whatever was held back (a partial stop-string prefix) is final text now; the caller has seen every token, so
  // it comes as a flush event (id -1).
  if (on_token && m_emitted < m_full.size() && !m_result.tokens.empty() && reason != FinishReason::Stop)
    on_token(GeneratedToken{}, m_full.substr(m_emitted));
  m_emitted = m_full.size();
  m_result.text = m_full;
}

}  // namespace engine
