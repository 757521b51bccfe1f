// Writing an engine::Model as a GGUF file llama.cpp can run (its tensor names and metadata keys).
//
// Architectures: GPT-2 -> "gpt2" (fused blk.N.attn_qkv, position_embd, LayerNorm weights + biases;
// output.weight always: llama.cpp requires it for gpt2, so a tied head is written as a byte copy of
// token_embd, which our reader takes for tied again); Llama family -> "llama"
// (q/k rows in the interleaved rotary layout llama.cpp's converter produces: HF-layout models are
// permuted here) or "qwen2" when the model has q/k/v biases (llama.cpp runs qwen2 with NEOX rope,
// i.e. HF's rotate-half layout, so its rows are written in that layout, un-permuting if needed).
//
// Tensor types (--dtype): 2-D weight matrices take the requested type; 1-D tensors (norms, biases)
// stay f32, as llama.cpp keeps them. token_embd / position_embd / output take the requested type for
// f32, f16 and q8_0, and q8_0 when a 4- or 5-bit type (q4_0, q4_1, q5_0, q5_1, q5_K) is requested:
// llama.cpp's own quantizer keeps the embedding and head at higher precision than the block weights
// (it uses q6_K there, which we do not write), and the head dominates the quality cost of the
// rounding. q5_K needs rows (ne[0]) of whole 256-weight blocks; other rows take q5_1, as llama.cpp's
// Q5_K_M does. A matrix whose rows are not a multiple of 32 cannot be block-quantized and falls back
// to f16 (f32 when f32 was asked).
// The tokenizer goes to tokenizer.ggml.* (model "gpt2" with merges, or "llama" with scores and types);
// ids past the tokenizer's vocabulary up to the model's (padded) vocabulary become "[PAD<id>]" tokens of
// type unused, because llama.cpp requires one token per embedding row. A model without a tokenizer is
// written without tokenizer keys (readable by us, not by llama.cpp). A tied Llama-family head is not
// written: llama.cpp falls back to token_embd for llama and qwen2, as its own converter expects.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/gguf.h"
#include "engine/model.h"

namespace engine::io {

enum class ExportType { F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q5_K };
// "f32", "f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q5_K"
std::string export_type_name(ExportType t);
std::optional<ExportType> parse_export_type(const std::string& name);  // nullopt for anything else

struct GgufExportOptions {
  ExportType type = ExportType::F32;
  std::string name;                          // general.name ("" = none)
  std::optional<std::string> chat_template;  // tokenizer.chat_template (nullopt: the model's own template source)
};

// fraction in [0,1] and what is being done (no cancelling: a write is short and atomic).
using ExportProgress = std::function<void(float fraction, const std::string& stage)>;

// One tensor as it will be stored: name, GGUF type, ne (fastest first) and its bytes.
struct GgufExportTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

// The metadata and tensors save_gguf writes (exposed for tests that check names, types and keys).
GgufMetadata gguf_export_metadata(const Model& model, const GgufExportOptions& opts);
std::vector<GgufExportTensor> gguf_export_tensors(const Model& model, const GgufExportOptions& opts,
                                                  const ExportProgress& progress = {});

// Encodes every tensor first (the output file's tensor bytes are held in memory, next to the
// model's f32 arena), then writes the file atomically (temp file + fsync + rename): on failure nothing is left at
// `path` (an existing file there is untouched). Throws engine::Error.
void save_gguf(const Model& model, const std::string& path, const GgufExportOptions& opts,
               const ExportProgress& progress = {});

}  // namespace engine::io
