// Shared Hugging Face directory helpers: see hf_common.h.
#include "io/hf_common.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/io/mapped_file.h"

namespace fs = std::filesystem;

namespace engine::io {

std::string shape_str(const std::vector<uint64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

const StTensor* find_hf_tensor(const SafetensorsFile& f, const std::string& name) {
  if (const auto* t = f.find(name)) return t;
  return f.find("transformer." + name);
}

void read_tensor_into(const SafetensorsFile& f, const std::string& name, const std::vector<uint64_t>& want,
                      bool transpose, float* dst) {
  const StTensor* t = find_hf_tensor(f, name);
  if (!t) throw Error(f.path() + ": missing tensor '" + name + "'");
  if (t->shape != want)
    throw Error(f.path() + ": tensor '" + t->name + "' has shape " + shape_str(t->shape) + ", expected " +
                shape_str(want));
  const std::vector<float> v = f.read_f32(*t);
  f.release(*t);  // copied: its file pages need not stay resident
  if (!transpose) {
    std::copy(v.begin(), v.end(), dst);
    return;
  }
  const uint64_t in = want[0], out = want[1];
  for (uint64_t i = 0; i < in; ++i)
    for (uint64_t o = 0; o < out; ++o) dst[o * in + i] = v[i * out + o];
}

void report_progress(const LoadProgress& progress, float fraction, const std::string& stage) {
  if (progress && !progress(fraction, stage)) throw Cancelled();
}

void require_parameters_in_file(const ModelConfig& c, uint64_t file_elements, const std::string& path) {
  const uint64_t need = c.parameter_count();
  const uint64_t slack = uint64_t{1} << 24;  // 64 MiB of f32: below it, naming the missing tensor is worth more
  if (need > 2 * file_elements + slack)
    throw Error(path + ": the model's config asks for " + std::to_string(need) +
                " parameters but the file's tensors hold only " + std::to_string(file_elements) + " values");
}

namespace {
std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

void write_hf_side_files(const Model& model, const std::string& directory, json cfg,
                         const std::string& tokenizer_source_dir, const std::string& provenance_json) {
  if (const Tokenizer* tok = model.tokenizer()) {
    if (auto eos = tok->eos_id()) cfg["eos_token_id"] = *eos;
    if (auto bos = tok->bos_id()) cfg["bos_token_id"] = *bos;
  }
  const std::string cfg_text = cfg.dump(2) + "\n";
  write_file_atomic((fs::path(directory) / "config.json").string(), cfg_text.data(), cfg_text.size());
  const std::string prov = provenance_json.empty() ? std::string("{}\n") : provenance_json + "\n";
  write_file_atomic((fs::path(directory) / "workbench.json").string(), prov.data(), prov.size());

  bool template_written = false;
  if (!tokenizer_source_dir.empty()) {
    for (const char* name :
         {"tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "chat_template.jinja"}) {
      const fs::path src = fs::path(tokenizer_source_dir) / name;
      if (!fs::exists(src)) continue;
      const std::string bytes = read_small_file(src.string());
      write_file_atomic((fs::path(directory) / name).string(), bytes.data(), bytes.size());
      template_written = template_written || std::string(name) != "tokenizer.json";
    }
  }
  // A model whose files are not copied (loaded from GGUF, say) still takes its chat template along, where
  // HF keeps it.
  const ChatTemplate& tmpl = model.chat_template();
  if (!template_written && !tmpl.source().empty()) {
    json tc = {{"chat_template", tmpl.source()}};
    if (!tmpl.bos_text().empty()) tc["bos_token"] = tmpl.bos_text();
    if (!tmpl.eos_text().empty()) tc["eos_token"] = tmpl.eos_text();
    const std::string text = tc.dump(2) + "\n";
    write_file_atomic((fs::path(directory) / "tokenizer_config.json").string(), text.data(), text.size());
  }
}

}  // namespace engine::io
