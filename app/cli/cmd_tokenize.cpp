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
  // The same tokenizer `generate` gets, weights aside: a GGUF's own vocabulary, else the directory's files.
  auto tok = engine::load_model_tokenizer(path);
  if (!tok)
    throw engine::Error(path + ": no tokenizer found (expected tokenizer.ggml.* metadata in a GGUF file, or "
                               "tokenizer.json or vocab.json + merges.txt beside the model)");
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
