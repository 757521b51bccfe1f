// The OpenAI-compatible request and response bodies of /v1/completions and /v1/chat/completions.
//
// Pure functions (no sockets, no threads) so that every field's handling is tested on its own and the request
// parser can be fuzzed. A request is turned into token ids and the engine's GenerateParams; results are turned
// into the response objects and the server-sent-event chunks OpenAI's clients read.
//
// Sampling defaults follow OpenAI's, not the app's: temperature 1, top_p 1, and no top-k or min-p cut (a client
// that sends nothing gets plain sampling from the model's distribution). max_tokens defaults to what is left of the
// slot's context after the prompt.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QSet>
#include <QString>

#include <stdexcept>
#include <vector>

#include "engine/generator.h"
#include "engine/model.h"

// A request the API refuses: the HTTP status and OpenAI's error object fields.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const QString& message, const QString& param = {},
           const QString& type = QStringLiteral("invalid_request_error"))
      : std::runtime_error(message.toStdString()), status(status), message(message), param(param), type(type) {}
  int status;
  QString message, param, type;
};

// {"error": {"message", "type", "param", "code"}} as OpenAI sends it.
QJsonObject apiErrorBody(const ApiError& e);

struct ApiGeneration {
  bool chat = false;
  bool stream = false;
  int n = 1;                      // choices; choice i samples with seed params.sampler.seed + i
  std::vector<int32_t> prompt;    // the rendered and encoded prompt
  engine::GenerateParams params;  // max_tokens resolved, stop strings (the chat template's too)
  int logprobs = -1;              // -1: none; else how many alternatives per token (0: only the chosen one)
};

// Parses a request body. `slotCapacity`: tokens a slot holds (prompt + reply); `randomSeed` is used when the
// request gives none. Throws ApiError (400 with the offending parameter named; 400 for a prompt longer than the
// context).
ApiGeneration parseGenerationRequest(const QByteArray& body, bool chat, const engine::Model& model, int slotCapacity,
                                     uint64_t randomSeed);

// OpenAI's finish_reason: "stop" (end of text, a stop string, cancelled) or "length" (max_tokens, context full).
QString apiFinishReason(engine::FinishReason reason);

// The whole (non-streaming) response: one choice per result; `filtered` choices end with "content_filter".
QJsonObject generationResponse(const ApiGeneration& request, const QString& id, const QString& modelName,
                               qint64 created, const std::vector<engine::GenerationResult>& results,
                               const engine::Tokenizer* tokenizer, const QSet<int>& filtered = {});

// One chunk of a stream (the JSON object both the server-sent events and the WebSocket messages carry): `text` new for choice `index`, and its finish reason when
// the choice has ended ("" otherwise). For chat, the first chunk of a choice carries role "assistant".
QJsonObject streamChunk(const ApiGeneration& request, const QString& id, const QString& modelName, qint64 created,
                        int index, const QString& text, const QString& finishReason, bool first);
// The chunk as one server-sent event: "data: {...}\n\n".
QByteArray streamEvent(const ApiGeneration& request, const QString& id, const QString& modelName, qint64 created,
                       int index, const QString& text, const QString& finishReason, bool first);
// The stream's last event.
QByteArray streamDone();
