// TrainModel: the training forward pass (keeping activations), the loss and the backward pass, written
// once against Backend for every architecture, branching on ArchSpec exactly where runner.cpp does.
//
// Layout of one step (N = B*T rows, llm.c's gpt2_forward / gpt2_backward):
//   resid[0] = dropout(wte[x] + wpe[t])                 (wpe only for learned positions)
//   per layer l: resid[l+1] = layer(resid[l])             (pre-norm attention block, then MLP block)
//   logits = norm_f(resid[L]) @ head^T;  loss = weighted mean of softmax cross-entropy
// Invariants:
//   - resid (L+1, N, C) is always kept; a layer's other activations (LayerActs) are kept for every layer,
//     or, with checkpoint_activations, for one layer only and recomputed from resid[l] during backward.
//     The recompute is bit-identical (same ops, same inputs, dropout masks are functions of their seed),
//     so both modes give the same gradients.
//   - Gradients accumulate into `grads`, parallel to the model's arena (same offsets), so a tied head's
//     two gradient paths (embedding lookup and output projection) land in the same floats.
//   - The residual-stream gradient `dres` is updated in place: each block's norm backward adds into it,
//     which is the residual's identity path plus the branch's contribution.
#include "engine/train/train_model.h"

#include <cmath>
#include <string>

#include "dropout_mask.h"
#include "engine/backend.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "engine/model.h"

namespace engine {

namespace {

// Dropout sites within one layer (the mask seed of a site is dropout_site_seed(step seed, layer, site));
// the embedding dropout uses layer index L.
enum Site : uint64_t { kSiteAttnProbs = 0, kSiteAttnOut = 1, kSiteMlpOut = 2 };

// A parameter slice and its gradient (null when frozen or absent).
struct P {
  float* w = nullptr;
  float* g = nullptr;
};

// One linear layer y = x W^T + b with W (OC, C).
struct Linear {
  P w, b;
  int C = 0, OC = 0;
};

struct LayerParams {
  P n1w, n1b, n2w, n2b;           // norm gains / biases (biases GPT-2 only)
  Linear qkv, q, k, v;            // fused (GPT-2) or separate (Llama)
  Linear o, in, up, down;         // in: GPT-2 fc / Llama gate; up: Llama only
};

// Pointers into the activation store for one layer.
struct LayerActs {
  float *ln1, *ln1_mean, *ln1_rstd;
  float* qkv;   // GPT-2: (N, 3C) rows [q|k|v]; Llama: q (N,C) then k (N,KVW) then v (N,KVW)
  float* att;   // (B, NH, T, T) softmax probabilities
  float *atty, *x_mid, *ln2, *ln2_mean, *ln2_rstd;
  float *fch, *fup, *fact;  // (N,F): fc / gate output, up output (Llama), activation
};

}  // namespace

struct TrainModel::Impl {
  Model& model;
  Backend& be;
  ModelConfig c;
  ArchSpec spec;
  LoraConfig lora;
  std::vector<float> grads;  // parallel to model.all_params()

  std::vector<LayerParams> layers;
  P wte, wpe, nfw, nfb;
  Linear head;

  std::vector<float> act_store, resid, lnf, lnf_mean, lnf_rstd, logits, losses, dlosses, branch;
  std::vector<float> dres, dln, dqkv, datty, dbranch, dfch, dfup, dfact;
  std::vector<int32_t> targets;  // the batch's targets with -1 where the weight is 0
  std::vector<float> weights;    // the batch's loss weights (1 when none given)

  Impl(Model& m, Backend& b, const LoraConfig& l) : model(m), be(b), c(m.config()), spec(arch_spec(c)), lora(l) {}

  int qkv_width() const { return c.n_embd + 2 * c.kv_width(); }

  P param(const std::string& name, int64_t layer = 0, int64_t per_layer = 0) {
    if (!model.has_param(name)) return {};
    const ParamTensor& t = model.param(name);
    const int64_t off = layer * per_layer;
    return {model.param_data(name) + off, grads.empty() ? nullptr : grads.data() + t.offset + off};
  }

