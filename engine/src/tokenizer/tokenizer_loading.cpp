// Loading byte-level BPE tokenizers: GPT-2's vocab.json + merges.txt, and HF tokenizer.json.
//
// Every value read from a file is type- and range-checked here, and every failure is an
// engine::Error naming the file and, for merges, the line or entry (reliability.md §1.7 cases 25-26).
// What is accepted on purpose: a UTF-8 BOM, CRLF line endings, a missing "#version" line, blank
// lines, and id gaps (bounded, see vocabulary.h). What is refused: anything else malformed, and
// tokenizer.json features this implementation does not reproduce (other models, normalizers than
// NFC, pre-tokenizers) -- silently tokenizing differently from the model's training would be worse than
// a clear "not supported".
// The pre-tokenizer is chosen here; supporting a new family means recognising its pre_tokenizer in
// parse_pre_tokenizer() and returning its PreTokenizer. Split patterns (Llama-3, Qwen2) are
// recognised by their exact text, never interpreted: an unknown pattern is refused.
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level_bpe_tokenizer.h"
#include "tokenizer/guarded_json.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/text_file.h"
#include "tokenizer/vocabulary.h"

namespace engine {
namespace {

using nlohmann::json;
using tokenizer::AddedTokenMatcher;
using tokenizer::BpeModel;
using tokenizer::BpeOptions;
using tokenizer::ByteLevelBpeTokenizer;
using tokenizer::ByteLevelOptions;
using tokenizer::PreTokenizer;
using tokenizer::quote_for_message;
using tokenizer::Vocabulary;

constexpr std::string_view k_end_of_text = "<|endoftext|>";

[[noreturn]] void fail(const std::string& source, const std::string& what) { throw Error(source + ": " + what); }

void expect(bool ok, const json& value, const char* expected, const std::string& source, const std::string& path) {
  if (!ok) fail(source, path + ": expected " + expected + ", got " + tokenizer::json_type_name(value));
}

// Member `key` of object `obj`, or nullptr when absent.
const json* member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

bool bool_member(const json& obj, const char* key, bool fallback, const std::string& source, const std::string& path) {
  const json* v = member(obj, key);
  if (!v || v->is_null()) return fallback;
  expect(v->is_boolean(), *v, "a boolean", source, path + "." + key);
  return v->get<bool>();
}

// A token id as written in the file: an integer in int64 range (the Vocabulary checks [0, 2^31 - 1)).
int64_t id_value(const json& v, const std::string& source, const std::string& path) {
  expect(v.is_number_integer(), v, "an integer token id", source, path);
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(source, path + ": token id " + std::to_string(u) + " is out of range");
    return static_cast<int64_t>(u);
  }
  return v.get<int64_t>();
}

Vocabulary vocabulary_from_json(const json& obj, const std::string& source, const std::string& path) {
  expect(obj.is_object(), obj, "an object mapping token -> id", source, path);
  if (obj.empty()) fail(source, path + ": the vocabulary is empty");
  std::vector<std::pair<std::string, int64_t>> entries;
  entries.reserve(obj.size());
  for (auto it = obj.begin(); it != obj.end(); ++it)
    entries.emplace_back(it.key(), id_value(it.value(), source, path + "[" + quote_for_message(it.key()) + "]"));
  return Vocabulary::build(std::move(entries), source);
}

// Resolves one merge rule against the vocabulary and adds it; `where` locates it ("line 7").
void add_merge(BpeModel& model, std::string_view left, std::string_view right, const std::string& source,
               const std::string& where) {
  if (left.empty() || right.empty()) fail(source, where + ": merge has an empty part");
  const Vocabulary& vocab = model.vocab();
  const std::optional<int32_t> l = vocab.find(left);
  if (!l) fail(source, where + ": merge part " + quote_for_message(left) + " is not in the vocabulary");
  const std::optional<int32_t> r = vocab.find(right);
  if (!r) fail(source, where + ": merge part " + quote_for_message(right) + " is not in the vocabulary");
  std::string joined;
  joined.reserve(left.size() + right.size());
  joined.append(left).append(right);
  const std::optional<int32_t> result = vocab.find(joined);
  if (!result) fail(source, where + ": merge result " + quote_for_message(joined) + " is not in the vocabulary");
  model.add_merge(*l, *r, *result);
}

// "a b" -> (a, b); anything but exactly two space-separated fields is an error.
std::pair<std::string_view, std::string_view> split_merge(std::string_view line, const std::string& source,
                                                          const std::string& where) {
  std::size_t fields = 1;
  for (char c : line) fields += (c == ' ');
  if (fields != 2)
    fail(source, where + ": expected 2 space-separated parts, got " + std::to_string(fields) + " in " +
                     quote_for_message(line));
  const std::size_t space = line.find(' ');
  return {line.substr(0, space), line.substr(space + 1)};
}

void load_merges_txt(BpeModel& model, std::string_view text, const std::string& source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) fail(source, "file is empty");
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.starts_with("#version")) continue;
    const std::string where = "line " + std::to_string(line_no);
    const auto [left, right] = split_merge(line, source, where);
    add_merge(model, left, right, source, where);
  }
}

