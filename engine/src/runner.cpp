// The inference forward pass, written once against Backend (llm.c's gpt2_forward, with a KV cache),
// for every architecture: the ArchSpec (model.h) picks the norm, the positions, the MLP, the biases
// and the head; the order of operations is the same pre-norm residual block for all of them.
//
// One step processes T new tokens at positions P..P+T-1 where P = cache.size(): the new keys and
// values are written into the cache first, then every new query attends over all P+T cached rows.
// Prefill is one step with T = prompt length; decode is T = 1. Because the cache holds exactly what
// a full forward would have computed (for rotary models: keys already rotated for their own
// position), decode logits at position t equal the full forward's logits.
// Linear weights go through matmul_forward_typed whatever their encoding; for f32 weights that is
// exactly matmul_forward, so f32 models compute what they always did.
#include <algorithm>

#include "engine/error.h"
#include "engine/kv_cache.h"
#include "engine/model.h"

namespace engine {

namespace {

// Base pointers of the f32 parameter groups a forward needs (norms, biases, positions); null where
// the architecture has none. Linear weights come separately, as WeightRefs (LinearWeights).
struct Weights {
  const float *wpe = nullptr;
  const float *norm1_w = nullptr, *norm1_b = nullptr, *norm2_w = nullptr, *norm2_b = nullptr;
  const float *normf_w = nullptr, *normf_b = nullptr;
  const float *bqkv = nullptr;                                           // fused (GPT-2)
  const float *bq = nullptr, *bk = nullptr, *bv = nullptr;               // separate (Llama)
  const float *bo = nullptr;
  const float *b_in = nullptr;  // GPT-2 fc
  const float *b_down = nullptr;
};

// One layer's linear weights in their stored encoding (f32 arena or file-encoded, see Model::weight).
struct LayerLinears {
  WeightRef qkv;            // fused (GPT-2)
  WeightRef q, k, v;        // separate (Llama)
  WeightRef o, w_in, w_up, w_down;  // w_in: GPT-2 fc / Llama gate; w_up: Llama only
};

struct LinearWeights {
  WeightRef wte, head;
  std::vector<LayerLinears> layers;
};

Weights resolve(const Model& m, const ArchSpec& spec) {
  Weights w;
  auto opt = [&](const char* name) { return m.has_param(name) ? m.param_data(name) : nullptr; };
  if (spec.norm == ArchSpec::Norm::LayerNorm) {
    w.wpe = m.param_data("wpe");
    w.norm1_w = m.param_data("h.ln1.weight");
    w.norm1_b = m.param_data("h.ln1.bias");
    w.norm2_w = m.param_data("h.ln2.weight");
    w.norm2_b = m.param_data("h.ln2.bias");
    w.normf_w = m.param_data("lnf.weight");
    w.normf_b = m.param_data("lnf.bias");
    w.bqkv = m.param_data("h.qkv.bias");
    w.bo = m.param_data("h.attn_proj.bias");
    w.b_in = m.param_data("h.fc.bias");
    w.b_down = m.param_data("h.fc_proj.bias");
  } else {
    w.norm1_w = m.param_data("h.attn_norm.weight");
    w.norm2_w = m.param_data("h.ffn_norm.weight");
    w.normf_w = m.param_data("norm.weight");
    w.bq = opt("h.wq.bias");
    w.bk = opt("h.wk.bias");
    w.bv = opt("h.wv.bias");
  }
  return w;
}

LinearWeights resolve_linears(const Model& m, const ArchSpec& spec) {
  LinearWeights lw;
  lw.wte = m.weight("wte");
  lw.head = spec.tied_head ? lw.wte : m.weight("lm_head.weight");
  const int L = m.config().n_layer;
  lw.layers.resize(static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) {
    LayerLinears& x = lw.layers[static_cast<size_t>(l)];
    if (spec.norm == ArchSpec::Norm::LayerNorm) {
      x.qkv = m.weight("h.qkv.weight", l);
      x.o = m.weight("h.attn_proj.weight", l);
      x.w_in = m.weight("h.fc.weight", l);
      x.w_down = m.weight("h.fc_proj.weight", l);
    } else {
      x.q = m.weight("h.wq.weight", l);
      x.k = m.weight("h.wk.weight", l);
      x.v = m.weight("h.wv.weight", l);
      x.o = m.weight("h.wo.weight", l);
      x.w_in = m.weight("h.w_gate.weight", l);
      x.w_up = m.weight("h.w_up.weight", l);
      x.w_down = m.weight("h.w_down.weight", l);
    }
  }
  return lw;
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
  const LinearWeights lin = resolve_linears(m_model, spec);
  const int C = c.n_embd, L = c.n_layer, NH = c.n_head, KVH = c.n_kv_head, HS = c.head_size(), F = c.ffn_dim,
            V = c.vocab_size;
  const int KVW = c.kv_width();
  const int64_t TC = static_cast<int64_t>(T) * C;
  Backend& be = m_backend;
  const bool rms = spec.norm == ArchSpec::Norm::RMSNorm;
  auto norm = [&](float* out, const float* inp, const float* weight, const float* bias, int N) {
    if (rms)
      be.rmsnorm_forward(out, nullptr, inp, weight, N, C, c.norm_eps);
    else
      be.layernorm_forward(out, nullptr, nullptr, inp, weight, bias, N, C, c.norm_eps);
  };

  if (opts.capture_attention) m_attention.assign(static_cast<size_t>(L) * NH * T * (P + T), 0.0f);
  // Off by default: one predictable branch per layer and no copy when nobody asked.
  if (opts.capture_residual) m_residual_stream.resize(static_cast<size_t>(L + 1) * T * C);
  auto capture = [&](int row, const float* src) {
    if (opts.capture_residual) std::copy(src, src + TC, m_residual_stream.data() + static_cast<size_t>(row) * TC);
  };

  float* x = m_residual.data();
  be.encoder_forward_typed(x, tokens.data(), lin.wte, w.wpe, P, T, C);
  capture(0, x);

  for (int l = 0; l < L; ++l) {
    const LayerLinears& lw = lin.layers[static_cast<size_t>(l)];
    // attention block
    norm(m_ln.data(), x, at(w.norm1_w, l, C), at(w.norm1_b, l, C), T);
    float* kc = cache.keys(l);
    float* vc = cache.values(l);
    float* k_new = kc + static_cast<int64_t>(P) * KVW;
    float* v_new = vc + static_cast<int64_t>(P) * KVW;
    const float* q = m_qkv.data();
    int q_stride = C;
    if (spec.fused_qkv) {
      be.matmul_forward_typed(m_qkv.data(), m_ln.data(), lw.qkv, at(w.bqkv, l, 3 * C), T, C, 3 * C);
      // qkv rows are [q | k | v]; append this step's keys and values to the cache.
      be.copy_rows(k_new, KVW, m_qkv.data() + C, 3 * C, T, KVW);
      be.copy_rows(v_new, KVW, m_qkv.data() + 2 * C, 3 * C, T, KVW);
      q_stride = 3 * C;
    } else {
      // The cache rows for P..P+T-1 are contiguous (T, KVW), so k and v are projected straight into them.
      be.matmul_forward_typed(m_qkv.data(), m_ln.data(), lw.q, at(w.bq, l, C), T, C, C);
      be.matmul_forward_typed(k_new, m_ln.data(), lw.k, at(w.bk, l, KVW), T, C, KVW);
      be.matmul_forward_typed(v_new, m_ln.data(), lw.v, at(w.bv, l, KVW), T, C, KVW);
    }
    if (spec.positions == ArchSpec::Positions::Rope)
      be.rope_forward(m_qkv.data(), q_stride, NH, k_new, KVW, KVH, T, HS, P, c.rope_theta, c.rope_interleaved);
    float* att_out = opts.capture_attention ? m_attention.data() + static_cast<size_t>(l) * NH * T * (P + T) : nullptr;
    be.attention_forward(m_atty.data(), q, q_stride, kc, vc, P, T, NH, KVH, HS, att_out);
    be.matmul_forward_typed(m_proj.data(), m_atty.data(), lw.o, at(w.bo, l, C), T, C, C);
    be.residual_forward(x, x, m_proj.data(), TC);
    // MLP block
    norm(m_ln.data(), x, at(w.norm2_w, l, C), at(w.norm2_b, l, C), T);
    be.matmul_forward_typed(m_fch.data(), m_ln.data(), lw.w_in, at(w.b_in, l, F), T, C, F);
    if (spec.mlp == ArchSpec::Mlp::SwiGLU) {
      be.matmul_forward_typed(m_fch_gelu.data(), m_ln.data(), lw.w_up, nullptr, T, C, F);
      be.swiglu_forward(m_fch_gelu.data(), m_fch.data(), m_fch_gelu.data(), static_cast<int64_t>(T) * F);
    } else {
      be.gelu_forward(m_fch_gelu.data(), m_fch.data(), static_cast<int64_t>(T) * F);
    }
    be.matmul_forward_typed(m_proj.data(), m_fch_gelu.data(), lw.w_down, at(w.b_down, l, C), T, F, C);
    be.residual_forward(x, x, m_proj.data(), TC);
    capture(l + 1, x);
  }
  cache.advance(T);

  // Final norm and the output head (wte when tied), only for the rows the caller wants.
  const int first = opts.all_logits ? 0 : T - 1;
  const int rows = T - first;
  m_logits.resize(static_cast<size_t>(rows) * V);
  head_forward(m_logits.data(), x + static_cast<int64_t>(first) * C, rows);
  return {m_logits.data(), m_logits.size()};
}

void Runner::head_forward(float* logits, const float* x, int rows) {
  const ModelConfig& c = m_model.config();
  const ArchSpec spec = arch_spec(c);
  const Weights w = resolve(m_model, spec);
  const WeightRef head = spec.tied_head ? m_model.weight("wte") : m_model.weight("lm_head.weight");
  ensure_scratch(rows);  // m_ln holds the normed rows; a no-op inside forward (rows <= T)
  if (spec.norm == ArchSpec::Norm::RMSNorm)
    m_backend.rmsnorm_forward(m_ln.data(), nullptr, x, w.normf_w, rows, c.n_embd, c.norm_eps);
  else
    m_backend.layernorm_forward(m_ln.data(), nullptr, nullptr, x, w.normf_w, w.normf_b, rows, c.n_embd, c.norm_eps);
  m_backend.matmul_forward_typed(logits, m_ln.data(), head, nullptr, rows, c.n_embd, c.vocab_size);
}

}  // namespace engine
