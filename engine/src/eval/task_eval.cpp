// Task evaluations: items, scorers, the greedy replier and the counting (engine/eval/task_eval.h).
#include "engine/eval/task_eval.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "engine/generator.h"
#include "engine/tokenizer.h"
#include "engine/train/synth_world.h"
#include "train/data_file.h"

namespace engine {

namespace {

using nlohmann::json;

// Markup of every chat family we render, and the role prefixes of a transcript: a reply that holds one
// has left its own turn. Role prefixes are matched case-insensitively (has_template_markup).
constexpr std::array<std::string_view, 14> k_markup = {
    "<|im_start|>", "<|im_end|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|begin_of_text|>",
    "[INST]",       "[/INST]",    "<<SYS>>",    "<|user|>",            "<|assistant|>",     "<|system|>",
    "### Instruction:", "### Response:"};
constexpr std::array<std::string_view, 3> k_role_prefixes = {"user:", "assistant:", "system:"};

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string line_error(const std::string& label, size_t line, const std::string& what) {
  return label + ": line " + std::to_string(line) + ": " + what;
}

const json& field(const json& row, const char* name, json::value_t type, const std::string& label, size_t line) {
  const auto it = row.find(name);
  if (it == row.end()) throw Error(line_error(label, line, std::string("no \"") + name + "\" field"));
  const bool ok = type == json::value_t::number_integer ? it->is_number_integer() : it->type() == type;
  if (!ok) throw Error(line_error(label, line, std::string("\"") + name + "\" has the wrong type"));
  return *it;
}

std::string string_field(const json& row, const char* name, const std::string& label, size_t line) {
  return field(row, name, json::value_t::string, label, line).get<std::string>();
}

EvalItem arith_item(const json& row, const std::string& label, size_t line) {
  EvalItem item;
  item.prompt = string_field(row, "question", label, line);
  item.expected = string_field(row, "answer", label, line);
  if (!last_integer(item.expected)) throw Error(line_error(label, line, "\"answer\" is not a number"));
  const std::string op = string_field(row, "op", label, line);
  const char* op_name = op == "+" ? "add" : op == "-" ? "sub" : op == "*" ? "mul" : nullptr;
  if (!op_name) throw Error(line_error(label, line, "\"op\" must be \"+\", \"-\" or \"*\", not \"" + op + "\""));
  const int64_t digits = field(row, "digits", json::value_t::number_integer, label, line).get<int64_t>();
  if (digits < 1 || digits > 18) throw Error(line_error(label, line, "\"digits\" must be 1 to 18"));
  item.categories = {std::string(op_name) + "_" + std::to_string(digits) + "d"};
  return item;
}

EvalItem facts_item(const json& row, const std::string& label, size_t line) {
  EvalItem item;
  item.prompt = string_field(row, "question", label, line);
  item.expected = string_field(row, "key", label, line);
  if (item.expected.empty()) throw Error(line_error(label, line, "\"key\" is empty"));
  const bool seen = field(row, "seen", json::value_t::boolean, label, line).get<bool>();
  item.categories = {seen ? "seen" : "unseen", "rel_" + string_field(row, "relation", label, line)};
  return item;
}

EvalItem chat_item(const json& row, const std::string& label, size_t line) {
  const json& messages = field(row, "messages", json::value_t::array, label, line);
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string())
      throw Error(line_error(label, line, "message " + std::to_string(i + 1) + " needs \"role\" and \"content\""));
    if (m["role"] != "user") continue;
    EvalItem item;
    item.prompt = m["content"].get<std::string>();
    if (i + 1 < messages.size() && messages[i + 1].is_object() && messages[i + 1].value("role", "") == "assistant")
      item.expected = messages[i + 1].value("content", "");
    return item;
  }
  throw Error(line_error(label, line, "the dialogue has no user message"));
}

void count(std::map<std::string, EvalCount>& categories, const std::string& name, bool correct) {
  EvalCount& c = categories[name];
  ++c.n;
  if (correct) ++c.correct;
}

json count_json(const EvalCount& c) { return {{"n", c.n}, {"correct", c.correct}, {"accuracy", c.accuracy()}}; }

}  // namespace