void load_merges_json(BpeModel& model, const json& merges, const std::string& source) {
  expect(merges.is_array(), merges, "an array", source, "model.merges");
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    const std::string where = "model.merges[" + std::to_string(i) + "]";
    if (m.is_string()) {
      const auto& s = m.get_ref<const std::string&>();
      const auto [left, right] = split_merge(s, source, where);
      add_merge(model, left, right, source, where);
    } else if (m.is_array()) {
      if (m.size() != 2) fail(source, where + ": expected a pair, got " + std::to_string(m.size()) + " elements");
      expect(m[0].is_string() && m[1].is_string(), m[0].is_string() ? m[1] : m[0], "a string", source, where);
      add_merge(model, m[0].get_ref<const std::string&>(), m[1].get_ref<const std::string&>(), source, where);
    } else {
      expect(false, m, "a string \"a b\" or a pair [\"a\", \"b\"]", source, where);
    }
  }
}

struct PreTokenizerChoice {
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  ByteLevelOptions options;
};

std::string type_of(const json& obj, const std::string& source, const std::string& path) {
  expect(obj.is_object(), obj, "an object", source, path);
  const json* t = member(obj, "type");
  if (!t) fail(source, path + ": missing \"type\"");
  expect(t->is_string(), *t, "a string", source, path + ".type");
  return t->get<std::string>();
}

PreTokenizerChoice byte_level_pre_tokenizer(const json& obj, const std::string& source, const std::string& path) {
  PreTokenizerChoice c;
  // HF's ByteLevel defaults: add_prefix_space = true, use_regex = true.
  c.options.add_prefix_space = bool_member(obj, "add_prefix_space", true, source, path);
  const bool use_regex = bool_member(obj, "use_regex", true, source, path);
  c.pre_tokenizer = use_regex ? tokenizer::make_gpt2_pre_tokenizer() : tokenizer::make_whole_text_pre_tokenizer();
  return c;
}

// Split patterns this implementation reproduces, spelled exactly as in the families' tokenizer.json.
constexpr std::string_view k_llama3_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view k_qwen2_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// A Split pre-tokenizer with a known pattern, Isolated behaviour and no inversion.
std::unique_ptr<PreTokenizer> split_pre_tokenizer(const json& obj, const std::string& source, const std::string& path) {
  const json* pattern = member(obj, "pattern");
  if (!pattern) fail(source, path + ": missing \"pattern\"");
  expect(pattern->is_object(), *pattern, "an object {\"Regex\": ...}", source, path + ".pattern");
  const json* regex = member(*pattern, "Regex");
  if (!regex) fail(source, path + ".pattern: only {\"Regex\": ...} patterns are supported");
  expect(regex->is_string(), *regex, "a string", source, path + ".pattern.Regex");
  const json* behavior = member(obj, "behavior");
  if (!behavior || !behavior->is_string() || behavior->get_ref<const std::string&>() != "Isolated")
    fail(source, path + ".behavior: only \"Isolated\" is supported");
  if (bool_member(obj, "invert", false, source, path)) fail(source, path + ".invert: true is not supported");
  const std::string& text = regex->get_ref<const std::string&>();
  if (text == k_llama3_pattern) return tokenizer::make_llama3_pre_tokenizer();
  if (text == k_qwen2_pattern) return tokenizer::make_qwen2_pre_tokenizer();
  fail(source, path + ".pattern.Regex " + quote_for_message(text) +
                   " is not a supported split pattern (known: the Llama-3 and Qwen2 patterns)");
}

