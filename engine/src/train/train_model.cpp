// TrainModel: the training driver around the one transformer of model/block.h -- the activation store,
// the loss and the order of the backward pass.
//
// Layout of one step (N = B*T rows, llm.c's gpt2_forward / gpt2_backward):
//   resid[0] = dropout(wte[x] + wpe[t])                 (wpe only for learned positions)
//   per layer l: resid[l+1] = layer(resid[l])             (block::layer_forward, no KV cache)
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
//   - With LoRA the base parameters have no gradient buffers at all (null gradient pointers skip their
//     work in every backward op); a linear layer with an adapter adds the adapter path (lora_adapters.h).
//   - Sequence-level objectives (token log-probs, a scalar head) run the same forward and enter the same
//     backward: at the logits (dlogits from d logp, and from d entropy for PPO's entropy bonus, both in the
//     backend's fused softmax_xent op) or at the final-norm output (from the head), so there is one backward
//     for every recipe.
#include "engine/train/train_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/backend.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "engine/model.h"
#include "model/block.h"
#include "model/lora_adapters.h"

namespace engine {

struct TrainModel::Impl {
  Model& model;
  Backend& be;
  ModelConfig c;
  ArchSpec spec;
  LoraConfig lora;
  std::vector<float> grads;  // parallel to model.all_params(); empty with LoRA (base frozen)
  std::unique_ptr<LoraAdapters> adapters;
  block::Weights w;  // bound once: the arena does not move while a TrainModel exists
  block::Pass pass;  // B, T, dropout and seeds of the current forward (the backward reuses them)

  std::vector<float> act_store, resid, lnf, lnf_mean, lnf_rstd, logits, losses, dlosses, branch, dres, dln;
  std::vector<float> entropies, dentropies;  // (N): per-position entropy of the last forward that asked for it
  block::BackwardScratch scratch;
  std::vector<int32_t> targets;  // the batch's targets with -1 where the weight is 0
  std::vector<float> weights;    // the batch's loss weights (1 when none given)

  bool frozen = false;    // no gradients at all (TrainModel::Frozen)
  block::Weights w_base;  // the base weights without adapters (a LoRA model's reference forward)
  bool w_base_bound = false;
  // LoRA generation (adapters_in_weights()): the target weights as they were before the adapters were added.
  std::vector<float> base_backup;
  bool adapters_in_weights = false;
  std::string head_name;               // "" = no scalar head
  std::vector<float> head_w, head_dw;  // (C); never reallocated once set (the optimizer holds pointers)
  // The last sequence-level forward that kept its activations, for the matching backward.
  enum class Kept { None, TokenLogprobs, ScalarHead } kept = Kept::None;
  std::vector<int32_t> kept_inputs;
  int kept_B = 0, kept_T = 0;
  bool kept_all = true;
  bool kept_entropy = false;  // the kept token log-prob forward also computed `entropies`

  Impl(Model& m, Backend& b, const LoraConfig& l)
      : model(m), be(b), c(m.config()), spec(arch_spec(c)), lora(l), pass(m, b) {}

  int qkv_width() const { return c.n_embd + 2 * c.kv_width(); }

  void bind() {
    w = block::bind(model, grads.empty() ? nullptr : grads.data(), adapters.get());
    pass.adapters = adapters.get();
  }

  // ---- buffers ----

  // Floats of one layer's activations for B sequences of T tokens.
  uint64_t layer_floats(int B, int T) const {
    const uint64_t N = static_cast<uint64_t>(B) * T, C = c.n_embd, F = c.ffn_dim;
    const uint64_t att =
        checked_mul(checked_mul(static_cast<uint64_t>(B) * c.n_head, T, "attention size"), T, "attention size");
    const uint64_t fup = spec.mlp == ArchSpec::Mlp::SwiGLU ? F : 0;
    return checked_add(checked_mul(N, 4 * C + 4 + qkv_width() + 2 * F + fup, "activation size"), att,
                       "activation size");
  }

