// Runner: inference over KV caches. One step processes T new tokens of a sequence at positions P..P+T-1
// (P = its cache's size): prefill is one step with T = prompt length, decode is T = 1; forward_batch runs
// one step of several sequences together. The transformer itself is block.h's, shared with training; what
// is Runner's own is the scratch of a step, reused from step to step (one set of layer activations for
// every layer, the residual stream updated in place), and the captures the inspector asks for.
#include <algorithm>
#include <vector>

#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "model/block.h"

namespace engine {

Runner::Runner(const Model& model, Backend& backend) : m_model(model), m_backend(backend) {}
Runner::~Runner() = default;

const block::Weights& Runner::weights() {
  if (!m_weights) m_weights = std::make_unique<block::Weights>(block::bind(m_model, /*grads=*/nullptr, nullptr));
  return *m_weights;
}

void Runner::ensure_scratch(int T) {
  if (T <= m_scratch_T) return;
  const ModelConfig& c = m_model.config();
  const size_t TC = static_cast<size_t>(T) * c.n_embd;
  m_residual.resize(TC);
  m_ln.resize(TC);
  m_qkv.resize(TC * 3);  // GPT-2's fused rows, or Llama's q then k then v (KVW <= C)
  m_atty.resize(TC);
  m_proj.resize(TC);
  m_fch.resize(static_cast<size_t>(T) * c.ffn_dim);
  m_fch_gelu.resize(static_cast<size_t>(T) * c.ffn_dim);
  m_scratch_T = T;
}

void Runner::check_step(std::span<const int32_t> tokens, const KVCache& cache) const {
  const ModelConfig& c = m_model.config();
  const int64_t T = static_cast<int64_t>(tokens.size());
  const int P = cache.size();
  if (T == 0) throw Error("forward: no tokens");
  if (cache.row_width() != c.kv_width() || cache.layers() != c.n_layer)
    throw Error("forward: the KV cache was made for a different model shape");
  if (P + T > cache.capacity())
    throw Error("context full: " + std::to_string(P) + " + " + std::to_string(T) + " tokens exceed the capacity of " +
                std::to_string(cache.capacity()));
  for (int32_t id : tokens)
    if (id < 0 || id >= c.vocab_size) throw Error("token id " + std::to_string(id) + " outside the vocabulary");
}

void Runner::run_layers(const int32_t* tokens, std::span<const block::CachedSequence> seqs, int N,
                        const ForwardOptions& opts) {
  const ModelConfig& c = m_model.config();
  const int C = c.n_embd, L = c.n_layer, NH = c.n_head;
  const int64_t NC = static_cast<int64_t>(N) * C;
  ensure_scratch(N);
  const block::Weights& w = weights();
  block::Pass pass(m_model, m_backend);
  pass.sequences = seqs;
  pass.T = N;

  // One set of activations serves every layer; the residual stream x is updated in place (x_mid aliases it),
  // and the SwiGLU activation overwrites its up projection (fup aliases fact).
  float* x = m_residual.data();
  block::LayerActs a;
  a.ln1 = a.ln2 = m_ln.data();
  a.qkv = m_qkv.data();
  a.atty = m_atty.data();
  a.x_mid = x;
  a.fch = m_fch.data();
  a.fup = a.fact = m_fch_gelu.data();
  a.branch = m_proj.data();

  // Captures are for one sequence (the inspector's); P + N keys per query row.
  const int keys = seqs.size() == 1 ? seqs[0].P + N : 0;
  const bool capture_att = opts.capture_attention && seqs.size() == 1;
  if (capture_att) m_attention.assign(static_cast<size_t>(L) * NH * N * keys, 0.0f);
  // Off by default: one predictable branch per layer and no copy when nobody asked.
  if (opts.capture_residual) m_residual_stream.resize(static_cast<size_t>(L + 1) * NC);
  auto capture = [&](int row, const float* src) {
    if (opts.capture_residual) std::copy(src, src + NC, m_residual_stream.data() + static_cast<size_t>(row) * NC);
  };

  block::embed_forward(pass, w, tokens, x);
  capture(0, x);
  for (int l = 0; l < L; ++l) {
    a.att = capture_att ? m_attention.data() + static_cast<size_t>(l) * NH * N * keys : nullptr;
    block::layer_forward(pass, l, w.layers[static_cast<size_t>(l)], a, x, x);
    capture(l + 1, x);
  }
}

std::span<const float> Runner::forward(std::span<const int32_t> tokens, KVCache& cache, const ForwardOptions& opts) {
  check_step(tokens, cache);
  const int T = static_cast<int>(tokens.size());
  const block::CachedSequence seq{&cache, cache.size(), T, 0};
  run_layers(tokens.data(), {&seq, 1}, T, opts);
  cache.advance(T);

  // Final norm and the output head, only for the rows the caller wants.
  const ModelConfig& c = m_model.config();
  const int first = opts.all_logits ? 0 : T - 1;
  const int rows = T - first;
  m_logits.resize(static_cast<size_t>(rows) * c.vocab_size);
  head_forward(m_logits.data(), m_residual.data() + static_cast<int64_t>(first) * c.n_embd, rows);
  return {m_logits.data(), m_logits.size()};
}

std::span<const float> Runner::forward_batch(std::span<const SequenceStep> steps) {
  if (steps.empty()) throw Error("forward_batch: no sequences");
  std::vector<block::CachedSequence> seqs;
  seqs.reserve(steps.size());
  int64_t N = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const SequenceStep& s = steps[i];
    if (!s.cache) throw Error("forward_batch: sequence " + std::to_string(i) + " has no KV cache");
    for (size_t j = 0; j < i; ++j)
      if (steps[j].cache == s.cache) throw Error("forward_batch: one KV cache given for two sequences");
    check_step(s.tokens, *s.cache);
    seqs.push_back({s.cache, s.cache->size(), static_cast<int>(s.tokens.size()), static_cast<int>(N)});
    N += static_cast<int64_t>(s.tokens.size());
    if (N > INT32_MAX / 4) throw Error("forward_batch: too many tokens in one step");
  }
  m_batch_tokens.clear();
  for (const SequenceStep& s : steps) m_batch_tokens.insert(m_batch_tokens.end(), s.tokens.begin(), s.tokens.end());
  run_layers(m_batch_tokens.data(), seqs, static_cast<int>(N), {});
  for (const block::CachedSequence& s : seqs) s.cache->advance(s.T);