const char* eval_task_name(EvalTask task) {
  switch (task) {
    case EvalTask::Arith: return "arith";
    case EvalTask::Facts: return "facts";
    case EvalTask::Chat: return "chat";
  }
  return "?";
}

std::optional<EvalTask> eval_task_from_name(const std::string& name) {
  for (EvalTask t : {EvalTask::Arith, EvalTask::Facts, EvalTask::Chat})
    if (name == eval_task_name(t)) return t;
  return std::nullopt;
}

std::vector<EvalItem> parse_eval_items(EvalTask task, std::string_view jsonl, const std::string& label) {
  std::vector<EvalItem> items;
  if (blank_text(jsonl)) return items;  // the caller says what an empty file means to it
  for_each_jsonl_line(jsonl, label, [&](std::string_view text, uint64_t line_no, const std::string& where) {
    const json row = parse_jsonl_object(text, where);
    const size_t line = static_cast<size_t>(line_no);
    switch (task) {
      case EvalTask::Arith: items.push_back(arith_item(row, label, line)); break;
      case EvalTask::Facts: items.push_back(facts_item(row, label, line)); break;
      case EvalTask::Chat: items.push_back(chat_item(row, label, line)); break;
    }
  });
  return items;
}

std::vector<EvalItem> read_eval_items(EvalTask task, const std::string& path) {
  std::vector<EvalItem> items = parse_eval_items(task, read_data_file(path), path);
  if (items.empty()) throw Error(path + ": no " + eval_task_name(task) + " items in the file");
  return items;
}

std::vector<EvalItem> generate_eval_items(EvalTask task, int64_t n, uint64_t seed, uint64_t world_seed) {
  if (n < 1) throw Error("the number of evaluation items must be at least 1");
  const std::string label = std::string("generated ") + eval_task_name(task) + " items";
  if (task == EvalTask::Arith) return parse_eval_items(task, world::arith_jsonl(n, seed, world::Split::Eval), label);
  const world::World w = world::make_world(world_seed);
  const std::string jsonl = task == EvalTask::Facts ? world::facts_jsonl(w, n, seed, world::Split::Eval)
                                                    : world::chat_jsonl(w, n, seed, world::Split::Eval);
  return parse_eval_items(task, jsonl, label);
}

std::string_view reply_before_end_marker(std::string_view reply) {
  size_t cut = reply.size();
  for (std::string_view m : k_markup) cut = std::min(cut, reply.find(m));
  cut = std::min(cut, reply.find("\nUser:"));
  return reply.substr(0, cut);
}

std::optional<std::string> last_integer(std::string_view text) {
  size_t end = text.size();
  while (end > 0 && !is_digit(text[end - 1])) --end;
  if (end == 0) return std::nullopt;
  size_t begin = end;
  while (begin > 0 && is_digit(text[begin - 1])) --begin;
  // "-7" is negative, "6-1" is a subtraction: the sign counts only when no digit stands before it.
  const bool negative = begin > 0 && text[begin - 1] == '-' && (begin < 2 || !is_digit(text[begin - 2]));
  std::string_view digits = text.substr(begin, end - begin);
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  std::string out;
  if (negative && digits != "0") out.push_back('-');
  out.append(digits);
  return out;
}

bool arith_reply_correct(std::string_view reply, std::string_view answer) {
  const std::optional<std::string> got = last_integer(reply_before_end_marker(reply));
  const std::optional<std::string> want = last_integer(answer);
  return got && want && *got == *want;
}

bool facts_reply_correct(std::string_view reply, std::string_view key) {
  if (key.empty()) return false;
  const std::string text = lower_ascii(reply_before_end_marker(reply));
  const std::string k = lower_ascii(key);
  for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + 1)) {
    const size_t end = at + k.size();
    const bool left = at == 0 || !is_word_char(text[at - 1]) || !is_word_char(k.front());
    const bool right = end == text.size() || !is_word_char(text[end]) || !is_word_char(k.back());
    if (left && right) return true;
  }
  return false;
}