  block::LayerActs acts_at(int slot, int B, int T) {
    const int64_t N = static_cast<int64_t>(B) * T, C = c.n_embd, F = c.ffn_dim;
    float* p = act_store.data() + static_cast<int64_t>(slot) * static_cast<int64_t>(layer_floats(B, T));
    auto take = [&](int64_t n) {
      float* r = p;
      p += n;
      return r;
    };
    block::LayerActs a;
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
    a.branch = branch.data();
    return a;
  }

  static void grow(std::vector<float>& v, uint64_t n) {
    if (v.size() < n) v.resize(n);
  }

  void ensure(int B, int T, int slots) {
    const uint64_t N = static_cast<uint64_t>(B) * T, C = c.n_embd, V = c.vocab_size;
    grow(act_store, checked_mul(layer_floats(B, T), static_cast<uint64_t>(slots), "activation size"));
    grow(resid, checked_mul(N * C, static_cast<uint64_t>(c.n_layer) + 1, "residual size"));
    for (auto* v : {&lnf, &branch, &dres, &dln}) grow(*v, N * C);
    for (auto* v : {&lnf_mean, &lnf_rstd, &losses, &dlosses, &entropies, &dentropies}) grow(*v, N);
    grow(logits, checked_mul(N, V, "logits size"));
    scratch.grow(static_cast<int64_t>(N), c);
    if (adapters) adapters->reserve(static_cast<int>(N), c.n_layer);
  }

  // needs_targets false: null targets read as "no position counts" (a scalar head uses none).
  void check_batch(const BatchView& batch, bool needs_targets = true) {
    if (adapters_in_weights)
      throw Error(
          "training forward: the LoRA adapters are merged into the weights for generation (the forward "
          "would apply them twice)");
    if (batch.B <= 0 || batch.T <= 0) throw Error("training batch: B and T must be positive");
    if (batch.T > c.max_seq_len)
      throw Error("training batch: T = " + std::to_string(batch.T) + " exceeds the model's context of " +
                  std::to_string(c.max_seq_len));
    if (!batch.inputs || (needs_targets && !batch.targets))
      throw Error("training batch: inputs and targets are required");
    const uint64_t N = checked_mul(static_cast<uint64_t>(batch.B), static_cast<uint64_t>(batch.T), "batch size");
    if (N > static_cast<uint64_t>(INT32_MAX) / static_cast<uint64_t>(qkv_width() + c.ffn_dim))
      throw Error("training batch: B*T = " + std::to_string(N) + " is too large");
    targets.resize(N);
    weights.resize(N);
    for (uint64_t i = 0; i < N; ++i) {
      const int32_t x = batch.inputs[i], t = batch.targets ? batch.targets[i] : -1;
      if (x < 0 || x >= c.vocab_size)
        throw Error("training batch: input token " + std::to_string(x) + " at position " + std::to_string(i) +
                    " is outside the vocabulary of " + std::to_string(c.vocab_size));
      if (t >= c.vocab_size)
        throw Error("training batch: target token " + std::to_string(t) + " at position " + std::to_string(i) +
                    " is outside the vocabulary of " + std::to_string(c.vocab_size));
      const float wt = batch.loss_weights ? batch.loss_weights[i] : 1.0f;
      if (!(wt >= 0.0f) || !std::isfinite(wt))
        throw Error("training batch: loss weight at position " + std::to_string(i) + " must be finite and >= 0");
      weights[i] = t >= 0 ? wt : 0.0f;
      targets[i] = weights[i] > 0.0f ? t : -1;
    }
  }

  // Forward to the final-norm output lnf (N, C), keeping the activations. p: dropout; lp: adapter dropout;
  // wt: the weights to run (w, or w_base for a LoRA model's base).
  void forward_hidden(const block::Weights& wt, const int32_t* inputs, int B, int T, float p, float lp, uint64_t seed,
                      bool keep_all) {
    const int N = B * T, C = c.n_embd, L = c.n_layer;
    const int64_t NC = static_cast<int64_t>(N) * C;
    ensure(B, T, keep_all ? L : 1);
    kept = Kept::None;  // the activations are overwritten: no earlier forward can be backpropagated now
    pass.B = B;
    pass.T = T;
    pass.dropout = p;
    pass.lora_dropout = lp;
    pass.seed = seed;
    block::embed_forward(pass, wt, inputs, resid.data());
    for (int l = 0; l < L; ++l)
      block::layer_forward(pass, l, wt.layers[static_cast<size_t>(l)], acts_at(keep_all ? l : 0, B, T),
                           resid.data() + l * NC, resid.data() + (l + 1) * NC);
    block::final_norm_forward(pass, wt, lnf.data(), lnf_mean.data(), lnf_rstd.data(), resid.data() + L * NC, N);
  }

