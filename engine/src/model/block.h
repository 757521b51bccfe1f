// The transformer written once against Backend: embedding, the pre-norm block (attention, then MLP)
// and the final norm + head, each forward beside its backward, for every architecture (the ArchSpec
// picks the norm, the positions, the MLP, the biases and the head; nothing else differs).
//
// Every way the engine runs a model goes through these functions:
//   - Runner (model/runner.cpp): inference with a KV cache -- prefill, decode, and through it the
//     generator, perplexity and the inspector (attention capture, logit lens);
//   - TrainModel (train/train_model.cpp): training -- activations kept per layer (or recomputed), the
//     backward, dropout, LoRA adapters.
// A value or reward head is another `Linear` given to linear_forward after final_norm_forward, not a
// copy of the block.
//
// The two ways a Pass runs attention (see Pass::sequences):
//   - with KV caches (inference): each sequence's T new keys/values are written into its cache rows
//     P..P+T-1 first, then its new queries attend over its P+T cached rows. Because the cache holds
//     exactly what a full forward computed (rotary keys already turned for their own position), decode
//     logits equal the full forward's. Several sequences (each with its own cache, position and number
//     of new tokens) can share one pass: their rows are stacked, so every projection reads its weights
//     once for all of them -- batched decode, the step continuous batching is built from.
//   - without one (training): B sequences of T tokens at positions 0..T-1, causal within each sequence;
//     the softmax probabilities are kept for the backward.
//
// Conventions (backend.h): backward ops ADD into gradients; the caller zeroes them. A null gradient
// pointer means "frozen" (LoRA's base weights, inference) and skips that work.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend.h"
#include "engine/model.h"
#include "engine/weight_ref.h"

namespace engine {

class KVCache;
class LoraAdapters;

namespace block {

// A norm's gain and bias (bias: LayerNorm only) and their gradients (null when not trained).
struct Norm {
  const float* w = nullptr;
  const float* b = nullptr;
  float* dw = nullptr;
  float* db = nullptr;
};

// y (N,OC) = x (N,C) W^T + b, W (OC,C) in its stored encoding, plus a LoRA adapter's path when it has one.
struct Linear {
  WeightRef w;
  const float* b = nullptr;
  float* dw = nullptr;  // gradients: only for f32 weights that are trained
  float* db = nullptr;
  int C = 0, OC = 0;
  int layer = 0;
  int adapter = -1;  // LoRA adapter index (LoraAdapters::find), -1: none
};

struct Layer {
  Norm n1, n2;
  Linear qkv;      // fused (GPT-2)
  Linear q, k, v;  // separate (Llama: KVW may be < C)
  Linear o;
  Linear in, up, down;  // in: GPT-2 fc / Llama gate; up: Llama only
};

struct Weights {
  WeightRef wte;  // (V,C), any encoding
  float* dwte = nullptr;
  const float* wpe = nullptr;  // (maxT,C), learned positions only
  float* dwpe = nullptr;
  Norm nf;
  Linear head;  // the LM head: wte when tied, else lm_head.weight
  std::vector<Layer> layers;
};

// Binds the model's parameters. grads: a buffer parallel to model.all_params() whose slices become the
// gradients (full training), or null (inference, LoRA). adapters: LoRA adapters whose targets are marked
// on the linears, or null. Gradients need every weight in the f32 arena.
Weights bind(const Model& model, float* grads, const LoraAdapters* adapters);

// One layer's activations for N = B*T rows. Inference reuses one set for every layer and lets x_mid alias
// the residual stream and fup alias fact (the block writes each only after its last read of the other).
struct LayerActs {
  float *ln1 = nullptr, *ln1_mean = nullptr, *ln1_rstd = nullptr;  // mean/rstd null: not kept
  // Without a cache: GPT-2's (N,3C) rows [q|k|v], or Llama's q (N,C) then k (N,KVW) then v (N,KVW).
  // With one cache: GPT-2's fused rows, or Llama's q alone (its keys and values go straight to the cache);
  // with several: Llama's q, k, v as without a cache (keys and values are then copied to each cache).
  float* qkv = nullptr;
  float* att = nullptr;  // probabilities: training (B,NH,T,T); inference (NH,T,P+T) when captured, else null
  float* atty = nullptr;
  float* x_mid = nullptr;  // the residual stream after the attention block
  float *ln2 = nullptr, *ln2_mean = nullptr, *ln2_rstd = nullptr;
  float *fch = nullptr, *fup = nullptr, *fact = nullptr;  // (N,F): fc / gate, up (SwiGLU), activation
  float* branch = nullptr;                                // (N,C): a block's output before its residual add
};

// Gradient scratch of layer_backward, sized for N rows (grow()).
struct BackwardScratch {
  std::vector<float> dln, datty, dbranch, dqkv, dfch, dfup, dfact;
  void grow(int64_t N, const ModelConfig& c);
};

// One sequence's part of a cached pass: rows row0..row0+T-1 of the pass are its new tokens, at positions
// P..P+T-1 of its cache (P = cache->size() before the step).
struct CachedSequence {
  KVCache* cache = nullptr;
  int P = 0, T = 0, row0 = 0;
};

// What one pass over the model does.
struct Pass {
  Pass(const Model& model, Backend& backend) : c(model.config()), spec(arch_spec(c)), be(backend) {}
  const ModelConfig& c;
  ArchSpec spec;
  Backend& be;
  LoraAdapters* adapters = nullptr;
  // Inference: the sequences this step extends (consecutive rows; B = 1 and T = their total). Training:
  // empty, B sequences of T tokens at positions 0..T-1.
  std::span<const CachedSequence> sequences;
  int B = 1, T = 0;      // N = B*T rows
  float dropout = 0.0f;  // on attention probabilities, block outputs and the embedding (training)
  float lora_dropout = 0.0f;
  uint64_t seed = 0;  // dropout masks are functions of (seed, layer, site)

