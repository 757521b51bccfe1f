// Model: parameter layout, validation and initialisation. The forward pass is in block.cpp.
#include "engine/model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <utility>

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/quant.h"

namespace engine {

std::string arch_name(Arch a) {
  switch (a) {
    case Arch::GPT2: return "gpt2";
    case Arch::Llama: return "llama";
  }
  return "unknown";
}

ArchSpec arch_spec(const ModelConfig& c) {
  ArchSpec s;
  s.tied_head = c.tie_embeddings;
  if (c.arch == Arch::Llama) {
    s.norm = ArchSpec::Norm::RMSNorm;
    s.positions = ArchSpec::Positions::Rope;
    s.mlp = ArchSpec::Mlp::SwiGLU;
    s.fused_qkv = false;
    s.qkv_bias = c.qkv_bias;
    s.linear_bias = false;
  }
  return s;
}

void ModelConfig::validate(const std::string& source) const {
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) throw Error(source + ": invalid model config: " + what);
  };
  // Caps keep every derived size far from overflow and refuse configs that would ask for absurd
  // allocations (a crafted file must not make us allocate terabytes).
  require(n_layer >= 1 && n_layer <= 1024, "n_layer must be in [1, 1024], got " + std::to_string(n_layer));
  require(n_embd >= 1 && n_embd <= 65536, "n_embd must be in [1, 65536], got " + std::to_string(n_embd));
  require(n_head >= 1 && n_head <= 1024, "n_head must be in [1, 1024], got " + std::to_string(n_head));
  require(n_embd % n_head == 0,
          "n_embd (" + std::to_string(n_embd) + ") must be divisible by n_head (" + std::to_string(n_head) + ")");
  require(arch == Arch::GPT2 || arch == Arch::Llama, "unknown architecture");
  require(n_kv_head >= 1 && n_kv_head <= n_head && n_head % n_kv_head == 0, "n_kv_head must divide n_head");
  // GPT-2's fused qkv layout is 3C wide: every query head has its own key/value head.
  require(arch != Arch::GPT2 || n_kv_head == n_head, "GPT-2 needs n_kv_head == n_head");
  // GPT-2 always has (only) its own biases; its head is wte or, in GGUF files llama.cpp quantized with
  // a separate encoding for output.weight, an untied lm_head.weight.
  require(arch != Arch::GPT2 || !qkv_bias, "GPT-2 has no separate qkv_bias");
  // Rotary pairs need an even head size.
  require(arch != Arch::Llama || head_size() % 2 == 0,
          "rotary positions need an even head size, got " + std::to_string(head_size()));
  require(std::isfinite(rope_theta) && rope_theta > 1.0f && rope_theta <= 1e12f, "rope_theta must be in (1, 1e12]");
  require(vocab_size >= 1 && vocab_size <= (1 << 22),
          "vocab_size must be in [1, 4194304], got " + std::to_string(vocab_size));
  require(max_seq_len >= 1 && max_seq_len <= (1 << 20),
          "context length must be in [1, 1048576], got " + std::to_string(max_seq_len));
  require(ffn_dim >= 1 && ffn_dim <= (1 << 20), "ffn_dim must be in [1, 1048576], got " + std::to_string(ffn_dim));
  require(std::isfinite(norm_eps) && norm_eps > 0.f && norm_eps < 1.f, "norm epsilon must be in (0, 1)");
  const uint64_t n = parameter_count();
  require(n <= (uint64_t{1} << 36), "model has too many parameters for this build (" + std::to_string(n) + ")");
}

uint64_t ModelConfig::parameter_count() const {
  const uint64_t L = n_layer, C = n_embd, V = vocab_size, T = max_seq_len, F = ffn_dim;
  const char* what = "parameter count";
  if (arch == Arch::Llama) {
    // n_kv_head <= n_head is checked by validate() before this is trusted; clamp so a bad config
    // reaching here (validate calls us last) cannot make KVW wrap.
    const uint64_t KVW = n_head > 0 ? checked_mul(static_cast<uint64_t>(std::max(n_kv_head, 0)),
                                                  static_cast<uint64_t>(n_embd / n_head), what)
                                    : 0;
    uint64_t per_layer = checked_mul(2, C, what);                                                  // two norms
    per_layer = checked_add(per_layer, checked_mul(2 * C, C, what), what);                         // wq, wo
    per_layer = checked_add(per_layer, checked_mul(2 * KVW, C, what), what);                       // wk, wv
    if (qkv_bias) per_layer = checked_add(per_layer, checked_add(C, 2 * KVW, what), what);         // bq, bk, bv
    per_layer = checked_add(per_layer, checked_mul(3 * F, C, what), what);                         // gate, up, down
    uint64_t total = checked_add(checked_mul(V, C, what), checked_mul(L, per_layer, what), what);  // wte, layers
    total = checked_add(total, C, what);                                                           // final norm
    if (!tie_embeddings) total = checked_add(total, checked_mul(V, C, what), what);                // lm_head
    return total;
  }
  uint64_t per_layer = checked_add(checked_mul(4, C, what), checked_mul(3 * C, C + 1, what), what);  // ln1, ln2, qkv
  per_layer = checked_add(per_layer, checked_mul(C, C + 1, what), what);                             // attn proj
  per_layer = checked_add(per_layer, checked_mul(F, C + 1, what), what);                             // fc
  per_layer = checked_add(per_layer, checked_add(checked_mul(C, F, what), C, what), what);           // fc proj
  uint64_t total = checked_add(checked_mul(V, C, what), checked_mul(T, C, what), what);
  total = checked_add(total, checked_mul(L, per_layer, what), what);
  total = checked_add(total, 2 * C, what);
  if (!tie_embeddings) total = checked_add(total, checked_mul(V, C, what), what);  // lm_head
  return total;
}

