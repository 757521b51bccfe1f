// The model as training sees it: a forward pass that keeps its activations, the backward pass, and the
// list of tensors an optimizer updates. The transformer itself is the one Runner runs (engine/src/model/block.h);
// TrainModel adds the activation store, the loss and the order of the backward.
//
// The contract between the two halves of training:
//   - TrainModel (this file) turns a batch into a loss and gradients;
//   - the optimizer, schedules, data loaders, checkpoints and recipes (engine/train/*) only see
//     TrainableTensor lists and BatchView batches, so full fine-tuning and LoRA look the same to them.
//
// Loss = sum over positions of w[i] * xent(logits[i], target[i]) / sum of w[i]  (w = loss_weights, or 1
// everywhere when null; SFT passes 0 for prompt tokens). With label smoothing e the per-position loss is
// (1-e) * xent + e * mean over the vocabulary of -log p (PyTorch's CrossEntropyLoss(label_smoothing=e)).
// Gradients ACCUMULATE into the grad buffers (gradient accumulation = several forward_backward calls
// with grad_scale = 1/steps, then one optimizer step, then zero_grads()).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace engine {

class Backend;
class Model;

// Inputs and targets of one batch: B rows of T tokens, row-major.
struct BatchView {
  const int32_t* inputs = nullptr;      // (B,T)
  const int32_t* targets = nullptr;     // (B,T); a negative target means "no loss here" (weight 0)
  const float* loss_weights = nullptr;  // (B,T) or null (all 1)
  int B = 0;
  int T = 0;
};

struct TrainStepOptions {
  float dropout = 0.0f;  // on attention probabilities, residual branches and embeddings
  float label_smoothing = 0.0f;
  uint64_t dropout_seed = 0;            // the same seed gives the same masks (resume equals uninterrupted)
  bool checkpoint_activations = false;  // keep only layer inputs; recompute each layer in backward
};

// One tensor the optimizer updates, viewed as a flat buffer with its gradient.
struct TrainableTensor {
  std::string name;            // e.g. "h.qkv.weight", or "lora.h.qkv.A"
  std::vector<int64_t> shape;  // of ONE layer's matrix for per-layer groups (leading L removed)
  float* value = nullptr;
  float* grad = nullptr;
  uint64_t numel = 0;         // of the whole group (all layers)
  bool weight_decay = false;  // true for matrices (>= 2 dims per layer), false for biases and norm gains
};

struct LoraConfig {
  int rank = 0;                      // 0 = full fine-tuning
  float alpha = 16.0f;               // scale = alpha / rank
  float dropout = 0.0f;              // on the adapter input
  std::vector<std::string> targets;  // our group names, e.g. {"h.qkv.weight", "h.attn_proj.weight"}
  uint64_t seed = 0;                 // A ~ Kaiming-uniform as PEFT; B = 0
};

class TrainModel {
 public:
  // The model's parameters must all live in the f32 arena (load with LoadOptions{.dequantize = true}).
  // With lora.rank > 0 the base weights are frozen and only the adapters are trainable.
  TrainModel(Model& model, Backend& backend, const LoraConfig& lora = {});
  // A model that is only run, never trained: no gradient buffers, no adapters -- a frozen reference policy
  // (DPO, PPO, GRPO) or a reward model scoring replies. trainable() is empty and every backward throws.
  struct Frozen {};
  TrainModel(Model& model, Backend& backend, Frozen);
  ~TrainModel();

  // Forward + backward over one batch; returns the mean loss (as defined above). Gradients are added,
  // scaled by grad_scale. Throws engine::Error for out-of-range tokens or B*T over the set capacity.
  float forward_backward(const BatchView& batch, const TrainStepOptions& options, float grad_scale = 1.0f);
  // Forward only (no dropout), for validation loss.
  float loss(const BatchView& batch, float label_smoothing = 0.0f);

  std::vector<TrainableTensor> trainable();
  void zero_grads();

  // LoRA: adds scale * B·A into the base weights (after training, for a merged export). The adapters' B
  // are zeroed, so the model computes the same function before and after. Throws without LoRA.
  void merge_lora();

