// The per-family renderers: each writes, as markup and content pieces, exactly the text Hugging Face's
// apply_chat_template gives for the family's reference template (Jinja with trim_blocks and
// lstrip_blocks, as transformers compiles it). The reference templates, whose sources are in the
// test fixture (tests/tools/make_chat_template_fixture.py):
//   ChatML  Qwen2-Instruct / Qwen2.5 (default system prompt read from the source), plain ChatML
//   Llama3  Meta-Llama-3-Instruct (bos_token before the first turn, contents |trim) and Llama-3.1+
//           (bos_token, then a system block that always opens with the knowledge-cutoff and date lines)
//   Llama2  Llama-2-chat: system folded into the first user turn, content.strip(), "<s>[INST] " per turn
//   Zephyr  zephyr-7b-beta / TinyLlama-chat: "<|role|>\n" + content + eos_token + "\n"
//   Alpaca  the multi-turn Alpaca template (Unsloth's): preamble or system, "### Instruction:\n",
//           "### Response:\n" ... eos_token
// Where a reference template raises (roles that do not alternate, tool messages, a system message
// late in the conversation) we still render: an unknown role is rendered as a user turn, so no
// message is ever dropped and render() never throws.
#include "chat/chat_internal.h"

namespace engine::chat {
namespace {

enum class Role { System, User, Assistant };

Role role_of(const ChatMessage& m) {
  if (m.role == "system") return Role::System;
  if (m.role == "assistant") return Role::Assistant;
  return Role::User;  // "user" and anything unknown
}

const char* role_name(Role r) {
  switch (r) {
    case Role::System: return "system";
    case Role::Assistant: return "assistant";
    case Role::User: break;
  }
  return "user";
}

void markup(std::vector<ChatPiece>& out, std::string text, int ends_message = -1) {
  ChatPiece p;
  p.text = std::move(text);
  p.markup = true;
  p.ends_message = ends_message;
  out.push_back(std::move(p));
}

void content(std::vector<ChatPiece>& out, std::string_view text, int index) {
  ChatPiece p;
  p.text = std::string(text);
  p.message_index = index;
  out.push_back(std::move(p));
}

int index_of(std::size_t i) { return static_cast<int>(i); }

}  // namespace

void render_chatml(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out) {
  for (std::size_t i = 0; i < m.size(); ++i) {
    const Role r = role_of(m[i]);
    if (i == 0 && r != Role::System && !t.default_system().empty())
      markup(out, "<|im_start|>system\n" + t.default_system() + "<|im_end|>\n");
    markup(out, std::string("<|im_start|>") + role_name(r) + "\n");
    content(out, m[i].content, index_of(i));
    markup(out, "<|im_end|>", index_of(i));
    markup(out, "\n");
  }
  if (gen) markup(out, "<|im_start|>assistant\n");
}

void render_llama3(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out) {
  const std::string& knowledge = ChatTemplateAccess::knowledge_line(t);
  std::size_t first = 0;
  if (!knowledge.empty()) {
    // Llama-3.1+: BOS, then a system block that is there even without a system message.
    markup(out, t.bos_text());
    const std::string date = ChatTemplateAccess::today_date(t) ? today_date_string() : ChatTemplateAccess::date(t);
    markup(out, "<|start_header_id|>system<|end_header_id|>\n\n" + knowledge + "Today Date: " + date + "\n\n");
    if (!m.empty() && role_of(m[0]) == Role::System) {
      content(out, strip(m[0].content), 0);
      markup(out, "<|eot_id|>", 0);
      first = 1;
    } else {
      markup(out, "<|eot_id|>");
    }
  }
  for (std::size_t i = first; i < m.size(); ++i) {
    if (i == 0 && knowledge.empty()) markup(out, t.bos_text());  // Llama-3.0: bos_token joins the first turn
    markup(out, std::string("<|start_header_id|>") + role_name(role_of(m[i])) + "<|end_header_id|>\n\n");
    content(out, strip(m[i].content), index_of(i));
    markup(out, "<|eot_id|>", index_of(i));
  }
  if (gen) markup(out, "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

void render_llama2(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool /*gen*/,
                   std::vector<ChatPiece>& out) {
  // The reference template has no generation prompt: a chat ending in a user turn already ends with
  // " [/INST]", after which the model answers.
  const bool has_system = !m.empty() && role_of(m[0]) == Role::System;
  for (std::size_t i = has_system ? 1 : 0; i < m.size(); ++i) {
    std::vector<ChatPiece> body;
    if (has_system && i == 1) {
      markup(body, "<<SYS>>\n");
      content(body, m[0].content, 0);
      markup(body, "\n<</SYS>>\n\n");
    }
    content(body, m[i].content, index_of(i));
    strip_pieces(body);  // content.strip() over the system block and the message together
    const bool assistant = role_of(m[i]) == Role::Assistant;
    markup(out, assistant ? " " : t.bos_text() + "[INST] ");
    for (ChatPiece& p : body) out.push_back(std::move(p));
    if (assistant) markup(out, " " + t.eos_text(), index_of(i));
    else markup(out, " [/INST]");
  }
}

void render_zephyr(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out) {
  for (std::size_t i = 0; i < m.size(); ++i) {
    markup(out, std::string("<|") + role_name(role_of(m[i])) + "|>\n");
    content(out, m[i].content, index_of(i));
    markup(out, t.eos_text(), index_of(i));
    markup(out, "\n");
    if (i + 1 == m.size() && gen) markup(out, "<|assistant|>\n");
  }
}

void render_alpaca(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out) {
  if (ChatTemplateAccess::alpaca_bos(t)) markup(out, t.bos_text());
  std::size_t first = 0;
  if (!m.empty() && role_of(m[0]) == Role::System) {
    content(out, m[0].content, 0);
    markup(out, "\n\n", 0);
    first = 1;
  } else {
    markup(out, t.default_system());
  }
  for (std::size_t i = first; i < m.size(); ++i) {
    if (role_of(m[i]) == Role::Assistant) {
      markup(out, "### Response:\n");
      content(out, m[i].content, index_of(i));
      markup(out, t.eos_text(), index_of(i));
      markup(out, "\n\n");
    } else {
      markup(out, "### Instruction:\n");
      content(out, m[i].content, index_of(i));
      markup(out, "\n\n", index_of(i));
    }
  }
  if (gen) markup(out, "### Response:\n");
}

void render_plain(const ChatTemplate&, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out) {
  // For base models: a transcript, "Speaker: content" lines with the speakers capitalised as in
  // written dialogue (a lower-case "assistant:" reads to a base model as a word of the text, often a
  // name). The generation prompt stops after the colon so that the model writes the space itself, as
  // its tokenizer joins it to the first word (" Hello").
  auto speaker = [](Role r) -> const char* {
    switch (r) {
      case Role::System: return "System";
      case Role::Assistant: return "Assistant";
      case Role::User: break;
    }
    return "User";
  };
  for (std::size_t i = 0; i < m.size(); ++i) {
    markup(out, std::string(speaker(role_of(m[i]))) + ": ");
    content(out, m[i].content, index_of(i));
    markup(out, "\n", index_of(i));
  }
  if (gen) markup(out, "Assistant:");
}

}  // namespace engine::chat
