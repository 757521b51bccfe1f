// inspect_common.h helpers.
#include "inspect_common.h"

#include <cmath>
#include <cstdio>

#include "engine/error.h"

namespace wb::cli {

std::vector<FlagSpec> inspect_flags(std::vector<FlagSpec> extra) {
  std::vector<FlagSpec> flags = {
      {"model", true, false, "model directory or file"},
      {"prompt", true, false, "text to inspect (the prompt and, if wanted, a response after it)"},
      {"special", false, false, "parse special tokens like <|endoftext|> in the prompt"},
      {"threads", true, false, "CPU threads (default: all cores)"},
  };
  flags.insert(flags.end(), extra.begin(), extra.end());
  return flags;
}

InspectRun run_inspection(const Args& a, const engine::InspectOptions& options) {
  const std::string path = a.required("model");
  const std::string prompt = a.required("prompt");
  const int threads = static_cast<int>(a.integer("threads", 0, 0, 1024));
  InspectRun run;
  run.opened = open_model(path, threads);
  const engine::Tokenizer& tok = require_tokenizer(*run.opened.model, path);
  const std::vector<int32_t> ids = tok.encode(prompt, a.has("special"));
  if (ids.empty()) throw engine::Error("the prompt has no tokens");
  run.inspection = engine::inspect_prompt(*run.opened.model, *run.opened.backend.backend, ids, options);
  return run;
}

std::string percent(double p) {
  char buf[32];
  if (p * 100 >= 1.0) std::snprintf(buf, sizeof buf, "%.0f%%", p * 100);
  else std::snprintf(buf, sizeof buf, "%.2g%%", p * 100);
  return buf;
}

std::string quoted_piece(const engine::Inspection& in, int32_t id) {
  return nlohmann::json(in.piece(id)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json token_texts(const engine::Inspection& in) {
  nlohmann::json tokens = nlohmann::json::array();
  for (int32_t id : in.ids) tokens.push_back(in.piece(id));
  return tokens;
}

}  // namespace wb::cli
