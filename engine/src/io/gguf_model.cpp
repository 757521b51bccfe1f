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
// Linear weights (token_embd, the attention and MLP matrices, output) stored as f32 / f16 / q8_0 /
// q4_0 / q4_1 / q5_0 / q5_1 / q4_K / q5_K / q6_K stay in the memory-mapped file: the Model gets WeightRefs into the mapping plus a
// shared_ptr that keeps the file mapped, and the kernels of quant.h (sgemm for f32) read them there,
// so peak RSS is about the file size. A group is kept in the file when any of its layers is so
// encoded; its bf16 layers are widened to an owned f32 copy. Everything else
// (norm gains, biases, position embeddings, bf16 weights) is widened into the f32 arena and its pages
// are released after the copy. LoadOptions::dequantize widens every tensor into the arena instead
// (what conversion and training need). Tensors kept in place are checked for non-finite scales
// (values for f16), which for these formats is the same as checking every weight.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
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

// The tensor `name` after every check both load paths share: present, GGUF shape `want` (ne[0] first),
// rows of whole blocks, the byte size its type implies, and a type the engine reads.
const GgufTensor& checked_tensor(const GgufFile& f, const std::string& name, const std::vector<uint64_t>& want) {
  const GgufTensor* t = f.find(name);
  if (!t) throw Error(f.path() + ": tensor " + name + " is missing");
  if (t->shape != want)
    throw Error(f.path() + ": tensor " + name + " has shape " + gguf_shape_str(t->shape) + ", expected " +
                gguf_shape_str(want) + " (GGUF order, ne[0] first)");
  const uint64_t block = ggml_block_elems(t->type);
  if (block > 1 && want[0] % block != 0)
    throw Error(f.path() + ": tensor " + name + ": rows of " + std::to_string(want[0]) + " are not whole " +
                std::string(ggml_type_name(t->type)) + " blocks");
  if (t->nbytes != ggml_type_bytes(t->type, t->numel))
    throw Error(f.path() + ": tensor " + name + " has the wrong byte size");
  if (!ggml_to_dtype(t->type))
    throw Error(f.path() + ": tensor " + name + " has type " + std::string(ggml_type_name(t->type)) +
                ", which is not supported for model weights");
  return *t;
}

// Kernels read block structs and f32/f16 values directly, so their data must be aligned to the
// element (GGUF aligns tensors to 32 unless general.alignment says otherwise). Returns t.data, or an
// aligned copy (held by `copy`) when a file's alignment is smaller.
const void* aligned_data(const GgufTensor& t, std::shared_ptr<std::vector<uint64_t>>& copy) {
  const uintptr_t need = t.type == GgmlType::F32 ? 4 : 2;
  if (reinterpret_cast<uintptr_t>(t.data) % need == 0) return t.data;
  copy = std::make_shared<std::vector<uint64_t>>((t.nbytes + 7) / 8);
  std::memcpy(copy->data(), t.data, t.nbytes);
  return copy->data();
}

// Copies tensor `name` widened / dequantized to f32 into dst, then drops its file pages.
void read_into(const GgufFile& f, const std::string& name, const std::vector<uint64_t>& want, float* dst) {
  const GgufTensor& t = checked_tensor(f, name, want);
  const uint64_t n = t.numel;
  std::shared_ptr<std::vector<uint64_t>> copy;
  dequantize_rows(*ggml_to_dtype(t.type), aligned_data(t, copy), static_cast<int>(want[0]), 0,
                  static_cast<int64_t>(n / want[0]), dst);
  if (const int64_t bad = first_nonfinite(DType::F32, dst, static_cast<int64_t>(n)); bad >= 0)
    throw Error(f.path() + ": tensor " + name + " has a non-finite value at " + std::to_string(bad));
  f.release(t);
}

// The encodings the CPU kernels read in place, f32 included: sgemm and the f32 matrix-vector product
// read the mapping as well as a copy, and a copy would double an f32 file's memory while it is made
// and keep it a copy above the file afterwards. bf16 is widened at load: no bf16 kernel yet.
bool read_in_place(GgmlType t) {
  return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::Q8_0 || t == GgmlType::Q4_0 ||
         t == GgmlType::Q4_1 || t == GgmlType::Q5_0 || t == GgmlType::Q5_1 || t == GgmlType::Q4_K ||
         t == GgmlType::Q5_K || t == GgmlType::Q6_K;
}

