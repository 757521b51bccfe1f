// `tokenizer train`: a byte-level BPE vocabulary learned from text files (engine::BpeTrainer), written as
// tokenizer.json (and, for the GPT-2 split pattern, also vocab.json + merges.txt) into a directory.
// Plain files are read as text; .jsonl files contribute every string value of each line's object
// except "role" fields, so chat and preference datasets can be used as they are. With the ChatML special
// tokens it also writes tokenizer_config.json naming the ChatML template, which `init --tokenizer` copies.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "engine/error.h"
#include "engine/io/mapped_file.h"
#include "engine/io/model_convert.h"
#include "engine/tokenizer_trainer.h"

namespace wb::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void collect_strings(const json& value, std::string& out) {
  if (value.is_string()) {
    out += value.get_ref<const std::string&>();
    out += '\n';
  } else if (value.is_array()) {
    for (const json& v : value) collect_strings(v, out);
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      if (it.key() != "role") collect_strings(it.value(), out);
  }
}

// Feeds one file to the trainer line by line (a line is a natural piece boundary, and the file is
// never held whole in memory).
void add_file(engine::BpeTrainer& trainer, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw engine::Error("cannot open " + path);
  const bool jsonl = fs::path(path).extension() == ".jsonl";
  std::string line, text;
  uint64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!jsonl) {
      line += '\n';
      trainer.add_text(line);
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
      throw engine::Error(path + ":" + std::to_string(line_no) + ": not a JSON value (a .jsonl file has one per line)");
    text.clear();
    collect_strings(doc, text);
    trainer.add_text(text);
  }
  if (in.bad()) throw engine::Error("error reading " + path);
}

bool has_token(const std::vector<std::string>& tokens, const std::string& t) {
  return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
}

// The ChatML template as Hugging Face models that use it ship it (no default system prompt), with
// <|im_end|> as the end of a turn: what our ChatTemplate recognises as ChatML and what SFT trains.
void write_chatml_tokenizer_config(const std::string& dir) {
  const json cfg = {
      {"chat_template",
       "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
       "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"},
      {"eos_token", "<|im_end|>"},
      {"pad_token", "<|endoftext|>"},
      {"tokenizer_class", "PreTrainedTokenizerFast"},
  };
  const std::string text = cfg.dump(2) + "\n";
  engine::io::write_file_atomic((fs::path(dir) / "tokenizer_config.json").string(), text.data(), text.size());
}

}  // namespace

int cmd_tokenizer(int argc, char** argv) {
  const char* usage =
      "usage: llm-workbench-cli tokenizer train --data FILE [--data FILE...] --vocab-size N --out DIR\n"
      "         [--pre qwen2|llama-bpe|gpt-2] [--special TOKEN...] [--min-count N] [--chat-template chatml|none]\n"
      "         [--json]\n";
  if (argc < 3 || std::string(argv[2]) != "train") {
    if (argc >= 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h")) throw HelpRequested(usage);
    throw UsageError(std::string("expected 'tokenizer train' (") + usage + ")");
  }
  static const std::vector<FlagSpec> flags = {
      {"data", true, true, "training text: plain text, or .jsonl (every string value except \"role\")"},
      {"vocab-size", true, false, "whole vocabulary: special tokens + 256 bytes + merges (default 4096)"},
      {"out", true, false, "output directory (created if missing)"},
      {"pre", true, false, "split pattern: qwen2 (digits one by one, default), llama-bpe, gpt-2"},
      {"special", true, true, "a special token (repeatable; default <|endoftext|> <|im_start|> <|im_end|>)"},
      {"min-count", true, false, "merge only pairs seen at least this often (default 2)"},
      {"chat-template", true, false,
       "chatml (default when <|im_start|> and <|im_end|> are special tokens): also write tokenizer_config.json "
       "with the ChatML template, so models made with this tokenizer chat in it; none: no tokenizer_config.json"},
      {"json", false, false, "print the report as JSON"},
  };
  const Args a(flags, argc, argv, 3);
  const std::vector<std::string> data = a.all("data");
  if (data.empty()) throw UsageError("missing required flag --data");
  const std::string out = a.required("out");
  engine::BpeTrainingOptions options;
  options.vocab_size = static_cast<int32_t>(a.integer("vocab-size", 4096, 257, 1'000'000));
  options.pre_tokenizer = a.str("pre", "qwen2");
  if (a.has("special")) options.special_tokens = a.all("special");
  options.min_pair_count = static_cast<uint64_t>(a.integer("min-count", 2, 1, INT64_MAX));

  engine::BpeTrainer trainer(options);
  for (const std::string& path : data) add_file(trainer, path);
  engine::BpeTrainingReport report;
  int32_t last_percent = -1;
  const auto tok = trainer.train(&report, [&](int32_t done, int32_t wanted) {
    const int32_t percent = wanted > 0 ? static_cast<int32_t>(100LL * done / wanted) : 100;
    if (percent / 10 != last_percent / 10) std::cerr << "tokenizer: " << done << " / " << wanted << " merges\n";
    last_percent = percent;
  });

  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw engine::Error("cannot create " + out + ": " + ec.message());
  if (!engine::io::write_tokenizer_json(*tok, out))
    throw engine::Error("the trained tokenizer cannot be written as tokenizer.json (pre-tokenizer " +
                        options.pre_tokenizer + ")");
  const bool gpt2_files = engine::io::write_gpt2_tokenizer_files(*tok, out);
  const bool chatml_tokens = has_token(options.special_tokens, "<|im_start|>") &&
                             has_token(options.special_tokens, "<|im_end|>");
  const std::string chat_template = a.str("chat-template", chatml_tokens ? "chatml" : "none");
  if (chat_template == "chatml") {
    if (!chatml_tokens)
      throw UsageError("--chat-template chatml needs <|im_start|> and <|im_end|> among the special tokens");
    write_chatml_tokenizer_config(out);
  } else if (chat_template != "none") {
    throw UsageError("unknown --chat-template '" + chat_template + "' (chatml or none)");
  }

  const double per_byte = report.bytes ? static_cast<double>(report.tokens_after) / static_cast<double>(report.bytes) : 0;
  if (a.has("json")) {
    const json j = {{"out", out},
                    {"vocab_size", tok->vocab_size()},
                    {"merges", report.merges},
                    {"new_tokens", report.new_tokens},
                    {"bytes", report.bytes},
                    {"distinct_pieces", report.distinct_pieces},
                    {"tokens", report.tokens_after},
                    {"tokens_per_byte", per_byte},
                    {"last_merge_count", report.last_merge_count},
                    {"pre_tokenizer", options.pre_tokenizer},
                    {"chat_template", chat_template},
                    {"files", gpt2_files ? json{"tokenizer.json", "vocab.json", "merges.txt"} : json{"tokenizer.json"}}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "wrote " << out << "/tokenizer.json" << (gpt2_files ? " + vocab.json + merges.txt" : "") << ": "
              << tok->vocab_size() << " tokens (" << report.new_tokens << " learned from " << report.bytes
              << " bytes, " << report.distinct_pieces << " distinct pieces); the text encodes to " << report.tokens_after
              << " tokens (" << per_byte << " per byte)\n";
    if (tok->vocab_size() < options.vocab_size)
      std::cout << "note: stopped at " << tok->vocab_size() << " tokens: no pair occurs " << options.min_pair_count
                << " or more times\n";
  }
  return 0;
}

}  // namespace wb::cli
