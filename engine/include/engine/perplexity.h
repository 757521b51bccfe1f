// Perplexity of a model on a token sequence, and how far a second model's predictions are from a
// reference model's (quantization cost that is meaningful even for untrained weights).
//
// Windows: the tokens are cut into NON-OVERLAPPING windows of `ctx` tokens (the last one may be
// shorter); each window starts with an empty KV cache, and inside a window every token after the
// first is predicted from the ones before it. So n = sum over windows of (window length - 1), the
// first token of each window is never scored, and early tokens of a window see little context --
// cheaper than a sliding window (each token is processed once) and the same scheme llama-perplexity
// uses (it additionally scores only the second half of each window; we score all of it).
// A final window of a single token predicts nothing and is skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "engine/backend.h"
#include "engine/model.h"

namespace engine {

struct PerplexityResult {
  uint64_t n = 0;         // predicted tokens
  double nll = 0;         // mean negative log-likelihood (nats per token)
  double perplexity = 0;  // exp(nll)
  int windows = 0;
  // With a reference model (same vocabulary), over the same n positions:
  std::optional<double> kl_vs_reference;  // mean KL(reference || model) in nats
  std::optional<double> top1_agreement;   // fraction of positions where the argmax tokens agree
  std::optional<double> reference_perplexity;
};

// Called after each window with (windows done, windows total).
using PerplexityProgress = std::function<void(int done, int total)>;

// Throws engine::Error when ctx < 2 or exceeds a model's context, tokens are fewer than 2, a token id
// is outside a vocabulary, or the reference's vocabulary size differs from the model's.
PerplexityResult evaluate_perplexity(const Model& model, Backend& backend, std::span<const int32_t> tokens, int ctx,
                                     const Model* reference = nullptr, Backend* reference_backend = nullptr,
                                     const PerplexityProgress& progress = {});

}  // namespace engine