  Linear linear(const std::string& w, const std::string& b, int l, int C, int OC) {
    Linear x;
    x.C = C;
    x.OC = OC;
    x.w = param(w, l, static_cast<int64_t>(OC) * C);
    if (!b.empty()) x.b = param(b, l, OC);
    return x;
  }

  void bind_params() {
    const int C = c.n_embd, F = c.ffn_dim, KVW = c.kv_width(), L = c.n_layer;
    const bool gpt2 = spec.norm == ArchSpec::Norm::LayerNorm;
    wte = param("wte");
    layers.assign(static_cast<size_t>(L), {});
    for (int l = 0; l < L; ++l) {
      LayerParams& p = layers[static_cast<size_t>(l)];
      if (gpt2) {
        p.n1w = param("h.ln1.weight", l, C);
        p.n1b = param("h.ln1.bias", l, C);
        p.n2w = param("h.ln2.weight", l, C);
        p.n2b = param("h.ln2.bias", l, C);
        p.qkv = linear("h.qkv.weight", "h.qkv.bias", l, C, 3 * C);
        p.o = linear("h.attn_proj.weight", "h.attn_proj.bias", l, C, C);
        p.in = linear("h.fc.weight", "h.fc.bias", l, C, F);
        p.down = linear("h.fc_proj.weight", "h.fc_proj.bias", l, F, C);
      } else {
        p.n1w = param("h.attn_norm.weight", l, C);
        p.n2w = param("h.ffn_norm.weight", l, C);
        p.q = linear("h.wq.weight", "h.wq.bias", l, C, C);
        p.k = linear("h.wk.weight", "h.wk.bias", l, C, KVW);
        p.v = linear("h.wv.weight", "h.wv.bias", l, C, KVW);
        p.o = linear("h.wo.weight", "", l, C, C);
        p.in = linear("h.w_gate.weight", "", l, C, F);
        p.up = linear("h.w_up.weight", "", l, C, F);
        p.down = linear("h.w_down.weight", "", l, F, C);
      }
    }
    if (gpt2) {
      wpe = param("wpe");
      nfw = param("lnf.weight");
      nfb = param("lnf.bias");
    } else {
      nfw = param("norm.weight");
    }
    head.C = C;
    head.OC = c.vocab_size;
    head.w = spec.tied_head ? wte : param("lm_head.weight");
  }

  // ---- buffers ----

  // Floats of one layer's activations for B sequences of T tokens.
  uint64_t layer_floats(int B, int T) const {
    const uint64_t N = static_cast<uint64_t>(B) * T, C = c.n_embd, F = c.ffn_dim;
    const uint64_t att = checked_mul(checked_mul(static_cast<uint64_t>(B) * c.n_head, T, "attention size"), T,
                                     "attention size");
    const uint64_t fup = spec.mlp == ArchSpec::Mlp::SwiGLU ? F : 0;
    return checked_add(checked_mul(N, 4 * C + 4 + qkv_width() + 2 * F + fup, "activation size"), att,
                       "activation size");
  }

  LayerActs acts_at(int slot, int B, int T) {
    const int64_t N = static_cast<int64_t>(B) * T, C = c.n_embd, F = c.ffn_dim;
    float* p = act_store.data() + static_cast<int64_t>(slot) * static_cast<int64_t>(layer_floats(B, T));
    auto take = [&](int64_t n) {
      float* r = p;
      p += n;
      return r;
    };
    LayerActs a;
    a.ln1 = take(N * C);
    a.ln1_mean = take(N);
    a.ln1_rstd = take(N);
    a.qkv = take(N * qkv_width());
    a.att = take(static_cast<int64_t>(B) * c.n_head * T * T);
    a.atty = take(N * C);
    a.x_mid = take(N * C);
    a.ln2 = take(N * C);
    a.ln2_mean = take(N);
    a.ln2_rstd = take(N);
    a.fch = take(N * F);
    a.fup = spec.mlp == ArchSpec::Mlp::SwiGLU ? take(N * F) : nullptr;
    a.fact = take(N * F);
    return a;
  }

  static void grow(std::vector<float>& v, uint64_t n) {
    if (v.size() < n) v.resize(n);
  }

