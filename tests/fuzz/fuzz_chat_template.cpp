// libFuzzer target: chat template detection (engine/src/chat/chat_detect.cpp) and rendering.
// Input: one flags byte (bit 0: add_generation_prompt, bits 1-3: which family renders when detection
// finds none), then NUL-separated parts: the Jinja source, the bos text, the eos text, and up to 16
// messages, each a role byte (0 system, 1 user, 2 assistant, anything else an unknown role spelled by
// the byte) followed by its content.
// detect() must return a template or nullopt and never throw; render() must never throw (chat_render.cpp);
// every piece must point at a real message; encode_chat must give one mask entry per id.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/chat_template.h"
#include "engine/tokenizer.h"
#include "fuzz_common.h"

namespace {

using engine::ChatMessage;
using engine::ChatTemplate;
using engine::ChatTemplateKind;

constexpr size_t k_max_messages = 16;

std::vector<ChatMessage> messages_of(const std::vector<std::string_view>& parts, size_t first) {
  std::vector<ChatMessage> out;
  for (size_t i = first; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    ChatMessage m;
    const unsigned char role = static_cast<unsigned char>(parts[i][0]);
    m.role = role == 0 ? "system" : role == 1 ? "user" : role == 2 ? "assistant" : std::string(1, char(role));
    m.content = std::string(parts[i].substr(1));
    out.push_back(std::move(m));
  }
  return out;
}

volatile uint64_t g_sink = 0;

void render_and_encode(const ChatTemplate& t, const std::vector<ChatMessage>& messages, bool gen) {
  const engine::RenderedChat chat = t.render(messages, gen);
  const int n = static_cast<int>(messages.size());
  for (const engine::ChatPiece& p : chat.pieces) {
    if (p.message_index < -1 || p.message_index >= n || p.ends_message < -1 || p.ends_message >= n)
      __builtin_trap();
    if (p.markup != (p.message_index == -1)) __builtin_trap();  // a piece is markup or one message's content
  }
  g_sink = g_sink + chat.text().size() + t.stop_strings().size() + t.name().size();
  std::vector<uint8_t> mask;
  const std::vector<int32_t> ids = engine::encode_chat(wb_fuzz::fixture_tokenizer(), chat, messages, &mask);
  if (mask.size() != ids.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const bool gen = flags & 1;
  const auto parts = wb_fuzz::split_parts(wb_fuzz::as_text(data + 1, size - 1), 3 + k_max_messages);
  const std::string source(parts[0]);
  const std::vector<ChatMessage> messages = messages_of(parts, 3);

  std::optional<ChatTemplate> t = ChatTemplate::detect(source);
  if (!t) t = ChatTemplate(static_cast<ChatTemplateKind>(((flags >> 1) & 7) % 6));
  render_and_encode(*t, messages, gen);
  t->set_special_tokens(std::string(parts[1]), std::string(parts[2]));
  render_and_encode(*t, messages, gen);
  if (const std::optional<ChatTemplate> named = ChatTemplate::from_name(source)) render_and_encode(*named, messages, gen);
  return 0;
}
