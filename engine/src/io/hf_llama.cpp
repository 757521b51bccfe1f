// Hugging Face Llama-family directories (model_type llama, mistral without a sliding window, qwen2):
// config.json + model.safetensors, read into and written from our Llama parameter layout (model.h).
//
// HF Llama linear weights are nn.Linear, already (out, in), so they are copied as they are. HF's rotary
// layout is "rotate half" (pair i = dims i and i+HS/2), so loaded models have rope_interleaved = false;
// a model whose q/k rows are interleaved (from GGUF) is permuted back to rotate-half when saved, so the
// directory we write is always a plain HF checkpoint. Every config field that would change the function
// and that we do not implement (rope_scaling, sliding windows, MLP biases, other activations, a
// head_dim other than hidden_size / heads) is refused with an error rather than ignored.
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "engine/io/mapped_file.h"
#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "io/hf_common.h"
#include "io/json_util.h"

namespace fs = std::filesystem;

namespace engine::io {

bool is_llama_family_type(const std::string& model_type) {
  return model_type == "llama" || model_type == "mistral" || model_type == "qwen2";
}

ModelConfig parse_llama_config(const json& cfg, const std::string& path) {
  const std::string model_type = json_get_string(cfg, "model_type", path);
  if (!is_llama_family_type(model_type))
    throw Error(path + ": model_type '" + model_type + "' is not a Llama-family model");
  ModelConfig c;
  c.arch = Arch::Llama;
  c.n_embd = static_cast<int>(json_get_int(cfg, "hidden_size", path, 1, 65536));
  c.ffn_dim = static_cast<int>(json_get_int(cfg, "intermediate_size", path, 1, 1 << 20));
  c.n_layer = static_cast<int>(json_get_int(cfg, "num_hidden_layers", path, 1, 1024));
  c.n_head = static_cast<int>(json_get_int(cfg, "num_attention_heads", path, 1, 1024));
  c.n_kv_head = static_cast<int>(json_get_int_opt(cfg, "num_key_value_heads", path, 1, 1024).value_or(c.n_head));
  c.vocab_size = static_cast<int>(json_get_int(cfg, "vocab_size", path, 1, 1 << 22));
  c.max_seq_len = static_cast<int>(json_get_int(cfg, "max_position_embeddings", path, 1, 1 << 20));
  c.norm_eps = static_cast<float>(json_get_number_opt(cfg, "rms_norm_eps", path, 1e-12, 0.5).value_or(1e-6));
  c.rope_theta = static_cast<float>(json_get_number_opt(cfg, "rope_theta", path, 1.0001, 1e12).value_or(10000.0));
  c.rope_interleaved = false;
  c.tie_embeddings = json_get_bool_opt(cfg, "tie_word_embeddings", path).value_or(false);
  // Qwen2's attention always has q/k/v biases (its config has no switch); Llama's has them when
  // attention_bias, and then o_proj has one too, which we do not implement.
  if (model_type == "qwen2") {
    c.qkv_bias = true;
  } else if (json_get_bool_opt(cfg, "attention_bias", path).value_or(false)) {
    throw Error(path + ": attention_bias = true for model_type '" + model_type +
                "' (biases on q/k/v/o projections) is not supported yet");
  }
  if (const json* rs = json_find(cfg, "rope_scaling", path); rs && !rs->is_null())
    throw Error(path + ": field 'rope_scaling' is " + json_describe(*rs) +
                ": rope scaling is not supported yet (only null)");
  const std::string act = json_get_string_opt(cfg, "hidden_act", path).value_or("silu");
  if (act != "silu") throw Error(path + ": hidden_act '" + act + "' is not supported (supported: silu)");
  if (json_get_bool_opt(cfg, "mlp_bias", path).value_or(false))
    throw Error(path + ": mlp_bias = true is not supported yet");
  if (auto hd = json_get_int_opt(cfg, "head_dim", path, 1, 65536);
      hd && c.n_embd % c.n_head == 0 && *hd != c.n_embd / c.n_head)
    throw Error(path + ": head_dim " + std::to_string(*hd) + " differs from hidden_size / num_attention_heads (" +
                std::to_string(c.n_embd / c.n_head) + "), which is not supported yet");
  // A sliding window shorter than the context changes which keys are attended; we attend to all.
  const bool use_window = json_get_bool_opt(cfg, "use_sliding_window", path).value_or(model_type == "mistral");
  if (use_window) {
    if (auto win = json_get_int_opt(cfg, "sliding_window", path, 0, INT64_MAX); win && *win < c.max_seq_len)
      throw Error(path + ": sliding_window " + std::to_string(*win) + " is shorter than the context (" +
                  std::to_string(c.max_seq_len) + "); sliding-window attention is not supported yet");
  }
  c.validate(path);
  return c;
}

namespace {

// A float as the double with the same shortest decimal form, so config.json says 1e-05, not
// 9.999999747378752e-06 (the float's exact value, which HF would then use in double).
double decimal(float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

}  // namespace

// Row order of one head's q/k rows: rotate-half row r (< HS) comes from interleaved row
// 2r (first half) or 2(r - HS/2) + 1 (second half). `rows` is heads * HS; each row has `cols` floats.
std::vector<float> interleaved_to_half(const float* src, uint64_t heads, uint64_t HS, uint64_t cols) {
  std::vector<float> out(heads * HS * cols);
  const uint64_t half = HS / 2;
  for (uint64_t h = 0; h < heads; ++h)
    for (uint64_t r = 0; r < HS; ++r) {
      const uint64_t from = r < half ? 2 * r : 2 * (r - half) + 1;
      std::copy(src + (h * HS + from) * cols, src + (h * HS + from + 1) * cols, out.data() + (h * HS + r) * cols);
    }
  return out;
}

std::unique_ptr<Model> load_hf_llama(const ModelFileInfo& info, const LoadProgress& progress) {
  const std::string cfg_path = (fs::path(info.directory) / "config.json").string();
  const json cfg = parse_json_file(cfg_path, 4u << 20);
  if (!cfg.is_object()) throw Error(cfg_path + ": config.json must be a JSON object");
  const ModelConfig c = parse_llama_config(cfg, cfg_path);
  report_progress(progress, 0.02f, "mapping " + info.weights_path);
  auto file = SafetensorsFile::open(info.weights_path);
  uint64_t elements = 0;  // at most the file's size: no overflow
  for (const StTensor& t : file->tensors()) elements += t.numel();
  require_parameters_in_file(c, elements, info.weights_path);
  auto model = std::make_unique<Model>(c);
  const uint64_t C = c.n_embd, V = c.vocab_size, F = c.ffn_dim, KVW = c.kv_width();
  read_tensor_into(*file, "model.embed_tokens.weight", {V, C}, false, model->param_data("wte"));
  for (int l = 0; l < c.n_layer; ++l) {
    report_progress(progress, 0.05f + 0.9f * l / c.n_layer,
                    "layer " + std::to_string(l + 1) + " of " + std::to_string(c.n_layer));
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const uint64_t L = l;
    auto rd = [&](const std::string& name, std::vector<uint64_t> shape, const char* ours, uint64_t per_layer) {
      read_tensor_into(*file, p + name, shape, false, model->param_data(ours) + L * per_layer);
    };
    rd("input_layernorm.weight", {C}, "h.attn_norm.weight", C);
    rd("self_attn.q_proj.weight", {C, C}, "h.wq.weight", C * C);
    rd("self_attn.k_proj.weight", {KVW, C}, "h.wk.weight", KVW * C);
    rd("self_attn.v_proj.weight", {KVW, C}, "h.wv.weight", KVW * C);
    if (c.qkv_bias) {
      rd("self_attn.q_proj.bias", {C}, "h.wq.bias", C);
      rd("self_attn.k_proj.bias", {KVW}, "h.wk.bias", KVW);
      rd("self_attn.v_proj.bias", {KVW}, "h.wv.bias", KVW);
    }
    rd("self_attn.o_proj.weight", {C, C}, "h.wo.weight", C * C);
    rd("post_attention_layernorm.weight", {C}, "h.ffn_norm.weight", C);
    rd("mlp.gate_proj.weight", {F, C}, "h.w_gate.weight", F * C);
    rd("mlp.up_proj.weight", {F, C}, "h.w_up.weight", F * C);
    rd("mlp.down_proj.weight", {C, F}, "h.w_down.weight", C * F);
  }
  read_tensor_into(*file, "model.norm.weight", {C}, false, model->param_data("norm.weight"));
  if (!c.tie_embeddings) {
    read_tensor_into(*file, "lm_head.weight", {V, C}, false, model->param_data("lm_head.weight"));
  } else if (const StTensor* head = file->find("lm_head.weight")) {
    // Tied, yet stored: it must be the copy of the embedding, else the config is lying about tying.
    const float* wte = model->param_data("wte");
    if (head->shape != std::vector<uint64_t>{V, C} || file->read_f32(*head) != std::vector<float>(wte, wte + V * C))
      throw Error(info.weights_path +
                  ": lm_head.weight differs from model.embed_tokens.weight although "
                  "tie_word_embeddings is true");
  }
  report_progress(progress, 0.97f, "loading tokenizer");
  model->set_tokenizer(load_tokenizer_from_directory(info.directory));
  load_hf_chat_template(*model, info.directory);
  model->source = info.directory + " (Hugging Face safetensors)";
  report_progress(progress, 1.0f, "done");
  return model;
}

void save_hf_llama(const Model& model, const std::string& directory, const std::string& tokenizer_source_dir,
                   const std::string& provenance_json, HfWeightType weights) {
  const ModelConfig& c = model.config();
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw Error(directory + ": cannot create directory: " + ec.message());
  const uint64_t C = c.n_embd, L = c.n_layer, F = c.ffn_dim, KVW = c.kv_width(), HS = c.head_size(), V = c.vocab_size;

  // Permuted q/k copies (interleaved models only); reserved so pointers into it stay valid.
  std::vector<std::vector<float>> permuted;
  permuted.reserve(4 * L);
  std::vector<StTensorToWrite> out;
  auto plain = [&](const std::string& name, const float* data, std::vector<uint64_t> shape) {
    out.push_back({name, StDType::F32, std::move(shape), data});
  };
  LinearWeightsForWrite linear(model);
  // q/k weights and biases: HF expects rotate-half rows.
  auto rotary = [&](const std::string& name, const float* data, uint64_t heads, uint64_t cols,
                    std::vector<uint64_t> shape) {
    if (!c.rope_interleaved) return plain(name, data, std::move(shape));
    permuted.push_back(interleaved_to_half(data, heads, HS, cols));
    plain(name, permuted.back().data(), std::move(shape));
  };
  plain("model.embed_tokens.weight", linear("wte", 0), {V, C});
  for (uint64_t l = 0; l < L; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    plain(p + "input_layernorm.weight", model.param_data("h.attn_norm.weight") + l * C, {C});
    rotary(p + "self_attn.q_proj.weight", linear("h.wq.weight", l), c.n_head, C, {C, C});
    rotary(p + "self_attn.k_proj.weight", linear("h.wk.weight", l), c.n_kv_head, C, {KVW, C});
    plain(p + "self_attn.v_proj.weight", linear("h.wv.weight", l), {KVW, C});
    if (c.qkv_bias) {
      rotary(p + "self_attn.q_proj.bias", model.param_data("h.wq.bias") + l * C, c.n_head, 1, {C});
      rotary(p + "self_attn.k_proj.bias", model.param_data("h.wk.bias") + l * KVW, c.n_kv_head, 1, {KVW});
      plain(p + "self_attn.v_proj.bias", model.param_data("h.wv.bias") + l * KVW, {KVW});
    }
    plain(p + "self_attn.o_proj.weight", linear("h.wo.weight", l), {C, C});
    plain(p + "post_attention_layernorm.weight", model.param_data("h.ffn_norm.weight") + l * C, {C});
    plain(p + "mlp.gate_proj.weight", linear("h.w_gate.weight", l), {F, C});
    plain(p + "mlp.up_proj.weight", linear("h.w_up.weight", l), {F, C});
    plain(p + "mlp.down_proj.weight", linear("h.w_down.weight", l), {C, F});
  }
  plain("model.norm.weight", model.param_data("norm.weight"), {C});
  if (!c.tie_embeddings) plain("lm_head.weight", linear("lm_head.weight", 0), {V, C});
  std::vector<std::vector<uint16_t>> halves;
  if (weights == HfWeightType::F16) narrow_f32_tensors_to_f16(out, halves);
  write_safetensors((fs::path(directory) / "model.safetensors").string(), out, {{"format", "pt"}});

  // Qwen2 is the Llama variant with q/k/v biases; writing it as such keeps the file loadable by HF.
  const bool qwen2 = c.qkv_bias;
  json cfg = {{"model_type", qwen2 ? "qwen2" : "llama"},
              {"architectures", {qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
              {"hidden_size", c.n_embd},
              {"intermediate_size", c.ffn_dim},
              {"num_hidden_layers", c.n_layer},
              {"num_attention_heads", c.n_head},
              {"num_key_value_heads", c.n_kv_head},
              {"head_dim", c.head_size()},
              {"vocab_size", c.vocab_size},
              {"max_position_embeddings", c.max_seq_len},
              {"rms_norm_eps", decimal(c.norm_eps)},
              {"rope_theta", decimal(c.rope_theta)},
              {"rope_scaling", nullptr},
              {"hidden_act", "silu"},
              {"tie_word_embeddings", c.tie_embeddings}};
  if (qwen2) cfg["use_sliding_window"] = false;
  else cfg["attention_bias"] = false, cfg["mlp_bias"] = false;
  write_hf_side_files(model, directory, std::move(cfg), tokenizer_source_dir, provenance_json);
}

}  // namespace engine::io
