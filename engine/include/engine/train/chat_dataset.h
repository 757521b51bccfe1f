// Chat data for supervised fine-tuning: JSONL files of conversations, validated row by row, and their
// encoding with the model's chat template into token ids plus a loss mask on assistant tokens.
//
// Two row formats, detected from the first non-blank line (every row must then use it):
//   messages: {"messages": [{"role": "system"|"user"|"assistant", "content": "..."}, ...]}
//   alpaca:   {"instruction": "...", "input": "..." (optional, may be ""), "output": "..."}
//             = a user turn (instruction, then a blank line and the input when there is one) and an
//               assistant turn (output).
// A row is refused -- engine::Error "<file>: line N: <what>", N counting every line from 1 -- when it is
// not JSON, not an object, lacks a field, has a role outside the three, an empty content, no assistant
// turn (nothing to learn from), or bytes that are not UTF-8. Blank lines are skipped; a file with no
// rows is an error. Unknown extra fields are ignored (data sets carry ids, sources, ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat_template.h"

namespace engine {

class Tokenizer;

enum class ChatDataFormat { Messages, Alpaca };
const char* chat_data_format_name(ChatDataFormat f);  // "messages", "alpaca"

struct ChatExample {
  std::vector<ChatMessage> messages;
  uint64_t line = 0;  // 1-based line in the file, for later messages about this row
};

struct ChatDataset {
  ChatDataFormat format = ChatDataFormat::Messages;
  std::vector<ChatExample> examples;
};

// Parses JSONL text; `label` names the source in errors. Throws engine::Error for the first bad row.
ChatDataset parse_chat_jsonl(std::string_view text, const std::string& label);

// The same checks on every row, without stopping at the first bad one (the wizard lists them all):
// the good rows parsed, and for each bad row its line and what is wrong with it (the first
// `max_problems` of them; bad_rows counts all). Throws only for what spoils the whole file: empty,
// or not UTF-8.
struct ChatRowProblem {
  uint64_t line = 0;    // 1-based, as in parse_chat_jsonl's errors
  std::string message;  // without the "<file>: line N: " prefix
};
struct ChatDataScan {
  ChatDataset dataset;
  uint64_t rows = 0;  // non-blank lines
  uint64_t bad_rows = 0;
  std::vector<ChatRowProblem> problems;
};
ChatDataScan scan_chat_jsonl(std::string_view text, const std::string& label, size_t max_problems = 100);
// Reads `path` (at most 1 GiB) and parses it.
ChatDataset load_chat_dataset(const std::string& path);

// One conversation as training sees it: ids and, per id, 1 when the model must learn to produce it
// (assistant content and the end-of-turn markup after it), else 0.
struct EncodedChat {
  std::vector<int32_t> ids;
  std::vector<uint8_t> assistant_mask;
};

// Renders each example with `tmpl` (no generation prompt) and encodes it with `tokenizer`.
std::vector<EncodedChat> encode_chat_dataset(const ChatDataset& data, const Tokenizer& tokenizer,
                                             const ChatTemplate& tmpl);

}  // namespace engine