PreTokenizerChoice parse_pre_tokenizer(const json* pt, const std::string& source) {
  if (!pt || pt->is_null()) fail(source, "pre_tokenizer is missing; only ByteLevel is supported");
  const std::string type = type_of(*pt, source, "pre_tokenizer");
  if (type == "ByteLevel") return byte_level_pre_tokenizer(*pt, source, "pre_tokenizer");
  if (type == "Sequence") {
    const json* list = member(*pt, "pretokenizers");
    if (!list) fail(source, "pre_tokenizer.pretokenizers is missing");
    expect(list->is_array(), *list, "an array", source, "pre_tokenizer.pretokenizers");
    if (list->size() == 1) {
      const std::string path = "pre_tokenizer.pretokenizers[0]";
      if (type_of((*list)[0], source, path) == "ByteLevel") return byte_level_pre_tokenizer((*list)[0], source, path);
    }
    if (list->size() == 2) {
      const std::string p0 = "pre_tokenizer.pretokenizers[0]";
      const std::string p1 = "pre_tokenizer.pretokenizers[1]";
      if (type_of((*list)[0], source, p0) == "Split" && type_of((*list)[1], source, p1) == "ByteLevel") {
        std::unique_ptr<PreTokenizer> split = split_pre_tokenizer((*list)[0], source, p0);
        PreTokenizerChoice c = byte_level_pre_tokenizer((*list)[1], source, p1);
        if (bool_member((*list)[1], "use_regex", true, source, p1))
          fail(source, p1 + ": use_regex must be false after a Split (splitting twice is not supported)");
        // HF would prefix every split piece, not the segment; no model in this family does that.
        if (c.options.add_prefix_space) fail(source, p1 + ": add_prefix_space = true after a Split is not supported");
        c.pre_tokenizer = std::move(split);
        return c;
      }
      // StarCoder's: every digit alone, then ByteLevel's GPT-2 pattern (GGUF "starcoder").
      if (type_of((*list)[0], source, p0) == "Digits" && type_of((*list)[1], source, p1) == "ByteLevel") {
        if (!bool_member((*list)[0], "individual_digits", false, source, p0))
          fail(source, p0 + ": Digits with individual_digits = false is not supported");
        PreTokenizerChoice c = byte_level_pre_tokenizer((*list)[1], source, p1);
        if (!bool_member((*list)[1], "use_regex", true, source, p1))
          fail(source, p1 + ": use_regex must be true after Digits (StarCoder's layout)");
        if (c.options.add_prefix_space) fail(source, p1 + ": add_prefix_space = true after Digits is not supported");
        c.pre_tokenizer = tokenizer::make_starcoder_pre_tokenizer();
        return c;
      }
    }
    std::string types;
    for (std::size_t i = 0; i < list->size(); ++i)
      types += (i ? ", " : "") + type_of((*list)[i], source, "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]");
    fail(source, "pre_tokenizer Sequence [" + types +
                     "] is not supported (only [ByteLevel], [Split, ByteLevel] or [Digits, ByteLevel])");
  }
  fail(source, "pre_tokenizer type " + quote_for_message(type) + " is not supported (only ByteLevel)");
}

void check_decoder(const json* d, const std::string& source) {
  if (!d || d->is_null()) return;
  const std::string type = type_of(*d, source, "decoder");
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const json* list = member(*d, "decoders");
    if (list && list->is_array() && list->size() == 1 &&
        type_of((*list)[0], source, "decoder.decoders[0]") == "ByteLevel")
      return;
  }
  fail(source, "decoder type " + quote_for_message(type) + " is not supported (only ByteLevel)");
}