  void ensure(int B, int T, int slots) {
    const uint64_t N = static_cast<uint64_t>(B) * T, C = c.n_embd, F = c.ffn_dim, V = c.vocab_size;
    grow(act_store, checked_mul(layer_floats(B, T), static_cast<uint64_t>(slots), "activation size"));
    grow(resid, checked_mul(N * C, static_cast<uint64_t>(c.n_layer) + 1, "residual size"));
    for (auto* v : {&lnf, &branch, &dres, &dln, &datty, &dbranch}) grow(*v, N * C);
    for (auto* v : {&lnf_mean, &lnf_rstd, &losses, &dlosses}) grow(*v, N);
    grow(logits, checked_mul(N, V, "logits size"));
    grow(dqkv, N * qkv_width());
    for (auto* v : {&dfch, &dfup, &dfact}) grow(*v, N * F);
  }

  // ---- pieces of the forward and backward ----

  void linear_forward(const Linear& x, float* out, const float* inp, int N) {
    be.matmul_forward(out, inp, x.w.w, x.b.w, N, x.C, x.OC);
  }
  void linear_backward(const Linear& x, float* dinp, const float* dout, const float* inp, int N) {
    be.matmul_backward(dinp, x.w.g, x.b.g, dout, inp, x.w.w, N, x.C, x.OC);
  }

  void norm_forward(float* out, float* mean, float* rstd, const float* inp, const P& w, const P& b, int N) {
    if (spec.norm == ArchSpec::Norm::RMSNorm)
      be.rmsnorm_forward(out, rstd, inp, w.w, N, c.n_embd, c.norm_eps);
    else
      be.layernorm_forward(out, mean, rstd, inp, w.w, b.w, N, c.n_embd, c.norm_eps);
  }
  void norm_backward(float* dinp, const P& w, const P& b, const float* dout, const float* inp, const float* mean,
                     const float* rstd, int N) {
    if (spec.norm == ArchSpec::Norm::RMSNorm)
      be.rmsnorm_backward(dinp, w.g, dout, inp, w.w, rstd, N, c.n_embd);
    else
      be.layernorm_backward(dinp, w.g, b.g, dout, inp, w.w, mean, rstd, N, c.n_embd);
  }

  // q/k/v views of a qkv-shaped buffer (activations or their gradients).
  struct QKV {
    float *q, *k, *v;
    int qs, kvs;
  };
  QKV split(float* buf, int N) const {
    const int C = c.n_embd, KVW = c.kv_width();
    if (spec.fused_qkv) return {buf, buf + C, buf + 2 * C, 3 * C, 3 * C};
    float* k = buf + static_cast<int64_t>(N) * C;
    return {buf, k, k + static_cast<int64_t>(N) * KVW, C, KVW};
  }

  void rope(const QKV& x, int B, int T, bool backward) {
    if (spec.positions != ArchSpec::Positions::Rope) return;
    for (int b = 0; b < B; ++b) {
      float* q = x.q + static_cast<int64_t>(b) * T * x.qs;
      float* k = x.k + static_cast<int64_t>(b) * T * x.kvs;
      if (backward)
        be.rope_backward(q, x.qs, c.n_head, k, x.kvs, c.n_kv_head, T, c.head_size(), 0, c.rope_theta, c.rope_interleaved);
      else
        be.rope_forward(q, x.qs, c.n_head, k, x.kvs, c.n_kv_head, T, c.head_size(), 0, c.rope_theta, c.rope_interleaved);
    }
  }