Model::Model(const ModelConfig& config, const std::vector<std::string>& external) : m_config(config) {
  m_config.validate("model");
  const int64_t L = config.n_layer, C = config.n_embd, V = config.vocab_size, T = config.max_seq_len,
                F = config.ffn_dim;
  if (config.arch == Arch::Llama) {
    const int64_t KVW = config.kv_width();
    add_param("wte", {V, C});
    add_param("h.attn_norm.weight", {L, C});
    add_param("h.wq.weight", {L, C, C});
    add_param("h.wk.weight", {L, KVW, C});
    add_param("h.wv.weight", {L, KVW, C});
    if (config.qkv_bias) {
      add_param("h.wq.bias", {L, C});
      add_param("h.wk.bias", {L, KVW});
      add_param("h.wv.bias", {L, KVW});
    }
    add_param("h.wo.weight", {L, C, C});
    add_param("h.ffn_norm.weight", {L, C});
    add_param("h.w_gate.weight", {L, F, C});
    add_param("h.w_up.weight", {L, F, C});
    add_param("h.w_down.weight", {L, C, F});
    add_param("norm.weight", {C});
    if (!config.tie_embeddings) add_param("lm_head.weight", {V, C});
  } else {
    // Same order as llm.c's 16 parameter tensors.
    add_param("wte", {V, C});
    add_param("wpe", {T, C});
    add_param("h.ln1.weight", {L, C});
    add_param("h.ln1.bias", {L, C});
    add_param("h.qkv.weight", {L, 3 * C, C});
    add_param("h.qkv.bias", {L, 3 * C});
    add_param("h.attn_proj.weight", {L, C, C});
    add_param("h.attn_proj.bias", {L, C});
    add_param("h.ln2.weight", {L, C});
    add_param("h.ln2.bias", {L, C});
    add_param("h.fc.weight", {L, F, C});
    add_param("h.fc.bias", {L, F});
    add_param("h.fc_proj.weight", {L, C, F});
    add_param("h.fc_proj.bias", {L, C});
    add_param("lnf.weight", {C});
    add_param("lnf.bias", {C});
    if (!config.tie_embeddings) add_param("lm_head.weight", {V, C});
  }
  for (const std::string& name : external) {
    ParamTensor* p = nullptr;
    for (auto& t : m_param_tensors)
      if (t.name == name) p = &t;
    if (!p) throw Error("model has no parameter '" + name + "' to keep external");
    // Only matrices the forward reads through weight(): everything else is read as f32 directly.
    const bool linear = name == "wte" || name == "lm_head.weight" ||
                        (name.starts_with("h.") && name.ends_with(".weight") && p->shape.size() == 3);
    if (!linear) throw Error("parameter '" + name + "' is not a linear weight and cannot be kept external");
    if (p->external) throw Error("parameter '" + name + "' listed twice as external");
    p->external = true;
    const size_t layers = p->shape.size() == 3 ? static_cast<size_t>(p->shape[0]) : 1;
    m_quant.push_back({name, std::vector<WeightRef>(layers, WeightRef{DType::F32, nullptr})});
  }
  uint64_t total = 0, arena = 0;
  for (auto& p : m_param_tensors) {
    total += p.numel;
    if (p.external) continue;
    p.offset = arena;
    arena += p.numel;
  }
  if (total != m_config.parameter_count()) throw Error("internal: parameter layout disagrees with parameter_count");
  m_params.assign(arena, 0.0f);
}

float* Model::param_data(const std::string& name) { return const_cast<float*>(std::as_const(*this).param_data(name)); }

const float* Model::param_data(const std::string& name) const {
  const ParamTensor& p = param(name);
  if (p.external) {
    const QuantWeight* q = quant_weight(name);
    const std::string enc = q && !q->layers.empty() ? std::string(dtype_name(q->layers[0].dtype)) : "a file encoding";
    throw Error("parameter '" + name + "' is kept in " + enc +
                " from the model file and has no f32 values (load with dequantize to get them)");
  }
  return m_params.data() + p.offset;
}

const QuantWeight* Model::quant_weight(const std::string& name) const {
  for (const auto& q : m_quant)
    if (q.name == name) return &q;
  return nullptr;
}