// Whether the text is NFC-normalized first: null / an empty Sequence -> false, NFC or [NFC] -> true;
// anything else is refused.
bool parse_normalizer(const json* n, const std::string& source) {
  if (!n || n->is_null()) return false;
  const std::string type = type_of(*n, source, "normalizer");
  if (type == "NFC") return true;
  if (type == "Sequence") {
    const json* list = member(*n, "normalizers");
    if (list && list->is_array() && list->empty()) return false;
    if (list && list->is_array() && list->size() == 1 &&
        type_of((*list)[0], source, "normalizer.normalizers[0]") == "NFC")
      return true;
  }
  fail(source, "normalizer type " + quote_for_message(type) + " is not supported (only NFC)");
}

// A string option that this implementation only supports when null or empty.
void require_unset_string(const json& model, const char* key, const std::string& source) {
  const json* v = member(model, key);
  if (!v || v->is_null()) return;
  expect(v->is_string(), *v, "a string or null", source, std::string("model.") + key);
  if (!v->get_ref<const std::string&>().empty())
    fail(source, std::string("model.") + key + " " + quote_for_message(v->get<std::string>()) + " is not supported");
}

struct AddedToken {
  std::string content;
  int64_t id;
  bool special;
};

std::vector<AddedToken> parse_added_tokens(const json* list, const std::string& source) {
  std::vector<AddedToken> out;
  if (!list || list->is_null()) return out;
  expect(list->is_array(), *list, "an array", source, "added_tokens");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    const json& t = (*list)[i];
    expect(t.is_object(), t, "an object", source, path);
    const json* id = member(t, "id");
    const json* content = member(t, "content");
    if (!id) fail(source, path + ": missing \"id\"");
    if (!content) fail(source, path + ": missing \"content\"");
    expect(content->is_string(), *content, "a string", source, path + ".content");
    AddedToken a{content->get<std::string>(), id_value(*id, source, path + ".id"),
                 bool_member(t, "special", false, source, path)};
    // Matching that eats neighbouring whitespace or needs word boundaries would change where the text
    // is cut; no byte-level family we load uses it, so it is refused rather than ignored. ("normalized"
    // is accepted: without a normalizer, normalized and raw text are the same.)
    for (const char* flag : {"lstrip", "rstrip", "single_word"})
      if (bool_member(t, flag, false, source, path))
        fail(source, path + ": " + quote_for_message(a.content) + " has " + flag +
                         " = true, which is not supported (added tokens are matched exactly)");
    if (a.content.empty()) fail(source, path + ": empty content");
    if (a.content.size() > tokenizer::k_max_added_token_bytes)
      fail(source, path + ": content is " + std::to_string(a.content.size()) + " bytes, more than the " +
                       std::to_string(tokenizer::k_max_added_token_bytes) + " allowed");
    out.push_back(std::move(a));
  }
  return out;
}

std::unique_ptr<Tokenizer> build_gpt2(std::string_view vocab_json, const std::string& vocab_source,
                                      std::string_view merges_txt, const std::string& merges_source) {
  const json root = tokenizer::parse_guarded_json(vocab_json, vocab_source);
  BpeModel model(vocabulary_from_json(root, vocab_source, "vocabulary"), BpeOptions{});
  load_merges_txt(model, merges_txt, merges_source);
  AddedTokenMatcher added;
  if (std::optional<int32_t> eot = model.vocab().find(k_end_of_text)) added.add(k_end_of_text, *eot, /*special=*/true);
  return std::make_unique<ByteLevelBpeTokenizer>(std::move(model), std::move(added),
                                                 tokenizer::make_gpt2_pre_tokenizer(), ByteLevelOptions{});
}

