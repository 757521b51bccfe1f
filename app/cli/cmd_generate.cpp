// `generate`: complete a prompt, streaming text to stdout, or one JSON object with per-token
// logprobs (DESIGN.md §5).
#include <algorithm>
#include <iostream>
#include <optional>
#include <random>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "engine/chat_template.h"
#include "engine/error.h"
#include "engine/generation_settings.h"
#include "engine/generator.h"
#include "engine/serve/speculative.h"

namespace wb::cli {

namespace {

// --model and --prompt, then every generation setting from the settings' field table (its flag,
// help line and default), then the switches of this command alone.
std::vector<FlagSpec> flags() {
  std::vector<FlagSpec> f = {
      {"model", true, false, "model directory or file"},
      {"prompt", true, false, "prompt text"},
  };
  for (const engine::GenerationSettingField& field : engine::generation_setting_fields()) {
    const bool list = field.kind == engine::SettingKind::Text || field.kind == engine::SettingKind::TextList;
    std::string help = field.help;
    if (field.default_text) help += std::string(" (default: ") + field.default_text + ")";
    else if (!list) help += " (default " + engine::setting_default_text(field) + ")";
    f.push_back({field.flag, true, list, help});
  }
  const std::vector<FlagSpec> own = {
      {"ignore-eos", false, false, "keep generating after the end-of-text token"},
      {"special", false, false, "parse special tokens like <|endoftext|> in the prompt"},
      {"chat", false, false, "send --prompt as a user message through the model's chat template"},
      {"system", true, false, "with --chat: a system message before the prompt"},
      {"template", true, false, "with --chat: chatml, llama3, llama2, zephyr, alpaca or plain instead of the model's"},
      {"threads", true, false, "CPU threads (default: all cores)"},
      {"json", false, false, "print one JSON object instead of streaming text"},
      {"draft", true, false, "speculative decoding: a smaller model with the same vocabulary drafts tokens"},
      {"lookup", true, false, "speculative decoding without a draft model: propose the tokens that followed the "
                              "last earlier occurrence of the final N tokens (prompt lookup)"},
      {"draft-tokens", true, false, "speculative decoding: tokens proposed per step (default 4)"},
  };
  f.insert(f.end(), own.begin(), own.end());
  return f;
}

std::pair<int32_t, float> parse_bias(const std::string& s) {
  const auto eq = s.find('=');
  if (eq == std::string::npos) throw UsageError("--logit-bias must be ID=BIAS, got '" + s + "'");
  try {
    size_t used = 0;
    const long id = std::stol(s.substr(0, eq), &used);
    if (used != eq) throw std::invalid_argument("id");
    const std::string b = s.substr(eq + 1);
    float bias;
    if (b == "-inf") bias = -INFINITY;
    else {
      bias = std::stof(b, &used);
      if (used != b.size()) throw std::invalid_argument("bias");
    }
    if (id < 0 || id > INT32_MAX) throw std::out_of_range("id");
    return {static_cast<int32_t>(id), bias};
  } catch (const std::exception&) {
    throw UsageError("--logit-bias must be ID=BIAS with an integer id and a number, got '" + s + "'");
  }
}

// The prompt as a chat: the template (the model's, or --template's with the tokenizer's BOS / EOS
// texts), one optional system and one user message, the assistant's turn opened; its stop strings
// join --stop. Special tokens come only from the template's markup.
std::vector<int32_t> chat_prompt_ids(const Args& a, const engine::Model& model, const engine::Tokenizer& tok,
                                     const std::string& prompt, engine::GenerateParams& gp, std::string& name) {
  engine::ChatTemplate t = model.chat_template();
  if (a.has("template")) {
    t = *engine::ChatTemplate::from_name(a.str("template"));  // checked before the model was loaded
    const std::string bos = tok.bos_id() ? tok.token_piece(*tok.bos_id()) : std::string();
    const std::string eos = tok.eos_id() ? tok.token_piece(*tok.eos_id()) : std::string();
    t.set_special_tokens(bos.empty() ? t.bos_text() : bos, eos.empty() ? t.eos_text() : eos);
  } else if (!model.chat_template_note.empty()) {
    std::cerr << "warning: " << model.chat_template_note << "\n";
  }
  std::vector<engine::ChatMessage> messages;
  if (a.has("system")) messages.push_back({"system", a.str("system")});
  messages.push_back({"user", prompt});
  for (const std::string& s : t.stop_strings()) gp.stop.push_back(s);
  name = t.name();
  return engine::encode_chat(tok, t.render(messages, /*add_generation_prompt=*/true), messages);
}

// The generation settings given on the command line; the others keep the table's defaults. Numbers
// outside a field's range are refused (the app clamps them instead: a slider cannot be wrong).
engine::GenerationSettings settings_from_args(const Args& a) {
  engine::GenerationSettings s;
  for (const engine::GenerationSettingField& f : engine::generation_setting_fields()) {
    if (!a.has(f.flag)) continue;
    switch (f.kind) {
      case engine::SettingKind::Integer:
        s.*f.integer = a.integer(f.flag, 0, engine::integer_min(f), engine::integer_max(f));
        break;
      case engine::SettingKind::Real: s.*f.real = a.number(f.flag, 0, f.min, f.max); break;
      case engine::SettingKind::TextList: s.*f.text_list = a.all(f.flag); break;
      // The logit bias: the CLI takes token ids only (ID=BIAS, parse_bias), so it goes straight to
      // SamplerParams instead of through the app's text form.
      case engine::SettingKind::Text: break;
    }
  }
  return s;
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  const Args a(flags(), argc, argv, 2);
  const std::string path = a.required("model");
  const std::string prompt = a.required("prompt");
  engine::GenerateParams gp = engine::to_generate_params(settings_from_args(a), std::random_device{}());
  engine::SamplerParams& sp = gp.sampler;
  for (const auto& b : a.all("logit-bias")) sp.logit_bias.push_back(parse_bias(b));
  gp.stop_at_eos = !a.has("ignore-eos");
  const bool as_json = a.has("json");
  const int threads = static_cast<int>(a.integer("threads", 0, 0, 1024));

  const bool chat = a.has("chat");
  if (!chat && (a.has("system") || a.has("template"))) throw UsageError("--system and --template need --chat");
  if (chat && a.has("special"))
    throw UsageError("--special cannot be used with --chat (special tokens come only from the chat template)");
  if (a.has("template") && !engine::ChatTemplate::from_name(a.str("template")))
    throw UsageError("--template must be chatml, llama3, llama2, zephyr, alpaca or plain, got '" + a.str("template") +
                     "'");

  OpenedModel om = open_model(path, threads);
  const engine::Tokenizer& tok = require_tokenizer(*om.model, path);
  std::string chat_template_name;
  const std::vector<int32_t> ids =
      chat ? chat_prompt_ids(a, *om.model, tok, prompt, gp, chat_template_name) : tok.encode(prompt, a.has("special"));
  if (ids.empty()) throw engine::Error("the prompt encodes to no tokens; give a non-empty --prompt");
  // Size the KV cache for this request, not the model's whole context (which may be huge).
  const int64_t needed = static_cast<int64_t>(ids.size()) + std::max(gp.max_tokens, 1);
  const int capacity = static_cast<int>(std::min<int64_t>(needed, om.model->config().max_seq_len));
  const engine::TokenCallback print = [&](const engine::GeneratedToken&, const std::string& text) {
    if (!as_json) std::cout << text << std::flush;
    return true;
  };
  engine::GenerationResult r;
  std::optional<engine::SpeculativeStats> spec;
  if (a.has("draft") || a.has("lookup")) {
    engine::SpeculativeOptions so;
    so.draft_tokens = static_cast<int>(a.integer("draft-tokens", 4, 1, 64));
    so.lookup_ngram = static_cast<int>(a.integer("lookup", 0, 1, 64));
    OpenedModel draft;
    if (a.has("draft")) draft = open_model(a.str("draft"), threads);
    spec.emplace();
    r = engine::SpeculativeGenerator(*om.model, draft.model.get(), *om.backend.backend, so, capacity)
            .generate(ids, gp, print, &*spec);
  } else {
    if (a.has("draft-tokens")) throw UsageError("--draft-tokens needs --draft or --lookup");
    engine::Generator gen(*om.model, *om.backend.backend, capacity);
    r = gen.generate(ids, gp, print);
  }
  if (!as_json) {
    std::cout << std::endl;
    return 0;
  }
  nlohmann::json tokens = nlohmann::json::array();
  for (const auto& t : r.tokens) {
    nlohmann::json top = nlohmann::json::array();
    for (const auto& alt : t.top)
      top.push_back({{"id", alt.id}, {"text", tok.token_bytes(alt.id)}, {"logprob", alt.logprob}});
    nlohmann::json jt = {{"id", t.id}, {"text", t.bytes}, {"logprob", t.logprob}};
    if (gp.top_logprobs > 0) jt["top_logprobs"] = top;
    tokens.push_back(jt);
  }
  const auto& st = r.stats;
  nlohmann::json out = {{"prompt_tokens", ids},
                        {"tokens", tokens},
                        {"text", r.text},
                        {"finish_reason", engine::finish_reason_name(r.finish)},
                        {"seed", sp.seed},
                        {"backend", om.backend.backend->description()},
                        {"stats",
                         {{"prompt_tokens", st.prompt_tokens},
                          {"generated_tokens", st.generated_tokens},
                          {"prefill_tokens_per_s", st.prefill_tokens_per_s()},
                          {"decode_tokens_per_s", st.decode_tokens_per_s()},
                          {"time_to_first_token_ms", st.time_to_first_token_ms}}}};
  if (chat) out["chat_template"] = chat_template_name;
  if (spec)
    out["speculative"] = {{"steps", spec->steps},
                          {"drafted", spec->drafted},
                          {"accepted", spec->accepted},
                          {"acceptance_rate", spec->acceptance_rate()}};
  print_json(out);
  return 0;
}

}  // namespace wb::cli
