// What a training data file holds, before any training: its format, the first rows, every bad row with
// its line number, token counts, and how the train/validation split divides it. The fine-tuning
// wizard shows this on its dataset step; the checks are the ones training itself applies
// (chat_dataset.h for JSONL, text_dataset.h for plain text), so a file that passes here loads there.
//
// Format detection: a file whose first non-blank character is '{' is JSONL, its first readable row deciding
// which kind: preference pairs {prompt, chosen, rejected} (format "pairs", recipe reward or dpo;
// preference_data.h), prompts with checkable answers {prompt, answer, kind} ("prompts", recipe grpo or ppo;
// prompt_data.h), else chats ("messages" or Alpaca, as chat_dataset.h decides); anything else is plain text.
// Rows: JSONL rows are conversations, pairs or prompts; plain-text rows are its non-blank lines (training reads
// the text as one token stream, so a "row over the sequence length" means nothing there and is not counted).
// A pair's tokens are those of its two sequences (prompt + chosen, prompt + rejected), and it is over the
// sequence length when the longer one is; a prompt's tokens are its templated user turn, and it is "over" when
// it leaves no room for max_new_tokens and an end-of-sequence token (training skips it).
// Split: as prepare_training_data splits -- the last val_fraction of the conversations or pairs (rounded down),
// of the prompts training keeps, or of the text's tokens.
//
// Token counts encode each row on its own (chats rendered with the chat template), so the progress
// callback can report and stop between rows; for plain text the total is the sum over lines and may
// differ by a few tokens from encoding the file in one piece.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/chat_template.h"
#include "engine/train/chat_dataset.h"
#include "engine/train/training_data.h"

namespace engine {

class Tokenizer;

struct DatasetInspectionOptions {
  std::string path;
  int seq = 128;               // rows with more tokens than this are counted in rows_over_seq
  double val_fraction = 0.05;  // in [0, 0.5]
  ChatTemplate chat_template;  // JSONL rows are rendered with it before counting
  int max_new_tokens = 24;     // prompts: the completion length they must leave room for
  size_t preview_rows = 5;
  size_t max_problems = 100;
};

struct DatasetInspection {
  std::string format;  // "text", "messages", "alpaca", "pairs" or "prompts"
  Recipe recipe = Recipe::Pretrain;  // the first that fits: pretrain, sft, dpo (or reward), grpo (or ppo)
  uint64_t rows = 0;  // rows read (good and bad)
  uint64_t bad_rows = 0;
  std::vector<ChatRowProblem> problems;  // the first max_problems bad rows, with their lines
  // The first good rows: plain text one "text" message each; pairs "prompt" (its last user turn), "chosen",
  // "rejected"; prompts "prompt", "answer", "kind".
  std::vector<ChatExample> preview;
  bool tokens_counted = false;           // false when no tokenizer was given or counting was stopped
  uint64_t total_tokens = 0;
  uint64_t min_row_tokens = 0, max_row_tokens = 0;
  double mean_row_tokens = 0;
  uint64_t rows_over_seq = 0;             // JSONL only (prompts: skipped by training, see above)
  uint64_t train_rows = 0, val_rows = 0;  // JSONL only (prompts: of those kept, once tokens are counted) (plain text splits its token stream)
  uint64_t train_tokens = 0, val_tokens = 0;
};

// Called between rows with the fraction done (0..1); return false to stop. A stopped inspection keeps
// the format, rows and problems found so far with tokens_counted = false.
using InspectionProgress = std::function<bool(double)>;

// Reads and checks `options.path`; counts tokens when `tokenizer` is given. Throws engine::Error only
// for what spoils the whole file (missing, over 1 GiB, empty, not UTF-8 -- with the line and byte).
DatasetInspection inspect_dataset(const DatasetInspectionOptions& options, const Tokenizer* tokenizer,
                                  const InspectionProgress& progress = {});

}  // namespace engine