  void layer_forward(int l, const LayerActs& a, const float* x_in, float* x_out, int B, int T, float p, uint64_t seed) {
    const LayerParams& w = layers[static_cast<size_t>(l)];
    const int N = B * T;
    const int64_t NC = static_cast<int64_t>(N) * c.n_embd, NF = static_cast<int64_t>(N) * c.ffn_dim;
    // attention block
    norm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x_in, w.n1w, w.n1b, N);
    const QKV x = split(a.qkv, N);
    if (spec.fused_qkv) {
      linear_forward(w.qkv, a.qkv, a.ln1, N);
    } else {
      linear_forward(w.q, x.q, a.ln1, N);
      linear_forward(w.k, x.k, a.ln1, N);
      linear_forward(w.v, x.v, a.ln1, N);
    }
    rope(x, B, T, false);
    be.attention_train_forward(a.atty, a.att, x.q, x.qs, x.k, x.v, x.kvs, B, T, c.n_head, c.n_kv_head, c.head_size(),
                               p, dropout_site_seed(seed, l, kSiteAttnProbs));
    linear_forward(w.o, branch.data(), a.atty, N);
    be.dropout_forward(branch.data(), branch.data(), NC, p, dropout_site_seed(seed, l, kSiteAttnOut));
    be.residual_forward(a.x_mid, x_in, branch.data(), NC);
    // MLP block
    norm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.x_mid, w.n2w, w.n2b, N);
    linear_forward(w.in, a.fch, a.ln2, N);
    if (spec.mlp == ArchSpec::Mlp::SwiGLU) {
      linear_forward(w.up, a.fup, a.ln2, N);
      be.swiglu_forward(a.fact, a.fch, a.fup, NF);
    } else {
      be.gelu_forward(a.fact, a.fch, NF);
    }
    linear_forward(w.down, branch.data(), a.fact, N);
    be.dropout_forward(branch.data(), branch.data(), NC, p, dropout_site_seed(seed, l, kSiteMlpOut));
    be.residual_forward(x_out, a.x_mid, branch.data(), NC);
  }

  // d (N,C) holds d loss / d x_out on entry and d loss / d x_in on return.
  void layer_backward(int l, const LayerActs& a, const float* x_in, float* d, int B, int T, float p, uint64_t seed) {
    const LayerParams& w = layers[static_cast<size_t>(l)];
    const int N = B * T;
    const int64_t NC = static_cast<int64_t>(N) * c.n_embd, NF = static_cast<int64_t>(N) * c.ffn_dim;
    // MLP block: x_out = x_mid + dropout(down(act(in(norm2(x_mid)))))
    be.dropout_backward(dbranch.data(), d, NC, p, dropout_site_seed(seed, l, kSiteMlpOut));
    be.fill_zero(dfact.data(), NF);
    linear_backward(w.down, dfact.data(), dbranch.data(), a.fact, N);
    be.fill_zero(dfch.data(), NF);
    if (spec.mlp == ArchSpec::Mlp::SwiGLU) {
      be.fill_zero(dfup.data(), NF);
      be.swiglu_backward(dfch.data(), dfup.data(), dfact.data(), a.fch, a.fup, NF);
    } else {
      be.gelu_backward(dfch.data(), a.fch, dfact.data(), NF);
    }
    be.fill_zero(dln.data(), NC);
    linear_backward(w.in, dln.data(), dfch.data(), a.ln2, N);
    if (spec.mlp == ArchSpec::Mlp::SwiGLU) linear_backward(w.up, dln.data(), dfup.data(), a.ln2, N);
    norm_backward(d, w.n2w, w.n2b, dln.data(), a.x_mid, a.ln2_mean, a.ln2_rstd, N);
    // attention block: x_mid = x_in + dropout(o(attention(rope(qkv(norm1(x_in))))))
    be.dropout_backward(dbranch.data(), d, NC, p, dropout_site_seed(seed, l, kSiteAttnOut));
    be.fill_zero(datty.data(), NC);
    linear_backward(w.o, datty.data(), dbranch.data(), a.atty, N);
    be.fill_zero(dqkv.data(), static_cast<int64_t>(N) * qkv_width());
    const QKV x = split(a.qkv, N), dx = split(dqkv.data(), N);
    be.attention_backward(dx.q, dx.k, dx.v, datty.data(), a.att, x.q, x.qs, x.k, x.v, x.kvs, B, T, c.n_head,
                          c.n_kv_head, c.head_size(), p, dropout_site_seed(seed, l, kSiteAttnProbs));
    rope(dx, B, T, true);
    be.fill_zero(dln.data(), NC);
    if (spec.fused_qkv) {
      linear_backward(w.qkv, dln.data(), dqkv.data(), a.ln1, N);
    } else {
      linear_backward(w.q, dln.data(), dx.q, a.ln1, N);
      linear_backward(w.k, dln.data(), dx.k, a.ln1, N);
      linear_backward(w.v, dln.data(), dx.v, a.ln1, N);
    }
    norm_backward(d, w.n1w, w.n1b, dln.data(), x_in, a.ln1_mean, a.ln1_rstd, N);
  }

  void check_batch(const BatchView& batch) {
    if (batch.B <= 0 || batch.T <= 0) throw Error("training batch: B and T must be positive");
    if (batch.T > c.max_seq_len)
      throw Error("training batch: T = " + std::to_string(batch.T) + " exceeds the model's context of " +
                  std::to_string(c.max_seq_len));
    if (!batch.inputs || !batch.targets) throw Error("training batch: inputs and targets are required");
    const uint64_t N = checked_mul(static_cast<uint64_t>(batch.B), static_cast<uint64_t>(batch.T), "batch size");
    if (N > static_cast<uint64_t>(INT32_MAX) / static_cast<uint64_t>(qkv_width() + c.ffn_dim))
      throw Error("training batch: B*T = " + std::to_string(N) + " is too large");
    targets.resize(N);
    weights.resize(N);
    for (uint64_t i = 0; i < N; ++i) {
      const int32_t x = batch.inputs[i], t = batch.targets[i];
      if (x < 0 || x >= c.vocab_size)
        throw Error("training batch: input token " + std::to_string(x) + " at position " + std::to_string(i) +
                    " is outside the vocabulary of " + std::to_string(c.vocab_size));
      if (t >= c.vocab_size)
        throw Error("training batch: target token " + std::to_string(t) + " at position " + std::to_string(i) +
                    " is outside the vocabulary of " + std::to_string(c.vocab_size));
      const float w = batch.loss_weights ? batch.loss_weights[i] : 1.0f;
      if (!(w >= 0.0f) || !std::isfinite(w))
        throw Error("training batch: loss weight at position " + std::to_string(i) + " must be finite and >= 0");
      weights[i] = t >= 0 ? w : 0.0f;
      targets[i] = weights[i] > 0.0f ? t : -1;
    }
  }

  // Forward over a checked batch: fills the activations and `losses`; returns (weighted loss sum, weight sum).
  std::pair<double, double> forward(const BatchView& batch, float p, uint64_t seed, float smoothing, bool keep_all) {
    const int B = batch.B, T = batch.T, N = B * T, C = c.n_embd, L = c.n_layer;
    const int64_t NC = static_cast<int64_t>(N) * C;
    ensure(B, T, keep_all ? L : 1);
    float* x0 = resid.data();
    for (int b = 0; b < B; ++b)
      be.encoder_forward(x0 + static_cast<int64_t>(b) * T * C, batch.inputs + static_cast<int64_t>(b) * T, wte.w, wpe.w,
                         0, T, C);
    be.dropout_forward(x0, x0, NC, p, dropout_site_seed(seed, L, 0));
    for (int l = 0; l < L; ++l)
      layer_forward(l, acts_at(keep_all ? l : 0, B, T), resid.data() + l * NC, resid.data() + (l + 1) * NC, B, T, p,
                    seed);
    norm_forward(lnf.data(), lnf_mean.data(), lnf_rstd.data(), resid.data() + L * NC, nfw, nfb, N);
    linear_forward(head, logits.data(), lnf.data(), N);
    be.softmax_xent_forward(losses.data(), logits.data(), targets.data(), N, c.vocab_size, smoothing);
    double sum = 0, wsum = 0;
    for (int i = 0; i < N; ++i) {
      sum += static_cast<double>(weights[i]) * losses[i];
      wsum += weights[i];
    }
    return {sum, wsum};
  }

  void backward(const BatchView& batch, float p, uint64_t seed, float smoothing, bool keep_all, double wsum,
                float grad_scale) {
    const int B = batch.B, T = batch.T, N = B * T, C = c.n_embd, L = c.n_layer;
    const int64_t NC = static_cast<int64_t>(N) * C;
    for (int i = 0; i < N; ++i) dlosses[i] = static_cast<float>(grad_scale * weights[i] / wsum);
    be.softmax_xent_backward(logits.data(), logits.data(), targets.data(), dlosses.data(), N, c.vocab_size, smoothing);
    be.fill_zero(dln.data(), NC);
    linear_backward(head, dln.data(), logits.data(), lnf.data(), N);
    be.fill_zero(dres.data(), NC);
    norm_backward(dres.data(), nfw, nfb, dln.data(), resid.data() + L * NC, lnf_mean.data(), lnf_rstd.data(), N);
    for (int l = L - 1; l >= 0; --l) {
      const LayerActs a = acts_at(keep_all ? l : 0, B, T);
      const float* x_in = resid.data() + l * NC;
      if (!keep_all) layer_forward(l, a, x_in, resid.data() + (l + 1) * NC, B, T, p, seed);
      layer_backward(l, a, x_in, dres.data(), B, T, p, seed);
    }
    if (wte.g) {
      be.dropout_backward(dres.data(), dres.data(), NC, p, dropout_site_seed(seed, L, 0));
      be.encoder_backward(wte.g, wpe.g, dres.data(), batch.inputs, B, T, C);
    }
  }
};

