// The transformer block and its ends, forward beside backward (see block.h for who runs them and the
// two attention modes). The order of operations is llm.c's gpt2_forward / gpt2_backward for every
// architecture; the ArchSpec branches are the only differences between them.
#include "model/block.h"

#include <string>

#include "cpu/dropout_mask.h"
#include "engine/error.h"
#include "engine/kv_cache.h"
#include "model/lora_adapters.h"

namespace engine::block {

namespace {

// Dropout sites within one layer (a site's mask seed is dropout_site_seed(pass seed, layer, site)); the
// embedding uses layer index L, site 0. An adapter's input dropout uses site kSiteLora + its index.
enum Site : uint64_t { kSiteAttnProbs = 0, kSiteAttnOut = 1, kSiteMlpOut = 2, kSiteLora = 3 };

void norm_fwd(const Pass& p, float* out, float* mean, float* rstd, const float* inp, const Norm& n, int N) {
  if (p.spec.norm == ArchSpec::Norm::RMSNorm) p.be.rmsnorm_forward(out, rstd, inp, n.w, N, p.c.n_embd, p.c.norm_eps);
  else p.be.layernorm_forward(out, mean, rstd, inp, n.w, n.b, N, p.c.n_embd, p.c.norm_eps);
}

void norm_bwd(const Pass& p, float* dinp, const Norm& n, const float* dout, const float* inp, const float* mean,
              const float* rstd, int N) {
  if (p.spec.norm == ArchSpec::Norm::RMSNorm) p.be.rmsnorm_backward(dinp, n.dw, dout, inp, n.w, rstd, N, p.c.n_embd);
  else p.be.layernorm_backward(dinp, n.dw, n.db, dout, inp, n.w, mean, rstd, N, p.c.n_embd);
}

// Dropout in place; at p = 0 it is the identity, so nothing runs.
void dropout_fwd(const Pass& p, float* x, int64_t n, uint64_t site_seed) {
  if (p.dropout > 0.0f) p.be.dropout_forward(x, x, n, p.dropout, site_seed);
}

// q/k/v views of a qkv-shaped buffer of the cacheless layout (activations or their gradients).
struct QKV {
  float *q, *k, *v;
  int qs, kvs;
};
QKV split(const Pass& p, float* buf, int N) {
  const int C = p.c.n_embd, KVW = p.c.kv_width();
  if (p.spec.fused_qkv) return {buf, buf + C, buf + 2 * C, 3 * C, 3 * C};
  float* k = buf + static_cast<int64_t>(N) * C;
  return {buf, k, k + static_cast<int64_t>(N) * KVW, C, KVW};
}

// Rotary positions of B sequences at positions 0..T-1 (training); backward turns them back.
void rope_sequences(const Pass& p, const QKV& x, bool backward) {
  if (p.spec.positions != ArchSpec::Positions::Rope) return;
  const ModelConfig& c = p.c;
  for (int b = 0; b < p.B; ++b) {
    float* q = x.q + static_cast<int64_t>(b) * p.T * x.qs;
    float* k = x.k + static_cast<int64_t>(b) * p.T * x.kvs;
    if (backward)
      p.be.rope_backward(q, x.qs, c.n_head, k, x.kvs, c.n_kv_head, p.T, c.head_size(), 0, c.rope_theta,
                         c.rope_interleaved);
    else
      p.be.rope_forward(q, x.qs, c.n_head, k, x.kvs, c.n_kv_head, p.T, c.head_size(), 0, c.rope_theta,
                        c.rope_interleaved);
  }
}

uint64_t lora_seed(const Pass& p, const Linear& x) {
  return dropout_site_seed(p.seed, static_cast<uint64_t>(x.layer), kSiteLora + static_cast<uint64_t>(x.adapter));
}

// q, k and v of all N rows into a.qkv in the cacheless layout (split()): one fused matmul or three.
QKV project_qkv(const Pass& p, const Layer& w, const LayerActs& a) {
  const int N = p.N();
  const QKV x = split(p, a.qkv, N);
  if (p.spec.fused_qkv) {
    linear_forward(p, w.qkv, a.qkv, a.ln1, N);
  } else {
    linear_forward(p, w.q, x.q, a.ln1, N);
    linear_forward(p, w.k, x.k, a.ln1, N);
    linear_forward(p, w.v, x.v, a.ln1, N);
  }
  return x;
}

// The attention half of a layer with KV caches: each sequence's keys and values of this step land in its
// cache, then its queries attend over all its P+T rows.
void attention_cached(const Pass& p, int l, const Layer& w, const LayerActs& a) {
  const ModelConfig& c = p.c;
  const int N = p.N(), C = c.n_embd, KVW = c.kv_width(), NH = c.n_head, KVH = c.n_kv_head, HS = c.head_size();
  const bool rope = p.spec.positions == ArchSpec::Positions::Rope;
  if (p.sequences.size() == 1) {
    const CachedSequence& s = p.sequences[0];
    float* kc = s.cache->keys(l);
    float* vc = s.cache->values(l);
    float* k_new = kc + static_cast<int64_t>(s.P) * KVW;
    float* v_new = vc + static_cast<int64_t>(s.P) * KVW;
    int q_stride = C;
    if (p.spec.fused_qkv) {
      linear_forward(p, w.qkv, a.qkv, a.ln1, N);
      // The rows are [q | k | v]; append this step's keys and values to the cache.
      p.be.copy_rows(k_new, KVW, a.qkv + C, 3 * C, N, KVW);
      p.be.copy_rows(v_new, KVW, a.qkv + 2 * C, 3 * C, N, KVW);
      q_stride = 3 * C;
    } else {
      // Cache rows P..P+T-1 are contiguous (T, KVW), so k and v are projected straight into them.
      linear_forward(p, w.q, a.qkv, a.ln1, N);
      linear_forward(p, w.k, k_new, a.ln1, N);
      linear_forward(p, w.v, v_new, a.ln1, N);
    }
    if (rope) p.be.rope_forward(a.qkv, q_stride, NH, k_new, KVW, KVH, N, HS, s.P, c.rope_theta, c.rope_interleaved);
    p.be.attention_forward(a.atty, a.qkv, q_stride, kc, vc, s.P, N, NH, KVH, HS, a.att);
    return;
  }
  // Several sequences: every projection runs once over all rows, then each sequence's keys and values are
  // copied into its own cache and its queries attend there.
  const QKV x = project_qkv(p, w, a);
  for (const CachedSequence& s : p.sequences) {
    float* kc = s.cache->keys(l);
    float* vc = s.cache->values(l);
    float* k_new = kc + static_cast<int64_t>(s.P) * KVW;
    p.be.copy_rows(k_new, KVW, x.k + static_cast<int64_t>(s.row0) * x.kvs, x.kvs, s.T, KVW);
    p.be.copy_rows(vc + static_cast<int64_t>(s.P) * KVW, KVW, x.v + static_cast<int64_t>(s.row0) * x.kvs, x.kvs, s.T,
                   KVW);
    float* q = x.q + static_cast<int64_t>(s.row0) * x.qs;
    if (rope) p.be.rope_forward(q, x.qs, NH, k_new, KVW, KVH, s.T, HS, s.P, c.rope_theta, c.rope_interleaved);
    p.be.attention_forward(a.atty + static_cast<int64_t>(s.row0) * C, q, x.qs, kc, vc, s.P, s.T, NH, KVH, HS, nullptr);
  }
}

// The attention half of a layer over B whole sequences (training), probabilities kept in a.att.
void attention_sequences(const Pass& p, int l, const Layer& w, const LayerActs& a) {
  const ModelConfig& c = p.c;
  const QKV x = project_qkv(p, w, a);
  rope_sequences(p, x, false);
  p.be.attention_train_forward(a.atty, a.att, x.q, x.qs, x.k, x.v, x.kvs, p.B, p.T, c.n_head, c.n_kv_head,
                               c.head_size(), p.dropout, dropout_site_seed(p.seed, l, kSiteAttnProbs));
}

}  // namespace

void BackwardScratch::grow(int64_t N, const ModelConfig& c) {
  const int64_t NC = N * c.n_embd, NF = N * c.ffn_dim, qkv = N * (c.n_embd + 2 * c.kv_width());
  auto at_least = [](std::vector<float>& v, int64_t n) {
    if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
  };
  for (auto* v : {&dln, &datty, &dbranch}) at_least(*v, NC);
  at_least(dqkv, qkv);
  for (auto* v : {&dfch, &dfup, &dfact}) at_least(*v, NF);
}

Weights bind(const Model& m, float* grads, const LoraAdapters* adapters) {
  const ModelConfig& c = m.config();
  const ArchSpec spec = arch_spec(c);
  const int C = c.n_embd, F = c.ffn_dim, KVW = c.kv_width(), L = c.n_layer, V = c.vocab_size;
  auto grad = [&](const char* name, int64_t offset) -> float* {
    return grads ? grads + m.param(name).offset + offset : nullptr;
  };
  auto norm = [&](const char* weight, const char* bias, int l) {
    Norm n;
    const int64_t off = static_cast<int64_t>(l) * C;
    n.w = m.param_data(weight) + off;
    n.dw = grad(weight, off);
    if (bias) {
      n.b = m.param_data(bias) + off;
      n.db = grad(bias, off);
    }
    return n;
  };
  auto linear = [&](const char* weight, const char* bias, int l, int in, int out) {
    Linear x;
    x.C = in;
    x.OC = out;
    x.layer = l;
    x.w = m.weight(weight, l);
    x.dw = grad(weight, static_cast<int64_t>(l) * out * in);
    if (bias && m.has_param(bias)) {
      x.b = m.param_data(bias) + static_cast<int64_t>(l) * out;
      x.db = grad(bias, static_cast<int64_t>(l) * out);
    }
    if (adapters) x.adapter = adapters->find(weight);
    return x;
  };

  Weights w;
  w.wte = m.weight("wte");
  w.dwte = grad("wte", 0);
  w.layers.resize(static_cast<size_t>(L));
  const bool gpt2 = spec.norm == ArchSpec::Norm::LayerNorm;
  for (int l = 0; l < L; ++l) {
    Layer& x = w.layers[static_cast<size_t>(l)];
    if (gpt2) {
      x.n1 = norm("h.ln1.weight", "h.ln1.bias", l);
      x.n2 = norm("h.ln2.weight", "h.ln2.bias", l);
      x.qkv = linear("h.qkv.weight", "h.qkv.bias", l, C, 3 * C);
      x.o = linear("h.attn_proj.weight", "h.attn_proj.bias", l, C, C);
      x.in = linear("h.fc.weight", "h.fc.bias", l, C, F);
      x.down = linear("h.fc_proj.weight", "h.fc_proj.bias", l, F, C);
    } else {
      x.n1 = norm("h.attn_norm.weight", nullptr, l);
      x.n2 = norm("h.ffn_norm.weight", nullptr, l);
      x.q = linear("h.wq.weight", "h.wq.bias", l, C, C);
      x.k = linear("h.wk.weight", "h.wk.bias", l, C, KVW);
      x.v = linear("h.wv.weight", "h.wv.bias", l, C, KVW);
      x.o = linear("h.wo.weight", nullptr, l, C, C);
      x.in = linear("h.w_gate.weight", nullptr, l, C, F);
      x.up = linear("h.w_up.weight", nullptr, l, C, F);
      x.down = linear("h.w_down.weight", nullptr, l, F, C);
    }
  }
  if (gpt2) {
    w.wpe = m.param_data("wpe");
    w.dwpe = grad("wpe", 0);
    w.nf = norm("lnf.weight", "lnf.bias", 0);
  } else {
    w.nf = norm("norm.weight", nullptr, 0);
  }
  if (spec.tied_head) {
    // Both uses of wte (lookup and output projection) add into the same gradient floats.
    w.head.w = w.wte;
    w.head.dw = w.dwte;
    w.head.C = C;
    w.head.OC = V;
  } else {
    w.head = linear("lm_head.weight", nullptr, 0, C, V);
    w.head.adapter = -1;  // adapters target per-layer groups only
  }
  return w;
}

void linear_forward(const Pass& p, const Linear& x, float* out, const float* inp, int N) {
  p.be.matmul_forward_typed(out, inp, x.w, x.b, N, x.C, x.OC);
  if (x.adapter >= 0) p.adapters->forward(p.be, x.adapter, x.layer, out, inp, N, p.lora_dropout, lora_seed(p, x));
}

void linear_backward(const Pass& p, const Linear& x, float* dinp, const float* dout, const float* inp, int N) {
  const float* w = x.w.f32();
  if (!w)
    throw Error("backward through a " + std::string(dtype_name(x.w.dtype)) + " weight: training needs f32 weights");
  p.be.matmul_backward(dinp, x.dw, x.db, dout, inp, w, N, x.C, x.OC);
  if (x.adapter >= 0)
    p.adapters->backward(p.be, x.adapter, x.layer, dinp, dout, inp, N, p.lora_dropout, lora_seed(p, x));
}

void embed_forward(const Pass& p, const Weights& w, const int32_t* tokens, float* x) {
  const int C = p.c.n_embd;
  for (const CachedSequence& s : p.sequences)
    p.be.encoder_forward_typed(x + static_cast<int64_t>(s.row0) * C, tokens + s.row0, w.wte, w.wpe, s.P, s.T, C);
  if (p.sequences.empty())
    for (int b = 0; b < p.B; ++b)
      p.be.encoder_forward_typed(x + static_cast<int64_t>(b) * p.T * C, tokens + static_cast<int64_t>(b) * p.T, w.wte,
                                 w.wpe, 0, p.T, C);
  dropout_fwd(p, x, static_cast<int64_t>(p.N()) * C, dropout_site_seed(p.seed, p.c.n_layer, 0));
}

void embed_backward(const Pass& p, const Weights& w, const int32_t* tokens, float* dx) {
  if (!w.dwte) return;  // frozen embeddings (LoRA, inference)
  const int64_t NC = static_cast<int64_t>(p.N()) * p.c.n_embd;
  p.be.dropout_backward(dx, dx, NC, p.dropout, dropout_site_seed(p.seed, p.c.n_layer, 0));
  p.be.encoder_backward(w.dwte, w.dwpe, dx, tokens, p.B, p.T, p.c.n_embd);
}

void layer_forward(const Pass& p, int l, const Layer& w, const LayerActs& a, const float* x_in, float* x_out) {
  const int N = p.N();
  const int64_t NC = static_cast<int64_t>(N) * p.c.n_embd, NF = static_cast<int64_t>(N) * p.c.ffn_dim;
  // attention block: x_mid = x_in + dropout(o(attention(rope(qkv(norm1(x_in))))))
  norm_fwd(p, a.ln1, a.ln1_mean, a.ln1_rstd, x_in, w.n1, N);
  if (!p.sequences.empty()) attention_cached(p, l, w, a);
  else attention_sequences(p, l, w, a);
  linear_forward(p, w.o, a.branch, a.atty, N);
  dropout_fwd(p, a.branch, NC, dropout_site_seed(p.seed, l, kSiteAttnOut));
  p.be.residual_forward(a.x_mid, x_in, a.branch, NC);
  // MLP block: x_out = x_mid + dropout(down(act(in(norm2(x_mid)))))
  norm_fwd(p, a.ln2, a.ln2_mean, a.ln2_rstd, a.x_mid, w.n2, N);
  linear_forward(p, w.in, a.fch, a.ln2, N);
  if (p.spec.mlp == ArchSpec::Mlp::SwiGLU) {
    linear_forward(p, w.up, a.fup, a.ln2, N);
    p.be.swiglu_forward(a.fact, a.fch, a.fup, NF);
  } else {
    p.be.gelu_forward(a.fact, a.fch, NF);
  }
  linear_forward(p, w.down, a.branch, a.fact, N);
  dropout_fwd(p, a.branch, NC, dropout_site_seed(p.seed, l, kSiteMlpOut));
  p.be.residual_forward(x_out, a.x_mid, a.branch, NC);
}

void layer_backward(const Pass& p, int l, const Layer& w, const LayerActs& a, const float* x_in, float* d,
                    BackwardScratch& s) {
  if (!p.sequences.empty()) throw Error("layer_backward: the backward runs over whole sequences, not a KV cache");
  Backend& be = p.be;
  const ModelConfig& c = p.c;
  const int N = p.N();
  const int64_t NC = static_cast<int64_t>(N) * c.n_embd, NF = static_cast<int64_t>(N) * c.ffn_dim;
  s.grow(N, c);
  // MLP block
  be.dropout_backward(s.dbranch.data(), d, NC, p.dropout, dropout_site_seed(p.seed, l, kSiteMlpOut));
  be.fill_zero(s.dfact.data(), NF);
  linear_backward(p, w.down, s.dfact.data(), s.dbranch.data(), a.fact, N);
  be.fill_zero(s.dfch.data(), NF);
  if (p.spec.mlp == ArchSpec::Mlp::SwiGLU) {
    be.fill_zero(s.dfup.data(), NF);
    be.swiglu_backward(s.dfch.data(), s.dfup.data(), s.dfact.data(), a.fch, a.fup, NF);
  } else {
    be.gelu_backward(s.dfch.data(), a.fch, s.dfact.data(), NF);
  }
  be.fill_zero(s.dln.data(), NC);
  linear_backward(p, w.in, s.dln.data(), s.dfch.data(), a.ln2, N);
  if (p.spec.mlp == ArchSpec::Mlp::SwiGLU) linear_backward(p, w.up, s.dln.data(), s.dfup.data(), a.ln2, N);
  norm_bwd(p, d, w.n2, s.dln.data(), a.x_mid, a.ln2_mean, a.ln2_rstd, N);
  // attention block
  be.dropout_backward(s.dbranch.data(), d, NC, p.dropout, dropout_site_seed(p.seed, l, kSiteAttnOut));
  be.fill_zero(s.datty.data(), NC);
  linear_backward(p, w.o, s.datty.data(), s.dbranch.data(), a.atty, N);
  be.fill_zero(s.dqkv.data(), static_cast<int64_t>(N) * p.qkv_width());
  const QKV x = split(p, a.qkv, N), dx = split(p, s.dqkv.data(), N);
  be.attention_backward(dx.q, dx.k, dx.v, s.datty.data(), a.att, x.q, x.qs, x.k, x.v, x.kvs, p.B, p.T, c.n_head,
                        c.n_kv_head, c.head_size(), p.dropout, dropout_site_seed(p.seed, l, kSiteAttnProbs));
  rope_sequences(p, dx, true);
  be.fill_zero(s.dln.data(), NC);
  if (p.spec.fused_qkv) {
    linear_backward(p, w.qkv, s.dln.data(), s.dqkv.data(), a.ln1, N);
  } else {
    linear_backward(p, w.q, s.dln.data(), dx.q, a.ln1, N);
    linear_backward(p, w.k, s.dln.data(), dx.k, a.ln1, N);
    linear_backward(p, w.v, s.dln.data(), dx.v, a.ln1, N);
  }
  norm_bwd(p, d, w.n1, s.dln.data(), x_in, a.ln1_mean, a.ln1_rstd, N);
}

void final_norm_forward(const Pass& p, const Weights& w, float* out, float* mean, float* rstd, const float* x,
                        int rows) {
  norm_fwd(p, out, mean, rstd, x, w.nf, rows);
}

void final_norm_backward(const Pass& p, const Weights& w, float* dx, const float* dout, const float* x,
                         const float* mean, const float* rstd, int rows) {
  norm_bwd(p, dx, w.nf, dout, x, mean, rstd, rows);
}

}  // namespace engine::block
