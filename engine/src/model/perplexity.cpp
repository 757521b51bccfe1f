// evaluate_perplexity: see engine/perplexity.h for the windowing scheme.
//
// Log-probabilities come from log_softmax (double accumulation), so a 50k-way softmax over f32
// logits does not lose the small probabilities the mean NLL and the KL divergence depend on.
#include "engine/perplexity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/sampler.h"

namespace engine {

namespace {
size_t argmax(std::span<const float> v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}
}  // namespace

PerplexityResult evaluate_perplexity(const Model& model, Backend& backend, std::span<const int32_t> tokens, int ctx,
                                     const Model* reference, Backend* reference_backend,
                                     const PerplexityProgress& progress) {
  const ModelConfig& c = model.config();
  if (ctx < 2) throw Error("perplexity: the window (ctx) must be at least 2 tokens, got " + std::to_string(ctx));
  if (ctx > c.max_seq_len)
    throw Error("perplexity: the window of " + std::to_string(ctx) + " tokens exceeds the model's context of " +
                std::to_string(c.max_seq_len));
  if (tokens.size() < 2) throw Error("perplexity: the text gives fewer than 2 tokens; nothing to predict");
  if (reference) {
    if (!reference_backend) throw Error("perplexity: a reference model needs a backend");
    if (reference->config().vocab_size != c.vocab_size)
      throw Error("perplexity: the reference's vocabulary (" + std::to_string(reference->config().vocab_size) +
                  ") differs from the model's (" + std::to_string(c.vocab_size) + ")");
    if (ctx > reference->config().max_seq_len)
      throw Error("perplexity: the window of " + std::to_string(ctx) + " tokens exceeds the reference's context of " +
                  std::to_string(reference->config().max_seq_len));
  }
  for (int32_t t : tokens)
    if (t < 0 || t >= c.vocab_size)
      throw Error("perplexity: token id " + std::to_string(t) + " is outside the vocabulary");

  const size_t V = static_cast<size_t>(c.vocab_size);
  const size_t W = static_cast<size_t>(ctx);
  const int total = static_cast<int>((tokens.size() + W - 1) / W);
  Runner runner(model, backend);
  KVCache cache(c, ctx);
  std::optional<Runner> ref_runner;
  std::optional<KVCache> ref_cache;
  if (reference) {
    ref_runner.emplace(*reference, *reference_backend);
    ref_cache.emplace(reference->config(), ctx);
  }
  ForwardOptions fo;
  fo.all_logits = true;
  PerplexityResult r;
  double nll_sum = 0, kl_sum = 0, ref_nll_sum = 0;
  uint64_t agree = 0;
  std::vector<float> lp, ref_lp, ref_logits;
  int done = 0;
  for (size_t begin = 0; begin < tokens.size(); begin += W) {
    const size_t len = std::min(W, tokens.size() - begin);
    if (len >= 2) {
      const std::span<const int32_t> window = tokens.subspan(begin, len);
      cache.clear();
      const std::span<const float> logits = runner.forward(window, cache, fo);
      if (reference) {
        ref_cache->clear();
        const std::span<const float> rl = ref_runner->forward(window, *ref_cache, fo);
        ref_logits.assign(rl.begin(), rl.end());  // the runner's buffer is reused by the next forward
      }
      for (size_t i = 0; i + 1 < len; ++i) {
        const std::span<const float> row = logits.subspan(i * V, V);
        log_softmax(row, lp);
        nll_sum -= lp[static_cast<size_t>(window[i + 1])];
        if (reference) {
          const std::span<const float> rrow(ref_logits.data() + i * V, V);
          log_softmax(rrow, ref_lp);
          ref_nll_sum -= ref_lp[static_cast<size_t>(window[i + 1])];
          double kl = 0;
          for (size_t v = 0; v < V; ++v) kl += std::exp(double(ref_lp[v])) * (double(ref_lp[v]) - double(lp[v]));
          kl_sum += std::max(0.0, kl);  // rounding can give a tiny negative value for identical rows
          if (argmax(row) == argmax(rrow)) ++agree;
        }
        ++r.n;
      }
      ++r.windows;
    }
    ++done;
    if (progress) progress(done, total);
  }
  r.nll = nll_sum / static_cast<double>(r.n);
  r.perplexity = std::exp(r.nll);
  if (reference) {
    r.kl_vs_reference = kl_sum / static_cast<double>(r.n);
    r.top1_agreement = static_cast<double>(agree) / static_cast<double>(r.n);
    r.reference_perplexity = std::exp(ref_nll_sum / static_cast<double>(r.n));
  }
  return r;
}

}  // namespace engine