TrainModel::TrainModel(Model& model, Backend& backend, const LoraConfig& lora)
    : m(std::make_unique<Impl>(model, backend, lora)) {
  if (model.has_external_weights())
    throw Error("training needs every weight in f32 (load the model with LoadOptions{.dequantize = true})");
  if (lora.rank != 0) throw Error("LoRA is not implemented yet");
  m->grads.assign(model.all_params().size(), 0.0f);
  m->bind_params();
}

TrainModel::~TrainModel() = default;

float TrainModel::forward_backward(const BatchView& batch, const TrainStepOptions& options, float grad_scale) {
  if (!(options.dropout >= 0.0f && options.dropout < 1.0f)) throw Error("dropout must be in [0, 1)");
  if (!(options.label_smoothing >= 0.0f && options.label_smoothing <= 1.0f))
    throw Error("label smoothing must be in [0, 1]");
  m->check_batch(batch);
  const bool keep_all = !options.checkpoint_activations;
  const auto [sum, wsum] = m->forward(batch, options.dropout, options.dropout_seed, options.label_smoothing, keep_all);
  if (wsum <= 0.0) return 0.0f;  // nothing to learn from (e.g. a prompt-only SFT batch): no gradient
  m->backward(batch, options.dropout, options.dropout_seed, options.label_smoothing, keep_all, wsum, grad_scale);
  return static_cast<float>(sum / wsum);
}

