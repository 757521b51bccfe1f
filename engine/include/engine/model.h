// Transformer model: configuration, parameters and the inference forward pass.
//
// Shape letters, used in every signature and comment of the engine:
//   B = batch size, T = sequence length (tokens processed in one step), C = channels (n_embd),
//   L = layers, NH = query heads, KVH = key/value heads, HS = head size (C / NH),
//   V = vocabulary size, maxT = longest sequence the model supports (context length),
//   F = feed-forward hidden size (4C for GPT-2).
//   KVW = KVH*HS, the width of one position's keys (or values).
//
// All parameters live in one f32 arena (m_params); each named tensor is a view into it. The layout of
// each parameter group is (L, ...) so layer l's weights are a fixed offset from the group's base,
// as in llm.c. Linear weights are stored (out, in) row-major, whatever the file on disk used.
// Exception: linear-weight groups named at construction as "external" (a GGUF file's f16 / q8_0 /
// q4_0 / q4_K / q6_K weights, and f32 ones, used in place from the memory map) take no arena space;
// each layer's matrix is a WeightRef into memory the Model keeps alive (keep_alive), and param_data()
// on such a group throws (f32_weight widens one layer for readers that need f32). The forward pass reads every linear
// weight through weight(name, layer), which works for both kinds. The transformer is written once against Backend
// (engine/src/model/block.h) and run by Runner (inference) and TrainModel (training); the architecture is a small
// description (ArchSpec, derived from ModelConfig): which norm, which positions, which MLP, which biases, which head.
//
// Parameter groups per architecture (GPT-2's names and order are llm.c's and must not change: the
// llm.c checkpoint loader copies tensors by index):
//   GPT-2: wte (V,C), wpe (maxT,C), h.ln1.{weight,bias} (L,C), h.qkv.weight (L,3C,C), h.qkv.bias (L,3C),
//          h.attn_proj.{weight (L,C,C), bias (L,C)}, h.ln2.{weight,bias} (L,C), h.fc.{weight (L,F,C),
//          bias (L,F)}, h.fc_proj.{weight (L,C,F), bias (L,C)}, lnf.{weight,bias} (C), [lm_head.weight
//          (V,C) unless tie_embeddings: a GGUF whose output.weight is not a copy of token_embd, or an HF
//          directory with tie_word_embeddings false; last, so the first 16 stay llm.c's].
//   Llama: wte (V,C), h.attn_norm.weight (L,C), h.wq.weight (L,C,C), h.wk.weight (L,KVW,C),
//          h.wv.weight (L,KVW,C), [h.wq.bias (L,C), h.wk.bias (L,KVW), h.wv.bias (L,KVW) when qkv_bias],
//          h.wo.weight (L,C,C), h.ffn_norm.weight (L,C), h.w_gate.weight (L,F,C), h.w_up.weight (L,F,C),
//          h.w_down.weight (L,C,F), norm.weight (C), [lm_head.weight (V,C) unless tie_embeddings].
//   Rotary q/k weights are in the layout `rope_interleaved` names (see ModelConfig).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/chat_template.h"
#include "engine/tokenizer.h"
#include "engine/weight_ref.h"

namespace engine {

// GPT2: learned positions, LayerNorm, GELU MLP, biases everywhere, tied head.
// Llama: the Llama family (Llama, Mistral without sliding window, Qwen2 = Llama + q/k/v biases).
enum class Arch { GPT2, Llama };
std::string arch_name(Arch a);  // "gpt2", "llama"

struct ModelConfig {
  Arch arch = Arch::GPT2;
  int n_layer = 0;      // L
  int n_embd = 0;       // C
  int n_head = 0;       // NH
  int n_kv_head = 0;    // KVH (== NH for GPT-2)
  int vocab_size = 0;   // V
  int max_seq_len = 0;  // maxT
  int ffn_dim = 0;      // F
  float norm_eps = 1e-5f;
  // Llama family only (GPT-2 requires the defaults below except rope_*, which it ignores):
  float rope_theta = 10000.0f;  // rotary base: pair i turns by pos * theta^(-2i/HS)
  // false: HF layout, pair i is (x[i], x[i + HS/2]) ("rotate half"); true: pair i is (x[2i], x[2i+1]),
  // the layout GGUF files store q/k weights in (llama.cpp permutes the rows on conversion).
  bool rope_interleaved = false;
  bool tie_embeddings = true;  // logits through wte (else a separate lm_head.weight)
  bool qkv_bias = false;       // Qwen2: q/k/v projections have biases (GPT-2 always has them)

