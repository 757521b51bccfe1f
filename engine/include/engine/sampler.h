// Token sampling as a chain of stages (llama.cpp style).
//
// Each stage edits a candidates array (token ids with logits, optionally probabilities): penalties
// and logit bias adjust logits, top-k / top-p / min-p remove candidates, temperature scales, and the
// final stage picks one token (greedy or seeded random draw). Stages see the tokens accepted so far
// through accept(); reset() forgets them; clone() copies a stage with its state (for branching a
// generation). The same seed and the same settings always give the same tokens.
//
// Order of the default chain built from SamplerParams:
//   logit_bias -> penalties (repetition, frequency, presence over the last repeat_last_n tokens)
//   -> top_k -> top_p -> min_p -> temperature -> pick
// temperature <= 0 means greedy: the highest-logit candidate after bias and penalties (ties -> lowest id).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace engine {

struct SamplerParams {
  float temperature = 0.8f;       // <= 0: greedy
  int32_t top_k = 40;             // <= 0: off
  float top_p = 0.95f;            // >= 1: off
  float min_p = 0.05f;            // <= 0: off; keep tokens with p >= min_p * p_max
  float repeat_penalty = 1.0f;    // 1: off; divides positive logits, multiplies negative ones (CTRL paper)
  int32_t repeat_last_n = 64;     // window for all three penalties; 0: off, -1: whole history
  float frequency_penalty = 0.f;  // subtracts count * frequency_penalty (OpenAI semantics)
  float presence_penalty = 0.f;   // subtracts presence_penalty once a token appeared
  uint64_t seed = 0;
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to the logit; -inf bans a token
};

struct Candidate {
  int32_t id;
  float logit;
  float p;  // filled by stages that need probabilities (softmax of the current logits)
};

struct Candidates {
  std::vector<Candidate> data;
  bool sorted = false;    // sorted by logit, descending
  int32_t selected = -1;  // index into data, set by the final stage
  // Builds the full candidate list from raw logits.
  void reset_from_logits(std::span<const float> logits);
};

class SamplerStage {
 public:
  virtual ~SamplerStage() = default;
  virtual const char* name() const = 0;
  virtual void apply(Candidates& cands) = 0;
  virtual void accept(int32_t /*token*/) {}
  virtual void reset() {}
  virtual std::unique_ptr<SamplerStage> clone() const = 0;
};

class SamplerChain {
 public:
  static SamplerChain from_params(const SamplerParams& params);

  SamplerChain() = default;
  SamplerChain(const SamplerChain& other);
  SamplerChain& operator=(const SamplerChain& other);
  SamplerChain(SamplerChain&&) = default;
  SamplerChain& operator=(SamplerChain&&) = default;

  void add(std::unique_ptr<SamplerStage> stage);
  // Runs every stage over `logits` (length n_vocab) and returns the chosen token id.
  // Does NOT call accept(): the caller accepts the token it actually uses.
  int32_t sample(std::span<const float> logits);
  void accept(int32_t token);
  // The distribution the chain's final stage would draw from for these logits, as (id, probability) pairs
  // summing to 1: every stage but the last applied, then the softmax of what is left (a greedy chain: all mass on
  // its argmax). Changes no state (no RNG draw, no history): speculative decoding's acceptance rule needs it.
  std::vector<std::pair<int32_t, double>> distribution(std::span<const float> logits) const;
  void reset();
  const Candidates& last_candidates() const { return m_cands; }
  size_t size() const { return m_stages.size(); }

 private:
  std::vector<std::unique_ptr<SamplerStage>> m_stages;
  Candidates m_cands;
};

// Individual stages, usable on their own (and tested one by one).
std::unique_ptr<SamplerStage> make_logit_bias_stage(std::vector<std::pair<int32_t, float>> bias);
std::unique_ptr<SamplerStage> make_penalties_stage(int32_t last_n, float repeat, float frequency, float presence);
std::unique_ptr<SamplerStage> make_top_k_stage(int32_t k);
std::unique_ptr<SamplerStage> make_top_p_stage(float p, size_t min_keep = 1);
std::unique_ptr<SamplerStage> make_min_p_stage(float p, size_t min_keep = 1);
std::unique_ptr<SamplerStage> make_temperature_stage(float t);
std::unique_ptr<SamplerStage> make_greedy_stage();
std::unique_ptr<SamplerStage> make_dist_stage(uint64_t seed);  // seeded draw from softmax(logits)

// log-softmax of raw logits, in double for accuracy (used for reported logprobs).
void log_softmax(std::span<const float> logits, std::vector<float>& out);

}  // namespace engine
