// GGUF export: see engine/io/gguf_export.h for the names, layouts and type choices.
//
// Every tensor is assembled as row-major (out, in) f32 from the parameter arena (a per-layer slice of
// its group, q/k rows permuted where the rotary layout must change), then encoded to its GGUF type.
// All sizes go through checked arithmetic; the file itself is written by write_gguf, atomically.
#include "engine/io/gguf_export.h"

#include <cctype>
#include <cstring>

#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/quant.h"

namespace engine::io {

std::string export_type_name(ExportType t) {
  switch (t) {
    case ExportType::F32: return "f32";
    case ExportType::F16: return "f16";
    case ExportType::Q8_0: return "q8_0";
    case ExportType::Q4_0: return "q4_0";
    case ExportType::Q4_1: return "q4_1";
    case ExportType::Q5_0: return "q5_0";
    case ExportType::Q5_1: return "q5_1";
    case ExportType::Q5_K: return "q5_K";
  }
  return "?";
}

std::optional<ExportType> parse_export_type(const std::string& name) {
  // Case-insensitive: "q5_k" as well as "q5_K" (llama.cpp's spelling, as in its file type Q5_K_S).
  const auto lower = [](std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  for (ExportType t : {ExportType::F32, ExportType::F16, ExportType::Q8_0, ExportType::Q4_0, ExportType::Q4_1,
                       ExportType::Q5_0, ExportType::Q5_1, ExportType::Q5_K})
    if (lower(export_type_name(t)) == lower(name)) return t;
  return std::nullopt;
}

namespace {

// llama.cpp's llama_ftype numbers for general.file_type ("mostly" = the 2-D weights).
uint32_t file_type_of(ExportType t) {
  switch (t) {
    case ExportType::F32: return 0;
    case ExportType::F16: return 1;
    case ExportType::Q4_0: return 2;
    case ExportType::Q8_0: return 7;
    case ExportType::Q4_1: return 3;
    case ExportType::Q5_0: return 8;
    case ExportType::Q5_1: return 9;
    case ExportType::Q5_K: return 16;  // Q5_K_S: q5_K throughout, bar the embedding, head and fallbacks
  }
  return 0;
}

GgmlType ggml_of(ExportType t) {
  switch (t) {
    case ExportType::F32: return GgmlType::F32;
    case ExportType::F16: return GgmlType::F16;
    case ExportType::Q8_0: return GgmlType::Q8_0;
    case ExportType::Q4_0: return GgmlType::Q4_0;
    case ExportType::Q4_1: return GgmlType::Q4_1;
    case ExportType::Q5_0: return GgmlType::Q5_0;
    case ExportType::Q5_1: return GgmlType::Q5_1;
    case ExportType::Q5_K: return GgmlType::Q5_K;
  }
  return GgmlType::F32;
}

// Which GGUF arch name the model becomes (see the header).
std::string gguf_arch(const ModelConfig& c) {
  if (c.arch == Arch::GPT2) return "gpt2";
  return c.qkv_bias ? "qwen2" : "llama";
}

// Rotate-half rows -> interleaved rows for each of `heads` heads of HS rows (`cols` floats each):
// interleaved row 2i is rotate-half row i, row 2i+1 is row i + HS/2 (llama.cpp's converter permute).
std::vector<float> half_to_interleaved(const float* src, uint64_t heads, uint64_t HS, uint64_t cols) {
  std::vector<float> out(checked_mul(checked_mul(heads, HS, "rope permute"), cols, "rope permute"));
  const uint64_t half = HS / 2;
  for (uint64_t h = 0; h < heads; ++h)
    for (uint64_t i = 0; i < half; ++i) {
      const float* a = src + (h * HS + i) * cols;
      const float* b = src + (h * HS + i + half) * cols;
      std::memcpy(out.data() + (h * HS + 2 * i) * cols, a, cols * sizeof(float));
      std::memcpy(out.data() + (h * HS + 2 * i + 1) * cols, b, cols * sizeof(float));
    }
  return out;
}

// The inverse: interleaved rows -> rotate-half rows.
std::vector<float> interleaved_to_half(const float* src, uint64_t heads, uint64_t HS, uint64_t cols) {
  std::vector<float> out(checked_mul(checked_mul(heads, HS, "rope permute"), cols, "rope permute"));
  const uint64_t half = HS / 2;
  for (uint64_t h = 0; h < heads; ++h)
    for (uint64_t i = 0; i < half; ++i) {
      std::memcpy(out.data() + (h * HS + i) * cols, src + (h * HS + 2 * i) * cols, cols * sizeof(float));
      std::memcpy(out.data() + (h * HS + i + half) * cols, src + (h * HS + 2 * i + 1) * cols, cols * sizeof(float));
    }
  return out;
}

// Encodes `n` f32 values as `type`; n must be whole blocks for the block types (checked by the caller).
std::vector<uint8_t> encode_values(const float* src, uint64_t n, GgmlType type) {
  std::vector<uint8_t> out(checked_cast<size_t>(ggml_type_bytes(type, n), "tensor bytes"));
  switch (type) {
    case GgmlType::F32: std::memcpy(out.data(), src, n * sizeof(float)); break;
    case GgmlType::F16:
      for (uint64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_fp16(src[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      break;
    case GgmlType::Q8_0: quantize_row_q8_0(src, out.data(), static_cast<int64_t>(n)); break;
    case GgmlType::Q4_0: quantize_row_q4_0(src, out.data(), static_cast<int64_t>(n)); break;
    case GgmlType::Q4_1: quantize_row_q4_1(src, out.data(), static_cast<int64_t>(n)); break;
    case GgmlType::Q5_0: quantize_row_q5_0(src, out.data(), static_cast<int64_t>(n)); break;
    case GgmlType::Q5_1: quantize_row_q5_1(src, out.data(), static_cast<int64_t>(n)); break;
    case GgmlType::Q5_K: quantize_row_q5_K(src, out.data(), static_cast<int64_t>(n)); break;
    default: throw Error("gguf export: unsupported tensor type " + std::string(ggml_type_name(type)));
  }
  return out;
}

class TensorBuilder {
 public:
  explicit TensorBuilder(const GgufExportOptions& opts) : m_opts(opts) {}

  // A 1-D tensor (norm weight or bias): always f32.
  void vec(const std::string& name, const float* data, uint64_t n) { add(name, GgmlType::F32, {n}, data); }

  // A 2-D matrix, row-major (rows, cols) = (out, in); ne = [cols, rows]. `embedding`: token_embd,
  // position_embd or output (4- and 5-bit requests give q8_0 there, see the header).
  void mat(const std::string& name, const float* data, uint64_t rows, uint64_t cols, bool embedding = false) {
    ExportType want = m_opts.type;
    if (embedding && want != ExportType::F32 && want != ExportType::F16) want = ExportType::Q8_0;
    GgmlType type = ggml_of(want);
    if (type == GgmlType::Q5_K && cols % ggml_block_elems(type) != 0) type = GgmlType::Q5_1;  // as llama.cpp
    if (ggml_block_elems(type) > 1 && cols % ggml_block_elems(type) != 0)
      type = m_opts.type == ExportType::F32 ? GgmlType::F32 : GgmlType::F16;  // rows that are not whole blocks
    add(name, type, {cols, rows}, data);
  }

  // Another tensor with the bytes, type and shape of the already added `from`.
  void duplicate(const std::string& from, const std::string& name) {
    for (const GgufExportTensor& t : m_out)
      if (t.name == from) {
        GgufExportTensor copy = t;
        copy.name = name;
        m_out.push_back(std::move(copy));
        return;
      }
    throw Error("gguf export: internal: no tensor " + from + " to duplicate");
  }

  std::vector<GgufExportTensor> take() { return std::move(m_out); }

 private:
  void add(const std::string& name, GgmlType type, std::vector<uint64_t> shape, const float* data) {
    uint64_t n = 1;
    for (uint64_t d : shape) n = checked_mul(n, d, "tensor element count");
    GgufExportTensor t;
    t.name = name;
    t.type = type;
    t.shape = std::move(shape);
    t.bytes = encode_values(data, n, type);
    m_out.push_back(std::move(t));
  }

  const GgufExportOptions& m_opts;
  std::vector<GgufExportTensor> m_out;
};

void add_tokenizer_metadata(const Model& model, GgufMetadata& md) {
  const Tokenizer* tok = model.tokenizer();
  if (!tok) return;
  TokenizerVocabExport e = tok->export_vocab();
  const size_t V = static_cast<size_t>(model.config().vocab_size);
  if (e.pieces.size() > V)
    throw Error("gguf export: the tokenizer has " + std::to_string(e.pieces.size()) +
                " tokens, more than the model's " + std::to_string(V) + " embedding rows");
  // Ids without a token (gaps, and rows past the tokenizer in a padded vocabulary) need a unique
  // placeholder: llama.cpp wants one token per row and our reader refuses duplicate pieces.
  e.token_types.resize(V, 5);
  for (size_t id = 0; id < V; ++id) {
    if (id >= e.pieces.size()) e.pieces.push_back("");
    if (e.pieces[id].empty()) {
      e.pieces[id] = "[PAD" + std::to_string(id) + "]";
      e.token_types[id] = 5;
    }
  }
  if (e.kind == TokenizerVocabExport::Kind::ByteLevelBpe) {
    if (e.pre_tokenizer.empty())
      throw Error("gguf export: the tokenizer's pre-tokenizer (ByteLevel without a split pattern) has no GGUF name");
    if (e.add_prefix_space)
      throw Error(
          "gguf export: the tokenizer adds a prefix space (ByteLevel add_prefix_space), which GGUF 'gpt2' "
          "vocabularies cannot express");
    md.emplace_back("tokenizer.ggml.model", GgufValue("gpt2"));
    md.emplace_back("tokenizer.ggml.pre", GgufValue(e.pre_tokenizer));
    md.emplace_back("tokenizer.ggml.tokens", GgufValue::array(e.pieces));
    md.emplace_back("tokenizer.ggml.token_type", GgufValue::array(e.token_types));
    md.emplace_back("tokenizer.ggml.merges", GgufValue::array(e.merges));
    md.emplace_back("tokenizer.ggml.add_bos_token", GgufValue(false));
  } else {
    e.scores.resize(V, 0.0f);
    md.emplace_back("tokenizer.ggml.model", GgufValue("llama"));
    md.emplace_back("tokenizer.ggml.tokens", GgufValue::array(e.pieces));
    md.emplace_back("tokenizer.ggml.scores", GgufValue::array(e.scores));
    md.emplace_back("tokenizer.ggml.token_type", GgufValue::array(e.token_types));
    md.emplace_back("tokenizer.ggml.add_space_prefix", GgufValue(e.add_space_prefix));
    if (e.unk) md.emplace_back("tokenizer.ggml.unknown_token_id", GgufValue(static_cast<uint32_t>(*e.unk)));
  }
  if (e.bos) md.emplace_back("tokenizer.ggml.bos_token_id", GgufValue(static_cast<uint32_t>(*e.bos)));
  if (e.eos) md.emplace_back("tokenizer.ggml.eos_token_id", GgufValue(static_cast<uint32_t>(*e.eos)));
}

}  // namespace

GgufMetadata gguf_export_metadata(const Model& model, const GgufExportOptions& opts) {
  const ModelConfig& c = model.config();
  const std::string arch = gguf_arch(c);
  const std::string a = arch + ".";
  auto u32 = [](int v) { return GgufValue(checked_cast<uint32_t>(v, "gguf export: hyper-parameter")); };
  GgufMetadata md;
  md.emplace_back("general.architecture", GgufValue(arch));
  if (!opts.name.empty()) md.emplace_back("general.name", GgufValue(opts.name));
  md.emplace_back("general.file_type", GgufValue(file_type_of(opts.type)));
  if (opts.type != ExportType::F32 && opts.type != ExportType::F16)
    md.emplace_back("general.quantization_version", GgufValue(uint32_t(2)));  // ggml's current block layouts
  md.emplace_back(a + "context_length", u32(c.max_seq_len));
  md.emplace_back(a + "embedding_length", u32(c.n_embd));
  md.emplace_back(a + "block_count", u32(c.n_layer));
  md.emplace_back(a + "feed_forward_length", u32(c.ffn_dim));
  md.emplace_back(a + "attention.head_count", u32(c.n_head));
  md.emplace_back(a + "attention.head_count_kv", u32(c.n_kv_head));
  if (c.arch == Arch::GPT2) {
    md.emplace_back(a + "attention.layer_norm_epsilon", GgufValue(c.norm_eps));
  } else {
    md.emplace_back(a + "attention.layer_norm_rms_epsilon", GgufValue(c.norm_eps));
    md.emplace_back(a + "rope.freq_base", GgufValue(c.rope_theta));
    md.emplace_back(a + "rope.dimension_count", u32(c.head_size()));
    md.emplace_back(a + "vocab_size", u32(c.vocab_size));
  }
  add_tokenizer_metadata(model, md);
  // The caller's template, else the one the model was loaded with.
  const std::string& tmpl = opts.chat_template ? *opts.chat_template : model.chat_template().source();
  if (!tmpl.empty()) md.emplace_back("tokenizer.chat_template", GgufValue(tmpl));
  return md;
}

std::vector<GgufExportTensor> gguf_export_tensors(const Model& model, const GgufExportOptions& opts,
                                                  const ExportProgress& progress) {
  const ModelConfig& c = model.config();
  const uint64_t C = c.n_embd, V = c.vocab_size, T = c.max_seq_len, F = c.ffn_dim, KVW = c.kv_width(),
                 HS = c.head_size();
  TensorBuilder b(opts);
  auto stage = [&](int l) {
    if (progress)
      progress(0.05f + 0.9f * l / c.n_layer, "layer " + std::to_string(l + 1) + " of " + std::to_string(c.n_layer));
  };
  if (progress) progress(0.0f, "embeddings");
  b.mat("token_embd.weight", model.f32_weight("wte").data, V, C, true);
  if (c.arch == Arch::GPT2) {
    b.mat("position_embd.weight", model.param_data("wpe"), T, C, true);
    for (int li = 0; li < c.n_layer; ++li) {
      stage(li);
      const uint64_t l = li;
      const std::string p = "blk." + std::to_string(li) + ".";
      b.vec(p + "attn_norm.weight", model.param_data("h.ln1.weight") + l * C, C);
      b.vec(p + "attn_norm.bias", model.param_data("h.ln1.bias") + l * C, C);
      b.mat(p + "attn_qkv.weight", model.f32_weight("h.qkv.weight", li).data, 3 * C, C);
      b.vec(p + "attn_qkv.bias", model.param_data("h.qkv.bias") + l * 3 * C, 3 * C);
      b.mat(p + "attn_output.weight", model.f32_weight("h.attn_proj.weight", li).data, C, C);
      b.vec(p + "attn_output.bias", model.param_data("h.attn_proj.bias") + l * C, C);
      b.vec(p + "ffn_norm.weight", model.param_data("h.ln2.weight") + l * C, C);
      b.vec(p + "ffn_norm.bias", model.param_data("h.ln2.bias") + l * C, C);
      b.mat(p + "ffn_up.weight", model.f32_weight("h.fc.weight", li).data, F, C);
      b.vec(p + "ffn_up.bias", model.param_data("h.fc.bias") + l * F, F);
      b.mat(p + "ffn_down.weight", model.f32_weight("h.fc_proj.weight", li).data, C, F);
      b.vec(p + "ffn_down.bias", model.param_data("h.fc_proj.bias") + l * C, C);
    }
    b.vec("output_norm.weight", model.param_data("lnf.weight"), C);
    b.vec("output_norm.bias", model.param_data("lnf.bias"), C);
    // llama.cpp requires output.weight for gpt2 (it has no fallback to token_embd for this arch).
    if (c.tie_embeddings) b.duplicate("token_embd.weight", "output.weight");
    else b.mat("output.weight", model.f32_weight("lm_head.weight").data, V, C, true);
  } else {
    // "llama" wants interleaved q/k rows, "qwen2" rotate-half ones.
    const bool want_interleaved = !c.qkv_bias;
    auto rotary = [&](const float* src, uint64_t heads, uint64_t cols) -> std::vector<float> {
      const uint64_t n = checked_mul(heads * HS, cols, "rope permute");
      if (want_interleaved == c.rope_interleaved) return std::vector<float>(src, src + n);
      return want_interleaved ? half_to_interleaved(src, heads, HS, cols) : interleaved_to_half(src, heads, HS, cols);
    };
    for (int li = 0; li < c.n_layer; ++li) {
      stage(li);
      const uint64_t l = li;
      const std::string p = "blk." + std::to_string(li) + ".";
      b.vec(p + "attn_norm.weight", model.param_data("h.attn_norm.weight") + l * C, C);
      b.mat(p + "attn_q.weight", rotary(model.f32_weight("h.wq.weight", li).data, c.n_head, C).data(), C, C);
      b.mat(p + "attn_k.weight", rotary(model.f32_weight("h.wk.weight", li).data, c.n_kv_head, C).data(), KVW, C);
      b.mat(p + "attn_v.weight", model.f32_weight("h.wv.weight", li).data, KVW, C);
      if (c.qkv_bias) {
        b.vec(p + "attn_q.bias", rotary(model.param_data("h.wq.bias") + l * C, c.n_head, 1).data(), C);
        b.vec(p + "attn_k.bias", rotary(model.param_data("h.wk.bias") + l * KVW, c.n_kv_head, 1).data(), KVW);
        b.vec(p + "attn_v.bias", model.param_data("h.wv.bias") + l * KVW, KVW);
      }
      b.mat(p + "attn_output.weight", model.f32_weight("h.wo.weight", li).data, C, C);
      b.vec(p + "ffn_norm.weight", model.param_data("h.ffn_norm.weight") + l * C, C);
      b.mat(p + "ffn_gate.weight", model.f32_weight("h.w_gate.weight", li).data, F, C);
      b.mat(p + "ffn_up.weight", model.f32_weight("h.w_up.weight", li).data, F, C);
      b.mat(p + "ffn_down.weight", model.f32_weight("h.w_down.weight", li).data, C, F);
    }
    b.vec("output_norm.weight", model.param_data("norm.weight"), C);
    if (!c.tie_embeddings) b.mat("output.weight", model.f32_weight("lm_head.weight").data, V, C, true);
  }
  if (progress) progress(0.95f, "tensors encoded");
  return b.take();
}

void save_gguf(const Model& model, const std::string& path, const GgufExportOptions& opts,
               const ExportProgress& progress) {
  const GgufMetadata md = gguf_export_metadata(model, opts);
  const std::vector<GgufExportTensor> tensors = gguf_export_tensors(model, opts, progress);
  std::vector<GgufTensorToWrite> views;
  views.reserve(tensors.size());
  for (const GgufExportTensor& t : tensors) views.push_back({t.name, t.type, t.shape, t.bytes.data()});
  if (progress) progress(0.96f, "writing " + path);
  write_gguf(path, md, views);
  if (progress) progress(1.0f, "done");
}

}  // namespace engine::io
