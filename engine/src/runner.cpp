// The inference forward pass, written once against Backend (llm.c's gpt2_forward, with a KV cache),
// for every architecture: the ArchSpec (model.h) picks the norm, the positions, the MLP, the biases
// and the head; the order of operations is the same pre-norm residual block for all of them.
//
// One step processes T new tokens at positions P..P+T-1 where P = cache.size(): the new keys and
// values are written into the cache first, then every new query attends over all P+T cached rows.
// Prefill is one step with T = prompt length; decode is T = 1. Because the cache holds exactly what
// a full forward would have computed (for rotary models: keys already rotated for their own
// position), decode logits at position t equal the full forward's logits.
#include <algorithm>

#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/model.h"

namespace engine {

namespace {

// Base pointers of every parameter group a forward needs; null where the architecture has none.
struct Weights {
  const float *wte = nullptr, *wpe = nullptr, *head = nullptr;
  const float *norm1_w = nullptr, *norm1_b = nullptr, *norm2_w = nullptr, *norm2_b = nullptr;
  const float *normf_w = nullptr, *normf_b = nullptr;
  const float *wqkv = nullptr, *bqkv = nullptr;                          // fused (GPT-2)
  const float *wq = nullptr, *wk = nullptr, *wv = nullptr;               // separate (Llama)
  const float *bq = nullptr, *bk = nullptr, *bv = nullptr;
  const float *wo = nullptr, *bo = nullptr;
  const float *w_in = nullptr, *b_in = nullptr;  // GPT-2 fc / Llama gate (F,C)
  const float *w_up = nullptr;                   // Llama up (F,C)
  const float *w_down = nullptr, *b_down = nullptr;
};

Weights resolve(const Model& m, const ArchSpec& spec) {
  Weights w;
  auto opt = [&](const char* name) { return m.has_param(name) ? m.param_data(name) : nullptr; };
  w.wte = m.param_data("wte");
  if (spec.norm == ArchSpec::Norm::LayerNorm) {
    w.wpe = m.param_data("wpe");
    w.norm1_w = m.param_data("h.ln1.weight");
    w.norm1_b = m.param_data("h.ln1.bias");
    w.norm2_w = m.param_data("h.ln2.weight");
    w.norm2_b = m.param_data("h.ln2.bias");
    w.normf_w = m.param_data("lnf.weight");
    w.normf_b = m.param_data("lnf.bias");
    w.wqkv = m.param_data("h.qkv.weight");
    w.bqkv = m.param_data("h.qkv.bias");
    w.wo = m.param_data("h.attn_proj.weight");
    w.bo = m.param_data("h.attn_proj.bias");
    w.w_in = m.param_data("h.fc.weight");
    w.b_in = m.param_data("h.fc.bias");
    w.w_down = m.param_data("h.fc_proj.weight");
    w.b_down = m.param_data("h.fc_proj.bias");
  } else {
    w.norm1_w = m.param_data("h.attn_norm.weight");
    w.norm2_w = m.param_data("h.ffn_norm.weight");
    w.normf_w = m.param_data("norm.weight");
    w.wq = m.param_data("h.wq.weight");
    w.wk = m.param_data("h.wk.weight");
    w.wv = m.param_data("h.wv.weight");
    w.bq = opt("h.wq.bias");
    w.bk = opt("h.wk.bias");
    w.bv = opt("h.wv.bias");
    w.wo = m.param_data("h.wo.weight");
    w.w_in = m.param_data("h.w_gate.weight");
    w.w_up = m.param_data("h.w_up.weight");
    w.w_down = m.param_data("h.w_down.weight");
  }
  w.head = spec.tied_head ? w.wte : m.param_data("lm_head.weight");
  return w;
}

// Offset of layer l's slice of a per-layer group whose per-layer size is `per_layer` floats; null stays null.
const float* at(const float* base, int l, int64_t per_layer) {
  return base ? base + static_cast<int64_t>(l) * per_layer : nullptr;
}

}  // namespace

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

  const ArchSpec spec = arch_spec(c);
  const Weights w = resolve(m_model, spec);
  const int C = c.n_embd, L = c.n_layer, NH = c.n_head, KVH = c.n_kv_head, HS = c.head_size(), F = c.ffn_dim,
            V = c.vocab_size;
  const int KVW = c.kv_width();
  const int64_t TC = static_cast<int64_t>(T) * C, CC = static_cast<int64_t>(C) * C, FC = static_cast<int64_t>(F) * C;
  Backend& be = m_backend;
  const bool rms = spec.norm == ArchSpec::Norm::RMSNorm;
  auto norm = [&](float* out, const float* inp, const float* weight, const float* bias, int N) {
    if (rms)
      be.rmsnorm_forward(out, nullptr, inp, weight, N, C, c.norm_eps);
    else
      be.layernorm_forward(out, nullptr, nullptr, inp, weight, bias, N, C, c.norm_eps);
  };

