// `tokenize`: ids and pieces of a text under a model's tokenizer (loads no weights).
#include <iostream>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "engine/error.h"
#include "engine/model_loader.h"

namespace wb::cli {

int cmd_tokenize(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = {
      {"model", true, false, "model directory or file (only its tokenizer is read)"},
      {"text", true, false, "text to tokenize"},
      {"special", false, false, "parse special tokens like <|endoftext|>"},
      {"json", false, false, "print {\"ids\":[...],\"pieces\":[...]}"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string path = a.required("model");
  const std::string text = a.required("text");
  const engine::ModelFileInfo info = engine::detect_model_format(path);
  auto tok = engine::load_tokenizer_from_directory(info.directory);
  if (!tok) throw engine::Error(path + ": no tokenizer found (expected tokenizer.json or vocab.json + merges.txt)");
  const std::vector<int32_t> ids = tok->encode(text, a.has("special"));
  nlohmann::json pieces = nlohmann::json::array();
  for (int32_t id : ids) pieces.push_back(tok->token_bytes(id));
  if (a.has("json")) {
    print_json({{"ids", ids}, {"pieces", pieces}});
  } else {
    for (size_t i = 0; i < ids.size(); ++i)
      std::cout << ids[i] << "\t" << pieces[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    std::cout << ids.size() << " tokens" << std::endl;
  }
  return 0;
}

}  // namespace wb::cli
