// Opening and saving models in the formats of DESIGN.md §4.
//
// load_model() accepts:
//   - a Hugging Face directory (config.json + model.safetensors [+ vocab.json/merges.txt or tokenizer.json]),
//     or the path of a .safetensors file inside one; config.json's model_type picks GPT-2 ("gpt2" or
//     absent) or the Llama family ("llama", "qwen2", "mistral" without a sliding window);
//   - an llm.c checkpoint (.bin, magic 20240326), with tokenizer files looked for beside it;
//   - a GGUF file (magic "GGUF"; general.architecture gpt2, llama or qwen2), tokenizer from its
//     tokenizer.ggml.* metadata (see engine/src/io/gguf_model.cpp).
// Llama-family configs that ask for something not implemented (rope_scaling, sliding windows, biases
// other than Qwen2's q/k/v, activations other than silu) are errors, never silently ignored.
// GPT-2 tensor names are accepted with or without the "transformer." prefix; tensors we do not use
// (attn.bias masks, tied lm_head) are ignored; a missing tensor is an error naming it. f32/f16/bf16
// tensors are widened to the f32 arena, except GGUF linear weights in f16 / q8_0 / q4_0 / q4_K /
// q6_K, which by default stay in the memory-mapped file and are used there by the quantized kernels
// (peak RSS about the file size); LoadOptions::dequantize widens them too, for code that needs f32
// values (conversion, training).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/error.h"
#include "engine/model.h"

namespace engine {

// Thrown when a progress callback asked to stop.
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled") {}
};

// fraction in [0,1] and what is being done; return false to cancel (load_model then throws Cancelled).
using LoadProgress = std::function<bool(float fraction, const std::string& stage)>;

enum class ModelFormat { HfDirectory, LlmcCheckpoint, Gguf };

struct ModelFileInfo {
  ModelFormat format;
  std::string weights_path;  // the file holding the tensors
  std::string directory;     // where config/tokenizer files are looked for
};

// Decides what `path` is without loading it. Throws engine::Error for unknown or missing paths.
ModelFileInfo detect_model_format(const std::string& path);

struct LoadOptions {
  // true: every weight is widened into the f32 arena (param_data works for all of them); false: GGUF
  // linear weights a kernel can read directly stay file-encoded (Model::weight, quant_weight).
  bool dequantize = false;
  // Weights kept in place also get a copy in the layout the CPU kernels prefer (quant.h): q8_0 /
  // q4_0 row-interleaved (x8), f16 in column panels. The file pages are released, so memory stays
  // about the file size. q8_0 / q4_0 prefill then rounds activations to int8 like decode does;
  // false keeps the file layout only (prefill widens weight tiles to f32 for sgemm).
  bool pack = true;
};

std::unique_ptr<Model> load_model(const std::string& path, const LoadProgress& progress = {},
                                  const LoadOptions& options = {});

// The tokenizer of the model at `path` (anything load_model accepts) without reading its weights: a
// GGUF file's tokenizer.ggml.* metadata (a vocabulary-only GGUF, without tensors, is enough), else
// the tokenizer files of the model's directory, or of a directory holding only tokenizer files.
// Null when there is none; throws for unknown paths.
std::unique_ptr<Tokenizer> load_model_tokenizer(const std::string& path);

// Loads the tokenizer found in `directory` (tokenizer.json, else vocab.json + merges.txt), or null.
std::unique_ptr<Tokenizer> load_tokenizer_from_directory(const std::string& directory);

// How save_hf_directory stores the weights: f32 (exact), or f16 (half the size; round to nearest even, and
// refused with an engine::Error naming the tensor when a value lies beyond f16's range of +-65504).
enum class HfWeightType { F32, F16 };

// Writes our native HF directory: config.json, model.safetensors and workbench.json (provenance).
// GPT-2: HF GPT-2 names, Conv1D layout. Llama family: HF Llama names (model_type "qwen2" when the model
// has q/k/v biases), q/k rows in HF's rotate-half order even when the model's are interleaved. Tokenizer files are
// copied from `tokenizer_source_dir` when given. Each file is written atomically.
void save_hf_directory(const Model& model, const std::string& directory, const std::string& tokenizer_source_dir,
                       const std::string& provenance_json, HfWeightType weights = HfWeightType::F32);

}  // namespace engine