  if (opts.capture_attention) m_attention.assign(static_cast<size_t>(L) * NH * T * (P + T), 0.0f);

  float* x = m_residual.data();
  be.encoder_forward(x, tokens.data(), w.wte, w.wpe, P, T, C);

  for (int l = 0; l < L; ++l) {
    // attention block
    norm(m_ln.data(), x, at(w.norm1_w, l, C), at(w.norm1_b, l, C), T);
    float* kc = cache.keys(l);
    float* vc = cache.values(l);
    float* k_new = kc + static_cast<int64_t>(P) * KVW;
    float* v_new = vc + static_cast<int64_t>(P) * KVW;
    const float* q = m_qkv.data();
    int q_stride = C;
    if (spec.fused_qkv) {
      be.matmul_forward(m_qkv.data(), m_ln.data(), at(w.wqkv, l, 3 * CC), at(w.bqkv, l, 3 * C), T, C, 3 * C);
      // qkv rows are [q | k | v]; append this step's keys and values to the cache.
      be.copy_rows(k_new, KVW, m_qkv.data() + C, 3 * C, T, KVW);
      be.copy_rows(v_new, KVW, m_qkv.data() + 2 * C, 3 * C, T, KVW);
      q_stride = 3 * C;
    } else {
      // The cache rows for P..P+T-1 are contiguous (T, KVW), so k and v are projected straight into them.
      const int64_t KC = static_cast<int64_t>(KVW) * C;
      be.matmul_forward(m_qkv.data(), m_ln.data(), at(w.wq, l, CC), at(w.bq, l, C), T, C, C);
      be.matmul_forward(k_new, m_ln.data(), at(w.wk, l, KC), at(w.bk, l, KVW), T, C, KVW);
      be.matmul_forward(v_new, m_ln.data(), at(w.wv, l, KC), at(w.bv, l, KVW), T, C, KVW);
    }
    if (spec.positions == ArchSpec::Positions::Rope)
      be.rope_forward(m_qkv.data(), q_stride, NH, k_new, KVW, KVH, T, HS, P, c.rope_theta, c.rope_interleaved);
    float* att_out = opts.capture_attention ? m_attention.data() + static_cast<size_t>(l) * NH * T * (P + T) : nullptr;
    be.attention_forward(m_atty.data(), q, q_stride, kc, vc, P, T, NH, KVH, HS, att_out);
    be.matmul_forward(m_proj.data(), m_atty.data(), at(w.wo, l, CC), at(w.bo, l, C), T, C, C);
    be.residual_forward(x, x, m_proj.data(), TC);
    // MLP block
    norm(m_ln.data(), x, at(w.norm2_w, l, C), at(w.norm2_b, l, C), T);
    be.matmul_forward(m_fch.data(), m_ln.data(), at(w.w_in, l, FC), at(w.b_in, l, F), T, C, F);
    if (spec.mlp == ArchSpec::Mlp::SwiGLU) {
      be.matmul_forward(m_fch_gelu.data(), m_ln.data(), at(w.w_up, l, FC), nullptr, T, C, F);
      be.swiglu_forward(m_fch_gelu.data(), m_fch.data(), m_fch_gelu.data(), static_cast<int64_t>(T) * F);
    } else {
      be.gelu_forward(m_fch_gelu.data(), m_fch.data(), static_cast<int64_t>(T) * F);
    }
    be.matmul_forward(m_proj.data(), m_fch_gelu.data(), at(w.w_down, l, FC), at(w.b_down, l, C), T, F, C);
    be.residual_forward(x, x, m_proj.data(), TC);
  }
  cache.advance(T);

  // Final norm and the output head (wte when tied), only for the rows the caller wants.
  const int first = opts.all_logits ? 0 : T - 1;
  const int rows = T - first;
  norm(m_ln.data(), x + static_cast<int64_t>(first) * C, w.normf_w, w.normf_b, rows);
  m_logits.resize(static_cast<size_t>(rows) * V);
  be.matmul_forward(m_logits.data(), m_ln.data(), w.head, nullptr, rows, C, V);
  return {m_logits.data(), m_logits.size()};
}

}  // namespace engine