  // Forward to the logits (N, V), keeping the activations.
  void forward_logits(const int32_t* inputs, int B, int T, float p, float lp, uint64_t seed, bool keep_all,
                      const block::Weights* wt = nullptr) {
    const block::Weights& ww = wt ? *wt : w;
    forward_hidden(ww, inputs, B, T, p, lp, seed, keep_all);
    block::linear_forward(pass, ww.head, logits.data(), lnf.data(), B * T);
  }

  const block::Weights& base_weights() {
    if (!w_base_bound) {
      w_base = block::bind(model, nullptr, nullptr);
      w_base_bound = true;
    }
    return w_base;
  }

  block::Linear head_linear() {
    block::Linear h;
    h.w.data = head_w.data();
    h.dw = head_dw.data();
    h.C = c.n_embd;
    h.OC = 1;
    return h;
  }

  void require_trainable(const char* what) const {
    if (frozen) throw Error(std::string(what) + ": this model is frozen (it has no gradients)");
  }

  // Forward over a checked batch: fills the activations and `losses`; returns (weighted loss sum, weight sum).
  std::pair<double, double> forward(const BatchView& batch, float p, float lp, uint64_t seed, float smoothing,
                                    bool keep_all) {
    const int N = batch.B * batch.T;
    forward_logits(batch.inputs, batch.B, batch.T, p, lp, seed, keep_all);
    be.softmax_xent_forward(losses.data(), nullptr, logits.data(), targets.data(), N, c.vocab_size, smoothing);
    double sum = 0, wsum = 0;
    for (int i = 0; i < N; ++i) {
      sum += static_cast<double>(weights[i]) * losses[i];
      wsum += weights[i];
    }
    return {sum, wsum};
  }

  // The backward of the last forward (same batch, dropout and seeds: they are still in `pass`).
  void backward(const BatchView& batch, float smoothing, bool keep_all, double wsum, float grad_scale) {
    const int N = batch.B * batch.T;
    for (int i = 0; i < N; ++i) dlosses[i] = static_cast<float>(grad_scale * weights[i] / wsum);
    be.softmax_xent_backward(logits.data(), logits.data(), targets.data(), dlosses.data(), nullptr, nullptr, N,
                             c.vocab_size, smoothing);
    backward_from_dlogits(batch.inputs, batch.B, batch.T, keep_all);
  }

  // From d loss / d logits (in `logits`) to every gradient.
  void backward_from_dlogits(const int32_t* inputs, int B, int T, bool keep_all) {
    const int N = B * T;
    be.fill_zero(dln.data(), static_cast<int64_t>(N) * c.n_embd);
    block::linear_backward(pass, w.head, dln.data(), logits.data(), lnf.data(), N);
    backward_from_dlnf(inputs, B, T, keep_all);
  }

  // From d loss / d lnf (in `dln`) through the final norm, the layers and the embedding.
  void backward_from_dlnf(const int32_t* inputs, int B, int T, bool keep_all) {
    const int N = B * T, C = c.n_embd, L = c.n_layer;
    const int64_t NC = static_cast<int64_t>(N) * C;
    be.fill_zero(dres.data(), NC);
    block::final_norm_backward(pass, w, dres.data(), dln.data(), resid.data() + L * NC, lnf_mean.data(),
                               lnf_rstd.data(), N);
    for (int l = L - 1; l >= 0; --l) {
      const block::LayerActs a = acts_at(keep_all ? l : 0, B, T);
      const float* x_in = resid.data() + l * NC;
      const block::Layer& lw = w.layers[static_cast<size_t>(l)];
      if (!keep_all) block::layer_forward(pass, l, lw, a, x_in, resid.data() + (l + 1) * NC);
      block::layer_backward(pass, l, lw, a, x_in, dres.data(), scratch);
    }
    block::embed_backward(pass, w, inputs, dres.data());
  }