  int head_size() const { return n_embd / n_head; }
  int kv_width() const { return n_kv_head * head_size(); }  // KVW
  // Throws engine::Error if any value is out of range or inconsistent (e.g. C % NH != 0).
  void validate(const std::string& source) const;
  uint64_t parameter_count() const;
};

// The per-architecture description the forward pass branches on; nothing else differs.
struct ArchSpec {
  enum class Norm { LayerNorm, RMSNorm } norm = Norm::LayerNorm;
  enum class Positions { Learned, Rope } positions = Positions::Learned;
  enum class Mlp { Gelu, SwiGLU } mlp = Mlp::Gelu;
  bool fused_qkv = true;  // one (3C, C) matmul (GPT-2) or three separate ones (Llama: KVW may be < C)
  bool qkv_bias = true;
  bool linear_bias = true;  // biases on attention output and MLP projections and norm biases (GPT-2)
  bool tied_head = true;
};
ArchSpec arch_spec(const ModelConfig& c);

// A named view into the parameter arena.
struct ParamTensor {
  std::string name;            // our canonical name, e.g. "h.qkv.weight" for the (L,3C,C) group
  std::vector<int64_t> shape;  // including the leading L for per-layer groups
  uint64_t offset = 0;         // in floats into the arena (unused when external)
  uint64_t numel = 0;
  bool external = false;  // stored outside the arena, in a file encoding (see QuantWeight)
};

// A linear-weight group kept in the encoding of the file it came from: one matrix per layer for the
// per-layer "h.*" groups, else one. Layers may differ in encoding (Q4_K_M files mix q4_K and q6_K).
struct QuantWeight {
  std::string name;
  std::vector<WeightRef> layers;
};

class KVCache;
namespace block {
struct CachedSequence;  // engine/src/model/block.h
struct Weights;
}  // namespace block

class Model {
 public:
  // Allocates zeroed parameters for `config` (validated first). Groups named in `external` get no
  // arena floats; each must be a linear weight group ("wte", "lm_head.weight" or an "h.*.weight"
  // matrix group), and every one of its layers must be given by set_external_weight before a forward.
  explicit Model(const ModelConfig& config, const std::vector<std::string>& external = {});

  const ModelConfig& config() const { return m_config; }
  const std::vector<ParamTensor>& params() const { return m_param_tensors; }
  const ParamTensor& param(const std::string& name) const;  // throws if unknown
  bool has_param(const std::string& name) const;
  // The f32 values of an arena tensor; throws engine::Error naming the tensor when it is external.
  float* param_data(const std::string& name);
  const float* param_data(const std::string& name) const;
  // The arena (external groups are not in it).
  std::span<float> all_params() { return m_params; }

  // Layer `layer`'s matrix of linear-weight group `name` (layer 0 for "wte" / "lm_head.weight"), in
  // whatever encoding it is stored. Throws for unknown names, layers out of range and external
  // layers not yet set.
  WeightRef weight(const std::string& name, int layer = 0) const;
  // Layer `layer` of linear-weight group `name` as f32 values, for readers that need f32 and read
  // each weight once (the HF and GGUF writers): a view into the arena or into an f32 file, or a copy
  // widened from the file's encoding, which `owned` keeps alive as long as the caller holds it.
  struct F32Weight {
    const float* data = nullptr;
    std::shared_ptr<const std::vector<float>> owned;
  };
  F32Weight f32_weight(const std::string& name, int layer = 0) const;
  // The external storage of `name`, or null when it lives in the arena.
  const QuantWeight* quant_weight(const std::string& name) const;
  bool has_external_weights() const { return !m_quant.empty(); }
  // Points layer `layer` of external group `name` at `w` (memory kept alive through keep_alive).
  void set_external_weight(const std::string& name, int layer, WeightRef w);
  // Keeps `owner` (a mapped file, a widened copy) alive as long as the model.
  void keep_alive(std::shared_ptr<const void> owner) { m_keep_alive.push_back(std::move(owner)); }
  // How the linear weights are stored, e.g. "f32", "q8_0", "q4_0 (mixed: q6_K wte)": the encoding of
  // most weights, then the others with the groups that use them.
  std::string weight_summary() const;

  // GPT-2 initialisation for every architecture (normal std 0.02, residual projections -- attn_proj/wo
  // and fc_proj/w_down -- scaled by 1/sqrt(2L), zero biases, unit norm gains), deterministic in `seed`.
  // External (file-encoded) groups are read-only and left as they are.
  void init_random(uint64_t seed);

