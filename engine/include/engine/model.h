// Transformer model: configuration, parameters and the inference forward pass.
//
// Shape letters, used in every signature and comment of the engine:
//   B = batch size, T = sequence length (tokens processed in one step), C = channels (n_embd),
//   L = layers, NH = query heads, KVH = key/value heads, HS = head size (C / NH),
//   V = vocabulary size, maxT = longest sequence the model supports (context length),
//   F = feed-forward hidden size (4C for GPT-2).
//
// All parameters live in one f32 arena (m_params); each named tensor is a view into it. The layout of
// each parameter group is (L, ...) so layer l's weights are a fixed offset from the group's base,
// as in llm.c. Linear weights are stored (out, in) row-major, whatever the file on disk used.
// The forward pass is written once against Backend; the architecture is a small description.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/tokenizer.h"

namespace engine {

enum class Arch { GPT2 };
std::string arch_name(Arch a);

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

  int head_size() const { return n_embd / n_head; }
  // Throws engine::Error if any value is out of range or inconsistent (e.g. C % NH != 0).
  void validate(const std::string& source) const;
  uint64_t parameter_count() const;
};

// A named view into the parameter arena.
struct ParamTensor {
  std::string name;            // our canonical name, e.g. "h.qkv.weight" for the (L,3C,C) group
  std::vector<int64_t> shape;  // including the leading L for per-layer groups
  uint64_t offset = 0;         // in floats into the arena
  uint64_t numel = 0;
};

class KVCache;

class Model {
 public:
  // Allocates zeroed parameters for `config` (validated first).
  explicit Model(const ModelConfig& config);

  const ModelConfig& config() const { return m_config; }
  const std::vector<ParamTensor>& params() const { return m_param_tensors; }
  const ParamTensor& param(const std::string& name) const;  // throws if unknown
  float* param_data(const std::string& name) { return m_params.data() + param(name).offset; }
  const float* param_data(const std::string& name) const { return m_params.data() + param(name).offset; }
  std::span<float> all_params() { return m_params; }

  // GPT-2 initialisation (normal std 0.02, residual projections scaled by 1/sqrt(2L), zero biases,
  // unit norm gains), deterministic in `seed`.
  void init_random(uint64_t seed);

  const Tokenizer* tokenizer() const { return m_tokenizer.get(); }
  void set_tokenizer(std::unique_ptr<Tokenizer> tok) { m_tokenizer = std::move(tok); }

  // Human-readable description of where the model came from (path + format).
  std::string source;

 private:
  void add_param(const std::string& name, std::vector<int64_t> shape);

  ModelConfig m_config;
  std::vector<ParamTensor> m_param_tensors;
  std::vector<float> m_params;
  std::unique_ptr<Tokenizer> m_tokenizer;
};

// Optional outputs of a forward step.
struct ForwardOptions {
  bool all_logits = false;           // logits for every new position (else only the last)
  bool capture_attention = false;    // post-softmax probabilities per layer x head
};

// Runs a model on a backend with its own scratch memory. Not thread-safe; one per thread.
class Runner {
 public:
  Runner(const Model& model, Backend& backend);

  // Processes `tokens` (T new tokens) at positions cache.size() .. cache.size()+T-1, appending their
  // keys/values to `cache`. Returns logits: (T, V) when opts.all_logits else (1, V) for the last token.
  // Throws engine::Error when the cache would overflow or a token id is out of range.
  std::span<const float> forward(std::span<const int32_t> tokens, KVCache& cache, const ForwardOptions& opts = {});

  // After a forward with capture_attention: (L, NH, T, P+T) probabilities of that step.
  const std::vector<float>& attention() const { return m_attention; }

  const Model& model() const { return m_model; }
  Backend& backend() { return m_backend; }

 private:
  void ensure_scratch(int T);

  const Model& m_model;
  Backend& m_backend;
  int m_scratch_T = 0;
  // Activations for one step of T tokens.
  std::vector<float> m_residual, m_ln, m_qkv, m_atty, m_proj, m_fch, m_fch_gelu, m_logits, m_att_layer;
  std::vector<float> m_attention;
};

}  // namespace engine
