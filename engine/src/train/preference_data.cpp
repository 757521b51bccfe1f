// Preference pairs: parsing, validation and encoding (see engine/train/preference_data.h).
//
// Each line is parsed on its own with the engine's checked JSON parser, so one bad row is reported with its
// own line number instead of poisoning the rest of the file.
#include "engine/train/preference_data.h"

#include "engine/error.h"
#include "io/json_util.h"
#include "train/data_file.h"

namespace engine {

namespace {

using io::json;


std::string nonblank_string(const json& v, const std::string& where, const std::string& what) {
  if (!v.is_string()) throw Error(where + ": " + what + " must be a string, got " + io::json_describe(v));
  std::string s = v.get<std::string>();
  if (blank_text(s)) throw Error(where + ": " + what + " is empty");
  return s;
}

ChatMessage parse_message(const json& m, const std::string& where, const std::string& what) {
  if (!m.is_object()) throw Error(where + ": " + what + " must be an object, got " + io::json_describe(m));
  const json* role = io::json_find(m, "role", where);
  if (!role) throw Error(where + ": " + what + " has no \"role\"");
  const std::string r = nonblank_string(*role, where, what + " \"role\"");
  if (r != "system" && r != "user" && r != "assistant")
    throw Error(where + ": " + what + " has unknown role " + io::json_describe(*role) +
                " (expected system, user or assistant)");
  const json* content = io::json_find(m, "content", where);
  if (!content) throw Error(where + ": " + what + " has no \"content\"");
  return {r, nonblank_string(*content, where, what + " \"content\"")};
}

std::vector<ChatMessage> parse_prompt(const json& v, const std::string& where) {
  if (v.is_string()) return {{"user", nonblank_string(v, where, "\"prompt\"")}};
  if (!v.is_array())
    throw Error(where + ": \"prompt\" must be a string or a list of messages, got " + io::json_describe(v));
  if (v.empty()) throw Error(where + ": \"prompt\" is an empty list");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(parse_message(v[i], where, "prompt message " + std::to_string(i + 1)));
  if (out.back().role != "user") throw Error(where + ": the \"prompt\" list must end with a user message");
  return out;
}

std::string parse_reply(const json& v, const std::string& where, const char* key) {
  const std::string what = std::string("\"") + key + "\"";
  if (v.is_string()) return nonblank_string(v, where, what);
  if (!v.is_array())
    throw Error(where + ": " + what + " must be a string or a one-message list, got " + io::json_describe(v));
  if (v.size() != 1) throw Error(where + ": " + what + " must hold exactly one assistant message");
  const ChatMessage m = parse_message(v[0], where, what + " message");
  if (m.role != "assistant") throw Error(where + ": the " + what + " message must have the role assistant");
  return m.content;
}

}  // namespace

PreferencePair parse_preference_row(std::string_view line, uint64_t line_no, const std::string& where,
                                    bool* conversational) {
  const json row = parse_jsonl_object(line, where);
  for (const char* key : {"prompt", "chosen", "rejected"})
    if (!io::json_find(row, key, where))
      throw Error(where + ": the row has no \"" + key +
                  "\" field (a preference row is {\"prompt\", \"chosen\", "
                  "\"rejected\"})");
  PreferencePair p;
  const json& prompt = *io::json_find(row, "prompt", where);
  if (conversational) *conversational = prompt.is_array();
  p.prompt = parse_prompt(prompt, where);
  p.chosen = parse_reply(*io::json_find(row, "chosen", where), where, "chosen");
  p.rejected = parse_reply(*io::json_find(row, "rejected", where), where, "rejected");
  if (p.chosen == p.rejected) throw Error(where + ": \"chosen\" and \"rejected\" are the same reply");
  if (const json* kind = io::json_find(row, "kind", where); kind && kind->is_string()) p.kind = kind->get<std::string>();
  p.line = line_no;
  return p;
}

PreferenceDataset parse_preference_jsonl(std::string_view text, const std::string& label) {
  PreferenceDataset out;
  for_each_jsonl_line(text, label, [&](std::string_view line, uint64_t line_no, const std::string& where) {
    bool conversational = false;
    out.pairs.push_back(parse_preference_row(line, line_no, where, &conversational));
    if (out.pairs.size() == 1) out.conversational = conversational;
  });
  if (out.pairs.empty()) throw Error(label + ": the data file has no rows");
  return out;
}

PreferenceDataset load_preference_dataset(const std::string& path) {
  return parse_preference_jsonl(read_data_file(path), path);
}

EncodedReply encode_prompt_reply(const Tokenizer& tokenizer, const ChatTemplate& tmpl,
                                 const std::vector<ChatMessage>& prompt, const std::string& reply) {
  std::vector<ChatMessage> messages = prompt;
  messages.push_back({"assistant", reply});
  std::vector<uint8_t> mask;
  EncodedReply out;
  out.ids = encode_chat(tokenizer, tmpl.render(messages, /*add_generation_prompt=*/false), messages, &mask);
  // The reply is the last run of assistant tokens (earlier assistant turns of the prompt are separated
  // from it by the user turn's markup); whatever follows it (a newline after the end-of-turn) is cut.
  size_t end = mask.size();
  while (end > 0 && !mask[end - 1]) --end;
  if (end == 0) throw Error("the reply encodes to no token");
  size_t start = end;
  while (start > 0 && mask[start - 1]) --start;
  out.ids.resize(end);
  out.reply_start = start;
  return out;
}

std::vector<EncodedPair> encode_preference_dataset(const PreferenceDataset& data, const Tokenizer& tokenizer,
                                                   const ChatTemplate& tmpl) {
  std::vector<EncodedPair> out;
  out.reserve(data.pairs.size());
  for (const PreferencePair& p : data.pairs) {
    EncodedPair e;
    e.chosen = encode_prompt_reply(tokenizer, tmpl, p.prompt, p.chosen);
    e.rejected = encode_prompt_reply(tokenizer, tmpl, p.prompt, p.rejected);
    e.line = p.line;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace engine
