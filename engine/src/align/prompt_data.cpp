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


std::string nonblank_field(const json& row, const char* key, const std::string& where) {
  const json* v = io::json_find(row, key, where);
  if (!v)
    throw Error(where + ": the row has no \"" + key + "\" field (a prompt row is {\"prompt\", \"answer\", \"kind\"})");
  if (!v->is_string()) throw Error(where + ": \"" + key + "\" must be a string, got " + io::json_describe(*v));
  std::string s = v->get<std::string>();
  if (blank_text(s)) throw Error(where + ": \"" + key + "\" is empty");
  return s;
}

}  // namespace

PromptItem parse_prompt_row(std::string_view line, uint64_t line_no, const std::string& where) {
  const json row = parse_jsonl_object(line, where);
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
  return item;
}

std::vector<PromptItem> parse_prompts_jsonl(std::string_view text, const std::string& label) {
  std::vector<PromptItem> out;
  for_each_jsonl_line(text, label, [&](std::string_view line, uint64_t line_no, const std::string& where) {
    out.push_back(parse_prompt_row(line, line_no, where));
  });
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

PromptSplit split_prompt_set(PromptSet all, int seq, int max_new_tokens, double val_fraction) {
  PromptSet kept;
  for (size_t i = 0; i < all.items.size(); ++i) {
    // Room for the longest completion and its end-of-sequence token.
    if (all.ids[i].empty() || all.ids[i].size() + size_t(max_new_tokens) + 1 > size_t(seq)) continue;
    kept.items.push_back(std::move(all.items[i]));
    kept.ids.push_back(std::move(all.ids[i]));
  }
  PromptSplit out;
  out.skipped = all.items.size() - kept.items.size();
  const size_t n_val = static_cast<size_t>(double(kept.items.size()) * val_fraction);
  const size_t n_train = kept.items.size() - n_val;
  for (size_t i = n_train; i < kept.items.size(); ++i) {
    out.val.items.push_back(std::move(kept.items[i]));
    out.val.ids.push_back(std::move(kept.ids[i]));
  }
  kept.items.resize(n_train);
  kept.ids.resize(n_train);
  out.train = std::move(kept);
  return out;
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
