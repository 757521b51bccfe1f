// GGUF models (llama.cpp's format): general.architecture "gpt2", "llama" or "qwen2" read into our f32
// parameter arena, and the tokenizer built from the tokenizer.ggml.* metadata.
//
// Hyper-parameters come from <arch>.block_count / embedding_length / feed_forward_length /
// attention.head_count[_kv] / context_length / attention.layer_norm[_rms]_epsilon / rope.freq_base;
// every value is range-checked, the result goes through ModelConfig::validate, and every tensor's
// shape is compared with what the config implies before its bytes are used (reliability.md §1.7
// case 16). GGUF linear weights have ne = [in, out], i.e. row-major (out, in): our layout, copied
// without a transpose. llama.cpp's converter permutes Llama q/k rows into the interleaved rotary
// layout, so GGUF "llama" models get rope_interleaved = true; "qwen2" uses NEOX (rotate-half) rope in
// llama.cpp and its converter does not permute, so rope_interleaved = false.
//
// For now every tensor (f32, f16, bf16, q8_0, q4_0, q4_K, q6_K) is DEQUANTIZED into the f32 arena at
// load and its pages are released after the copy; using the quantized weights in place (the q8_0 /
// q4_0 / K-quant matvec kernels of quant.h) is the next step.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/model_loader.h"
#include "engine/quant.h"
#include "io/hf_common.h"

namespace engine::io {
namespace {

std::string gguf_shape_str(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// An unsigned metadata integer that must lie in [lo, hi] (any unsigned type; a signed one when >= 0).
int meta_int(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi) {
  const GgufValue* v = f.find_value(key);
  if (!v) throw Error(f.path() + ": metadata " + key + " is missing");
  int64_t x = 0;
  switch (v->type()) {
    case GgufType::INT32: x = f.get_i32(key); break;
    case GgufType::INT64: x = v->scalar<int64_t>(f.path() + ": " + key); break;
    default: {
      const uint64_t u = f.get_uint(key);  // throws for non-integer types
      x = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                         : static_cast<int64_t>(u);
    }
  }
  if (x < lo || x > hi)
    throw Error(f.path() + ": metadata " + key + " = " + std::to_string(x) + " is outside [" + std::to_string(lo) +
                ", " + std::to_string(hi) + "]");
  return static_cast<int>(x);
}

float meta_f32(const GgufFile& f, const std::string& key, float fallback, bool required) {
  if (!f.has(key)) {
    if (required) throw Error(f.path() + ": metadata " + key + " is missing");
    return fallback;
  }
  const float v = f.get_f32(key);
  if (!std::isfinite(v)) throw Error(f.path() + ": metadata " + key + " is not finite");
  return v;
}

std::optional<int32_t> meta_token_id(const GgufFile& f, const std::string& key) {
  if (!f.has(key)) return std::nullopt;
  return meta_int(f, key, 0, std::numeric_limits<int32_t>::max() - 1);
}

// Copies tensor `name` (GGUF shape `want`, ne[0] first) widened / dequantized to f32 into dst.
void read_into(const GgufFile& f, const std::string& name, const std::vector<uint64_t>& want, float* dst) {
  const GgufTensor* t = f.find(name);
  if (!t) throw Error(f.path() + ": tensor " + name + " is missing");
  if (t->shape != want)
    throw Error(f.path() + ": tensor " + name + " has shape " + gguf_shape_str(t->shape) + ", expected " +
                gguf_shape_str(want) + " (GGUF order, ne[0] first)");
  const uint64_t n = t->numel;
  const uint64_t block = ggml_block_elems(t->type);
  if (block > 1 && want[0] % block != 0)
    throw Error(f.path() + ": tensor " + name + ": rows of " + std::to_string(want[0]) + " are not whole " +
                std::string(ggml_type_name(t->type)) + " blocks");
  if (t->nbytes != ggml_type_bytes(t->type, n)) throw Error(f.path() + ": tensor " + name + " has the wrong byte size");
  const uint8_t* src = t->data;
  switch (t->type) {
    case GgmlType::F32: std::memcpy(dst, src, n * sizeof(float)); break;
    case GgmlType::F16:
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = fp16_to_f32(h);
      }
      break;
    case GgmlType::BF16:
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = bf16_to_f32(h);
      }
      break;
    case GgmlType::Q8_0: dequantize_row_q8_0(src, dst, static_cast<int64_t>(n)); break;
    case GgmlType::Q4_0: dequantize_row_q4_0(src, dst, static_cast<int64_t>(n)); break;
    case GgmlType::Q4_K: dequantize_row_q4_K(src, dst, static_cast<int64_t>(n)); break;
    case GgmlType::Q6_K: dequantize_row_q6_K(src, dst, static_cast<int64_t>(n)); break;
    default:
      throw Error(f.path() + ": tensor " + name + " has type " + std::string(ggml_type_name(t->type)) +
                  ", which is not supported for model weights");
  }
  for (uint64_t i = 0; i < n; ++i)
    if (!std::isfinite(dst[i])) throw Error(f.path() + ": tensor " + name + " has a non-finite value at " + std::to_string(i));
  f.release(*t);
}

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& f) {
  if (!f.has("tokenizer.ggml.model")) return nullptr;
  const std::string& kind = f.get_string("tokenizer.ggml.model");
  const std::string where = f.path() + ": ";
  try {
    std::vector<std::string> tokens = f.get_string_array("tokenizer.ggml.tokens");
    std::vector<int32_t> types;
    if (f.has("tokenizer.ggml.token_type")) types = f.get_i32_array("tokenizer.ggml.token_type");
    const std::optional<int32_t> bos = meta_token_id(f, "tokenizer.ggml.bos_token_id");
    const std::optional<int32_t> eos = meta_token_id(f, "tokenizer.ggml.eos_token_id");
    if (kind == "gpt2") {
      const std::vector<std::string>& merges = f.get_string_array("tokenizer.ggml.merges");
      const std::string pre = f.has("tokenizer.ggml.pre") ? f.get_string("tokenizer.ggml.pre") : "gpt-2";
      return Tokenizer::from_bpe_vocab(std::move(tokens), merges, pre, types, bos, eos);
    }
    if (kind == "llama") {
      std::vector<float> scores = f.get_f32_array("tokenizer.ggml.scores");
      if (types.empty()) throw Error("tokenizer.ggml.token_type is missing");
      const std::optional<int32_t> unk = meta_token_id(f, "tokenizer.ggml.unknown_token_id");
      const bool add_space = f.has("tokenizer.ggml.add_space_prefix") ? f.get_bool("tokenizer.ggml.add_space_prefix") : true;
      return Tokenizer::from_spm_vocab(std::move(tokens), std::move(scores), std::move(types), bos, eos, unk, add_space);
    }
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(f.path(), 0) == 0) throw;
    throw Error(where + "tokenizer: " + msg);
  }
  throw Error(where + "tokenizer.ggml.model '" + kind + "' is not supported (supported: gpt2, llama)");
}

}  // namespace

