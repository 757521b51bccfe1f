// Speculative decoding: drafting (a draft model or prompt lookup), one verifying forward per step, the acceptance
// rule, and the caches rolled back to what was accepted.
#include "engine/serve/speculative.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "engine/error.h"
#include "engine/generation_state.h"
#include "engine/kv_cache.h"

namespace engine {

namespace {

using Distribution = std::vector<std::pair<int32_t, double>>;

double probability_of(const Distribution& d, int32_t id) {
  for (const auto& [t, p] : d)
    if (t == id) return p;
  return 0.0;
}

// A draw from `d` with u uniform in [0, 1).
int32_t draw(const Distribution& d, double u) {
  double cum = 0;
  for (const auto& [t, p] : d) {
    cum += p;
    if (u < cum) return t;
  }
  return d.back().first;  // rounding: the sum fell just short of 1
}

// The tokens that followed the latest earlier occurrence of the last n tokens of `history`, at most k.
std::vector<int32_t> lookup_drafts(const std::vector<int32_t>& history, int n, int k) {
  const size_t H = history.size();
  if (k <= 0 || H < size_t(n) + 1) return {};
  for (size_t start = H - size_t(n); start-- > 0;) {
    if (!std::equal(history.begin() + std::ptrdiff_t(start), history.begin() + std::ptrdiff_t(start) + n,
                    history.end() - n))
      continue;
    const size_t from = start + size_t(n);
    const size_t to = std::min(H, from + size_t(k));
    return std::vector<int32_t>(history.begin() + std::ptrdiff_t(from), history.begin() + std::ptrdiff_t(to));
  }
  return {};
}

}  // namespace

void SpeculativeOptions::validate() const {
  if (draft_tokens < 1 || draft_tokens > 64)
    throw Error("speculative decoding: draft tokens must be in [1, 64], got " + std::to_string(draft_tokens));
  if (lookup_ngram < 0 || lookup_ngram > 64)
    throw Error("speculative decoding: the lookup n-gram must be in [0, 64], got " + std::to_string(lookup_ngram));
}

SpeculativeGenerator::SpeculativeGenerator(const Model& target, const Model* draft, Backend& backend,
                                           const SpeculativeOptions& options, int capacity)
    : m_target(target), m_draft(draft), m_backend(backend), m_options(options) {
  m_options.validate();
  if (!draft && options.lookup_ngram <= 0)
    throw Error("speculative decoding needs a draft model or a prompt-lookup n-gram length");
  if (draft && draft->config().vocab_size != target.config().vocab_size)
    throw Error("the draft model's vocabulary (" + std::to_string(draft->config().vocab_size) +
                " tokens) differs from the model's (" + std::to_string(target.config().vocab_size) + ")");
  m_capacity = capacity > 0 ? std::min(capacity, target.config().max_seq_len) : target.config().max_seq_len;
  if (draft) m_capacity = std::min(m_capacity, draft->config().max_seq_len);
}

SpeculativeGenerator::~SpeculativeGenerator() = default;

GenerationResult SpeculativeGenerator::generate(std::span<const int32_t> prompt, const GenerateParams& params,
                                                const TokenCallback& on_token, SpeculativeStats* stats) {
  if (prompt.empty()) throw Error("generate: the prompt is empty (no tokens)");
  if (static_cast<int>(prompt.size()) > m_capacity)
    throw Error("the prompt has " + std::to_string(prompt.size()) + " tokens but the context holds " +
                std::to_string(m_capacity));
  GenerationState state(m_target, prompt, params);
  SpeculativeStats local;
  SpeculativeStats& st = stats ? *stats : local;
  st = {};
  const size_t V = size_t(m_target.config().vocab_size);
  Runner target(m_target, m_backend);
  KVCache target_cache(m_target.config(), m_capacity);
  std::unique_ptr<Runner> draft;
  std::unique_ptr<KVCache> draft_cache;
  if (m_draft) {
    draft = std::make_unique<Runner>(*m_draft, m_backend);
    draft_cache = std::make_unique<KVCache>(m_draft->config(), m_capacity);
  }
  std::mt19937_64 rng(params.sampler.seed ^ 0x9E3779B97F4A7C15ull);
  const auto uniform = [&] { return double(rng() >> 11) * 0x1.0p-53; };

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> first;  // the prompt's last logits: the first step's p0
  {
    const std::span<const float> l = target.forward(prompt, target_cache);
    first.assign(l.begin(), l.end());
  }
  state.stats().prefill_tokens = int(prompt.size());
  state.stats().prefill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<int32_t> history(prompt.begin(), prompt.end());  // prompt + committed tokens
  std::vector<float> draft_logits;
  while (!state.done()) {
    const size_t old_len = history.size();
    const int generated = int(state.result().tokens.size());
    const int unfed = int(old_len) - target_cache.size();  // 0 at the first step, then the last committed token
    int k = std::min(m_options.draft_tokens, params.max_tokens - generated - 1);
    k = std::max(0, std::min(k, m_capacity - target_cache.size() - unfed));

    // Drafts, and the draft's distribution for each (empty: a point mass, as for looked-up tokens).
    std::vector<int32_t> drafts;
    std::vector<Distribution> q;
    if (k > 0 && draft) {
      const std::span<const int32_t> catch_up(history.data() + draft_cache->size(), old_len - size_t(draft_cache->size()));
      const std::span<const float> l = draft->forward(catch_up, *draft_cache);
      draft_logits.assign(l.begin(), l.end());
      SamplerChain chain = state.sampler();
      for (int j = 0; j < k; ++j) {
        q.push_back(chain.distribution(draft_logits));
        drafts.push_back(draw(q.back(), uniform()));
        chain.accept(drafts.back());
        if (j + 1 < k) {
          const int32_t next[1] = {drafts.back()};
          const std::span<const float> dl = draft->forward(next, *draft_cache);
          draft_logits.assign(dl.begin(), dl.end());
        }
      }
    } else if (k > 0) {
      drafts = lookup_drafts(history, m_options.lookup_ngram, k);
    }
    k = int(drafts.size());

    // One forward over the unfed token and the drafts gives p for every draft position and the one after.
    std::vector<int32_t> feed(history.begin() + target_cache.size(), history.end());
    feed.insert(feed.end(), drafts.begin(), drafts.end());
    std::span<const float> rows;
    if (!feed.empty()) {
      ForwardOptions all;
      all.all_logits = true;
      rows = target.forward(feed, target_cache, all);
    }
    ++st.steps;
    const auto row = [&](int i) -> std::span<const float> {  // the target's logits before draft i (i == k: after all)
      const int r = unfed - 1 + i;
      return r < 0 ? std::span<const float>(first) : rows.subspan(size_t(r) * V, V);
    };

    SamplerChain chain = state.sampler();
    int accepted = 0;
    bool rejected = false;
    for (int i = 0; i < k && !state.done(); ++i) {
      const Distribution p = chain.distribution(row(i));
      const double pd = probability_of(p, drafts[size_t(i)]);
      const double qd = q.empty() ? 1.0 : probability_of(q[size_t(i)], drafts[size_t(i)]);
      const bool full = int(history.size()) >= m_capacity;
      if (uniform() < std::min(1.0, qd > 0 ? pd / qd : 0.0)) {
        state.commit(drafts[size_t(i)], row(i), full, on_token);
        history.push_back(drafts[size_t(i)]);
        chain.accept(drafts[size_t(i)]);
        ++accepted;
        continue;
      }
      // Rejected: draw from the residual max(0, p - q), renormalised (p itself when nothing is left).
      Distribution residual;
      double total = 0;
      for (const auto& [t, pt] : p) {
        const double r = std::max(0.0, pt - (q.empty() ? (t == drafts[size_t(i)] ? 1.0 : 0.0)
                                                       : probability_of(q[size_t(i)], t)));
        if (r > 0) residual.push_back({t, r});
        total += r;
      }
      if (total <= 0) residual = p;
      else
        for (auto& [t, r] : residual) r /= total;
      const int32_t c = draw(residual, uniform());
      state.commit(c, row(i), full, on_token);
      history.push_back(c);
      rejected = true;
      break;
    }
    if (!rejected && !state.done()) {
      const int32_t c = draw(chain.distribution(row(k)), uniform());
      state.commit(c, row(k), int(history.size()) >= m_capacity, on_token);
      history.push_back(c);
    }
    st.drafted += k;
    st.accepted += accepted;
    // Keep what was accepted; the last committed token is fed at the next step.
    target_cache.truncate(std::min(target_cache.size(), int(old_len) + accepted));
    if (draft_cache) draft_cache->truncate(std::min(draft_cache->size(), int(old_len) + accepted));
  }
  return state.take_result();
}

}  // namespace engine
