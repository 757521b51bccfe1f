// Logit bias as people type it: one entry per line, "id:bias" or "text:bias".
//
// The key is a token id when it is all digits, otherwise text that is tokenized and every token of
// it gets the bias (so " Paris:-5" discourages every token of " Paris"). A key in double quotes is
// always text ("\"42\":3" biases the token(s) of the text 42). The bias is a number, or -inf / ban
// to forbid the token outright. The split is at the LAST colon, so text keys may contain colons.
// Blank lines and lines starting with # are skipped.
#pragma once

#include <QString>

#include <cstdint>
#include <utility>
#include <vector>

namespace engine {
class Tokenizer;
}

struct LogitBiasParse {
  std::vector<std::pair<int32_t, float>> entries;
  QString error;  // empty on success; names the line that is wrong
};

LogitBiasParse parseLogitBias(const QString& spec, const engine::Tokenizer& tokenizer);

// The logit-bias text ("id:ban" lines) that bans every token a model ends a reply with: its tokenizer's
// end-of-text token and the end-of-turn tokens of the chat templates it has (<|im_end|>, <|eot_id|>,
// </s>). Replies then run to their token limit: what tests that must act while a reply is still being
// written use (the starter model otherwise answers in a sentence).
QString endOfReplyBan(const engine::Tokenizer& tokenizer);
