// GRPO's prompts, reward and batches: see engine/align/prompt_data.h.
#include "engine/align/prompt_data.h"

#include "engine/error.h"
#include "engine/eval/task_eval.h"
#include "engine/tokenizer.h"
#include "io/json_util.h"
#include "train/data_file.h"

namespace engine {

namespace {

using io::json;

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

std::string nonblank_field(const json& row, const char* key, const std::string& where) {
  const json* v = io::json_find(row, key, where);
  if (!v)
    throw Error(where + ": the row has no \"" + key + "\" field (a prompt row is {\"prompt\", \"answer\", \"kind\"})");
  if (!v->is_string()) throw Error(where + ": \"" + key + "\" must be a string, got " + io::json_describe(*v));
  std::string s = v->get<std::string>();
  if (blank(s)) throw Error(where + ": \"" + key + "\" is empty");
  return s;
}

}  // namespace

std::vector<PromptItem> parse_prompts_jsonl(std::string_view text, const std::string& label) {
  if (blank(text)) throw Error(label + ": the data file is empty");
  require_utf8_text(text, label);
  std::vector<PromptItem> out;
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    if (line_no == 1 && line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
    if (blank(line)) continue;
    const std::string where = label + ": line " + std::to_string(line_no);
    json row;
    try {
      row = io::parse_json_checked(line, where);
    } catch (const Error& e) {
      std::string detail = e.what();
      if (detail.rfind(where + ": ", 0) == 0) detail.erase(0, where.size() + 2);
      throw Error(where + ": bad JSON: " + detail);
    }
    if (!row.is_object()) throw Error(where + ": a row must be a JSON object, got " + io::json_describe(row));
    PromptItem item;
    item.prompt = nonblank_field(row, "prompt", where);
    item.answer = nonblank_field(row, "answer", where);
    const std::string kind = nonblank_field(row, "kind", where);
    if (kind == "arith") {
      item.kind = PromptKind::Arith;
      if (!last_integer(item.answer)) throw Error(where + ": an arith \"answer\" must hold a number");
    } else if (kind == "facts") {
      item.kind = PromptKind::Facts;
    } else {
      throw Error(where + ": \"kind\" must be \"arith\" or \"facts\" (the answers a program can check), not \"" + kind +
                  "\"");
    }
    item.line = line_no;
    out.push_back(std::move(item));
  }
  if (out.empty()) throw Error(label + ": the data file has no rows");
  return out;
}

std::vector<PromptItem> load_prompts(const std::string& path) {
  return parse_prompts_jsonl(read_data_file(path), path);
}

float programmatic_reward(const PromptItem& item, std::string_view reply) {
  const bool right = item.kind == PromptKind::Arith ? arith_reply_correct(reply, item.answer)
                                                    : facts_reply_correct(reply, item.answer);
  return right ? 1.0f : 0.0f;
}

PromptSet encode_prompts(std::vector<PromptItem> items, const Tokenizer& tokenizer, const ChatTemplate& tmpl) {
  PromptSet set;
  set.ids.reserve(items.size());
  for (const PromptItem& item : items) {
    const std::vector<ChatMessage> turn = {{"user", item.prompt}};
    set.ids.push_back(encode_chat(tokenizer, tmpl.render(turn, /*add_generation_prompt=*/true), turn));
  }
  set.items = std::move(items);
  return set;
}

PromptIndexLoader::PromptIndexLoader(uint64_t prompts, int P, bool shuffle, uint64_t seed, const std::string& label)
    : m_P(P), m_order(prompts, P, shuffle, seed, label) {}

void PromptIndexLoader::next(Batch& batch) {
  m_order.next(m_items);
  batch.B = m_P;
  batch.T = 1;
  batch.inputs.assign(m_items.begin(), m_items.end());
  batch.targets.assign(size_t(m_P), -1);
  batch.weights.clear();
  batch.lengths.assign(size_t(m_P), 1);
}

}  // namespace engine
