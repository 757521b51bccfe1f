// Chat templates: turning a list of messages into the text (and token ids) a chat model was trained on.
//
// We do not run Jinja. A model's template source (GGUF tokenizer.chat_template, or chat_template in an
// HF tokenizer_config.json) is recognised by its distinctive markup (as llama.cpp does) and mapped to
// one of the families below, each rendered by hand-written code that must give exactly the text
// Hugging Face's apply_chat_template gives for that family's reference template.
//
// Special tokens come only from template markup, never from message content: render() returns the
// conversation as pieces that say which is which, and encode_chat() tokenizes markup with special
// tokens allowed and content with them disallowed. A user who types "<|im_end|>" gets those characters,
// not the control token.
//
// BOS: comes from the template text, as in Hugging Face (apply_chat_template tokenizes its text with
// add_special_tokens=False): Llama-3 renders "<|begin_of_text|>", Llama-2 "<s>" before each [INST],
// as markup, and encode_chat turns it into the BOS id. Callers must not prepend a BOS of their own.
//
// Invariants: render() never throws for any message list (an unknown role is rendered as the
// family renders a user turn); the pieces concatenated are the rendered text; every piece of message content
// carries the index of its message, so training can mask the loss to assistant content.
// A loaded model carries its template: Model::chat_template() (set by load_model from the source's
// metadata; Plain when the source has none we recognise), which the chat, SFT and CLI all use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace engine {

class Tokenizer;

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

enum class ChatTemplateKind {
  ChatML,  // <|im_start|>role\n...<|im_end|>\n (Qwen2, SmolLM, many fine-tunes)
  Llama3,  // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  Llama2,  // <s>[INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] ... </s>
  Zephyr,  // <|system|>\n...</s>\n<|user|>\n...</s>\n<|assistant|>\n
  Alpaca,  // ### Instruction:\n...\n\n### Response:\n...
  Plain,   // a base model: a transcript of "User: content" lines, no special tokens
};

struct ChatPiece {
  std::string text;
  bool markup = false;     // template text: may contain special tokens
  int message_index = -1;  // for content pieces: index into the message list; -1 for markup
  // For the markup that ends a message's turn (ChatML "<|im_end|>", Llama-3 "<|eot_id|>", Llama-2
  // " </s>", ...): the index of the message it closes, else -1. encode_chat trains it with an
  // assistant message's content, since the model must learn to emit it.
  int ends_message = -1;
};

struct RenderedChat {
  std::vector<ChatPiece> pieces;
  std::string text() const;  // all pieces concatenated
};

class ChatTemplate {
 public:
  ChatTemplate() = default;                      // Plain
  explicit ChatTemplate(ChatTemplateKind kind);  // the family with its usual bos / eos texts

  // Recognises a Jinja template source; nullopt when it matches no family we render.
  static std::optional<ChatTemplate> detect(const std::string& jinja_source);
  // "chatml", "llama3", "llama2", "zephyr", "alpaca", "plain"; nullopt for anything else.
  static std::optional<ChatTemplate> from_name(const std::string& name);

  ChatTemplateKind kind() const { return m_kind; }
  std::string name() const;

  // add_generation_prompt: end with the markup that opens an assistant turn (for generation).
  RenderedChat render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  // Strings that end an assistant turn in this family (e.g. "<|im_end|>"); generation stops on them.
  std::vector<std::string> stop_strings() const;

  // The Jinja source the template came from: set by detect(), and by loaders on the Plain template they
  // fall back to for a source no family matches ("" for from_name / the default). Exports write it
  // back unchanged.
  const std::string& source() const { return m_source; }
  void set_source(std::string source) { m_source = std::move(source); }

  // The texts the template inserts for the tokenizer's bos_token / eos_token (Llama-2 "<s>" / "</s>",
  // Zephyr's "</s>", Alpaca's model-dependent ones). detect() / from_name() start from the family's
  // usual values; loaders set the model's own (tokenizer_config.json, GGUF bos / eos ids). An empty
  // text renders nothing, as Jinja renders an undefined bos_token.
  void set_special_tokens(std::string bos, std::string eos);
  const std::string& bos_text() const { return m_bos; }
  const std::string& eos_text() const { return m_eos; }

  // Read from the source by detect(): the system text ChatML templates (Qwen2's "You are a helpful
  // assistant.") and Alpaca templates (a preamble) put first when messages[0] is not a system message;
  // "" when the template has none.
  const std::string& default_system() const { return m_default_system; }

 private:
  friend struct ChatTemplateAccess;  // detect() fills the fields below (engine/src/chat/)

  ChatTemplateKind m_kind = ChatTemplateKind::Plain;
  std::string m_source;
  std::string m_bos;
  std::string m_eos;
  std::string m_default_system;
  // Llama-3.1 and later: a system block always opens the chat with this knowledge-cutoff line
  // ("Cutting Knowledge Date: December 2023\n") and "Today Date: <m_date>\n\n"; empty for Llama-3.0.
  std::string m_knowledge_line;
  std::string m_date;         // the template's fixed date_string; empty with m_today_date
  bool m_today_date = false;  // the template asks strftime_now("%d %b %Y"): today's date (UTC)
  bool m_alpaca_bos = false;  // the Alpaca template starts with bos_token
};

// Token ids of a rendered chat. Markup is encoded with special tokens allowed, content without.
// When `assistant_mask` is given it receives one entry per id: 1 for ids from assistant content (and the
// end-of-turn markup right after it, which the model must learn to emit), else 0.
std::vector<int32_t> encode_chat(const Tokenizer& tokenizer, const RenderedChat& chat,
                                 const std::vector<ChatMessage>& messages,
                                 std::vector<uint8_t>* assistant_mask = nullptr);

}  // namespace engine