float TrainModel::loss(const BatchView& batch, float label_smoothing) {
  if (!(label_smoothing >= 0.0f && label_smoothing <= 1.0f)) throw Error("label smoothing must be in [0, 1]");
  m->check_batch(batch);
  const auto [sum, wsum] = m->forward(batch, 0.0f, 0, label_smoothing, /*keep_all=*/false);
  return wsum > 0.0 ? static_cast<float>(sum / wsum) : 0.0f;
}

std::vector<TrainableTensor> TrainModel::trainable() {
  std::vector<TrainableTensor> out;
  for (const ParamTensor& t : m->model.params()) {
    TrainableTensor x;
    x.name = t.name;
    const bool per_layer = t.name.rfind("h.", 0) == 0;
    x.shape.assign(t.shape.begin() + (per_layer ? 1 : 0), t.shape.end());
    x.value = m->model.param_data(t.name);
    x.grad = m->grads.data() + t.offset;
    x.numel = t.numel;
    x.weight_decay = x.shape.size() >= 2;
    out.push_back(std::move(x));
  }
  return out;
}

void TrainModel::zero_grads() {
  if (!m->grads.empty()) m->be.fill_zero(m->grads.data(), static_cast<int64_t>(m->grads.size()));
}

void TrainModel::merge_lora() { throw Error("LoRA is not implemented yet"); }

Model& TrainModel::model() { return m->model; }

}  // namespace engine
