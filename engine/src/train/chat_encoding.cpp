// Encoding a chat data set with the model's template: ids plus the assistant mask SFT trains on
// (see engine/train/chat_dataset.h; the template and the mask rule live in engine/chat_template.h).
#include "engine/train/chat_dataset.h"

namespace engine {

std::vector<EncodedChat> encode_chat_dataset(const ChatDataset& data, const Tokenizer& tokenizer,
                                             const ChatTemplate& tmpl) {
  std::vector<EncodedChat> out;
  out.reserve(data.examples.size());
  for (const ChatExample& ex : data.examples) {
    EncodedChat e;
    const RenderedChat rendered = tmpl.render(ex.messages, /*add_generation_prompt=*/false);
    e.ids = encode_chat(tokenizer, rendered, ex.messages, &e.assistant_mask);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace engine
