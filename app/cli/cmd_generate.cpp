// `generate`: complete a prompt, streaming text to stdout, or one JSON object with per-token
// logprobs (DESIGN.md §5).
#include <algorithm>
#include <iostream>
#include <random>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "engine/chat_template.h"
#include "engine/error.h"
#include "engine/generator.h"

namespace wb::cli {

namespace {
const std::vector<FlagSpec> kFlags = {
    {"model", true, false, "model directory or file"},
    {"prompt", true, false, "prompt text"},
    {"max-tokens", true, false, "most tokens to generate (default 128)"},
    {"temperature", true, false, "sampling temperature, 0 = greedy (default 0.8)"},
    {"top-k", true, false, "keep the K most likely tokens, 0 = off (default 40)"},
    {"top-p", true, false, "nucleus sampling threshold, 1 = off (default 0.95)"},
    {"min-p", true, false, "drop tokens below P x the top probability, 0 = off (default 0.05)"},
    {"repeat-penalty", true, false, "repetition penalty, 1 = off (default 1.0)"},
    {"repeat-last-n", true, false, "penalty window in tokens, -1 = all (default 64)"},
    {"frequency-penalty", true, false, "subtract count x F from repeated tokens (default 0)"},
    {"presence-penalty", true, false, "subtract P from tokens seen before (default 0)"},
    {"logit-bias", true, true, "ID=BIAS added to a token's logit (repeatable; -inf bans)"},
    {"seed", true, false, "random seed (default: random, reported in --json)"},
    {"stop", true, true, "stop string (repeatable)"},
    {"top-logprobs", true, false, "report K alternatives per token (default 0)"},
    {"ignore-eos", false, false, "keep generating after the end-of-text token"},
    {"special", false, false, "parse special tokens like <|endoftext|> in the prompt"},
    {"chat", false, false, "send --prompt as a user message through the model's chat template"},
    {"system", true, false, "with --chat: a system message before the prompt"},
    {"template", true, false, "with --chat: chatml, llama3, llama2, zephyr, alpaca or plain instead of the model's"},
    {"threads", true, false, "CPU threads (default: all cores)"},
    {"json", false, false, "print one JSON object instead of streaming text"},
};

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
}  // namespace

int cmd_generate(int argc, char** argv) {
  const Args a(kFlags, argc, argv, 2);
  const std::string path = a.required("model");
  const std::string prompt = a.required("prompt");
  engine::GenerateParams gp;
  gp.max_tokens = static_cast<int>(a.integer("max-tokens", 128, 0, 1 << 20));
  engine::SamplerParams& sp = gp.sampler;
  sp.temperature = static_cast<float>(a.number("temperature", 0.8, 0.0, 100.0));
  sp.top_k = static_cast<int32_t>(a.integer("top-k", 40, 0, 1 << 24));
  sp.top_p = static_cast<float>(a.number("top-p", 0.95, 0.0, 1.0));
  sp.min_p = static_cast<float>(a.number("min-p", 0.05, 0.0, 1.0));
  sp.repeat_penalty = static_cast<float>(a.number("repeat-penalty", 1.0, 0.01, 100.0));
  sp.repeat_last_n = static_cast<int32_t>(a.integer("repeat-last-n", 64, -1, 1 << 24));
  sp.frequency_penalty = static_cast<float>(a.number("frequency-penalty", 0.0, -100.0, 100.0));
  sp.presence_penalty = static_cast<float>(a.number("presence-penalty", 0.0, -100.0, 100.0));
  sp.seed = a.has("seed") ? static_cast<uint64_t>(a.integer("seed", 0, 0, INT64_MAX)) : std::random_device{}();
  for (const auto& b : a.all("logit-bias")) sp.logit_bias.push_back(parse_bias(b));
  gp.stop = a.all("stop");
  gp.top_logprobs = static_cast<int>(a.integer("top-logprobs", 0, 0, 100));
  gp.stop_at_eos = !a.has("ignore-eos");
  const bool as_json = a.has("json");
  const int threads = static_cast<int>(a.integer("threads", 0, 0, 1024));

  const bool chat = a.has("chat");
  if (!chat && (a.has("system") || a.has("template"))) throw UsageError("--system and --template need --chat");
  if (chat && a.has("special"))
    throw UsageError("--special cannot be used with --chat (special tokens come only from the chat template)");
  if (a.has("template") && !engine::ChatTemplate::from_name(a.str("template")))
    throw UsageError("--template must be chatml, llama3, llama2, zephyr, alpaca or plain, got '" + a.str("template") + "'");

  OpenedModel om = open_model(path, threads);
  const engine::Tokenizer& tok = require_tokenizer(*om.model, path);
  std::string chat_template_name;
  const std::vector<int32_t> ids =
      chat ? chat_prompt_ids(a, *om.model, tok, prompt, gp, chat_template_name) : tok.encode(prompt, a.has("special"));
  if (ids.empty()) throw engine::Error("the prompt encodes to no tokens; give a non-empty --prompt");
  // Size the KV cache for this request, not the model's whole context (which may be huge).
  const int64_t needed = static_cast<int64_t>(ids.size()) + std::max(gp.max_tokens, 1);
  engine::Generator gen(*om.model, *om.backend.backend,
                        static_cast<int>(std::min<int64_t>(needed, om.model->config().max_seq_len)));
  const engine::GenerationResult r = gen.generate(ids, gp, [&](const engine::GeneratedToken&, const std::string& text) {
    if (!as_json) std::cout << text << std::flush;
    return true;
  });
  if (!as_json) {
    std::cout << std::endl;
    return 0;
  }
  nlohmann::json tokens = nlohmann::json::array();
  for (const auto& t : r.tokens) {
    nlohmann::json top = nlohmann::json::array();
    for (const auto& alt : t.top) top.push_back({{"id", alt.id}, {"text", tok.token_bytes(alt.id)}, {"logprob", alt.logprob}});
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
  print_json(out);
  return 0;
}

}  // namespace wb::cli