  void keep(Kept what, const BatchView& batch, bool keep_all, bool with_entropy = false) {
    kept = what;
    kept_entropy = with_entropy;
    kept_inputs.assign(batch.inputs, batch.inputs + static_cast<int64_t>(batch.B) * batch.T);
    kept_B = batch.B;
    kept_T = batch.T;
    kept_all = keep_all;
  }

  // Per-position log p(target) of the logits of the last forward (which become its probabilities, all the
  // backward needs), and with `entropy` the entropy there too (kept in `entropies` for the backward).
  std::vector<float> token_logprobs_of_forward(int N, std::vector<float>* entropy) {
    be.softmax_xent_forward(losses.data(), entropy ? entropies.data() : nullptr, logits.data(), targets.data(), N,
                            c.vocab_size, 0.0f);
    std::vector<float> out(static_cast<size_t>(N), 0.0f);
    for (int i = 0; i < N; ++i)
      if (targets[i] >= 0) out[i] = -losses[i];
    if (entropy) entropy->assign(entropies.begin(), entropies.begin() + N);  // 0 where the position does not count
    return out;
  }

  std::vector<float> head_values(int N) {
    if (head_name.empty()) throw Error("scalar head: the model has none (set_scalar_head first)");
    std::vector<float> out(static_cast<size_t>(N));
    block::linear_forward(pass, head_linear(), out.data(), lnf.data(), N);
    return out;
  }
};

TrainModel::TrainModel(Model& model, Backend& backend, const LoraConfig& lora)
    : m(std::make_unique<Impl>(model, backend, lora)) {
  if (model.has_external_weights())
    throw Error("training needs every weight in f32 (load the model with LoadOptions{.dequantize = true})");
  if (lora.rank != 0) m->adapters = std::make_unique<LoraAdapters>(model, lora);
  else m->grads.assign(model.all_params().size(), 0.0f);
  m->bind();
}

TrainModel::TrainModel(Model& model, Backend& backend, Frozen)
    : m(std::make_unique<Impl>(model, backend, LoraConfig{})) {
  if (model.has_external_weights())
    throw Error("running a model here needs every weight in f32 (load it with LoadOptions{.dequantize = true})");
  m->frozen = true;
  m->bind();
}

TrainModel::~TrainModel() = default;

float TrainModel::forward_backward(const BatchView& batch, const TrainStepOptions& options, float grad_scale) {
  m->require_trainable("forward_backward");
  if (!(options.dropout >= 0.0f && options.dropout < 1.0f)) throw Error("dropout must be in [0, 1)");
  if (!(options.label_smoothing >= 0.0f && options.label_smoothing <= 1.0f))
    throw Error("label smoothing must be in [0, 1]");
  m->check_batch(batch);
  const bool keep_all = !options.checkpoint_activations;
  const auto [sum, wsum] =
      m->forward(batch, options.dropout, m->lora.dropout, options.dropout_seed, options.label_smoothing, keep_all);
  if (wsum <= 0.0) return 0.0f;  // nothing to learn from (e.g. a prompt-only SFT batch): no gradient
  m->backward(batch, options.label_smoothing, keep_all, wsum, grad_scale);
  return static_cast<float>(sum / wsum);
}

float TrainModel::loss(const BatchView& batch, float label_smoothing) {
  if (!(label_smoothing >= 0.0f && label_smoothing <= 1.0f)) throw Error("label smoothing must be in [0, 1]");
  m->check_batch(batch);
  const auto [sum, wsum] = m->forward(batch, 0.0f, 0.0f, 0, label_smoothing, /*keep_all=*/false);
  return wsum > 0.0 ? static_cast<float>(sum / wsum) : 0.0f;
}

std::vector<TrainableTensor> TrainModel::trainable() {
  std::vector<TrainableTensor> out;
  if (m->adapters) out = m->adapters->trainable();
  // Full fine-tuning: every model weight (LoRA and frozen models have no base gradients).
  for (const ParamTensor& t : m->grads.empty() ? std::span<const ParamTensor>() : std::span(m->model.params())) {
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
  if (!m->head_name.empty() && !m->frozen) {
    TrainableTensor h;
    h.name = m->head_name;
    h.shape = {1, m->c.n_embd};
    h.value = m->head_w.data();
    h.grad = m->head_dw.data();
    h.numel = m->head_w.size();
    h.weight_decay = true;
    out.push_back(std::move(h));
  }
  return out;
}

void TrainModel::zero_grads() {
  std::vector<float>& g = m->adapters ? m->adapters->grads() : m->grads;
  if (!g.empty()) m->be.fill_zero(g.data(), static_cast<int64_t>(g.size()));
  if (!m->head_dw.empty()) m->be.fill_zero(m->head_dw.data(), static_cast<int64_t>(m->head_dw.size()));
}

TrainModel::AdaptersInWeights TrainModel::adapters_in_weights() {
  if (!m->adapters) return AdaptersInWeights(nullptr);
  if (m->adapters_in_weights) throw Error("adapters_in_weights: the adapters are already in the weights");
  const std::vector<LoraAdapters::TargetSpan> spans = m->adapters->target_weights(m->model);
  uint64_t total = 0;
  for (const auto& s : spans) total = checked_add(total, s.numel, "LoRA target weights");
  m->base_backup.resize(total);  // kept between calls: generation runs every step or two
  float* to = m->base_backup.data();
  for (const auto& s : spans) to = std::copy(s.data, s.data + s.numel, to);
  m->adapters->add_delta_into(m->model);
  m->adapters_in_weights = true;
  return AdaptersInWeights(this);
}

TrainModel::AdaptersInWeights::~AdaptersInWeights() {
  if (!m_owner) return;
  Impl& im = *m_owner->m;
  const float* from = im.base_backup.data();
  for (const auto& s : im.adapters->target_weights(im.model)) {
    std::copy(from, from + s.numel, s.data);
    from += s.numel;
  }
  im.adapters_in_weights = false;
}

void TrainModel::merge_lora() {
  if (!m->adapters) throw Error("merge_lora: this TrainModel has no LoRA adapters");
  if (m->adapters_in_weights) throw Error("merge_lora: the adapters are already in the weights for generation");
  m->adapters->merge_into(m->model);
}

std::vector<float> TrainModel::logits(const int32_t* tokens, int B, int T) {
  if (!tokens) throw Error("logits: no tokens");
  const uint64_t N = checked_mul(static_cast<uint64_t>(B > 0 ? B : 0), static_cast<uint64_t>(T > 0 ? T : 0), "batch");
  std::vector<int32_t> none(N, -1);
  m->check_batch({tokens, none.data(), nullptr, B, T});
  m->forward_logits(tokens, B, T, 0.0f, 0.0f, 0, /*keep_all=*/false);
  return {m->logits.begin(), m->logits.begin() + static_cast<int64_t>(N) * m->c.vocab_size};
}

const LoraConfig& TrainModel::lora_config() const { return m->lora; }

std::vector<float> TrainModel::forward_token_logprobs(const BatchView& batch, const TrainStepOptions& options,
                                                      std::vector<float>* entropy) {
  m->require_trainable("forward_token_logprobs");
  if (!(options.dropout >= 0.0f && options.dropout < 1.0f)) throw Error("dropout must be in [0, 1)");
  m->check_batch(batch);
  const bool keep_all = !options.checkpoint_activations;
  m->forward_logits(batch.inputs, batch.B, batch.T, options.dropout, m->lora.dropout, options.dropout_seed, keep_all);
  std::vector<float> out = m->token_logprobs_of_forward(batch.B * batch.T, entropy);
  m->keep(Impl::Kept::TokenLogprobs, batch, keep_all, entropy != nullptr);
  return out;
}

void TrainModel::backward_token_logprobs(const float* dlogp, const float* dentropy) {
  m->require_trainable("backward_token_logprobs");
  if (m->kept != Impl::Kept::TokenLogprobs)
    throw Error("backward_token_logprobs: the last forward was not forward_token_logprobs");
  if (dentropy && !m->kept_entropy)
    throw Error(
        "backward_token_logprobs: an entropy gradient needs a forward_token_logprobs that returned the entropy");
  m->kept = Impl::Kept::None;
  const int N = m->kept_B * m->kept_T;
  // logp = -xent, so d objective / d xent = -d objective / d logp.
  for (int i = 0; i < N; ++i) m->dlosses[i] = m->targets[i] >= 0 ? -dlogp[i] : 0.0f;
  if (dentropy)
    for (int i = 0; i < N; ++i) m->dentropies[i] = m->targets[i] >= 0 ? dentropy[i] : 0.0f;
  m->be.softmax_xent_backward(m->logits.data(), m->logits.data(), m->targets.data(), m->dlosses.data(),
                              m->entropies.data(), dentropy ? m->dentropies.data() : nullptr, N, m->c.vocab_size, 0.0f);
  m->backward_from_dlogits(m->kept_inputs.data(), m->kept_B, m->kept_T, m->kept_all);
}

std::vector<float> TrainModel::token_logprobs(const BatchView& batch, bool use_adapters, std::vector<float>* entropy) {
  m->check_batch(batch);
  const block::Weights* wt = use_adapters || !m->adapters ? &m->w : &m->base_weights();
  m->forward_logits(batch.inputs, batch.B, batch.T, 0.0f, 0.0f, 0, /*keep_all=*/false, wt);
  return m->token_logprobs_of_forward(batch.B * batch.T, entropy);
}

void TrainModel::set_scalar_head(const std::string& name, std::vector<float> weights) {
  if (name.empty()) throw Error("scalar head: the name is empty");
  if (weights.size() != static_cast<size_t>(m->c.n_embd))
    throw Error("scalar head '" + name + "': " + std::to_string(weights.size()) + " values, the model's width is " +
                std::to_string(m->c.n_embd));
  m->head_name = name;
  m->head_w = std::move(weights);
  m->head_dw.assign(m->head_w.size(), 0.0f);
}

bool TrainModel::has_scalar_head() const { return !m->head_name.empty(); }

const std::vector<float>& TrainModel::scalar_head() const { return m->head_w; }

std::vector<float> TrainModel::forward_scalar_head(const BatchView& batch, const TrainStepOptions& options) {
  m->require_trainable("forward_scalar_head");
  if (!(options.dropout >= 0.0f && options.dropout < 1.0f)) throw Error("dropout must be in [0, 1)");
  m->check_batch(batch, /*needs_targets=*/false);
  const bool keep_all = !options.checkpoint_activations;
  m->forward_hidden(m->w, batch.inputs, batch.B, batch.T, options.dropout, m->lora.dropout, options.dropout_seed,
                    keep_all);
  std::vector<float> out = m->head_values(batch.B * batch.T);
  m->keep(Impl::Kept::ScalarHead, batch, keep_all);
  return out;
}

void TrainModel::backward_scalar_head(const float* dvalues) {
  m->require_trainable("backward_scalar_head");
  if (m->kept != Impl::Kept::ScalarHead)
    throw Error("backward_scalar_head: the last forward was not forward_scalar_head");
  m->kept = Impl::Kept::None;
  const int N = m->kept_B * m->kept_T;
  m->be.fill_zero(m->dln.data(), static_cast<int64_t>(N) * m->c.n_embd);
  block::linear_backward(m->pass, m->head_linear(), m->dln.data(), dvalues, m->lnf.data(), N);
  m->backward_from_dlnf(m->kept_inputs.data(), m->kept_B, m->kept_T, m->kept_all);
}

std::vector<float> TrainModel::scalar_head_values(const BatchView& batch) {
  m->check_batch(batch, /*needs_targets=*/false);
  m->forward_hidden(m->w, batch.inputs, batch.B, batch.T, 0.0f, 0.0f, 0, /*keep_all=*/false);
  return m->head_values(batch.B * batch.T);
}

Model& TrainModel::model() { return m->model; }

Backend& TrainModel::backend() { return m->be; }

}  // namespace engine
