// Speculative decoding: cheap drafts of the next few tokens, verified by the model in one forward step.
//
// Each step proposes up to k tokens -- sampled from a smaller draft model with the same vocabulary, or looked up
// in the text so far (prompt lookup: the tokens that followed the last earlier occurrence of the context's final
// n-gram) -- and the target model scores the pending token and all k drafts in ONE forward (k+1 positions, every
// weight read once). Draft i is accepted with probability min(1, p(d_i) / q(d_i)), p being the target's sampling
// distribution (the request's whole sampler chain: penalties, top-k/top-p/min-p, temperature) and q the draft's
// (a point mass for looked-up drafts); at the first rejection a token is drawn from the residual max(0, p - q),
// renormalised, and the step ends; when all k pass, one more token is drawn from p. This is the standard rule of
// Leviathan et al. and Chen et al. (2023): the output has exactly the target's distribution. At temperature 0
// p and q are point masses on the argmax, so the output equals plain greedy decoding token for token.
//
// The per-token logic (stop strings, end of sequence, max tokens, streaming) is GenerationState's, as for the
// Generator. Draws use a generator seeded from the request's seed, so a seeded request is reproducible.
#pragma once

#include <cstdint>
#include <span>

#include "engine/generator.h"
#include "engine/model.h"

namespace engine {

struct SpeculativeOptions {
  int draft_tokens = 4;  // k: tokens proposed per step
  int lookup_ngram = 0;  // > 0 and no draft model: prompt-lookup drafts matching the last n tokens
  void validate() const;
};

struct SpeculativeStats {
  int64_t steps = 0;     // target forwards after the prompt
  int64_t drafted = 0;   // tokens proposed
  int64_t accepted = 0;  // of those, accepted
  double acceptance_rate() const { return drafted > 0 ? double(accepted) / double(drafted) : 0.0; }
};

class SpeculativeGenerator {
 public:
  // `draft` null: prompt lookup (options.lookup_ngram must be > 0). A draft model must have the target's vocabulary
  // size. capacity <= 0: the target's context. Models and backend must outlive the generator. Throws engine::Error.
  SpeculativeGenerator(const Model& target, const Model* draft, Backend& backend, const SpeculativeOptions& options,
                       int capacity = 0);
  ~SpeculativeGenerator();

  GenerationResult generate(std::span<const int32_t> prompt, const GenerateParams& params,
                            const TokenCallback& on_token = {}, SpeculativeStats* stats = nullptr);

 private:
  const Model& m_target;
  const Model* m_draft;
  Backend& m_backend;
  SpeculativeOptions m_options;
  int m_capacity;
};

}  // namespace engine