  int N() const { return B * T; }
  int qkv_width() const { return c.n_embd + 2 * c.kv_width(); }
};

// x (N,C) = dropout(wte[tokens] + wpe[position]).
void embed_forward(const Pass& p, const Weights& w, const int32_t* tokens, float* x);
// dx (N,C): the gradient at the embedding output (turned into the pre-dropout gradient in place);
// adds into dwte / dwpe.
void embed_backward(const Pass& p, const Weights& w, const int32_t* tokens, float* dx);

// x_out (N,C) = layer l of x_in (may alias x_in when a.x_mid aliases both: inference).
void layer_forward(const Pass& p, int l, const Layer& w, const LayerActs& a, const float* x_in, float* x_out);
// d (N,C) holds d loss / d x_out on entry and d loss / d x_in on return. a must hold the activations of the
// forward from x_in (kept, or recomputed bit for bit: dropout masks are functions of their seed).
void layer_backward(const Pass& p, int l, const Layer& w, const LayerActs& a, const float* x_in, float* d,
                    BackwardScratch& s);

// The final norm over `rows` rows (mean / rstd may be null).
void final_norm_forward(const Pass& p, const Weights& w, float* out, float* mean, float* rstd, const float* x,
                        int rows);
void final_norm_backward(const Pass& p, const Weights& w, float* dx, const float* dout, const float* x,
                         const float* mean, const float* rstd, int rows);

// A linear layer (and its adapter) over N rows: the LM head, a value or reward head, or a block's projection.
void linear_forward(const Pass& p, const Linear& x, float* out, const float* inp, int N);
// dinp (N,C) += dout W (dinp may be null); dW, db (when not null) += their gradients.
void linear_backward(const Pass& p, const Linear& x, float* dinp, const float* dout, const float* inp, int N);

}  // namespace block
}  // namespace engine