// Points layer `layer` of external group `ours` at tensor `name` inside the mapping (the caller keeps
// the file alive through Model::keep_alive), after checking it.
// With `pack`, q8_0 / q4_0 matrices of at least 8 rows also get the x8 copy the CPU kernels prefer
// (quant.h pack_x8), f16 ones of at least 16 rows their column panels (pack_f16_panels). The copy
// replaces the file's pages in memory: rows are checked, packed and released a slice at a time, so
// the peak stays a slice above the packed copy rather than a whole tensor (an output head over a
// 50k vocabulary is 100-200 MiB). The rare reader of the original layout (an embedding row, the
// last OC % 8 rows, export, a CUDA upload) pages it back in from the file.
void map_into(const GgufFile& f, const std::string& name, const std::vector<uint64_t>& want, Model& model,
              const std::string& ours, int layer, bool pack) {
  const GgufTensor& t = checked_tensor(f, name, want);
  const DType dt = *ggml_to_dtype(t.type);
  if (dt == DType::BF16) {
    auto wide = std::make_shared<std::vector<float>>(t.numel);
    read_into(f, name, want, wide->data());
    model.set_external_weight(ours, layer, {DType::F32, wide->data()});
    model.keep_alive(std::move(wide));
    return;
  }
  std::shared_ptr<std::vector<uint64_t>> copy;
  const void* data = aligned_data(t, copy);
  const int C = static_cast<int>(want[0]);
  const int64_t rows = static_cast<int64_t>(want[1]);
  const bool x8 = pack && x8_worth_packing(dt) && rows >= k_x8_rows;
  const bool panels = pack && dt == DType::F16 && rows >= k_panel_rows;
  std::shared_ptr<std::vector<uint64_t>> packed;
  if (x8) packed = std::make_shared<std::vector<uint64_t>>((x8_bytes(dt, rows, C) + 7) / 8);
  if (panels) packed = std::make_shared<std::vector<uint64_t>>((f16_panel_bytes(rows, C) + 7) / 8);
  auto* packed_bytes = packed ? reinterpret_cast<uint8_t*>(packed->data()) : nullptr;
  const uint64_t row_bytes = dtype_bytes(dt, static_cast<uint64_t>(C));
  constexpr int64_t k_slice_rows = 256;  // a whole number of x8 groups and of f16 panels
  for (int64_t r0 = 0; r0 < rows; r0 += k_slice_rows) {
    const int64_t n = std::min(k_slice_rows, rows - r0);
    const auto* src = static_cast<const uint8_t*>(data) + static_cast<uint64_t>(r0) * row_bytes;
    const int64_t bad = first_nonfinite(dt, src, n * C);
    if (bad >= 0)
      throw Error(f.path() + ": tensor " + name + " has a non-finite " +
                  (dtype_is_quantized(dt) ? "scale in the block at " : "value at ") + std::to_string(r0 * C + bad));
    if (x8) pack_x8(dt, src, n, C, packed_bytes + x8_bytes(dt, r0, C));
    if (panels)
      pack_f16_panels(reinterpret_cast<const uint16_t*>(src), n, C,
                      reinterpret_cast<uint16_t*>(packed_bytes + f16_panel_bytes(r0, C)));
    if (packed && !copy) f.release(t, static_cast<uint64_t>(r0) * row_bytes, static_cast<uint64_t>(n) * row_bytes);
  }
  WeightRef ref{dt, data};
  if (packed) {
    ref.packed = packed->data();
    model.keep_alive(std::move(packed));
  }
  model.set_external_weight(ours, layer, ref);
  if (copy) {
    f.release(t);  // everything was read from the aligned copy
    model.keep_alive(std::move(copy));
  }
}

// llama.cpp's converter (and ours) stores GPT-2's tied head as output.weight, a byte copy of
// token_embd.weight; llama-quantize then usually encodes the two differently (q6_K head, q4_0
// embedding). A byte copy is read as tied, so the head costs no memory twice; anything else is an
// untied head, used in its own encoding exactly as llama.cpp uses it.
bool output_is_copy_of_embedding(const GgufFile& f, uint64_t C, uint64_t V) {
  const GgufTensor& h = checked_tensor(f, "output.weight", {C, V});
  const GgufTensor& e = checked_tensor(f, "token_embd.weight", {C, V});
  const bool same = h.type == e.type && h.nbytes == e.nbytes && std::memcmp(h.data, e.data, h.nbytes) == 0;
  if (same) f.release(h);  // never read again: the head is wte
  return same;
}

