// Runner: inference over a KV cache, one step of T new tokens at positions P..P+T-1 (P = cache.size()).
// Prefill is one step with T = prompt length; decode is T = 1. The transformer itself is block.h's,
// shared with training; what is Runner's own is the scratch of one step, reused from step to step (one
// set of layer activations for every layer, the residual stream updated in place) and the optional
// captures the inspector asks for.
#include <algorithm>

#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "model/block.h"

namespace engine {

Runner::Runner(const Model& model, Backend& backend) : m_model(model), m_backend(backend) {}

void Runner::ensure_scratch(int T) {
  if (T <= m_scratch_T) return;
  const ModelConfig& c = m_model.config();
  const size_t TC = static_cast<size_t>(T) * c.n_embd;
  m_residual.resize(TC);
  m_ln.resize(TC);
  m_qkv.resize(TC * 3);  // GPT-2's fused rows; Llama uses the first TC for q
  m_atty.resize(TC);
  m_proj.resize(TC);
  m_fch.resize(static_cast<size_t>(T) * c.ffn_dim);
  m_fch_gelu.resize(static_cast<size_t>(T) * c.ffn_dim);
  m_scratch_T = T;
}

std::span<const float> Runner::forward(std::span<const int32_t> tokens, KVCache& cache, const ForwardOptions& opts) {
  const ModelConfig& c = m_model.config();
  const int T = static_cast<int>(tokens.size());
  const int P = cache.size();
  if (T == 0) throw Error("forward: no tokens");
  if (cache.row_width() != c.kv_width() || cache.layers() != c.n_layer)
    throw Error("forward: the KV cache was made for a different model shape");
  if (static_cast<int64_t>(P) + T > cache.capacity())
    throw Error("context full: " + std::to_string(P) + " + " + std::to_string(T) + " tokens exceed the capacity of " +
                std::to_string(cache.capacity()));
  for (int32_t id : tokens)
    if (id < 0 || id >= c.vocab_size) throw Error("token id " + std::to_string(id) + " outside the vocabulary");
  ensure_scratch(T);

  const int C = c.n_embd, L = c.n_layer, NH = c.n_head;
  const int64_t TC = static_cast<int64_t>(T) * C;
  const block::Weights w = block::bind(m_model, /*grads=*/nullptr, /*adapters=*/nullptr);
  block::Pass pass(m_model, m_backend);
  pass.cache = &cache;
  pass.T = T;
  pass.P = P;

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

  if (opts.capture_attention) m_attention.assign(static_cast<size_t>(L) * NH * T * (P + T), 0.0f);
  // Off by default: one predictable branch per layer and no copy when nobody asked.
  if (opts.capture_residual) m_residual_stream.resize(static_cast<size_t>(L + 1) * T * C);
  auto capture = [&](int row, const float* src) {
    if (opts.capture_residual) std::copy(src, src + TC, m_residual_stream.data() + static_cast<size_t>(row) * TC);
  };

  block::embed_forward(pass, w, tokens.data(), x);
  capture(0, x);
  for (int l = 0; l < L; ++l) {
    a.att = opts.capture_attention ? m_attention.data() + static_cast<size_t>(l) * NH * T * (P + T) : nullptr;
    block::layer_forward(pass, l, w.layers[static_cast<size_t>(l)], a, x, x);
    capture(l + 1, x);
  }
  cache.advance(T);

  // Final norm and the output head, only for the rows the caller wants.
  const int first = opts.all_logits ? 0 : T - 1;
  const int rows = T - first;
  m_logits.resize(static_cast<size_t>(rows) * c.vocab_size);
  block::final_norm_forward(pass, w, m_ln.data(), nullptr, nullptr, x + static_cast<int64_t>(first) * C, rows);
  block::linear_forward(pass, w.head, m_logits.data(), m_ln.data(), rows);
  return {m_logits.data(), m_logits.size()};
}

// The same two calls forward() ends with, so applied to a residual_stream() row they give its logits bit
// for bit.
void Runner::head_forward(float* logits, const float* x, int rows) {
  const block::Weights w = block::bind(m_model, nullptr, nullptr);
  block::Pass pass(m_model, m_backend);
  ensure_scratch(rows);  // m_ln holds the normed rows; a no-op inside forward (rows <= T)
  block::final_norm_forward(pass, w, m_ln.data(), nullptr, nullptr, x, rows);
  block::linear_forward(pass, w.head, logits, m_ln.data(), rows);
}

}  // namespace engine
