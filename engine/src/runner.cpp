// The inference forward pass, written once against Backend (llm.c's gpt2_forward, with a KV cache).
//
// One step processes T new tokens at positions P..P+T-1 where P = cache.size(): the new keys and
// values are written into the cache first, then every new query attends over all P+T cached rows.
// Prefill is one step with T = prompt length; decode is T = 1. Because the cache holds exactly what
// a full forward would have computed, decode logits at position t equal the full forward's logits.
#include <algorithm>

#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/model.h"

namespace engine {

Runner::Runner(const Model& model, Backend& backend) : m_model(model), m_backend(backend) {}

void Runner::ensure_scratch(int T) {
  if (T <= m_scratch_T) return;
  const ModelConfig& c = m_model.config();
  const size_t TC = static_cast<size_t>(T) * c.n_embd;
  m_residual.resize(TC);
  m_ln.resize(TC);
  m_qkv.resize(TC * 3);
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
  if (cache.row_width() != c.n_kv_head * c.head_size() || cache.layers() != c.n_layer)
    throw Error("forward: the KV cache was made for a different model shape");
  if (static_cast<int64_t>(P) + T > cache.capacity())
    throw Error("context full: " + std::to_string(P) + " + " + std::to_string(T) + " tokens exceed the capacity of " +
                std::to_string(cache.capacity()));
  for (int32_t id : tokens)
    if (id < 0 || id >= c.vocab_size) throw Error("token id " + std::to_string(id) + " outside the vocabulary");
  ensure_scratch(T);

  const int C = c.n_embd, L = c.n_layer, NH = c.n_head, KVH = c.n_kv_head, HS = c.head_size(), F = c.ffn_dim,
            V = c.vocab_size;
  const int kv_width = KVH * HS;
  const int64_t TC = static_cast<int64_t>(T) * C;
  Backend& be = m_backend;
  const Model& m = m_model;

  const float* wte = m.param_data("wte");
  const float* wpe = m.param_data("wpe");
  const float* ln1w = m.param_data("h.ln1.weight");
  const float* ln1b = m.param_data("h.ln1.bias");
  const float* qkvw = m.param_data("h.qkv.weight");
  const float* qkvb = m.param_data("h.qkv.bias");
  const float* projw = m.param_data("h.attn_proj.weight");
  const float* projb = m.param_data("h.attn_proj.bias");
  const float* ln2w = m.param_data("h.ln2.weight");
  const float* ln2b = m.param_data("h.ln2.bias");
  const float* fcw = m.param_data("h.fc.weight");
  const float* fcb = m.param_data("h.fc.bias");
  const float* fcprojw = m.param_data("h.fc_proj.weight");
  const float* fcprojb = m.param_data("h.fc_proj.bias");

  if (opts.capture_attention) m_attention.assign(static_cast<size_t>(L) * NH * T * (P + T), 0.0f);

  float* x = m_residual.data();
  be.encoder_forward(x, tokens.data(), wte, wpe, P, T, C);

  for (int l = 0; l < L; ++l) {
    const int64_t lC = static_cast<int64_t>(l) * C;
    // attention block
    be.layernorm_forward(m_ln.data(), nullptr, nullptr, x, ln1w + lC, ln1b + lC, T, C, c.norm_eps);
    be.matmul_forward(m_qkv.data(), m_ln.data(), qkvw + lC * 3 * C, qkvb + lC * 3, T, C, 3 * C);
    // qkv rows are [q | k | v]; append this step's keys and values to the cache.
    float* kc = cache.keys(l);
    float* vc = cache.values(l);
    be.copy_rows(kc + static_cast<int64_t>(P) * kv_width, kv_width, m_qkv.data() + C, 3 * C, T, kv_width);
    be.copy_rows(vc + static_cast<int64_t>(P) * kv_width, kv_width, m_qkv.data() + 2 * C, 3 * C, T, kv_width);
    float* att_out = opts.capture_attention ? m_attention.data() + static_cast<size_t>(l) * NH * T * (P + T) : nullptr;
    be.attention_forward(m_atty.data(), m_qkv.data(), 3 * C, kc, vc, P, T, NH, KVH, HS, att_out);
    be.matmul_forward(m_proj.data(), m_atty.data(), projw + lC * C, projb + lC, T, C, C);
    be.residual_forward(x, x, m_proj.data(), TC);
    // MLP block
    be.layernorm_forward(m_ln.data(), nullptr, nullptr, x, ln2w + lC, ln2b + lC, T, C, c.norm_eps);
    be.matmul_forward(m_fch.data(), m_ln.data(), fcw + static_cast<int64_t>(l) * F * C, fcb + static_cast<int64_t>(l) * F,
                      T, C, F);
    be.gelu_forward(m_fch_gelu.data(), m_fch.data(), static_cast<int64_t>(T) * F);
    be.matmul_forward(m_proj.data(), m_fch_gelu.data(), fcprojw + lC * F, fcprojb + lC, T, F, C);
    be.residual_forward(x, x, m_proj.data(), TC);
  }
  cache.advance(T);

  // Final norm and the tied output head (wte), only for the rows the caller wants.
  const int first = opts.all_logits ? 0 : T - 1;
  const int rows = T - first;
  be.layernorm_forward(m_ln.data(), nullptr, nullptr, x + static_cast<int64_t>(first) * C, m.param_data("lnf.weight"),
                       m.param_data("lnf.bias"), rows, C, c.norm_eps);
  m_logits.resize(static_cast<size_t>(rows) * V);
  be.matmul_forward(m_logits.data(), m_ln.data(), wte, nullptr, rows, C, V);
  return {m_logits.data(), m_logits.size()};
}

}  // namespace engine