  // Forward only (no dropout): the (B*T, V) logits of B rows of T tokens, adapters applied. For checks
  // (merged vs unmerged, training forward vs inference forward) and evaluation.
  std::vector<float> logits(const int32_t* tokens, int B, int T);

  const LoraConfig& lora_config() const;

  // What generation runs: model() is the inference model over the same weights, and a LoRA model's adapters
  // are not part of those. While the returned guard lives, the LoRA target weights hold W + scale * B A, so
  // sampling (GRPO and PPO rollouts, a run's samples, greedy validation) follows the trained policy; the guard
  // then restores the base weights bit for bit (subtracting the delta again would not). Without adapters it
  // does nothing. The training forwards throw while it lives (they would add the adapters twice).
  class [[nodiscard]] AdaptersInWeights {
   public:
    ~AdaptersInWeights();
    AdaptersInWeights(AdaptersInWeights&& o) noexcept : m_owner(o.m_owner) { o.m_owner = nullptr; }
    AdaptersInWeights(const AdaptersInWeights&) = delete;
    AdaptersInWeights& operator=(const AdaptersInWeights&) = delete;
    AdaptersInWeights& operator=(AdaptersInWeights&&) = delete;

   private:
    friend class TrainModel;
    explicit AdaptersInWeights(TrainModel* owner) : m_owner(owner) {}
    TrainModel* m_owner;
  };
  AdaptersInWeights adapters_in_weights();

  // ---- Sequence-level objectives (reward model, DPO; PPO and GRPO build on the same calls) ----
  // A position i "counts" when targets[i] >= 0 and its loss weight (if any) is > 0; a row's sequence
  // log-prob is the sum of its counted token log-probs (align/preference_losses.h: sequence_logprobs).

  // Forward with dropout as in `options`: log p(targets[i] | inputs[..i]) at every position (B*T; 0 where
  // the position does not count), keeping what backward_token_logprobs needs. With `entropy`, it also receives
  // the exact entropy of the model's distribution over the vocabulary at every counted position (B*T; 0
  // elsewhere), H = logsumexp(z) - sum_v softmax(z)_v z_v of the same logits (PPO's entropy; TRL's
  // entropy_from_logits).
  std::vector<float> forward_token_logprobs(const BatchView& batch, const TrainStepOptions& options,
                                            std::vector<float>* entropy = nullptr);
  // Backward of the last forward_token_logprobs: dlogp (B*T) = d objective / d logp[i] and, when not null,
  // dentropy (B*T) = d objective / d H[i] (both already scaled by the caller); gradients are added. Throws when
  // the last forward was not forward_token_logprobs, or for a dentropy when that forward returned no entropy.
  void backward_token_logprobs(const float* dlogp, const float* dentropy = nullptr);
  // Forward only, no dropout, nothing kept (`entropy` as for forward_token_logprobs). use_adapters = false runs
  // a LoRA model's frozen base weights: the starting policy, which is a LoRA run's reference model at no extra
  // memory.
  std::vector<float> token_logprobs(const BatchView& batch, bool use_adapters = true,
                                    std::vector<float>* entropy = nullptr);

  // A scalar head (C -> 1, no bias) on the final-norm output: a reward model's score, a value head. It is
  // trainable with the model -- also in LoRA runs, as PEFT's modules_to_save -- and listed last by
  // trainable() as `name` with shape (1, C). `weights` holds its C initial values.
  void set_scalar_head(const std::string& name, std::vector<float> weights);
  bool has_scalar_head() const;
  const std::vector<float>& scalar_head() const;  // (C)
  // Forward with dropout as in `options`: the head's value at every position (B*T), keeping what
  // backward_scalar_head needs. Targets may be null (they are not used).
  std::vector<float> forward_scalar_head(const BatchView& batch, const TrainStepOptions& options);
  // Backward of the last forward_scalar_head: dvalues (B*T) = d objective / d value[i]; gradients are added.
  void backward_scalar_head(const float* dvalues);
  // Forward only, no dropout: the head's value at every position (B*T).
  std::vector<float> scalar_head_values(const BatchView& batch);

  Model& model();
  Backend& backend();  // where the model's tensors and gradients live (the optimizer step runs there too)

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace engine