  // Each sequence's last row, gathered (the branch scratch is free after the layers), through the head.
  const ModelConfig& c = m_model.config();
  const int C = c.n_embd, S = static_cast<int>(seqs.size());
  for (int i = 0; i < S; ++i) {
    const block::CachedSequence& s = seqs[static_cast<size_t>(i)];
    std::copy_n(m_residual.data() + static_cast<int64_t>(s.row0 + s.T - 1) * C, C,
                m_proj.data() + static_cast<int64_t>(i) * C);
  }
  m_logits.resize(static_cast<size_t>(S) * c.vocab_size);
  head_forward(m_logits.data(), m_proj.data(), S);
  return {m_logits.data(), m_logits.size()};
}

// The final norm and the head, as forward() ends, so applied to a residual_stream() row they give its logits
// bit for bit (the logit lens applies it to every row).
void Runner::head_forward(float* logits, const float* x, int rows) {
  const block::Weights& w = weights();
  block::Pass pass(m_model, m_backend);
  ensure_scratch(rows);  // m_ln holds the normed rows; a no-op after a step (rows <= its rows)
  block::final_norm_forward(pass, w, m_ln.data(), nullptr, nullptr, x, rows);
  block::linear_forward(pass, w.head, logits, m_ln.data(), rows);
}

}  // namespace engine
