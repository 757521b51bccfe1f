// Text generation: prefill the prompt, then decode one token at a time through the KV cache.
//
// A Generator owns one sequence's KV cache and keeps it between calls: when the next prompt starts
// with the tokens already in the cache (a chat growing turn by turn, a regenerate), only the new
// suffix is prefilled. Each generated token is reported through a callback that can stop the run;
// the caller's stop flag is checked once per token, so Stop takes effect within one token.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/sampler.h"

namespace engine {

struct GenerateParams {
  int max_tokens = 256;
  SamplerParams sampler;
  std::vector<std::string> stop;  // stop strings: generation ends before the first one that appears
  int top_logprobs = 0;           // report this many alternatives per generated token
  bool stop_at_eos = true;
};

struct TokenLogprob {
  int32_t id;
  float logprob;  // log-softmax of the raw logits, before any sampling transform
};

struct GeneratedToken {
  int32_t id = -1;
  std::string bytes;  // the token's raw bytes (may be a partial UTF-8 character)
  float logprob = 0.f;
  std::vector<TokenLogprob> top;  // the top_logprobs most likely tokens at this position
};

enum class FinishReason { Length, Eos, Stop, Cancelled, ContextFull };
const char* finish_reason_name(FinishReason r);

struct GenerationStats {
  int prompt_tokens = 0;
  int prefill_tokens = 0;  // prompt tokens actually computed (the rest came from the cache)
  int generated_tokens = 0;
  int decode_steps = 0;                            // single-token forwards run after the prefill
  double prefill_seconds = 0, decode_seconds = 0;  // decode: from the first token to the end
  double time_to_first_token_ms = 0;
  double prefill_tokens_per_s() const { return prefill_seconds > 0 ? prefill_tokens / prefill_seconds : 0; }
  // Decode speed counts the single-token forwards (the first token comes from the prefill logits).
  double decode_tokens_per_s() const {
    return decode_seconds > 0 && decode_steps > 0 ? decode_steps / decode_seconds : 0;
  }
};

struct GenerationResult {
  std::vector<GeneratedToken> tokens;
  std::string text;  // decoded text, cut before a stop string
  FinishReason finish = FinishReason::Length;
  GenerationStats stats;
};

// Called for each token with the text that became final (safe to show: complete UTF-8, not part of
// a possible stop string). Return false to stop. After the last token, text that was held back as a
// possible stop-string prefix arrives in one final call whose token has id -1.
using TokenCallback = std::function<bool(const GeneratedToken& token, const std::string& new_text)>;

class Generator {
 public:
  // capacity <= 0: the model's full context length.
  Generator(const Model& model, Backend& backend, int capacity = 0);

  GenerationResult generate(std::span<const int32_t> prompt, const GenerateParams& params,
                            const TokenCallback& on_token = {});

  // Forgets the cached prefix.
  void reset() {
    m_cache.clear();
    m_cached.clear();
  }
  int capacity() const { return m_cache.capacity(); }
  Runner& runner() { return m_runner; }

 private:
  const Model& m_model;
  Runner m_runner;
  KVCache m_cache;
  std::vector<int32_t> m_cached;  // the tokens whose keys/values are in m_cache
};

// Length of the longest prefix of `text` that is safe to emit while streaming: complete UTF-8
// characters that cannot be the start of any stop string.
size_t stream_safe_length(const std::string& text, const std::vector<std::string>& stop);

}  // namespace engine
