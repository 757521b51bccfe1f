// Setting Model::chat_template() at load time, from a GGUF file's tokenizer.chat_template or an HF
// directory's chat_template.jinja / tokenizer_config.json (see hf_common.h).
//
// Never an error: a template no family matches, or a tokenizer_config.json we cannot read, leaves the
// model on the Plain template with a note for the app (Model::chat_template_note), since the model is
// still usable for completion and chat in the plain format. The source is kept on the template either
// way, so exports write back what the model came with.
// bos_token / eos_token texts: tokenizer_config.json's own when it names them (a string or an
// {"content": ...} object; null means none, as HF renders it), else the model tokenizer's BOS / EOS
// tokens, else the family defaults.
#include <filesystem>

#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/io/model_convert.h"
#include "io/hf_common.h"

namespace fs = std::filesystem;

namespace engine::io {
namespace {

std::optional<std::string> token_text(const Tokenizer* tok, std::optional<int32_t> id) {
  if (!tok || !id) return std::nullopt;
  std::string piece = tok->token_piece(*id);
  if (piece.empty()) return std::nullopt;
  return piece;
}

// tokenizer_config.json's bos_token / eos_token: nullopt when absent, "" when null.
std::optional<std::string> config_token(const json& cfg, const char* key) {
  auto it = cfg.find(key);
  if (it == cfg.end()) return std::nullopt;
  if (it->is_null()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto c = it->find("content");
    if (c != it->end() && c->is_string()) return c->get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

void set_model_chat_template(Model& model, const std::optional<std::string>& source, std::optional<std::string> bos,
                             std::optional<std::string> eos) {
  model.chat_template_note.clear();
  if (!source || source->empty()) {
    model.set_chat_template(ChatTemplate());
    return;
  }
  std::optional<ChatTemplate> t = ChatTemplate::detect(*source);
  if (!t) {
    ChatTemplate plain;
    plain.set_source(*source);
    model.set_chat_template(std::move(plain));
    model.chat_template_note =
        "The model's chat template is not one we know (ChatML, Llama-3, Llama-2, Zephyr, Alpaca); chat uses the "
        "plain \"role: text\" format, which the model was probably not trained on.";
    return;
  }
  const Tokenizer* tok = model.tokenizer();
  if (!bos) bos = token_text(tok, tok ? tok->bos_id() : std::nullopt);
  if (!eos) eos = token_text(tok, tok ? tok->eos_id() : std::nullopt);
  t->set_special_tokens(bos.value_or(t->bos_text()), eos.value_or(t->eos_text()));
  model.set_chat_template(std::move(*t));
}

void load_hf_chat_template(Model& model, const std::string& directory) {
  std::optional<std::string> source, bos, eos;
  try {
    source = read_chat_template(directory);
    const fs::path cfg_path = fs::path(directory) / "tokenizer_config.json";
    std::error_code ec;
    if (source && fs::exists(cfg_path, ec)) {
      const json cfg = parse_json_file(cfg_path.string(), 16u << 20);
      if (cfg.is_object()) {
        bos = config_token(cfg, "bos_token");
        eos = config_token(cfg, "eos_token");
      }
    }
  } catch (const Error& e) {
    model.set_chat_template(ChatTemplate());
    model.chat_template_note = std::string("The chat template could not be read (") + e.what() +
                               "); chat uses the plain \"role: text\" format.";
    return;
  }
  set_model_chat_template(model, source, bos, eos);
}

void load_gguf_chat_template(Model& model, const GgufFile& f) {
  std::optional<std::string> source;
  if (f.has("tokenizer.chat_template")) {
    try {
      source = f.get_string("tokenizer.chat_template");
    } catch (const Error& e) {
      model.set_chat_template(ChatTemplate());
      model.chat_template_note = std::string("The chat template could not be read (") + e.what() +
                                 "); chat uses the plain \"role: text\" format.";
      return;
    }
  }
  set_model_chat_template(model, source, std::nullopt, std::nullopt);
}

}  // namespace engine::io
