// Task evaluations: how many held-out questions of the small world (engine/train/synth_world.h) a chat
// model answers right, by exact match, with a breakdown per category.
//
// Tasks
// - arith: "What is 43 + 80?"; right when the reply's last integer is the answer ("123" and
//   "43 + 80 = 123." both count). Categories add_/sub_/mul_ by the larger operand's digits ("add_2d").
// - facts: "Where does Mia live?"; right when the reply contains the fact's key ("the red house") as a
//   whole word or phrase, case-insensitive. Categories "seen" / "unseen" (held out of every training
//   set) and "rel_<relation>".
// - chat: the first user message of each dialogue; right when the reply stays in the template and
//   stops: it ended at the end-of-turn token or a stop string (not at max_tokens), holds no template
//   markup or role prefix, and is not empty. Categories "stops" and "in_template".
//
// The model is one step: a ReplyFunction from the question to the reply, so the scoring and counting
// can be tested with an oracle, and greedy_chat_replier gives the real one (the question as one user
// message in the model's chat template, greedy decoding through engine::Generator).
//
// Invariants: the scorers are pure; the items are those of synth_world's Split::Eval (or a file in
// the same JSONL formats); n and correct of a result are the sums over the items, and every item counts
// once in each category it belongs to.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/backend.h"
#include "engine/chat_template.h"
#include "engine/model.h"

namespace engine {

enum class EvalTask { Arith, Facts, Chat };
const char* eval_task_name(EvalTask task);  // "arith", "facts", "chat"
std::optional<EvalTask> eval_task_from_name(const std::string& name);

struct EvalItem {
  std::string prompt;                   // the user message
  std::string expected;                 // arith: the number; facts: the key; chat: the reference reply
  std::vector<std::string> categories;  // arith: {"add_2d"}; facts: {"seen", "rel_lives_in"}; chat: {}
};

// Items from JSONL text in synth_world's formats: arith {"question","answer","op","digits"}, facts
// {"question","answer","key","relation","seen"}, chat {"messages":[...]} (the first user message is
// asked). Blank lines are skipped. Throws engine::Error "<label>: line N: ..." for a line that is not
// JSON or lacks a field.
std::vector<EvalItem> parse_eval_items(EvalTask task, std::string_view jsonl, const std::string& label);
// The same from a file (UTF-8, size-capped like every data file); errors name the path.
std::vector<EvalItem> read_eval_items(EvalTask task, const std::string& path);
// n items of the world `world_seed`'s evaluation split, drawn with `seed`.
std::vector<EvalItem> generate_eval_items(EvalTask task, int64_t n, uint64_t seed, uint64_t world_seed);

// --- scoring (pure) ---------------------------------------------------------------------------------

// `reply` up to the first template marker (<|im_start|>, <|im_end|>, <|eot_id|>, [INST], "\nUser:", ...):
// what a model wrote after one is the start of another turn, not its answer.
std::string_view reply_before_end_marker(std::string_view reply);
// The last integer in `text` (with its minus sign when "-" stands right before it, not after a digit),
// without leading zeros: "43 + 80 = 123." -> "123", "x = -7" -> "-7"; nullopt when there is none.
std::optional<std::string> last_integer(std::string_view text);
bool arith_reply_correct(std::string_view reply, std::string_view answer);
bool facts_reply_correct(std::string_view reply, std::string_view key);
// True when `reply` holds any template markup or a role prefix ("user:", "assistant:"), case-insensitive.
bool has_template_markup(std::string_view reply);

struct ChatReplyCheck {
  bool stops = false;        // ended at the end-of-turn token or a stop string
  bool in_template = false;  // no markup or role prefix in the text
  bool non_empty = false;    // something other than white space
  bool correct() const { return stops && in_template && non_empty; }
};
ChatReplyCheck check_chat_reply(std::string_view reply, bool stopped_at_end_of_turn);

// --- running ----------------------------------------------------------------------------------------

struct ModelReply {
  std::string text;
  bool stopped = false;  // ended at the end-of-turn token or a stop string, not at max_tokens
};
using ReplyFunction = std::function<ModelReply(const std::string& user_message)>;

// Longest reply an evaluation waits for by default: a worked three-digit sum of the starter world is
// about 60 tokens.
inline constexpr int kTaskEvalMaxTokens = 96;

// Greedy replies of `model` (which must have a tokenizer): the message as the one user turn of
// `chat_template` with the assistant's turn opened, at most max_tokens, stopping at EOS and at the
// template's stop strings. `keep_going` is polled once per token (false: the reply ends there).
// `model` and `backend` must outlive the function.
ReplyFunction greedy_chat_replier(const Model& model, Backend& backend, const ChatTemplate& chat_template,
                                  int max_tokens, std::function<bool()> keep_going = {});

struct EvalCount {
  int n = 0;
  int correct = 0;
  double accuracy() const { return n > 0 ? double(correct) / n : 0.0; }
};

struct EvalExample {
  std::string prompt, reply, expected;
  bool correct = false;
};

struct TaskEvalResult {
  EvalTask task = EvalTask::Arith;
  EvalCount total;
  std::vector<std::pair<std::string, EvalCount>> categories;  // sorted by name
  std::vector<EvalExample> examples;                          // the first few items
};

struct TaskEvalOptions {
  int examples = 5;  // how many items to keep as examples
  // Called after each item with (done, total); returning false stops the evaluation (engine::Error
  // "stopped" is thrown).
  std::function<bool(int done, int total)> progress;
};

TaskEvalResult evaluate_task(EvalTask task, const std::vector<EvalItem>& items, const ReplyFunction& reply,
                             const TaskEvalOptions& options = {});

// The result as one JSON object:
// {"task","n","correct","accuracy","categories":{name:{"n","correct","accuracy"}},
//  "examples":[{"prompt","reply","expected","correct"}]}.
std::string task_eval_json(const TaskEvalResult& result);

}  // namespace engine
