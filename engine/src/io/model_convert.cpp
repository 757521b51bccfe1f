// convert_model and its helpers: see engine/io/model_convert.h.
#include "engine/io/model_convert.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/io/mapped_file.h"
#include "io/json_util.h"

namespace fs = std::filesystem;

namespace engine::io {

std::unique_ptr<Model> load_model_to_convert(const std::string& path, const LoadProgress& progress) {
  // GGUF weights stay in the mapped file and the writers widen one layer at a time (Model::f32_weight),
  // so a GGUF -> GGUF conversion never holds the whole model in f32. No packed copies: nothing here
  // runs the kernels.
  return load_model(path, progress, LoadOptions{.pack = false});
}

ConvertTarget infer_convert_target(const std::string& out_path) {
  std::string ext = fs::path(out_path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext == ".gguf" ? ConvertTarget::Gguf : ConvertTarget::Hf;
}

bool write_gpt2_tokenizer_files(const Tokenizer& tok, const std::string& directory) {
  const TokenizerVocabExport e = tok.export_vocab();
  if (e.kind != TokenizerVocabExport::Kind::ByteLevelBpe || e.pre_tokenizer != "gpt-2" || e.add_prefix_space)
    return false;
  json vocab = json::object();
  for (size_t id = 0; id < e.pieces.size(); ++id)
    if (!e.pieces[id].empty()) vocab[e.pieces[id]] = id;
  const std::string vocab_text = vocab.dump() + "\n";
  std::string merges = "#version: 0.2\n";
  for (const std::string& m : e.merges) merges += m + "\n";
  write_file_atomic((fs::path(directory) / "vocab.json").string(), vocab_text.data(), vocab_text.size());
  write_file_atomic((fs::path(directory) / "merges.txt").string(), merges.data(), merges.size());
  return true;
}

namespace {
// The split patterns exactly as the Llama-3 and Qwen2 tokenizer.json files spell them (the loader
// recognises them by this text; a round-trip test catches any drift).
constexpr const char* k_llama3_split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* k_qwen2_split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
}  // namespace

bool write_tokenizer_json(const Tokenizer& tok, const std::string& directory) {
  const TokenizerVocabExport e = tok.export_vocab();
  if (e.kind != TokenizerVocabExport::Kind::ByteLevelBpe) return false;
  json pre;
  if (e.pre_tokenizer == "gpt-2") {
    pre = {{"type", "ByteLevel"},
           {"add_prefix_space", e.add_prefix_space},
           {"trim_offsets", true},
           {"use_regex", true}};
  } else if (e.pre_tokenizer == "llama-bpe" || e.pre_tokenizer == "qwen2") {
    if (e.add_prefix_space) return false;
    const char* pattern = e.pre_tokenizer == "qwen2" ? k_qwen2_split : k_llama3_split;
    pre = {{"type", "Sequence"},
           {"pretokenizers",
            {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
             {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
  } else {
    return false;
  }
  json vocab = json::object();
  json added = json::array();
  for (size_t id = 0; id < e.pieces.size(); ++id) {
    if (e.pieces[id].empty()) continue;
    const int32_t type = e.token_types[id];
    if (type == 3 || type == 4)
      added.push_back({{"id", id},
                       {"content", e.pieces[id]},
                       {"special", type == 3},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", type == 4}});
    else vocab[e.pieces[id]] = id;
  }
  // Added tokens are listed in the vocabulary too, as HF writes them.
  for (const auto& a : added) vocab[a["content"].get<std::string>()] = a["id"];
  const json doc = {{"version", "1.0"},
                    {"truncation", nullptr},
                    {"padding", nullptr},
                    {"added_tokens", added},
                    {"normalizer", e.nfc ? json{{"type", "NFC"}} : json(nullptr)},
                    {"pre_tokenizer", pre},
                    {"post_processor", nullptr},
                    {"decoder",
                     {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
                    {"model",
                     {{"type", "BPE"},
                      {"dropout", nullptr},
                      {"unk_token", nullptr},
                      {"continuing_subword_prefix", nullptr},
                      {"end_of_word_suffix", nullptr},
                      {"fuse_unk", false},
                      {"byte_fallback", false},
                      {"ignore_merges", false},
                      {"vocab", vocab},
                      {"merges", e.merges}}}};
  const std::string text = doc.dump() + "\n";
  write_file_atomic((fs::path(directory) / "tokenizer.json").string(), text.data(), text.size());
  return true;
}

std::optional<std::string> read_chat_template(const std::string& directory) {
  // Newer transformers save the template as chat_template.jinja beside tokenizer_config.json.
  const fs::path jinja = fs::path(directory) / "chat_template.jinja";
  std::error_code ec;
  if (fs::is_regular_file(jinja, ec)) {
    constexpr uintmax_t k_max = 16u << 20;
    const uintmax_t size = fs::file_size(jinja, ec);
    if (ec || size > k_max) throw Error(jinja.string() + ": unreadable, or larger than 16 MiB");
    std::string text(static_cast<size_t>(size), '\0');
    FILE* f = std::fopen(jinja.string().c_str(), "rb");
    if (!f) throw Error(jinja.string() + ": cannot open");
    const size_t got = std::fread(text.data(), 1, text.size(), f);
    std::fclose(f);
    if (got != text.size()) throw Error(jinja.string() + ": short read");
    return text;
  }
  const fs::path p = fs::path(directory) / "tokenizer_config.json";
  if (!fs::exists(p, ec)) return std::nullopt;
  const json cfg = parse_json_file(p.string(), 16u << 20);
  if (!cfg.is_object()) return std::nullopt;
  auto it = cfg.find("chat_template");
  if (it == cfg.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  // A list of named templates ([{"name": "default", "template": ...}, {"name": "tool_use", ...}]):
  // the default one, which is what apply_chat_template uses without a name.
  if (it->is_array()) {
    for (const json& named : *it) {
      if (!named.is_object()) continue;
      auto name = named.find("name");
      auto tmpl = named.find("template");
      if (name != named.end() && tmpl != named.end() && name->is_string() && tmpl->is_string() &&
          name->get<std::string>() == "default")
        return tmpl->get<std::string>();
    }
  }
  return std::nullopt;
}

namespace {

// The chat template a source carries: tokenizer_config.json beside an HF / llm.c model, or a
// GGUF's tokenizer.chat_template.
std::optional<std::string> source_chat_template(const ModelFileInfo& info) {
  if (info.format != ModelFormat::Gguf) return read_chat_template(info.directory);
  auto f = GgufFile::open(info.weights_path);
  if (!f->has("tokenizer.chat_template")) return std::nullopt;
  return f->get_string("tokenizer.chat_template");
}

std::string format_name(ModelFormat f) {
  switch (f) {
    case ModelFormat::HfDirectory: return "hf";
    case ModelFormat::LlmcCheckpoint: return "llm.c";
    case ModelFormat::Gguf: return "gguf";
  }
  return "?";
}

// Refuses an `out` we must not overwrite; returns whether an empty directory is in the way.
bool check_hf_destination(const std::string& out) {
  std::error_code ec;
  const fs::path p(out);
  if (!fs::exists(p, ec)) {
    const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    if (!fs::is_directory(parent, ec))
      throw Error(out + ": the parent directory " + parent.string() + " does not exist");
    return false;
  }
  if (!fs::is_directory(p, ec)) throw Error(out + ": exists and is not a directory (an HF output is a directory)");
  if (!fs::is_empty(p, ec) || ec)
    throw Error(out + ": directory exists and is not empty; remove it or choose another --out");
  return true;
}

void check_gguf_destination(const std::string& out) {
  std::error_code ec;
  const fs::path p(out);
  if (fs::is_directory(p, ec)) throw Error(out + ": is a directory (a GGUF output is a file)");
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(parent, ec)) throw Error(out + ": the parent directory " + parent.string() + " does not exist");
}

// Removes a temp directory on scope exit unless released (it was renamed into place).
struct TempDir {
  fs::path path;
  bool keep = false;
  ~TempDir() {
    if (keep || path.empty()) return;
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

ConvertReport convert_model(const std::string& in, const std::string& out_arg, const ConvertOptions& opts,
                            const ExportProgress& progress) {
  ConvertReport report;
  // "dir/" names the directory "dir": drop trailing separators so parent / filename mean that.
  std::string out = out_arg;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  const ModelFileInfo info = detect_model_format(in);
  report.source_format = format_name(info.format);
  // Destination problems are found before the (possibly long) load.
  if (opts.target == ConvertTarget::Gguf) {
    check_gguf_destination(out);
  } else {
    check_hf_destination(out);
    if (opts.type != ExportType::F32 && opts.type != ExportType::F16)
      throw Error(out + ": Hugging Face safetensors are written as f32 or f16 (quantized types are GGUF only)");
  }

  auto load_progress = [&](float f, const std::string& stage) {
    if (progress) progress(0.5f * f, "loading: " + stage);
    return true;
  };
  std::unique_ptr<Model> model = load_model_to_convert(in, load_progress);
  auto write_progress = [&](float f, const std::string& stage) {
    if (progress) progress(0.5f + 0.5f * f, "writing: " + stage);
  };

  if (opts.target == ConvertTarget::Gguf) {
    GgufExportOptions g;
    g.type = opts.type;
    g.name = fs::path(in).filename().string();
    g.chat_template = source_chat_template(info);
    if (!model->tokenizer()) report.warning = "the model has no tokenizer; llama.cpp cannot load a GGUF without one";
    save_gguf(*model, out, g, write_progress);
    return report;
  }

  // HF: assemble beside `out`, then rename into place.
  const bool empty_dir_in_the_way = check_hf_destination(out);
  const fs::path dest = fs::absolute(fs::path(out)).lexically_normal();
  TempDir tmp;
  tmp.path = dest.parent_path() / (dest.filename().string() + ".tmp-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(tmp.path, ec);
  // Tokenizer files: copied from an HF / llm.c source directory, else rebuilt from the tokenizer.
  const std::string tok_source = info.format == ModelFormat::Gguf ? std::string() : info.directory;
  save_hf_directory(*model, tmp.path.string(), tok_source, opts.provenance_json,
                    opts.type == ExportType::F16 ? HfWeightType::F16 : HfWeightType::F32);
  write_progress(0.9f, "tokenizer");
  if (info.format == ModelFormat::Gguf && model->tokenizer()) {
    // GPT-2's split pattern: the classic vocab.json + merges.txt; Llama-3 / Qwen2: tokenizer.json.
    if (!write_gpt2_tokenizer_files(*model->tokenizer(), tmp.path.string()) &&
        !write_tokenizer_json(*model->tokenizer(), tmp.path.string()))
      report.warning = "the tokenizer (SentencePiece) cannot be written as HF files yet; the directory has none";
    // The GGUF's chat template goes where HF keeps it.
    if (const auto tmpl = source_chat_template(info)) {
      const std::string text = json{{"chat_template", *tmpl}}.dump(2) + "\n";
      write_file_atomic((tmp.path / "tokenizer_config.json").string(), text.data(), text.size());
    }
  } else if (!model->tokenizer()) {
    report.warning = "the model has no tokenizer; the directory has none";
  }
  if (empty_dir_in_the_way) {
    fs::remove(dest, ec);
    if (ec) throw Error(out + ": cannot replace the empty directory: " + ec.message());
  }
  fs::rename(tmp.path, dest, ec);
  if (ec) throw Error(out + ": cannot move the finished directory into place: " + ec.message());
  tmp.keep = true;
  write_progress(1.0f, "done");
  return report;
}

}  // namespace engine::io
