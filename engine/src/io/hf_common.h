// Internal helpers shared by the Hugging Face directory readers/writers (hf_gpt2.cpp, hf_llama.cpp).
//
// Invariant kept by read_tensor_into: a tensor's shape is compared with the shape the config implies
// before any of its bytes are used, so a wrong or crafted file fails with an error naming the tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "io/json_util.h"

namespace engine::io {

std::string shape_str(const std::vector<uint64_t>& s);

// Finds "name" or "transformer.name" (GPT-2 checkpoints carry that prefix, others do not).
const StTensor* find_hf_tensor(const SafetensorsFile& f, const std::string& name);

// Reads tensor `name` (shape `want`) widened to f32 into dst; transposes (in,out) -> (out,in) when
// `transpose` (GPT-2's Conv1D). Throws naming the tensor when it is missing or misshapen.
void read_tensor_into(const SafetensorsFile& f, const std::string& name, const std::vector<uint64_t>& want,
                      bool transpose, float* dst);

// A writer's source of linear weights as f32 (Model::f32_weight): views into the arena or an f32
// file, or copies widened from a kept file encoding, held until the writer is destroyed, since the
// safetensors writer takes every tensor's pointer first and writes them all at the end.
class LinearWeightsForWrite {
 public:
  explicit LinearWeightsForWrite(const Model& model) : m_model(model) {}
  const float* operator()(const std::string& name, uint64_t layer) {
    Model::F32Weight w = m_model.f32_weight(name, static_cast<int>(layer));
    if (w.owned) m_widened.push_back(std::move(w.owned));
    return w.data;
  }

 private:
  const Model& m_model;
  std::vector<std::shared_ptr<const std::vector<float>>> m_widened;
};

// Calls `progress` and throws Cancelled when it asks to stop.
void report_progress(const LoadProgress& progress, float fraction, const std::string& stage);

// Refuses a config that asks for far more parameters than the weights file has tensor elements, before the model's
// memory is allocated. Every parameter is read from one element of the file, so a damaged or mismatched config
// (a layer count or feed-forward width far too large) would otherwise cost the whole model's memory, gigabytes,
// before the first missing tensor is reported (found while writing tests/fuzz/fuzz_model_load.cpp). A small
// excess (a tensor or two missing) is left to the loader, which names the missing tensor as it reads: memory is
// then bounded by the file's size, not by what the config claims.
void require_parameters_in_file(const ModelConfig& c, uint64_t file_elements, const std::string& path);

// Adds bos/eos ids from the model's tokenizer, writes config.json and workbench.json atomically, and
// copies the tokenizer files from `tokenizer_source_dir` (when not empty).
void write_hf_side_files(const Model& model, const std::string& directory, json cfg,
                         const std::string& tokenizer_source_dir, const std::string& provenance_json);

// Llama family (hf_llama.cpp). is_llama_family_type: "llama", "mistral", "qwen2".
bool is_llama_family_type(const std::string& model_type);
ModelConfig parse_llama_config(const json& cfg, const std::string& path);
std::unique_ptr<Model> load_hf_llama(const ModelFileInfo& info, const LoadProgress& progress);
void save_hf_llama(const Model& model, const std::string& directory, const std::string& tokenizer_source_dir,
                   const std::string& provenance_json, HfWeightType weights);
// Rows of q/k matrices (heads * HS rows of `cols` floats) from the interleaved rotary layout to HF's
// rotate-half order (also used for LoRA B matrices of q/k adapters).
std::vector<float> interleaved_to_half(const float* src, uint64_t heads, uint64_t HS, uint64_t cols);

// The ModelConfig of an HF config.json of any supported model_type (gpt2, llama, mistral, qwen2), as
// load_model reads it (hf_gpt2.cpp); used to start training from random weights.
ModelConfig parse_hf_model_config(const json& cfg, const std::string& path);

// Model::chat_template() at load (model_chat_template.cpp): from a template source (nullopt = none)
// with the bos / eos texts its tokenizer config names (nullopt = from the model's tokenizer); from an
// HF directory; from a GGUF file. Never throw: problems become Model::chat_template_note.
void set_model_chat_template(Model& model, const std::optional<std::string>& source, std::optional<std::string> bos,
                             std::optional<std::string> eos);
void load_hf_chat_template(Model& model, const std::string& directory);
class GgufFile;
void load_gguf_chat_template(Model& model, const GgufFile& f);

// GGUF files (gguf_model.cpp); load_model dispatches here for ModelFormat::Gguf.
std::unique_ptr<Model> load_gguf_model(const ModelFileInfo& info, const LoadProgress& progress,
                                       const LoadOptions& options);
// The tokenizer of a GGUF file's tokenizer.ggml.* metadata, or null when it has none; reads no
// tensor, so a vocabulary-only file (llama.cpp's models/ggml-vocab-*.gguf) works.
std::unique_ptr<Tokenizer> load_gguf_tokenizer(const std::string& path);

}  // namespace engine::io