std::unique_ptr<Tokenizer> tokenizer_of(const GgufFile& f) {
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
      const bool add_space =
          f.has("tokenizer.ggml.add_space_prefix") ? f.get_bool("tokenizer.ggml.add_space_prefix") : true;
      return Tokenizer::from_spm_vocab(std::move(tokens), std::move(scores), std::move(types), bos, eos, unk,
                                       add_space);
    }
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(f.path(), 0) == 0) throw;
    throw Error(where + "tokenizer: " + msg);
  }
  throw Error(where + "tokenizer.ggml.model '" + kind + "' is not supported (supported: gpt2, llama)");
}

}  // namespace

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const std::string& path) {
  const std::shared_ptr<const GgufFile> file = GgufFile::open(path);
  return tokenizer_of(*file);
}

std::unique_ptr<Model> load_gguf_model(const ModelFileInfo& info, const LoadProgress& progress,
                                       const LoadOptions& options) {
  report_progress(progress, 0.0f, "mapping " + info.weights_path);
  std::shared_ptr<const GgufFile> file = GgufFile::open(info.weights_path);
  const GgufFile& f = *file;
  const std::string& path = f.path();
  if (f.tensors().empty())
    throw Error(path + ": the file has no tensors (a vocabulary-only GGUF: only its tokenizer can be used)");
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
    throw Error(path + ": tensor token_embd.weight has shape " + gguf_shape_str(embd->shape) +
                ", expected 2 dimensions");
  if (embd->shape[1] < 1 || embd->shape[1] > (1u << 22))
    throw Error(path + ": tensor token_embd.weight has " + std::to_string(embd->shape[1]) +
                " rows, outside [1, 4194304]");
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
  // A GPT-2 file without output.weight (ours used to write none) reads logits through wte.
  if (gpt2) c.tie_embeddings = !f.find("output.weight") || output_is_copy_of_embedding(f, c.n_embd, c.vocab_size);
  c.validate(path);
  uint64_t elements = 0;  // at most twice the file's size (4-bit blocks): no overflow
  for (const GgufTensor& t : f.tensors()) elements += t.numel;
  require_parameters_in_file(c, elements, path);

  // Linear-weight groups: our name, the GGUF name (after "blk.<l>." for per-layer ones), GGUF shape.
  const uint64_t C = c.n_embd, V = c.vocab_size, T = c.max_seq_len, F = c.ffn_dim, KVW = c.kv_width();
  struct Linear {
    std::string ours, gguf;
    bool per_layer;
    std::vector<uint64_t> shape;
  };
  std::vector<Linear> linears = {{"wte", "token_embd.weight", false, {C, V}}};
  if (gpt2) {
    linears.insert(linears.end(), {{"h.qkv.weight", "attn_qkv.weight", true, {C, 3 * C}},
                                   {"h.attn_proj.weight", "attn_output.weight", true, {C, C}},
                                   {"h.fc.weight", "ffn_up.weight", true, {C, F}},
                                   {"h.fc_proj.weight", "ffn_down.weight", true, {F, C}}});
  } else {
    linears.insert(linears.end(), {{"h.wq.weight", "attn_q.weight", true, {C, C}},
                                   {"h.wk.weight", "attn_k.weight", true, {C, KVW}},
                                   {"h.wv.weight", "attn_v.weight", true, {C, KVW}},
                                   {"h.wo.weight", "attn_output.weight", true, {C, C}},
                                   {"h.w_gate.weight", "ffn_gate.weight", true, {C, F}},
                                   {"h.w_up.weight", "ffn_up.weight", true, {C, F}},
                                   {"h.w_down.weight", "ffn_down.weight", true, {F, C}}});
  }
  if (!c.tie_embeddings) linears.push_back({"lm_head.weight", "output.weight", false, {C, V}});
  auto gguf_name = [&](const Linear& g, int l) {
    return g.per_layer ? "blk." + std::to_string(l) + "." + g.gguf : g.gguf;
  };
  std::vector<std::string> external;
  if (!options.dequantize)
    for (const Linear& g : linears)
      for (int l = 0; l < (g.per_layer ? c.n_layer : 1); ++l)
        if (const GgufTensor* t = f.find(gguf_name(g, l)); t && read_in_place(t->type)) {
          external.push_back(g.ours);
          break;
        }
  auto model = std::make_unique<Model>(c, external);
  if (!external.empty()) model->keep_alive(file);
  // Reads layer l of a linear group: into the mapping when external, else widened into the arena.
  auto linear = [&](const std::string& ours, int l) {
    const Linear& g = *std::find_if(linears.begin(), linears.end(), [&](const Linear& x) { return x.ours == ours; });
    if (model->quant_weight(ours)) {
      // An untied wte is only ever read a row per token (the embedding): no packed copy for it,
      // and its pages, read once by the check, go back to the file.
      const bool kernel_reads = ours != "wte" || arch_spec(c).tied_head;
      map_into(f, gguf_name(g, l), g.shape, *model, ours, l, options.pack && kernel_reads);
      if (!kernel_reads) f.release(*f.find(gguf_name(g, l)));
    } else {
      const uint64_t per_layer = g.shape[0] * g.shape[1];
      read_into(f, gguf_name(g, l), g.shape, model->param_data(ours) + static_cast<uint64_t>(l) * per_layer);
    }
  };
  linear("wte", 0);
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
      linear("h.qkv.weight", l);
      read_into(f, b + "attn_qkv.bias", {3 * C}, model->param_data("h.qkv.bias") + L * 3 * C);
      linear("h.attn_proj.weight", l);
      read_into(f, b + "attn_output.bias", {C}, model->param_data("h.attn_proj.bias") + L * C);
      read_into(f, b + "ffn_norm.weight", {C}, model->param_data("h.ln2.weight") + L * C);
      read_into(f, b + "ffn_norm.bias", {C}, model->param_data("h.ln2.bias") + L * C);
      linear("h.fc.weight", l);
      read_into(f, b + "ffn_up.bias", {F}, model->param_data("h.fc.bias") + L * F);
      linear("h.fc_proj.weight", l);
      read_into(f, b + "ffn_down.bias", {C}, model->param_data("h.fc_proj.bias") + L * C);
    }
    read_into(f, "output_norm.weight", {C}, model->param_data("lnf.weight"));
    read_into(f, "output_norm.bias", {C}, model->param_data("lnf.bias"));
  } else {
    for (int l = 0; l < c.n_layer; ++l) {
      layer_stage(l);
      const std::string b = "blk." + std::to_string(l) + ".";
      const uint64_t L = l;
      read_into(f, b + "attn_norm.weight", {C}, model->param_data("h.attn_norm.weight") + L * C);
      linear("h.wq.weight", l);
      linear("h.wk.weight", l);
      linear("h.wv.weight", l);
      if (c.qkv_bias) {
        read_into(f, b + "attn_q.bias", {C}, model->param_data("h.wq.bias") + L * C);
        read_into(f, b + "attn_k.bias", {KVW}, model->param_data("h.wk.bias") + L * KVW);
        read_into(f, b + "attn_v.bias", {KVW}, model->param_data("h.wv.bias") + L * KVW);
      } else {
        for (const char* bias : {"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias"})
          if (f.find(b + bias))
            throw Error(path + ": tensor " + b + bias + ": attention biases are not supported for " + arch);
      }
      linear("h.wo.weight", l);
      read_into(f, b + "ffn_norm.weight", {C}, model->param_data("h.ffn_norm.weight") + L * C);
      linear("h.w_gate.weight", l);
      linear("h.w_up.weight", l);
      linear("h.w_down.weight", l);
    }
    read_into(f, "output_norm.weight", {C}, model->param_data("norm.weight"));
  }
  if (!c.tie_embeddings) linear("lm_head.weight", 0);
  report_progress(progress, 0.97f, "loading tokenizer");
  std::unique_ptr<Tokenizer> tok = tokenizer_of(f);
  if (tok && tok->vocab_size() > c.vocab_size)
    throw Error(path + ": the tokenizer has " + std::to_string(tok->vocab_size()) + " tokens, more than the model's " +
                std::to_string(c.vocab_size));
  model->set_tokenizer(std::move(tok));
  load_gguf_chat_template(*model, f);
  model->source = info.weights_path + (options.dequantize ? " (GGUF, widened to f32 at load)" : " (GGUF)");
  report_progress(progress, 1.0f, "done");
  return model;
}

}  // namespace engine::io
