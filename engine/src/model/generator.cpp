// Generator: prefix reuse, prefill and the decode loop (per-token logic: GenerationState); stream_safe_length.
#include "engine/generator.h"

#include <algorithm>
#include <chrono>

#include "engine/error.h"
#include "engine/generation_state.h"

namespace engine {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::Length: return "length";
    case FinishReason::Eos: return "eos";
    case FinishReason::Stop: return "stop";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::ContextFull: return "context_full";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Bytes at the end of `s` that form an incomplete (but so far valid-looking) UTF-8 sequence.
size_t incomplete_utf8_tail(const std::string& s) {
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const unsigned char c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = 0;
    if ((c & 0xE0) == 0xC0) need = 2;
    else if ((c & 0xF0) == 0xE0) need = 3;
    else if ((c & 0xF8) == 0xF0) need = 4;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

size_t stream_safe_length(const std::string& text, const std::vector<std::string>& stop) {
  size_t safe = text.size() - incomplete_utf8_tail(text);
  // Hold back the longest suffix that is a proper prefix of some stop string.
  for (const std::string& s : stop) {
    if (s.empty()) continue;
    const size_t max_k = std::min(s.size() - 1, text.size());
    for (size_t k = max_k; k > 0; --k) {
      if (text.compare(text.size() - k, k, s, 0, k) == 0) {
        safe = std::min(safe, text.size() - k);
        break;
      }
    }
  }
  return safe;
}

Generator::Generator(const Model& model, Backend& backend, int capacity)
    : m_model(model),
      m_runner(model, backend),
      m_cache(model.config(), capacity > 0 ? capacity : model.config().max_seq_len) {}

GenerationResult Generator::generate(std::span<const int32_t> prompt, const GenerateParams& params,
                                     const TokenCallback& on_token) {
  if (prompt.empty()) throw Error("generate: the prompt is empty (no tokens)");
  if (static_cast<int>(prompt.size()) > m_cache.capacity())
    throw Error("the prompt has " + std::to_string(prompt.size()) + " tokens but the context holds " +
                std::to_string(m_cache.capacity()));
  GenerationState state(m_model, prompt, params);

  // Reuse the cached prefix; always recompute at least the last prompt token to get its logits.
  size_t common = 0;
  while (common < m_cached.size() && common < prompt.size() && m_cached[common] == prompt[common]) ++common;
  if (common == prompt.size()) --common;
  m_cache.truncate(static_cast<int>(common));
  m_cached.resize(common);

  const auto t0 = Clock::now();
  std::span<const float> logits = m_runner.forward(prompt.subspan(common), m_cache);
  m_cached.insert(m_cached.end(), prompt.begin() + common, prompt.end());
  state.stats().prefill_tokens = static_cast<int>(prompt.size() - common);
  state.stats().prefill_seconds = seconds_since(t0);

  while (const std::optional<int32_t> next = state.advance(logits, m_cache.size() >= m_cache.capacity(), on_token)) {
    const int32_t token[1] = {*next};
    logits = m_runner.forward(token, m_cache);
    m_cached.push_back(*next);
  }
  return state.take_result();
}

}  // namespace engine
