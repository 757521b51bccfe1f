// Model conversion between the formats of DESIGN.md §4: HF directory, GGUF file, llm.c .bin in;
// HF directory or GGUF file out (the engine behind `llm-workbench-cli convert` and `quantize`).
//
// Every conversion opens the model with load_model_to_convert, the one place that decides how: GGUF
// linear weights stay in the mapped file (quantized or not) and the writers widen them a layer at a
// time through Model::f32_weight.
// Outputs are written atomically: a GGUF file through a temp file + rename; an HF directory is
// assembled in a temp directory beside it and renamed into place, so a failure leaves nothing at
// `out`. An existing non-empty directory at `out` is refused (we never merge into or delete a
// user's directory); an existing file at a GGUF `out` is replaced.
#pragma once

#include <memory>
#include <string>

#include "engine/io/gguf_export.h"
#include "engine/model.h"
#include "engine/model_loader.h"

namespace engine::io {

// Opens any supported model for conversion (see above).
std::unique_ptr<Model> load_model_to_convert(const std::string& path, const LoadProgress& progress = {});

enum class ConvertTarget { Gguf, Hf };

// "gguf" for a path ending in .gguf (any case), "hf" otherwise (a directory name); nullopt never.
ConvertTarget infer_convert_target(const std::string& out_path);

struct ConvertOptions {
  ConvertTarget target = ConvertTarget::Gguf;
  ExportType type = ExportType::F32;  // GGUF: any; HF: F32 or F16 safetensors (others throw)
  std::string provenance_json;        // workbench.json of an HF output ("" = "{}")
};

struct ConvertReport {
  std::string source_format;  // "hf", "gguf", "llm.c"
  std::string warning;        // e.g. the tokenizer could not be written in the target format ("" = none)
};

// Converts `in` to `out`. progress(fraction, stage) is called along the way. Throws engine::Error.
ConvertReport convert_model(const std::string& in, const std::string& out, const ConvertOptions& opts,
                            const ExportProgress& progress = {});

// Writes vocab.json + merges.txt (GPT-2 files) for a byte-level BPE tokenizer with the GPT-2 split
// pattern; returns false (writing nothing) for any other tokenizer, which they cannot describe.
bool write_gpt2_tokenizer_files(const Tokenizer& tok, const std::string& directory);

// Writes tokenizer.json for a byte-level BPE tokenizer whose split pattern GGUF names (GPT-2,
// Llama-3, Qwen2); returns false (writing nothing) for any other tokenizer.
bool write_tokenizer_json(const Tokenizer& tok, const std::string& directory);

// The chat template of an HF directory: chat_template.jinja when present, else tokenizer_config.json's
// chat_template (a string, or the "default" entry of a list of named templates); nullopt when none.
// Throws engine::Error for an unreadable or malformed file.
std::optional<std::string> read_chat_template(const std::string& directory);

}  // namespace engine::io
