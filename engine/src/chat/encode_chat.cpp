// encode_chat: a rendered chat to token ids, with special tokens only from markup, and the assistant
// mask SFT trains on (engine/chat_template.h).
//
// The whole text is encoded in one call (Tokenizer::encode_with_markup), split only at the special
// tokens found inside markup, so the ids are those Hugging Face's apply_chat_template(tokenize=True)
// gives for the same text, except where message content spells a special token: there HF would emit
// the control token, we emit the characters.
// Mask: token i covers bytes [offset_i, offset_{i+1}) of the text (at least one byte); it is trained
// (1) when that span overlaps the content of an assistant message or the end-of-turn markup that
// closes one. A token that merges markup with the start of an answer (" Hi" after Plain's
// "Assistant:") is therefore trained, as the model must produce it.
#include <algorithm>

#include "engine/chat_template.h"
#include "engine/tokenizer.h"

namespace engine {

std::vector<int32_t> encode_chat(const Tokenizer& tokenizer, const RenderedChat& chat,
                                 const std::vector<ChatMessage>& messages, std::vector<uint8_t>* assistant_mask) {
  std::string text;
  std::vector<TextRange> markup;
  std::vector<TextRange> trained;  // assistant content and its end-of-turn markup, in text order
  auto is_assistant = [&](int index) {
    return index >= 0 && static_cast<std::size_t>(index) < messages.size() &&
           messages[static_cast<std::size_t>(index)].role == "assistant";
  };
  for (const ChatPiece& p : chat.pieces) {
    const TextRange r{text.size(), text.size() + p.text.size()};
    text += p.text;
    if (p.markup) markup.push_back(r);
    if (is_assistant(p.markup ? p.ends_message : p.message_index)) trained.push_back(r);
  }
  if (!assistant_mask) return tokenizer.encode_with_markup(text, markup);

  std::vector<std::size_t> offsets;
  std::vector<int32_t> ids = tokenizer.encode_with_markup(text, markup, &offsets);
  assistant_mask->assign(ids.size(), 0);
  std::size_t r = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::size_t begin = offsets[i];
    const std::size_t next = i + 1 < ids.size() ? offsets[i + 1] : text.size();
    const std::size_t end = std::max(next, begin + 1);
    while (r < trained.size() && trained[r].end <= begin) ++r;
    // Spans are non-decreasing, so the first trained range not wholly before this token is the only
    // candidate; ranges are non-empty (render drops empty pieces).
    (*assistant_mask)[i] = r < trained.size() && trained[r].begin < end ? 1 : 0;
  }
  return ids;
}

}  // namespace engine
