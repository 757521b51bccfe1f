// ChatTemplate: names, family defaults, rendering dispatch and stop strings (engine/chat_template.h).
// The renderers are in chat_render.cpp, recognition of a Jinja source in chat_detect.cpp.
#include "engine/chat_template.h"

#include "chat/chat_internal.h"

namespace engine {

std::string RenderedChat::text() const {
  std::string out;
  for (const ChatPiece& p : pieces) out += p.text;
  return out;
}

ChatTemplate::ChatTemplate(ChatTemplateKind kind) : m_kind(kind) {
  // The values the families' own tokenizers use; loaders replace them with the model's.
  switch (kind) {
    case ChatTemplateKind::Llama3:
      m_bos = "<|begin_of_text|>";
      m_eos = "<|eot_id|>";
      break;
    case ChatTemplateKind::Llama2:
    case ChatTemplateKind::Zephyr:
    case ChatTemplateKind::Alpaca:
      m_bos = "<s>";
      m_eos = "</s>";
      break;
    case ChatTemplateKind::ChatML:
    case ChatTemplateKind::Plain: break;
  }
}

std::optional<ChatTemplate> ChatTemplate::from_name(const std::string& name) {
  if (name == "chatml") return ChatTemplate(ChatTemplateKind::ChatML);
  if (name == "llama3") return ChatTemplate(ChatTemplateKind::Llama3);
  if (name == "llama2") return ChatTemplate(ChatTemplateKind::Llama2);
  if (name == "zephyr") return ChatTemplate(ChatTemplateKind::Zephyr);
  if (name == "alpaca") {
    // Without a source to read them from, the preamble and BOS of the multi-turn Alpaca template.
    ChatTemplate t(ChatTemplateKind::Alpaca);
    t.m_default_system =
        "Below are some instructions that describe some tasks. Write responses that appropriately complete each "
        "request.\n\n";
    t.m_alpaca_bos = true;
    return t;
  }
  if (name == "plain") return ChatTemplate(ChatTemplateKind::Plain);
  return std::nullopt;
}

std::string ChatTemplate::name() const {
  switch (m_kind) {
    case ChatTemplateKind::ChatML: return "chatml";
    case ChatTemplateKind::Llama3: return "llama3";
    case ChatTemplateKind::Llama2: return "llama2";
    case ChatTemplateKind::Zephyr: return "zephyr";
    case ChatTemplateKind::Alpaca: return "alpaca";
    case ChatTemplateKind::Plain: break;
  }
  return "plain";
}

void ChatTemplate::set_special_tokens(std::string bos, std::string eos) {
  m_bos = std::move(bos);
  m_eos = std::move(eos);
}

RenderedChat ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  std::vector<ChatPiece> pieces;
  switch (m_kind) {
    case ChatTemplateKind::ChatML: chat::render_chatml(*this, messages, add_generation_prompt, pieces); break;
    case ChatTemplateKind::Llama3: chat::render_llama3(*this, messages, add_generation_prompt, pieces); break;
    case ChatTemplateKind::Llama2: chat::render_llama2(*this, messages, add_generation_prompt, pieces); break;
    case ChatTemplateKind::Zephyr: chat::render_zephyr(*this, messages, add_generation_prompt, pieces); break;
    case ChatTemplateKind::Alpaca: chat::render_alpaca(*this, messages, add_generation_prompt, pieces); break;
    case ChatTemplateKind::Plain: chat::render_plain(*this, messages, add_generation_prompt, pieces); break;
  }
  // Empty pieces (an empty message, an unset bos_token) are dropped: they hold no token to encode or train.
  RenderedChat out;
  out.pieces.reserve(pieces.size());
  for (ChatPiece& p : pieces)
    if (!p.text.empty()) out.pieces.push_back(std::move(p));
  return out;
}

std::vector<std::string> ChatTemplate::stop_strings() const {
  switch (m_kind) {
    case ChatTemplateKind::ChatML: return {"<|im_end|>"};
    case ChatTemplateKind::Llama3: return {"<|eot_id|>"};
    case ChatTemplateKind::Llama2:
    case ChatTemplateKind::Zephyr:
      if (m_eos.empty()) return {};
      return {m_eos};
    case ChatTemplateKind::Alpaca: {
      // Fine-tunes often never learned the EOS; the next instruction header ends the answer too.
      std::vector<std::string> s{"### Instruction:"};
      if (!m_eos.empty()) s.insert(s.begin(), m_eos);
      return s;
    }
    case ChatTemplateKind::Plain: break;
  }
  // Plain: the next user line ends the reply (a base model writes both sides of a transcript).
  return {"\nUser:"};
}

}  // namespace engine
