// Hugging Face GPT-2 directories: config.json + model.safetensors, read into and written from our
// parameter layout; also format detection, and the entry points load_model / save_hf_directory, which
// hand Llama-family directories and models to hf_llama.cpp.
//
// HF stores GPT-2's linear layers as Conv1D with weight (in, out); we keep (out, in) so that one output's
// weights are contiguous for the decode matvec. Every tensor's shape is checked against the config
// before its bytes are used.
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/io/llmc_checkpoint.h"
#include "engine/io/mapped_file.h"
#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "io/hf_common.h"
#include "io/json_util.h"

namespace fs = std::filesystem;

namespace engine {
namespace {

ModelConfig parse_gpt2_config(const io::json& cfg, const std::string& path) {
  ModelConfig c;
  c.arch = Arch::GPT2;
  c.n_layer = static_cast<int>(io::json_get_int(cfg, "n_layer", path, 1, 1024));
  c.n_embd = static_cast<int>(io::json_get_int(cfg, "n_embd", path, 1, 65536));
  c.n_head = static_cast<int>(io::json_get_int(cfg, "n_head", path, 1, 1024));
  c.n_kv_head = c.n_head;
  c.vocab_size = static_cast<int>(io::json_get_int(cfg, "vocab_size", path, 1, 1 << 22));
  auto positions = io::json_get_int_opt(cfg, "n_positions", path, 1, 1 << 20);
  if (!positions) positions = io::json_get_int_opt(cfg, "n_ctx", path, 1, 1 << 20);
  if (!positions) throw Error(path + ": field 'n_positions' is missing");
  c.max_seq_len = static_cast<int>(*positions);
  c.ffn_dim = static_cast<int>(io::json_get_int_opt(cfg, "n_inner", path, 1, 1 << 20).value_or(4ll * c.n_embd));
  c.norm_eps = static_cast<float>(io::json_get_number_opt(cfg, "layer_norm_epsilon", path, 1e-12, 0.5).value_or(1e-5));
  const std::string act = io::json_get_string_opt(cfg, "activation_function", path).value_or("gelu_new");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh")
    throw Error(path + ": activation_function '" + act + "' is not supported (supported: gelu_new, gelu_pytorch_tanh)");
  // false: GPT2LMHeadModel then keeps its own lm_head.weight, which is read (and written back) as is.
  c.tie_embeddings = io::json_get_bool_opt(cfg, "tie_word_embeddings", path).value_or(true);
  c.validate(path);
  return c;
}

using io::read_tensor_into;

// Reads tensor `name` (shape `want`) into dst; transposes (in,out) -> (out,in) when `conv1d`.
void read_into(const io::SafetensorsFile& f, const std::string& name, std::vector<uint64_t> want, bool conv1d,
               float* dst) {
  read_tensor_into(f, name, want, conv1d, dst);
}

}  // namespace

ModelFileInfo detect_model_format(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  // The error_code overloads throughout: a permission error must become an engine::Error too.
  if (!fs::exists(p, ec)) throw Error(path + ": no such file or directory" + (ec ? " (" + ec.message() + ")" : ""));
  if (fs::is_directory(p, ec)) {
    if (!fs::exists(p / "config.json", ec))
      throw Error(path + ": directory has no config.json (not a Hugging Face model directory)");
    if (!fs::exists(p / "model.safetensors", ec)) {
      if (fs::exists(p / "model.safetensors.index.json", ec))
        throw Error(path + ": sharded safetensors checkpoints are not supported yet");
      throw Error(path + ": directory has no model.safetensors");
    }
    return {ModelFormat::HfDirectory, (p / "model.safetensors").string(), p.string()};
  }
  const std::string ext = p.extension().string();
  if (ext == ".safetensors") {
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    if (!fs::exists(dir / "config.json", ec)) throw Error(path + ": no config.json beside the safetensors file");
    return {ModelFormat::HfDirectory, p.string(), dir.string()};
  }
  // Sniff the llm.c magic rather than trusting the extension.
  std::ifstream in(path, std::ios::binary);
  int32_t magic = 0;
  const bool got4 = static_cast<bool>(in.read(reinterpret_cast<char*>(&magic), 4));
  if (got4 && magic == 20240326)
    return {ModelFormat::LlmcCheckpoint, p.string(), p.parent_path().empty() ? "." : p.parent_path().string()};
  // A .gguf name goes to the GGUF reader whatever its first bytes, so that a damaged or mislabelled
  // file is reported as what it is (its bad magic, the bytes seen) rather than as an unknown format.
  std::string lower_ext = ext;
  for (char& ch : lower_ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if ((got4 && std::memcmp(&magic, "GGUF", 4) == 0) || lower_ext == ".gguf")
    return {ModelFormat::Gguf, p.string(), p.parent_path().empty() ? "." : p.parent_path().string()};
  throw Error(path +
              ": unknown model format (expected a Hugging Face directory, a .safetensors file, an llm.c .bin "
              "or a .gguf file)");
}

std::unique_ptr<Tokenizer> load_model_tokenizer(const std::string& path) {
  // A directory of tokenizer files alone (what `tokenizer train` writes) has no model to detect.
  std::error_code ec;
  if (fs::is_directory(path, ec) && !fs::exists(fs::path(path) / "config.json", ec))
    if (auto tok = load_tokenizer_from_directory(path)) return tok;
  const ModelFileInfo info = detect_model_format(path);
  if (info.format == ModelFormat::Gguf) return io::load_gguf_tokenizer(info.weights_path);
  return load_tokenizer_from_directory(info.directory);
}

std::unique_ptr<Tokenizer> load_tokenizer_from_directory(const std::string& directory) {
  const fs::path d(directory);
  std::error_code ec;
  if (fs::exists(d / "tokenizer.json", ec)) return Tokenizer::from_tokenizer_json((d / "tokenizer.json").string());
  if (fs::exists(d / "vocab.json", ec) && fs::exists(d / "merges.txt", ec))
    return Tokenizer::from_gpt2_files((d / "vocab.json").string(), (d / "merges.txt").string());
  return nullptr;
}

ModelConfig io::parse_hf_model_config(const io::json& cfg, const std::string& path) {
  if (!cfg.is_object()) throw Error(path + ": config.json must be a JSON object");
  const std::string model_type = io::json_get_string_opt(cfg, "model_type", path).value_or("gpt2");
  if (io::is_llama_family_type(model_type)) return io::parse_llama_config(cfg, path);
  if (model_type != "gpt2")
    throw Error(path + ": model_type '" + model_type +
                "' is not supported yet (supported: gpt2, llama, mistral, qwen2)");
  return parse_gpt2_config(cfg, path);
}

namespace {

std::unique_ptr<Model> load_hf(const ModelFileInfo& info, const LoadProgress& progress) {
  auto report = [&](float f, const std::string& stage) { io::report_progress(progress, f, stage); };
  report(0.0f, "reading config.json");
  const std::string cfg_path = (fs::path(info.directory) / "config.json").string();
  const io::json cfg = io::parse_json_file(cfg_path, 4u << 20);
  if (!cfg.is_object()) throw Error(cfg_path + ": config.json must be a JSON object");
  const std::string model_type = io::json_get_string_opt(cfg, "model_type", cfg_path).value_or("gpt2");
  if (io::is_llama_family_type(model_type)) return io::load_hf_llama(info, progress);
  if (model_type != "gpt2")
    throw Error(cfg_path + ": model_type '" + model_type +
                "' is not supported yet (supported: gpt2, llama, mistral, qwen2)");
  const ModelConfig c = parse_gpt2_config(cfg, cfg_path);
  report(0.02f, "mapping " + info.weights_path);
  auto file = io::SafetensorsFile::open(info.weights_path);
  uint64_t elements = 0;  // at most the file's size: no overflow
  for (const io::StTensor& t : file->tensors()) elements += t.numel();
  io::require_parameters_in_file(c, elements, info.weights_path);
  auto model = std::make_unique<Model>(c);
  const uint64_t C = c.n_embd, V = c.vocab_size, T = c.max_seq_len, F = c.ffn_dim;
  read_into(*file, "wte.weight", {V, C}, false, model->param_data("wte"));
  read_into(*file, "wpe.weight", {T, C}, false, model->param_data("wpe"));
  for (int l = 0; l < c.n_layer; ++l) {
    report(0.05f + 0.9f * l / c.n_layer, "layer " + std::to_string(l + 1) + " of " + std::to_string(c.n_layer));
    const std::string h = "h." + std::to_string(l) + ".";
    const uint64_t L = l;
    read_into(*file, h + "ln_1.weight", {C}, false, model->param_data("h.ln1.weight") + L * C);
    read_into(*file, h + "ln_1.bias", {C}, false, model->param_data("h.ln1.bias") + L * C);
    read_into(*file, h + "attn.c_attn.weight", {C, 3 * C}, true, model->param_data("h.qkv.weight") + L * 3 * C * C);
    read_into(*file, h + "attn.c_attn.bias", {3 * C}, false, model->param_data("h.qkv.bias") + L * 3 * C);
    read_into(*file, h + "attn.c_proj.weight", {C, C}, true, model->param_data("h.attn_proj.weight") + L * C * C);
    read_into(*file, h + "attn.c_proj.bias", {C}, false, model->param_data("h.attn_proj.bias") + L * C);
    read_into(*file, h + "ln_2.weight", {C}, false, model->param_data("h.ln2.weight") + L * C);
    read_into(*file, h + "ln_2.bias", {C}, false, model->param_data("h.ln2.bias") + L * C);
    read_into(*file, h + "mlp.c_fc.weight", {C, F}, true, model->param_data("h.fc.weight") + L * F * C);
    read_into(*file, h + "mlp.c_fc.bias", {F}, false, model->param_data("h.fc.bias") + L * F);
    read_into(*file, h + "mlp.c_proj.weight", {F, C}, true, model->param_data("h.fc_proj.weight") + L * C * F);
    read_into(*file, h + "mlp.c_proj.bias", {C}, false, model->param_data("h.fc_proj.bias") + L * C);
  }
  read_into(*file, "ln_f.weight", {C}, false, model->param_data("lnf.weight"));
  read_into(*file, "ln_f.bias", {C}, false, model->param_data("lnf.bias"));
  if (!c.tie_embeddings) {
    read_into(*file, "lm_head.weight", {V, C}, false, model->param_data("lm_head.weight"));
  } else if (const io::StTensor* head = file->find("lm_head.weight")) {
    // Tied, yet stored (HF writes it for some GPT-2 checkpoints): it must be the copy of wte.
    if (head->shape != std::vector<uint64_t>{V, C} ||
        file->read_f32(*head) != std::vector<float>(model->param_data("wte"), model->param_data("wte") + V * C))
      throw Error(info.weights_path + ": lm_head.weight differs from wte.weight although tie_word_embeddings is true");
  }
  report(0.97f, "loading tokenizer");
  model->set_tokenizer(load_tokenizer_from_directory(info.directory));
  io::load_hf_chat_template(*model, info.directory);
  model->source = info.directory + " (Hugging Face safetensors)";
  report(1.0f, "done");
  return model;
}

std::unique_ptr<Model> load_llmc(const ModelFileInfo& info, const LoadProgress& progress) {
  if (progress && !progress(0.0f, "reading " + info.weights_path)) throw Cancelled();
  io::LlmcCheckpoint ck = io::read_llmc_checkpoint(info.weights_path);
  ModelConfig c;
  c.arch = Arch::GPT2;
  c.n_layer = ck.num_layers;
  c.n_embd = ck.channels;
  c.n_head = ck.num_heads;
  c.n_kv_head = ck.num_heads;
  c.vocab_size = ck.vocab_size;
  c.max_seq_len = ck.max_seq_len;
  c.ffn_dim = 4 * ck.channels;
  c.validate(info.weights_path);
  if (progress && !progress(0.8f, "arranging parameters")) throw Cancelled();
  auto model = std::make_unique<Model>(c);
  // Our layout matches llm.c's except that wte keeps only the real vocabulary rows (llm.c pads V).
  const auto& params = model->params();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::vector<float>& src = ck.tensors[i];
    float* dst = model->param_data(params[i].name);
    if (i == 0) {
      std::copy(src.begin(), src.begin() + static_cast<int64_t>(c.vocab_size) * c.n_embd, dst);
    } else {
      if (src.size() != params[i].numel)
        throw Error(info.weights_path + ": tensor " + params[i].name + " has the wrong size");
      std::copy(src.begin(), src.end(), dst);
    }
  }
  model->set_tokenizer(load_tokenizer_from_directory(info.directory));
  io::load_hf_chat_template(*model, info.directory);
  model->source = info.weights_path + " (llm.c checkpoint)";
  if (progress) progress(1.0f, "done");
  return model;
}

}  // namespace

std::unique_ptr<Model> load_model(const std::string& path, const LoadProgress& progress, const LoadOptions& options) {
  const ModelFileInfo info = detect_model_format(path);
  switch (info.format) {
    case ModelFormat::HfDirectory: return load_hf(info, progress);
    case ModelFormat::LlmcCheckpoint: return load_llmc(info, progress);
    case ModelFormat::Gguf: return io::load_gguf_model(info, progress, options);
  }
  throw Error(path + ": unknown model format");
}

void save_hf_directory(const Model& model, const std::string& directory, const std::string& tokenizer_source_dir,
                       const std::string& provenance_json, HfWeightType weights) {
  const ModelConfig& c = model.config();
  if (c.arch == Arch::Llama) {
    io::save_hf_llama(model, directory, tokenizer_source_dir, provenance_json, weights);
    return;
  }
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw Error(directory + ": cannot create directory: " + ec.message());
  const uint64_t C = c.n_embd, L = c.n_layer, F = c.ffn_dim;

  // Conv1D tensors are transposed back to (in, out); the buffers must outlive the write call.
  std::vector<std::vector<float>> transposed;
  std::vector<io::StTensorToWrite> out;
  auto plain = [&](const std::string& name, const float* data, std::vector<uint64_t> shape) {
    out.push_back({name, io::StDType::F32, std::move(shape), data});
  };
  auto conv1d = [&](const std::string& name, const float* w, uint64_t outdim, uint64_t indim) {
    std::vector<float> t(outdim * indim);
    for (uint64_t o = 0; o < outdim; ++o)
      for (uint64_t i = 0; i < indim; ++i) t[i * outdim + o] = w[o * indim + i];
    transposed.push_back(std::move(t));
    out.push_back({name, io::StDType::F32, {indim, outdim}, transposed.back().data()});
  };
  transposed.reserve(4 * L);
  // Conv1D weights are transposed into copies at once; only wte is written from a pointer held
  // until the end, so only it needs a widened copy kept alive.
  io::LinearWeightsForWrite linear(model);
  plain("wte.weight", linear("wte", 0), {static_cast<uint64_t>(c.vocab_size), C});
  plain("wpe.weight", model.param_data("wpe"), {static_cast<uint64_t>(c.max_seq_len), C});
  for (uint64_t l = 0; l < L; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    plain(h + "ln_1.weight", model.param_data("h.ln1.weight") + l * C, {C});
    plain(h + "ln_1.bias", model.param_data("h.ln1.bias") + l * C, {C});
    conv1d(h + "attn.c_attn.weight", model.f32_weight("h.qkv.weight", static_cast<int>(l)).data, 3 * C, C);
    plain(h + "attn.c_attn.bias", model.param_data("h.qkv.bias") + l * 3 * C, {3 * C});
    conv1d(h + "attn.c_proj.weight", model.f32_weight("h.attn_proj.weight", static_cast<int>(l)).data, C, C);
    plain(h + "attn.c_proj.bias", model.param_data("h.attn_proj.bias") + l * C, {C});
    plain(h + "ln_2.weight", model.param_data("h.ln2.weight") + l * C, {C});
    plain(h + "ln_2.bias", model.param_data("h.ln2.bias") + l * C, {C});
    conv1d(h + "mlp.c_fc.weight", model.f32_weight("h.fc.weight", static_cast<int>(l)).data, F, C);
    plain(h + "mlp.c_fc.bias", model.param_data("h.fc.bias") + l * F, {F});
    conv1d(h + "mlp.c_proj.weight", model.f32_weight("h.fc_proj.weight", static_cast<int>(l)).data, C, F);
    plain(h + "mlp.c_proj.bias", model.param_data("h.fc_proj.bias") + l * C, {C});
  }
  plain("ln_f.weight", model.param_data("lnf.weight"), {C});
  plain("ln_f.bias", model.param_data("lnf.bias"), {C});
  if (!c.tie_embeddings) plain("lm_head.weight", linear("lm_head.weight", 0), {static_cast<uint64_t>(c.vocab_size), C});
  std::vector<std::vector<uint16_t>> halves;
  if (weights == HfWeightType::F16) io::narrow_f32_tensors_to_f16(out, halves);
  io::write_safetensors((fs::path(directory) / "model.safetensors").string(), out, {{"format", "pt"}});

  io::json cfg = {{"model_type", "gpt2"},
                  {"architectures", {"GPT2LMHeadModel"}},
                  {"n_layer", c.n_layer},
                  {"n_embd", c.n_embd},
                  {"n_head", c.n_head},
                  {"vocab_size", c.vocab_size},
                  {"n_positions", c.max_seq_len},
                  {"n_ctx", c.max_seq_len},
                  {"n_inner", c.ffn_dim},
                  {"layer_norm_epsilon", c.norm_eps},
                  {"activation_function", "gelu_new"},
                  {"tie_word_embeddings", c.tie_embeddings}};
  io::write_hf_side_files(model, directory, std::move(cfg), tokenizer_source_dir, provenance_json);
}

}  // namespace engine
