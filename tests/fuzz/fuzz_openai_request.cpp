// libFuzzer target: the OpenAI request bodies of /v1/completions and /v1/chat/completions
// (app/services/server/openaiapi: parseGenerationRequest), the server's code that reads what a client sends after
// the HTTP parser. It uses QJsonDocument, so this target links Qt6::Core (Debian's, not instrumented: only our
// code is checked by the sanitizers) and is built only when the fuzz build finds Qt. Input: one flags byte (bit 0:
// chat), then the body.
//
// Oracles beyond "no crash":
//   - the only exception is ApiError, status 400 with a message (the server catches nothing else: any other
//     exception would end the server process);
//   - an accepted request is one the scheduler can run: n in [1, 16], a non-empty prompt of ids inside the
//     vocabulary, prompt + max_tokens within the slot, sampling parameters inside their documented ranges, at most
//     4 stop strings of the client's plus the chat template's;
//   - the response and stream bodies for it serialise (one fake token per choice).
#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/chat_template.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "services/server/openaiapi.h"

namespace {

constexpr int kSlotCapacity = 64;

const engine::Model& model() {
  // A tiny Qwen2 with its byte-level BPE vocabulary: chat requests render through a real template.
  static const std::unique_ptr<engine::Model> m =
      engine::load_model(std::string(WB_TEST_DATA_DIR) + "/gguf/tiny-qwen2-q8_0.gguf");
  return *m;
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool chat = data[0] & 1;
  const QByteArray body = QByteArray::fromRawData(reinterpret_cast<const char*>(data) + 1, qsizetype(size - 1));
  const engine::Model& m = model();
  ApiGeneration g;
  try {
    g = parseGenerationRequest(body, chat, m, kSlotCapacity, 42);
  } catch (const ApiError& e) {
    check(e.status == 400 && !e.message.isEmpty());
    return 0;
  }
  const int V = m.config().vocab_size;
  check(g.chat == chat && g.n >= 1 && g.n <= 16);
  check(!g.prompt.empty());
  for (const int32_t id : g.prompt) check(id >= 0 && id < V);
  check(g.params.max_tokens >= 0 && size_t(g.params.max_tokens) + g.prompt.size() <= size_t(kSlotCapacity));
  const engine::SamplerParams& s = g.params.sampler;
  check(s.temperature >= 0 && s.temperature <= 2 && s.top_p >= 0 && s.top_p <= 1);
  check(std::isfinite(s.frequency_penalty) && std::abs(s.frequency_penalty) <= 2);
  check(std::isfinite(s.presence_penalty) && std::abs(s.presence_penalty) <= 2);
  for (const auto& bias : s.logit_bias) check(bias.first >= 0 && bias.first < V && std::abs(bias.second) <= 100);
  check(g.params.stop.size() <= 4 + (chat ? m.chat_template().stop_strings().size() : 0));
  check(g.logprobs >= -1 && g.logprobs <= 20 && g.params.top_logprobs == std::max(0, g.logprobs));

  std::vector<engine::GenerationResult> results(size_t(g.n));
  for (engine::GenerationResult& r : results) {
    engine::GeneratedToken t;
    t.id = g.prompt.front();
    t.bytes = m.tokenizer()->token_bytes(t.id);
    r.tokens.push_back(t);
    r.text = t.bytes;
    r.stats.generated_tokens = 1;
  }
  const QJsonObject response = generationResponse(g, QStringLiteral("id"), QStringLiteral("m"), 0, results, m.tokenizer());
  check(response.value(QStringLiteral("choices")).toArray().size() == g.n);
  const QByteArray event = streamEvent(g, QStringLiteral("id"), QStringLiteral("m"), 0, 0, QStringLiteral("x"), {}, true);
  check(event.startsWith("data: {") && event.endsWith("}\n\n"));
  return 0;
}