  const Tokenizer* tokenizer() const { return m_tokenizer.get(); }
  void set_tokenizer(std::unique_ptr<Tokenizer> tok) { m_tokenizer = std::move(tok); }

  // The chat format the model was trained with (set by load_model from the source's template; Plain
  // when it has none we recognise). Its source() is the template text as found, kept for exports.
  const ChatTemplate& chat_template() const { return m_chat_template; }
  void set_chat_template(ChatTemplate t) { m_chat_template = std::move(t); }
  // Why the template is Plain although the model came with one ("" otherwise): a warning for the app.
  std::string chat_template_note;

  // Human-readable description of where the model came from (path + format).
  std::string source;

 private:
  void add_param(const std::string& name, std::vector<int64_t> shape);

  ModelConfig m_config;
  std::vector<ParamTensor> m_param_tensors;
  std::vector<float> m_params;
  std::vector<QuantWeight> m_quant;
  std::vector<std::shared_ptr<const void>> m_keep_alive;
  std::unique_ptr<Tokenizer> m_tokenizer;
  ChatTemplate m_chat_template;
};

// Optional outputs of a forward step.
struct ForwardOptions {
  bool all_logits = false;         // logits for every new position (else only the last)
  bool capture_attention = false;  // post-softmax probabilities per layer x head
  bool capture_residual = false;   // the residual stream after the embeddings and after each layer
};

// One sequence's part of a batched step (Runner::forward_batch): its new tokens and its own cache.
struct SequenceStep {
  std::span<const int32_t> tokens;
  KVCache* cache = nullptr;
};

// Runs a model on a backend with its own scratch memory. Not thread-safe; one per thread.
class Runner {
 public:
  Runner(const Model& model, Backend& backend);
  ~Runner();

  // Processes `tokens` (T new tokens) at positions cache.size() .. cache.size()+T-1, appending their
  // keys/values to `cache`. Returns logits: (T, V) when opts.all_logits else (1, V) for the last token.
  // Throws engine::Error when the cache would overflow or a token id is out of range.
  std::span<const float> forward(std::span<const int32_t> tokens, KVCache& cache, const ForwardOptions& opts = {});

  // Extends several sequences, each with its own cache and any number of new tokens (decode: one each), in
  // one step: every weight is read once for all of them, which is what makes batched decode cheap (decode
  // is bound by reading the weights). Returns each sequence's last-token logits, (S, V) in the order given.
  // Checks everything (shapes, capacities, token ids, no cache given twice) before any cache is written.
  std::span<const float> forward_batch(std::span<const SequenceStep> steps);

  // After a forward with capture_attention: (L, NH, T, P+T) probabilities of that step.
  const std::vector<float>& attention() const { return m_attention; }
  // After a forward with capture_residual: (L+1, T, C); row 0 is the embedding output, row l the
  // stream after layer l-1 (row L is what the final norm and head turn into the logits).
  const std::vector<float>& residual_stream() const { return m_residual_stream; }

  // The final norm and the output head: x (rows, C) -> logits (rows, V). forward() ends with exactly
  // this call, so applied to residual_stream() row L it gives the model's logits bit for bit (the
  // logit lens applies it to every row).
  void head_forward(float* logits, const float* x, int rows);

  const Model& model() const { return m_model; }
  Backend& backend() { return m_backend; }

 private:
  void ensure_scratch(int T);
  const block::Weights& weights();
  void check_step(std::span<const int32_t> tokens, const KVCache& cache) const;
  // The embedding and every layer over the stacked rows of `seqs` (N in all); the residual stream after the
  // last layer is left in m_residual.
  void run_layers(const int32_t* tokens, std::span<const block::CachedSequence> seqs, int N,
                  const ForwardOptions& opts);

  const Model& m_model;
  Backend& m_backend;
  // The model's parameters as the block reads them, bound on first use: a loaded Model's weights stay where
  // they are (values may change, e.g. a LoRA merge; their addresses do not).
  std::unique_ptr<block::Weights> m_weights;
  int m_scratch_T = 0;
  // Activations for one step of T tokens.
  // m_qkv: GPT-2's fused (T,3C) rows, or Llama's q (T,C) (its keys/values go straight into the cache).
  // m_fch / m_fch_gelu: GPT-2's fc output and its GELU, or Llama's gate and up projections (T,F).
  std::vector<float> m_residual, m_ln, m_qkv, m_atty, m_proj, m_fch, m_fch_gelu, m_logits;
  std::vector<int32_t> m_batch_tokens;  // forward_batch's tokens, stacked
  std::vector<float> m_attention;
  std::vector<float> m_residual_stream;
};

}  // namespace engine
