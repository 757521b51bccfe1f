// Preference pairs for reward-model and DPO training: JSONL rows validated line by line, and each pair
// encoded as two chats that share the prompt.
//
// Row format (TRL's "standard" and "conversational" preference formats):
//   {"prompt": "...", "chosen": "...", "rejected": "..."}
//   prompt may also be a message list [{"role": "system"|"user"|"assistant", "content": "..."}, ...] ending
//   with a user turn; chosen / rejected may also be a one-message list [{"role": "assistant", "content": "..."}].
// A row is refused -- engine::Error "<file>: line N: <what>", N counting every line from 1 -- when it is not
// JSON, not an object, lacks one of the three fields, has an empty text, a role outside the three, a prompt
// list not ending with a user turn, or chosen equal to rejected (nothing to prefer). Blank lines are skipped;
// other extra fields (ids, sources) are ignored; a string "kind" (data synth's "correct", "polite", ...) is
// kept, for evaluations broken down by it; a file with no rows is an error.
//
// Encoding (encode_prompt_reply): the prompt messages plus an assistant turn holding the reply, rendered with
// the chat template and cut after the end-of-turn markup that closes the reply. The reply's tokens are
// ids[reply_start..]: its content and that end-of-turn markup (encode_chat's assistant mask on the last
// assistant turn), so the sequence's last token is the one a reward model scores.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat_template.h"

namespace engine {

class Tokenizer;

struct PreferencePair {
  std::vector<ChatMessage> prompt;  // ends with a user turn
  std::string chosen, rejected;
  std::string kind;   // the row's "kind" when it is a string, else empty
  uint64_t line = 0;  // 1-based line in the file
};

struct PreferenceDataset {
  std::vector<PreferencePair> pairs;
  bool conversational = false;  // the first row's prompt was a message list
};

// One non-blank JSONL line, `where` ("<file>: line N") prefixing its errors; *conversational (may be null) says
// whether its prompt was a message list. Throws engine::Error for a bad row (the checks above).
PreferencePair parse_preference_row(std::string_view line, uint64_t line_no, const std::string& where,
                                    bool* conversational = nullptr);
// Parses JSONL text; `label` names the source in errors. Throws engine::Error for the first bad row.
PreferenceDataset parse_preference_jsonl(std::string_view text, const std::string& label);
// Reads `path` (at most 1 GiB) and parses it.
PreferenceDataset load_preference_dataset(const std::string& path);

// One prompt + reply as token ids: ids[0..reply_start) are the prompt and template, ids[reply_start..] the
// reply and its end-of-turn markup.
struct EncodedReply {
  std::vector<int32_t> ids;
  size_t reply_start = 0;
};
// Throws engine::Error when the reply encodes to no token (cannot happen for a non-empty reply).
EncodedReply encode_prompt_reply(const Tokenizer& tokenizer, const ChatTemplate& tmpl,
                                 const std::vector<ChatMessage>& prompt, const std::string& reply);

struct EncodedPair {
  EncodedReply chosen, rejected;
  uint64_t line = 0;
};
std::vector<EncodedPair> encode_preference_dataset(const PreferenceDataset& data, const Tokenizer& tokenizer,
                                                   const ChatTemplate& tmpl);

}  // namespace engine