bool has_template_markup(std::string_view reply) {
  for (std::string_view m : k_markup)
    if (reply.find(m) != std::string_view::npos) return true;
  const std::string text = lower_ascii(reply);
  for (std::string_view p : k_role_prefixes)
    if (text.find(p) != std::string::npos) return true;
  return false;
}

ChatReplyCheck check_chat_reply(std::string_view reply, bool stopped_at_end_of_turn) {
  ChatReplyCheck c;
  c.stops = stopped_at_end_of_turn;
  c.in_template = !has_template_markup(reply);
  c.non_empty = reply.find_first_not_of(" \t\r\n") != std::string_view::npos;
  return c;
}

ReplyFunction greedy_chat_replier(const Model& model, Backend& backend, const ChatTemplate& chat_template,
                                  int max_tokens, std::function<bool()> keep_going) {
  const Tokenizer* tok = model.tokenizer();
  if (!tok) throw Error("the model has no tokenizer, so it cannot read the questions");
  if (max_tokens < 1) throw Error("max_tokens must be at least 1");
  return [&model, &backend, tok, chat_template, max_tokens, keep_going](const std::string& message) {
    const std::vector<ChatMessage> msgs = {{"user", message}};
    const std::vector<int32_t> ids =
        encode_chat(*tok, chat_template.render(msgs, /*add_generation_prompt=*/true), msgs);
    if (ids.empty()) return ModelReply{};
    // Sized for this question: a model's full context (32 k for some) would cost far more memory.
    const int capacity = std::min<int64_t>(model.config().max_seq_len, int64_t(ids.size()) + max_tokens);
    Generator gen(model, backend, capacity);
    GenerateParams p;
    p.max_tokens = max_tokens;
    p.sampler.temperature = 0.0f;  // greedy
    p.sampler.seed = 1;            // fixed, so nothing is left to chance even if a stage draws
    p.stop = chat_template.stop_strings();
    TokenCallback poll;
    if (keep_going) poll = [&keep_going](const GeneratedToken&, const std::string&) { return keep_going(); };
    const GenerationResult r = gen.generate(ids, p, poll);
    return ModelReply{r.text, r.finish == FinishReason::Eos || r.finish == FinishReason::Stop};
  };
}

TaskEvalResult evaluate_task(EvalTask task, const std::vector<EvalItem>& items, const ReplyFunction& reply,
                             const TaskEvalOptions& options) {
  TaskEvalResult result;
  result.task = task;
  std::map<std::string, EvalCount> categories;
  const int total = static_cast<int>(items.size());
  for (int i = 0; i < total; ++i) {
    const EvalItem& item = items[static_cast<size_t>(i)];
    const ModelReply r = reply(item.prompt);
    bool correct = false;
    switch (task) {
      case EvalTask::Arith: correct = arith_reply_correct(r.text, item.expected); break;
      case EvalTask::Facts: correct = facts_reply_correct(r.text, item.expected); break;
      case EvalTask::Chat: {
        const ChatReplyCheck c = check_chat_reply(r.text, r.stopped);
        correct = c.correct();
        count(categories, "stops", c.stops);
        count(categories, "in_template", c.in_template);
        break;
      }
    }
    ++result.total.n;
    if (correct) ++result.total.correct;
    for (const std::string& name : item.categories) count(categories, name, correct);
    if (static_cast<int>(result.examples.size()) < options.examples)
      result.examples.push_back({item.prompt, r.text, item.expected, correct});
    if (options.progress && !options.progress(i + 1, total)) throw Error("stopped");
  }
  result.categories.assign(categories.begin(), categories.end());
  return result;
}

std::string task_eval_json(const TaskEvalResult& result) {
  json categories = json::object();
  for (const auto& [name, c] : result.categories) categories[name] = count_json(c);
  json examples = json::array();
  for (const EvalExample& e : result.examples)
    examples.push_back({{"prompt", e.prompt}, {"reply", e.reply}, {"expected", e.expected}, {"correct", e.correct}});
  json j = {{"task", eval_task_name(result.task)},
            {"n", result.total.n},
            {"correct", result.total.correct},
            {"accuracy", result.total.accuracy()},
            {"categories", categories},
            {"examples", examples}};
  // Replies are model output: bytes that are not UTF-8 are replaced rather than refused.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace engine