void Model::set_external_weight(const std::string& name, int layer, WeightRef w) {
  for (auto& q : m_quant)
    if (q.name == name) {
      if (layer < 0 || static_cast<size_t>(layer) >= q.layers.size())
        throw Error("set_external_weight: layer " + std::to_string(layer) + " out of range for '" + name + "'");
      if (!w.data) throw Error("set_external_weight: no data for '" + name + "'");
      q.layers[static_cast<size_t>(layer)] = w;
      return;
    }
  throw Error("set_external_weight: '" + name + "' is not an external weight");
}

WeightRef Model::weight(const std::string& name, int layer) const {
  const ParamTensor& p = param(name);
  const int64_t layers = p.shape.size() == 3 ? p.shape[0] : 1;
  if (layer < 0 || layer >= layers)
    throw Error("weight: layer " + std::to_string(layer) + " out of range for '" + name + "'");
  if (p.external) {
    const WeightRef& w = quant_weight(name)->layers[static_cast<size_t>(layer)];
    if (!w.data) throw Error("weight: layer " + std::to_string(layer) + " of '" + name + "' was never set");
    return w;
  }
  return {DType::F32, m_params.data() + p.offset + static_cast<uint64_t>(layer) * (p.numel / layers)};
}

Model::F32Weight Model::f32_weight(const std::string& name, int layer) const {
  const WeightRef w = weight(name, layer);
  if (const float* f = w.f32()) return {f, nullptr};
  const ParamTensor& p = param(name);
  const int64_t cols = p.shape.back();
  const int64_t rows = static_cast<int64_t>(p.numel / (p.shape.size() == 3 ? p.shape[0] : 1)) / cols;
  auto wide = std::make_shared<std::vector<float>>(static_cast<size_t>(rows * cols));
  dequantize_rows(w.dtype, w.data, static_cast<int>(cols), 0, rows, wide->data());
  return {wide->data(), std::move(wide)};
}

std::string Model::weight_summary() const {
  // Elements per encoding over the linear weights, and which groups use each encoding.
  std::map<DType, uint64_t> elems;
  std::map<DType, std::vector<std::string>> users;
  for (const auto& p : m_param_tensors) {
    const bool linear = p.name == "wte" || p.name == "lm_head.weight" ||
                        (p.name.starts_with("h.") && p.name.ends_with(".weight") && p.shape.size() == 3);
    if (!linear) continue;
    const QuantWeight* q = p.external ? quant_weight(p.name) : nullptr;
    const size_t layers = p.shape.size() == 3 ? static_cast<size_t>(p.shape[0]) : 1;
    std::map<DType, size_t> per_group;
    for (size_t l = 0; l < layers; ++l) ++per_group[q ? q->layers[l].dtype : DType::F32];
    for (const auto& [t, n] : per_group) {
      elems[t] += p.numel / layers * n;
      users[t].push_back(
          n == layers ? p.name : p.name + " (" + std::to_string(n) + " of " + std::to_string(layers) + " layers)");
    }
  }
  if (elems.empty()) return "f32";
  DType main = elems.begin()->first;
  for (const auto& [t, n] : elems)
    if (n > elems[main]) main = t;
  std::string out(dtype_name(main));
  std::string mixed;
  for (const auto& [t, names] : users) {
    if (t == main) continue;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    mixed += (mixed.empty() ? "" : "; ") + std::string(dtype_name(t)) + " " + list;
  }
  return mixed.empty() ? out : out + " (mixed: " + mixed + ")";
}

void Model::add_param(const std::string& name, std::vector<int64_t> shape) {
  ParamTensor p;
  p.name = name;
  p.numel = 1;
  for (int64_t d : shape) p.numel *= static_cast<uint64_t>(d);
  p.shape = std::move(shape);
  m_param_tensors.push_back(std::move(p));
}

const ParamTensor& Model::param(const std::string& name) const {
  for (const auto& p : m_param_tensors)
    if (p.name == name) return p;
  throw Error("model has no parameter '" + name + "'");
}

bool Model::has_param(const std::string& name) const {
  for (const auto& p : m_param_tensors)
    if (p.name == name) return true;
  return false;
}

void Model::init_random(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float std_base = 0.02f;
  const float std_resid = 0.02f / std::sqrt(2.0f * m_config.n_layer);
  for (const auto& p : m_param_tensors) {
    if (p.external) continue;  // read-only file data
    float* d = m_params.data() + p.offset;
    const bool is_gain = (p.name.find("ln") != std::string::npos || p.name.find("norm") != std::string::npos) &&
                         p.name.ends_with(".weight");
    const bool is_bias = p.name.ends_with(".bias");
    if (is_gain) {
      std::fill(d, d + p.numel, 1.0f);
    } else if (is_bias) {
      std::fill(d, d + p.numel, 0.0f);
    } else {
      const bool resid = p.name == "h.attn_proj.weight" || p.name == "h.fc_proj.weight" || p.name == "h.wo.weight" ||
                         p.name == "h.w_down.weight";
      const float s = resid ? std_resid : std_base;
      for (uint64_t i = 0; i < p.numel; ++i) d[i] = normal(rng) * s;
    }
  }
}

}  // namespace engine