std::unique_ptr<Model> load_gguf_model(const ModelFileInfo& info, const LoadProgress& progress) {
  report_progress(progress, 0.0f, "mapping " + info.weights_path);
  auto file = GgufFile::open(info.weights_path);
  const GgufFile& f = *file;
  const std::string& path = f.path();
  const std::string arch = f.architecture();
  if (arch != "gpt2" && arch != "llama" && arch != "qwen2")
    throw Error(path + ": general.architecture '" + arch + "' is not supported (supported: gpt2, llama, qwen2)");
  const bool gpt2 = arch == "gpt2";
  const std::string a = arch + ".";

  ModelConfig c;
  c.arch = gpt2 ? Arch::GPT2 : Arch::Llama;
  c.n_layer = meta_int(f, a + "block_count", 1, 1024);
  c.n_embd = meta_int(f, a + "embedding_length", 1, 65536);
  c.ffn_dim = meta_int(f, a + "feed_forward_length", 1, 1 << 20);
  c.n_head = meta_int(f, a + "attention.head_count", 1, 1024);
  c.n_kv_head = f.has(a + "attention.head_count_kv") ? meta_int(f, a + "attention.head_count_kv", 1, 1024) : c.n_head;
  c.max_seq_len = meta_int(f, a + "context_length", 1, 1 << 20);
  if (c.n_embd % c.n_head != 0)
    throw Error(path + ": embedding_length " + std::to_string(c.n_embd) + " is not divisible by head_count " +
                std::to_string(c.n_head));
  if (c.n_head % c.n_kv_head != 0)
    throw Error(path + ": head_count_kv " + std::to_string(c.n_kv_head) + " does not divide head_count " +
                std::to_string(c.n_head));
  if (gpt2) {
    c.norm_eps = meta_f32(f, a + "attention.layer_norm_epsilon", 1e-5f, true);
  } else {
    c.norm_eps = meta_f32(f, a + "attention.layer_norm_rms_epsilon", 1e-5f, true);
    c.rope_theta = meta_f32(f, a + "rope.freq_base", 10000.0f, false);
    if (f.has(a + "rope.dimension_count")) {
      const int dims = meta_int(f, a + "rope.dimension_count", 0, 65536);
      if (dims != c.n_embd / c.n_head)
        throw Error(path + ": rope.dimension_count " + std::to_string(dims) + " differs from the head size " +
                    std::to_string(c.n_embd / c.n_head) + " (partial rotary is not supported)");
    }
    if (f.has(a + "rope.scaling.type")) {
      const std::string& st = f.get_string(a + "rope.scaling.type");
      if (st != "none") throw Error(path + ": rope scaling '" + st + "' is not supported yet");
    }
    if (f.has(a + "expert_count") && meta_int(f, a + "expert_count", 0, 1 << 20) > 0)
      throw Error(path + ": mixture-of-experts models are not supported");
    c.rope_interleaved = arch == "llama";
    c.qkv_bias = arch == "qwen2";
    c.tie_embeddings = f.find("output.weight") == nullptr;
  }
  // Vocabulary: <arch>.vocab_size, else the token list, else token_embd's rows; all present ones agree.
  const GgufTensor* embd = f.find("token_embd.weight");
  if (!embd) throw Error(path + ": tensor token_embd.weight is missing");
  if (embd->shape.size() != 2)
    throw Error(path + ": tensor token_embd.weight has shape " + gguf_shape_str(embd->shape) + ", expected 2 dimensions");
  if (embd->shape[1] < 1 || embd->shape[1] > (1u << 22))
    throw Error(path + ": tensor token_embd.weight has " + std::to_string(embd->shape[1]) + " rows, outside [1, 4194304]");
  c.vocab_size = static_cast<int>(embd->shape[1]);
  if (f.has(a + "vocab_size")) {
    const int v = meta_int(f, a + "vocab_size", 1, 1 << 22);
    if (v != c.vocab_size)
      throw Error(path + ": " + a + "vocab_size " + std::to_string(v) + " differs from token_embd.weight's " +
                  std::to_string(c.vocab_size) + " rows");
  }
  if (f.has("tokenizer.ggml.tokens")) {
    const size_t n = f.get_string_array("tokenizer.ggml.tokens").size();
    if (n != static_cast<size_t>(c.vocab_size))
      throw Error(path + ": tokenizer.ggml.tokens has " + std::to_string(n) + " tokens but token_embd.weight has " +
                  std::to_string(c.vocab_size) + " rows");
  }
  c.validate(path);

  auto model = std::make_unique<Model>(c);
  const uint64_t C = c.n_embd, V = c.vocab_size, T = c.max_seq_len, F = c.ffn_dim, KVW = c.kv_width();
  read_into(f, "token_embd.weight", {C, V}, model->param_data("wte"));
  auto layer_stage = [&](int l) {
    report_progress(progress, 0.05f + 0.9f * l / c.n_layer,
                    "layer " + std::to_string(l + 1) + " of " + std::to_string(c.n_layer));
  };
  if (gpt2) {
    read_into(f, "position_embd.weight", {C, T}, model->param_data("wpe"));
    for (int l = 0; l < c.n_layer; ++l) {
      layer_stage(l);
      const std::string b = "blk." + std::to_string(l) + ".";
      const uint64_t L = l;
      read_into(f, b + "attn_norm.weight", {C}, model->param_data("h.ln1.weight") + L * C);
      read_into(f, b + "attn_norm.bias", {C}, model->param_data("h.ln1.bias") + L * C);
      read_into(f, b + "attn_qkv.weight", {C, 3 * C}, model->param_data("h.qkv.weight") + L * 3 * C * C);
      read_into(f, b + "attn_qkv.bias", {3 * C}, model->param_data("h.qkv.bias") + L * 3 * C);
      read_into(f, b + "attn_output.weight", {C, C}, model->param_data("h.attn_proj.weight") + L * C * C);
      read_into(f, b + "attn_output.bias", {C}, model->param_data("h.attn_proj.bias") + L * C);
      read_into(f, b + "ffn_norm.weight", {C}, model->param_data("h.ln2.weight") + L * C);
      read_into(f, b + "ffn_norm.bias", {C}, model->param_data("h.ln2.bias") + L * C);
      read_into(f, b + "ffn_up.weight", {C, F}, model->param_data("h.fc.weight") + L * F * C);
      read_into(f, b + "ffn_up.bias", {F}, model->param_data("h.fc.bias") + L * F);
      read_into(f, b + "ffn_down.weight", {F, C}, model->param_data("h.fc_proj.weight") + L * C * F);
      read_into(f, b + "ffn_down.bias", {C}, model->param_data("h.fc_proj.bias") + L * C);
    }
    read_into(f, "output_norm.weight", {C}, model->param_data("lnf.weight"));
    read_into(f, "output_norm.bias", {C}, model->param_data("lnf.bias"));
    // llama.cpp's converter stores GPT-2's tied head as a copy of token_embd; it must be that copy
    // (up to quantization noise when the two were quantized differently), else it is an untied head.
    if (f.find("output.weight")) {
      std::vector<float> head(V * C);
      read_into(f, "output.weight", {C, V}, head.data());
      const float* wte = model->param_data("wte");
      double max_w = 0, max_d = 0;
      for (uint64_t i = 0; i < V * C; ++i) {
        max_w = std::max(max_w, double(std::abs(wte[i])));
        max_d = std::max(max_d, double(std::abs(wte[i] - head[i])));
      }
      if (max_d > 0.02 * max_w)
        throw Error(path + ": output.weight differs from token_embd.weight (an untied output head is not supported "
                    "for GPT-2)");
    }
  } else {
    for (int l = 0; l < c.n_layer; ++l) {
      layer_stage(l);
      const std::string b = "blk." + std::to_string(l) + ".";
      const uint64_t L = l;
      read_into(f, b + "attn_norm.weight", {C}, model->param_data("h.attn_norm.weight") + L * C);
      read_into(f, b + "attn_q.weight", {C, C}, model->param_data("h.wq.weight") + L * C * C);
      read_into(f, b + "attn_k.weight", {C, KVW}, model->param_data("h.wk.weight") + L * KVW * C);
      read_into(f, b + "attn_v.weight", {C, KVW}, model->param_data("h.wv.weight") + L * KVW * C);
      if (c.qkv_bias) {
        read_into(f, b + "attn_q.bias", {C}, model->param_data("h.wq.bias") + L * C);
        read_into(f, b + "attn_k.bias", {KVW}, model->param_data("h.wk.bias") + L * KVW);
        read_into(f, b + "attn_v.bias", {KVW}, model->param_data("h.wv.bias") + L * KVW);
      } else {
        for (const char* bias : {"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias"})
          if (f.find(b + bias)) throw Error(path + ": tensor " + b + bias + ": attention biases are not supported for " + arch);
      }
      read_into(f, b + "attn_output.weight", {C, C}, model->param_data("h.wo.weight") + L * C * C);
      read_into(f, b + "ffn_norm.weight", {C}, model->param_data("h.ffn_norm.weight") + L * C);
      read_into(f, b + "ffn_gate.weight", {C, F}, model->param_data("h.w_gate.weight") + L * F * C);
      read_into(f, b + "ffn_up.weight", {C, F}, model->param_data("h.w_up.weight") + L * F * C);
      read_into(f, b + "ffn_down.weight", {F, C}, model->param_data("h.w_down.weight") + L * C * F);
    }
    read_into(f, "output_norm.weight", {C}, model->param_data("norm.weight"));
    if (!c.tie_embeddings) read_into(f, "output.weight", {C, V}, model->param_data("lm_head.weight"));
  }
  report_progress(progress, 0.97f, "loading tokenizer");
  std::unique_ptr<Tokenizer> tok = load_gguf_tokenizer(f);
  if (tok && tok->vocab_size() > c.vocab_size)
    throw Error(path + ": the tokenizer has " + std::to_string(tok->vocab_size()) + " tokens, more than the model's " +
                std::to_string(c.vocab_size));
  model->set_tokenizer(std::move(tok));
  model->source = info.weights_path + " (GGUF)";
  report_progress(progress, 1.0f, "done");
  return model;
}

}  // namespace engine::io