std::unique_ptr<Tokenizer> build_tokenizer_json(std::string_view text, const std::string& source) {
  const json root = tokenizer::parse_guarded_json(text, source);
  expect(root.is_object(), root, "an object", source, "top level");
  const json* model_json = member(root, "model");
  if (!model_json) fail(source, "missing \"model\"");
  expect(model_json->is_object(), *model_json, "an object", source, "model");
  const json& m = *model_json;
  if (const json* type = member(m, "type")) {
    expect(type->is_string(), *type, "a string", source, "model.type");
    if (type->get_ref<const std::string&>() != "BPE")
      fail(source, "model type " + quote_for_message(type->get<std::string>()) + " is not supported (only BPE)");
  }
  const json* vocab_json = member(m, "vocab");
  const json* merges_json = member(m, "merges");
  if (!vocab_json) fail(source, "missing \"model.vocab\"");
  if (!merges_json) fail(source, "missing \"model.merges\"");
  require_unset_string(m, "continuing_subword_prefix", source);
  require_unset_string(m, "end_of_word_suffix", source);
  if (bool_member(m, "byte_fallback", false, source, "model"))
    fail(source, "model.byte_fallback is not supported with a byte-level vocabulary");
  if (const json* dropout = member(m, "dropout"); dropout && !dropout->is_null())
    expect(dropout->is_number(), *dropout, "a number or null", source, "model.dropout");
  // (dropout only randomises training-time segmentation; inference ignores it.)
  const bool nfc = parse_normalizer(member(root, "normalizer"), source);
  PreTokenizerChoice pre = parse_pre_tokenizer(member(root, "pre_tokenizer"), source);
  pre.options.nfc = nfc;
  check_decoder(member(root, "decoder"), source);
  // post_processor (e.g. TemplateProcessing adding BOS) is left to the caller's prompt assembly.

  Vocabulary vocab = vocabulary_from_json(*vocab_json, source, "model.vocab");
  BpeOptions options;
  options.ignore_merges = bool_member(m, "ignore_merges", false, source, "model");
  options.fuse_unk = bool_member(m, "fuse_unk", false, source, "model");
  if (const json* unk = member(m, "unk_token"); unk && !unk->is_null()) {
    expect(unk->is_string(), *unk, "a string or null", source, "model.unk_token");
    options.unk_id = vocab.find(unk->get_ref<const std::string&>());
    if (!options.unk_id)
      fail(source, "model.unk_token " + quote_for_message(unk->get<std::string>()) + " is not in the vocabulary");
  }

  const std::vector<AddedToken> added_tokens = parse_added_tokens(member(root, "added_tokens"), source);
  for (std::size_t i = 0; i < added_tokens.size(); ++i) {
    const AddedToken& a = added_tokens[i];
    if (std::optional<int32_t> existing = vocab.find(a.content)) {
      if (*existing != a.id)
        fail(source, "added_tokens[" + std::to_string(i) + "]: " + quote_for_message(a.content) + " has id " +
                         std::to_string(a.id) + " but the vocabulary gives it id " + std::to_string(*existing));
    } else {
      vocab.add(a.content, a.id, source);
    }
  }

  BpeModel model(std::move(vocab), options);
  load_merges_json(model, *merges_json, source);
  AddedTokenMatcher added;
  for (const AddedToken& a : added_tokens) added.add(a.content, static_cast<int32_t>(a.id), a.special);
  return std::make_unique<ByteLevelBpeTokenizer>(std::move(model), std::move(added), std::move(pre.pre_tokenizer),
                                                 pre.options);
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gpt2_files(const std::string& vocab_json_path,
                                                      const std::string& merges_txt_path) {
  const std::string vocab = tokenizer::read_tokenizer_file(vocab_json_path);
  const std::string merges = tokenizer::read_tokenizer_file(merges_txt_path);
  return build_gpt2(vocab, vocab_json_path, merges, merges_txt_path);
}

std::unique_ptr<Tokenizer> Tokenizer::from_tokenizer_json(const std::string& path) {
  return build_tokenizer_json(tokenizer::read_tokenizer_file(path), path);
}

std::unique_ptr<Tokenizer> Tokenizer::from_gpt2_strings(std::string_view vocab_json, std::string_view merges_txt) {
  return build_gpt2(vocab_json, "vocab.json", merges_txt, "merges.txt");
}

std::unique_ptr<Tokenizer> Tokenizer::from_tokenizer_json_string(std::string_view json) {
  return build_tokenizer_json(json, "tokenizer.json");
}

}  // namespace engine
