// LoRA adapters in PEFT's file layout (see engine/train/lora_io.h). The adapters are reached through
// TrainModel::trainable() ("lora.<group>.A" / ".B", one (r, C) / (OC, r) matrix per layer), so this file
// needs nothing of TrainModel's internals.
#include "engine/train/lora_io.h"

#include <filesystem>
#include <map>
#include <utility>

#include "engine/error.h"
#include "engine/io/mapped_file.h"
#include "engine/io/safetensors.h"
#include "engine/model.h"
#include "io/hf_common.h"
#include "io/json_util.h"

namespace fs = std::filesystem;

namespace engine {

namespace {

// Our group (without ".weight") -> the HF module path inside a layer.
const std::map<std::string, std::string>& module_names(Arch arch) {
  static const std::map<std::string, std::string> gpt2 = {{"h.qkv", "attn.c_attn"},
                                                          {"h.attn_proj", "attn.c_proj"},
                                                          {"h.fc", "mlp.c_fc"},
                                                          {"h.fc_proj", "mlp.c_proj"}};
  static const std::map<std::string, std::string> llama = {{"h.wq", "self_attn.q_proj"},  {"h.wk", "self_attn.k_proj"},
                                                           {"h.wv", "self_attn.v_proj"},  {"h.wo", "self_attn.o_proj"},
                                                           {"h.w_gate", "mlp.gate_proj"}, {"h.w_up", "mlp.up_proj"},
                                                           {"h.w_down", "mlp.down_proj"}};
  return arch == Arch::GPT2 ? gpt2 : llama;
}

std::string layer_prefix(Arch arch, int l) {
  return arch == Arch::GPT2 ? "base_model.model.transformer.h." + std::to_string(l) + "."
                            : "base_model.model.model.layers." + std::to_string(l) + ".";
}

// One adapter matrix of the TrainModel: which group, A or B, and its tensor.
struct AdapterMatrix {
  std::string group;  // "h.qkv"
  bool is_a = false;
  TrainableTensor t;
};

std::vector<AdapterMatrix> adapter_matrices(TrainModel& tm) {
  if (tm.lora_config().rank <= 0) throw Error("LoRA adapters: this TrainModel has no adapters (rank 0)");
  std::vector<AdapterMatrix> out;
  for (TrainableTensor& t : tm.trainable()) {
    if (t.name.rfind("lora.", 0) != 0) continue;  // a scalar head trained beside the adapters (reward model)
    // "lora.h.qkv.A" -> group "h.qkv", matrix A
    const std::string core = t.name.substr(5, t.name.size() - 7);
    out.push_back({core, t.name.back() == 'A', std::move(t)});
  }
  return out;
}

// Rotary q/k projections whose rows the model keeps interleaved (GGUF) but HF keeps rotate-half.
bool permuted_rows(const ModelConfig& c, const std::string& group) {
  return c.rope_interleaved && (group == "h.wq" || group == "h.wk");
}

}  // namespace

void save_lora_adapters(TrainModel& tm, const std::string& directory, const std::string& base_model_name_or_path) {
  const ModelConfig& c = tm.model().config();
  const LoraConfig& lc = tm.lora_config();
  const auto mats = adapter_matrices(tm);
  const auto& modules = module_names(c.arch);
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw Error(directory + ": cannot create directory (" + ec.message() + ")");

  std::vector<io::StTensorToWrite> tensors;
  std::vector<std::vector<float>> permuted;  // owns reordered B rows; reserved so pointers stay valid
  permuted.reserve(mats.size() * c.n_layer);
  io::json targets = io::json::array();
  for (const AdapterMatrix& m : mats) {
    const std::string& module = modules.at(m.group);
    if (m.is_a) targets.push_back(c.arch == Arch::GPT2 ? module : module.substr(module.find('.') + 1));
    const uint64_t rows = static_cast<uint64_t>(m.t.shape[0]), cols = static_cast<uint64_t>(m.t.shape[1]);
    for (int l = 0; l < c.n_layer; ++l) {
      const float* data = m.t.value + l * rows * cols;
      if (!m.is_a && permuted_rows(c, m.group)) {
        const uint64_t heads = m.group == "h.wq" ? c.n_head : c.n_kv_head;
        permuted.push_back(io::interleaved_to_half(data, heads, c.head_size(), cols));
        data = permuted.back().data();
      }
      tensors.push_back({layer_prefix(c.arch, l) + module + (m.is_a ? ".lora_A.weight" : ".lora_B.weight"),
                         io::StDType::F32,
                         {rows, cols},
                         data});
    }
  }
  io::write_safetensors((fs::path(directory) / "adapter_model.safetensors").string(), tensors, {{"format", "pt"}});

  io::json cfg = {{"peft_type", "LORA"},
                  {"task_type", "CAUSAL_LM"},
                  {"r", lc.rank},
                  {"lora_alpha", lc.alpha},
                  {"lora_dropout", lc.dropout},
                  {"target_modules", targets},
                  {"fan_in_fan_out", c.arch == Arch::GPT2},
                  {"bias", "none"},
                  {"inference_mode", true},
                  {"init_lora_weights", true},
                  {"modules_to_save", nullptr},
                  {"base_model_name_or_path", base_model_name_or_path}};
  const std::string text = cfg.dump(2) + "\n";
  io::write_file_atomic((fs::path(directory) / "adapter_config.json").string(), text.data(), text.size());
}

void load_lora_adapters(TrainModel& tm, const std::string& directory) {
  const ModelConfig& c = tm.model().config();
  const auto mats = adapter_matrices(tm);
  const auto& modules = module_names(c.arch);
  const std::string path = (fs::path(directory) / "adapter_model.safetensors").string();
  auto file = io::SafetensorsFile::open(path);
  uint64_t used = 0;
  for (const AdapterMatrix& m : mats) {
    if (permuted_rows(c, m.group))
      throw Error(path + ": loading q/k adapters into a model with interleaved rotary rows (GGUF) is not supported");
    const uint64_t rows = static_cast<uint64_t>(m.t.shape[0]), cols = static_cast<uint64_t>(m.t.shape[1]);
    for (int l = 0; l < c.n_layer; ++l) {
      const std::string name =
          layer_prefix(c.arch, l) + modules.at(m.group) + (m.is_a ? ".lora_A.weight" : ".lora_B.weight");
      const io::StTensor* t = file->find(name);
      if (!t) throw Error(path + ": tensor '" + name + "' is missing");
      if (t->shape != std::vector<uint64_t>{rows, cols})
        throw Error(path + ": tensor '" + name + "' has shape " + io::shape_str(t->shape) + ", expected " +
                    io::shape_str({rows, cols}));
      const std::vector<float> v = file->read_f32(*t);
      std::copy(v.begin(), v.end(), m.t.value + l * rows * cols);
      ++used;
    }
  }
  if (used != file->tensors().size())
    throw Error(path + ": holds " + std::to_string(file->tensors().size()) + " tensors, but this model's adapters (" +
                "rank " + std::to_string(tm.lora_config().rank) + ") use " + std::to_string(used));
}

}  // namespace engine
