// ChatTemplate::detect: recognising a model's Jinja chat template by its distinctive markup (as
// llama.cpp's llm_chat_detect_template does) and reading the few values our renderers take from it.
//
// Markers, tried in this order:
//   ChatML  "<|im_start|>"
//   Llama3  "<|start_header_id|>" and "<|end_header_id|>"; Llama-3.1+ when a literal holds
//           "Cutting Knowledge Date:" (its date: `set date_string = "..."`, or today with strftime_now)
//   Llama2  "[INST]" and "<<SYS>>" (Mistral's [INST] templates without <<SYS>> are not this family)
//   Zephyr  "<|user|>" and "<|assistant|>", but not Phi-3's "<|end|>"
//   Alpaca  "### Instruction" and "### Response"
// Values read from string literals (never by running the template): ChatML's default system prompt
// (a literal "<|im_start|>system\n<text><|im_end|>", as Qwen2 writes it) and Alpaca's preamble (the
// first literal ending in "\n\n" that is not a "###" header). A template that only looks like a family
// renders as that family's reference template; the source is kept so an export writes it back as is.
#include "chat/chat_internal.h"

namespace engine {
namespace {

bool has(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }

std::string chatml_default_system(const std::vector<chat::JinjaLiteral>& literals) {
  constexpr std::string_view open = "<|im_start|>system\n";
  constexpr std::string_view close = "<|im_end|>";
  for (const chat::JinjaLiteral& l : literals) {
    const std::size_t a = l.value.find(open);
    if (a == std::string::npos) continue;
    const std::size_t begin = a + open.size();
    const std::size_t b = l.value.find(close, begin);
    if (b == std::string::npos || b == begin) continue;
    return l.value.substr(begin, b - begin);
  }
  return {};
}

std::string alpaca_preamble(const std::vector<chat::JinjaLiteral>& literals) {
  for (const chat::JinjaLiteral& l : literals) {
    const std::string& v = l.value;
    if (v.size() > 2 && v.ends_with("\n\n") && !has(v, "###") && !chat::strip(v).empty()) return v;
  }
  return {};
}

// The value of `set date_string = "..."` (the first literal after it), or "" when there is none.
std::string llama3_date(const std::string& source, const std::vector<chat::JinjaLiteral>& literals) {
  const std::size_t at = source.find("date_string = ");
  if (at == std::string::npos) return {};
  for (const chat::JinjaLiteral& l : literals)
    if (l.position > at) return l.value;
  return {};
}

}  // namespace

std::optional<ChatTemplate> ChatTemplate::detect(const std::string& src) {
  std::optional<ChatTemplate> t;
  const std::vector<chat::JinjaLiteral> literals = chat::jinja_literals(src);
  if (has(src, "<|im_start|>")) {
    t = ChatTemplate(ChatTemplateKind::ChatML);
    ChatTemplateAccess::default_system(*t) = chatml_default_system(literals);
  } else if (has(src, "<|start_header_id|>") && has(src, "<|end_header_id|>")) {
    t = ChatTemplate(ChatTemplateKind::Llama3);
    for (const chat::JinjaLiteral& l : literals) {
      if (l.value.starts_with("Cutting Knowledge Date:")) {
        ChatTemplateAccess::knowledge_line(*t) = l.value;
        break;
      }
    }
    if (!ChatTemplateAccess::knowledge_line(*t).empty()) {
      // Llama-3.2 / 3.3 ask for today's date when the renderer offers strftime_now (transformers does).
      if (has(src, "strftime_now")) ChatTemplateAccess::today_date(*t) = true;
      else ChatTemplateAccess::date(*t) = llama3_date(src, literals);
    }
  } else if (has(src, "[INST]") && has(src, "<<SYS>>")) {
    t = ChatTemplate(ChatTemplateKind::Llama2);
  } else if (has(src, "<|user|>") && has(src, "<|assistant|>") && !has(src, "<|end|>")) {
    t = ChatTemplate(ChatTemplateKind::Zephyr);
  } else if (has(src, "### Instruction") && has(src, "### Response")) {
    t = ChatTemplate(ChatTemplateKind::Alpaca);
    ChatTemplateAccess::default_system(*t) = alpaca_preamble(literals);
    ChatTemplateAccess::alpaca_bos(*t) = has(src, "bos_token");
  }
  if (t) ChatTemplateAccess::source(*t) = src;
  return t;
}

}  // namespace engine
