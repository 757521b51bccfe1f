// Prompts with checkable answers for GRPO: JSONL rows {"prompt", "answer", "kind"} (what `data synth --kind
// prompts` writes), the programmatic reward that checks a reply against the answer, and the loader that hands
// the Trainer batches of prompts.
//
// A row is refused -- engine::Error "<file>: line N: <what>", N counting every line from 1 -- when it is not JSON,
// not an object, lacks a field, has an empty prompt or answer, or a kind other than "arith" or "facts". Blank
// lines are skipped; unknown extra fields are ignored; a file with no rows is an error.
//
// Reward: 1 when the reply is right by the task evaluation's exact-match scorers (engine/eval/task_eval.h:
// arith_reply_correct, facts_reply_correct), else 0.
//
// Batches: a PromptIndexLoader's batch is P rows of ONE token each, that token being the index of the prompt in
// its set -- the GRPO objective samples the completions itself and looks the prompt up by index. The order is an
// EpochOrder over the prompts, so resume works as for every BatchLoader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat_template.h"
#include "engine/train/data_loader.h"

namespace engine {

class Tokenizer;

enum class PromptKind { Arith, Facts };

struct PromptItem {
  std::string prompt;  // the user message
  std::string answer;  // arith: the number; facts: the key phrase
  PromptKind kind = PromptKind::Arith;
  uint64_t line = 0;  // 1-based line in the file
};

// One non-blank JSONL line, `where` ("<file>: line N") prefixing its errors. Throws engine::Error for a bad row.
PromptItem parse_prompt_row(std::string_view line, uint64_t line_no, const std::string& where);
std::vector<PromptItem> parse_prompts_jsonl(std::string_view text, const std::string& label);
// Reads `path` (size-capped like every data file) and parses it.
std::vector<PromptItem> load_prompts(const std::string& path);

// 1 when `reply` answers `item` right, else 0.
float programmatic_reward(const PromptItem& item, std::string_view reply);

// Prompts ready to sample from: each the one user turn of `tmpl` with the assistant's turn opened.
struct PromptSet {
  std::vector<PromptItem> items;
  std::vector<std::vector<int32_t>> ids;  // per item
};
PromptSet encode_prompts(std::vector<PromptItem> items, const Tokenizer& tokenizer, const ChatTemplate& tmpl);

// How GRPO and PPO divide their prompts: a prompt that leaves no room for max_new_tokens and an end-of-sequence
// token within seq tokens is skipped; of the rest the last val_fraction (rounded down) is held out.
struct PromptSplit {
  PromptSet train, val;
  size_t skipped = 0;
};
PromptSplit split_prompt_set(PromptSet all, int seq, int max_new_tokens, double val_fraction);

class PromptIndexLoader : public BatchLoader {
 public:
  // Throws engine::Error when prompts < P.
  PromptIndexLoader(uint64_t prompts, int P, bool shuffle, uint64_t seed, const std::string& label);
  void next(Batch& batch) override;
  DataPosition position() const override { return m_order.position(); }
  void seek(const DataPosition& position) override { m_order.seek(position); }
  int batch_size() const override { return m_P; }
  int seq_len() const override { return 1; }

 private:
  int m_P;
  EpochOrder m_order;
  std::vector<uint32_t> m_items;
};

}  // namespace engine
