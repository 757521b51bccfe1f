// OpenAI-compatible bodies: request fields → prompt ids and GenerateParams; results → responses and SSE chunks.
#include "openaiapi.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>

#include <cmath>

#include "engine/chat_template.h"
#include "engine/tokenizer.h"

namespace {

ApiError bad(const QString& param, const QString& message) { return ApiError(400, message, param); }

double number(const QJsonObject& o, const char* key, double fallback, double lo, double hi) {
  const QJsonValue v = o.value(QLatin1String(key));
  if (v.isUndefined() || v.isNull()) return fallback;
  if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < lo || v.toDouble() > hi)
    throw bad(QLatin1String(key), QStringLiteral("'%1' must be a number in [%2, %3]").arg(QLatin1String(key)).arg(lo).arg(hi));
  return v.toDouble();
}

qint64 integer(const QJsonObject& o, const char* key, qint64 fallback, qint64 lo, qint64 hi) {
  const QJsonValue v = o.value(QLatin1String(key));
  if (v.isUndefined() || v.isNull()) return fallback;
  const double d = v.toDouble();
  if (!v.isDouble() || d != std::floor(d) || d < double(lo) || d > double(hi))
    throw bad(QLatin1String(key), QStringLiteral("'%1' must be a whole number in [%2, %3]").arg(QLatin1String(key)).arg(lo).arg(hi));
  return static_cast<qint64>(d);
}

QString textContent(const QJsonValue& content, int index) {
  const QString param = QStringLiteral("messages[%1].content").arg(index);
  if (content.isString()) return content.toString();
  if (!content.isArray()) throw bad(param, QStringLiteral("'%1' must be a string or an array of text parts").arg(param));
  QString text;
  for (const QJsonValue& part : content.toArray()) {
    const QJsonObject p = part.toObject();
    if (p.value(QLatin1String("type")).toString() != QLatin1String("text") || !p.value(QLatin1String("text")).isString())
      throw bad(param, QStringLiteral("only text parts ({\"type\": \"text\", \"text\": ...}) are supported in '%1'").arg(param));
    text += p.value(QLatin1String("text")).toString();
  }
  return text;
}

std::vector<int32_t> chatPrompt(const QJsonObject& o, const engine::Model& model, engine::GenerateParams& params) {
  const QJsonValue messagesValue = o.value(QLatin1String("messages"));
  if (!messagesValue.isArray() || messagesValue.toArray().isEmpty())
    throw bad(QStringLiteral("messages"), QStringLiteral("'messages' must be a non-empty array"));
  std::vector<engine::ChatMessage> messages;
  int i = 0;
  for (const QJsonValue& m : messagesValue.toArray()) {
    const QString role = m.toObject().value(QLatin1String("role")).toString();
    if (role != QLatin1String("system") && role != QLatin1String("user") && role != QLatin1String("assistant") &&
        role != QLatin1String("developer"))
      throw bad(QStringLiteral("messages[%1].role").arg(i),
                QStringLiteral("messages[%1].role must be system, developer, user or assistant").arg(i));
    const QString content = textContent(m.toObject().value(QLatin1String("content")), i);
    messages.push_back({role == QLatin1String("developer") ? "system" : role.toStdString(), content.toStdString()});
    ++i;
  }
  const engine::ChatTemplate& t = model.chat_template();
  for (const std::string& s : t.stop_strings()) params.stop.push_back(s);
  return engine::encode_chat(*model.tokenizer(), t.render(messages, /*add_generation_prompt=*/true), messages);
}

std::vector<int32_t> completionPrompt(const QJsonObject& o, const engine::Model& model) {
  QJsonValue p = o.value(QLatin1String("prompt"));
  const QString param = QStringLiteral("prompt");
  if (p.isArray()) {
    const QJsonArray a = p.toArray();
    if (!a.isEmpty() && a.first().isDouble()) {  // token ids
      std::vector<int32_t> ids;
      const int V = model.config().vocab_size;
      for (const QJsonValue& v : a) {
        const double d = v.toDouble(-1);
        if (!v.isDouble() || d != std::floor(d) || d < 0 || d >= V)
          throw bad(param, QStringLiteral("'prompt' token ids must be whole numbers in [0, %1)").arg(V));
        ids.push_back(static_cast<int32_t>(d));
      }
      return ids;
    }
    if (a.size() != 1 || !a.first().isString())
      throw bad(param, QStringLiteral("'prompt' must be a string, one string in an array, or token ids (batches of "
                                      "prompts: send one request each)"));
    p = a.first();
  }
  if (!p.isString()) throw bad(param, QStringLiteral("'prompt' must be a string"));
  return model.tokenizer()->encode(p.toString().toStdString());
}

QJsonArray tokenBytes(const std::string& bytes) {
  QJsonArray a;
  for (const unsigned char c : bytes) a.append(int(c));
  return a;
}

// OpenAI's chat logprobs: {"content": [{token, logprob, bytes, top_logprobs: [...]}]}.
QJsonObject chatLogprobs(const engine::GenerationResult& r, const engine::Tokenizer* tok) {
  QJsonArray content;
  for (const engine::GeneratedToken& t : r.tokens) {
    QJsonArray top;
    for (const engine::TokenLogprob& alt : t.top) {
      const std::string b = tok ? tok->token_bytes(alt.id) : std::string();
      top.append(QJsonObject{{QStringLiteral("token"), QString::fromUtf8(b.data(), qsizetype(b.size()))},
                             {QStringLiteral("logprob"), double(alt.logprob)},
                             {QStringLiteral("bytes"), tokenBytes(b)}});
    }
    content.append(QJsonObject{{QStringLiteral("token"), QString::fromUtf8(t.bytes.data(), qsizetype(t.bytes.size()))},
                               {QStringLiteral("logprob"), double(t.logprob)},
                               {QStringLiteral("bytes"), tokenBytes(t.bytes)},
                               {QStringLiteral("top_logprobs"), top}});
  }
  return {{QStringLiteral("content"), content}};
}

// The legacy completions logprobs: {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}.
QJsonObject completionLogprobs(const engine::GenerationResult& r, const engine::Tokenizer* tok) {
  QJsonArray tokens, logprobs, tops, offsets;
  int offset = 0;
  for (const engine::GeneratedToken& t : r.tokens) {
    const QString text = QString::fromUtf8(t.bytes.data(), qsizetype(t.bytes.size()));
    tokens.append(text);
    logprobs.append(double(t.logprob));
    QJsonObject top;
    for (const engine::TokenLogprob& alt : t.top) {
      const std::string b = tok ? tok->token_bytes(alt.id) : std::string();
      top.insert(QString::fromUtf8(b.data(), qsizetype(b.size())), double(alt.logprob));
    }
    tops.append(top);
    offsets.append(offset);
    offset += int(t.bytes.size());
  }
  return {{QStringLiteral("tokens"), tokens},
          {QStringLiteral("token_logprobs"), logprobs},
          {QStringLiteral("top_logprobs"), tops},
          {QStringLiteral("text_offset"), offsets}};
}

}  // namespace

QJsonObject apiErrorBody(const ApiError& e) {
  return {{QStringLiteral("error"), QJsonObject{{QStringLiteral("message"), e.message},
                                                {QStringLiteral("type"), e.type},
                                                {QStringLiteral("param"), e.param.isEmpty() ? QJsonValue() : e.param},
                                                {QStringLiteral("code"), QJsonValue()}}}};
}

ApiGeneration parseGenerationRequest(const QByteArray& body, bool chat, const engine::Model& model, int slotCapacity,
                                     uint64_t randomSeed) {
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
  if (parseError.error != QJsonParseError::NoError || !doc.isObject())
    throw ApiError(400, QStringLiteral("the request body is not a JSON object: %1").arg(parseError.errorString()));
  if (!model.tokenizer()) throw ApiError(500, QStringLiteral("the served model has no tokenizer"), {}, "server_error");
  const QJsonObject o = doc.object();
  if (o.contains(QLatin1String("model")) && !o.value(QLatin1String("model")).isString())
    throw bad(QStringLiteral("model"), QStringLiteral("'model' must be a string"));

  ApiGeneration g;
  g.chat = chat;
  const QJsonValue stream = o.value(QLatin1String("stream"));
  if (!stream.isUndefined() && !stream.isNull() && !stream.isBool())
    throw bad(QStringLiteral("stream"), QStringLiteral("'stream' must be true or false"));
  g.stream = stream.toBool(false);
  g.n = int(integer(o, "n", 1, 1, 16));

  engine::SamplerParams& s = g.params.sampler;
  s.temperature = float(number(o, "temperature", 1.0, 0.0, 2.0));
  s.top_p = float(number(o, "top_p", 1.0, 0.0, 1.0));
  s.top_k = 0;
  s.min_p = 0;
  s.repeat_penalty = 1.0f;
  s.repeat_last_n = -1;  // OpenAI's penalties count every token generated so far
  s.frequency_penalty = float(number(o, "frequency_penalty", 0.0, -2.0, 2.0));
  s.presence_penalty = float(number(o, "presence_penalty", 0.0, -2.0, 2.0));
  const qint64 seed = integer(o, "seed", -1, INT64_MIN / 2, INT64_MAX / 2);
  s.seed = seed < 0 ? randomSeed : uint64_t(seed);
  const QJsonValue bias = o.value(QLatin1String("logit_bias"));
  if (!bias.isUndefined() && !bias.isNull()) {
    if (!bias.isObject()) throw bad(QStringLiteral("logit_bias"), QStringLiteral("'logit_bias' must be an object"));
    const QJsonObject b = bias.toObject();
    for (auto it = b.begin(); it != b.end(); ++it) {
      bool ok = false;
      const qlonglong id = it.key().toLongLong(&ok);
      if (!ok || id < 0 || id >= model.config().vocab_size)
        throw bad(QStringLiteral("logit_bias"),
                  QStringLiteral("logit_bias key '%1' is not a token id of this model").arg(it.key()));
      if (!it.value().isDouble() || it.value().toDouble() < -100 || it.value().toDouble() > 100)
        throw bad(QStringLiteral("logit_bias"), QStringLiteral("logit_bias values must be numbers in [-100, 100]"));
      s.logit_bias.push_back({int32_t(id), float(it.value().toDouble())});
    }
  }

  const QJsonValue stop = o.value(QLatin1String("stop"));
  if (stop.isString()) {
    g.params.stop.push_back(stop.toString().toStdString());
  } else if (stop.isArray()) {
    if (stop.toArray().size() > 4) throw bad(QStringLiteral("stop"), QStringLiteral("'stop' takes at most 4 strings"));
    for (const QJsonValue& v : stop.toArray()) {
      if (!v.isString()) throw bad(QStringLiteral("stop"), QStringLiteral("'stop' must be a string or an array of strings"));
      g.params.stop.push_back(v.toString().toStdString());
    }
  } else if (!stop.isUndefined() && !stop.isNull()) {
    throw bad(QStringLiteral("stop"), QStringLiteral("'stop' must be a string or an array of strings"));
  }

  if (chat) {
    const QJsonValue lp = o.value(QLatin1String("logprobs"));
    if (!lp.isUndefined() && !lp.isNull() && !lp.isBool())
      throw bad(QStringLiteral("logprobs"), QStringLiteral("'logprobs' must be true or false"));
    const int top = int(integer(o, "top_logprobs", 0, 0, 20));
    if (o.contains(QLatin1String("top_logprobs")) && !lp.toBool(false))
      throw bad(QStringLiteral("top_logprobs"), QStringLiteral("'top_logprobs' needs 'logprobs': true"));
    g.logprobs = lp.toBool(false) ? top : -1;
  } else {
    g.logprobs = int(integer(o, "logprobs", -1, 0, 20));
  }
  g.params.top_logprobs = std::max(0, g.logprobs);

  g.prompt = chat ? chatPrompt(o, model, g.params) : completionPrompt(o, model);
  if (g.prompt.empty()) throw bad(chat ? QStringLiteral("messages") : QStringLiteral("prompt"), QStringLiteral("the prompt is empty"));
  const qint64 room = qint64(slotCapacity) - qint64(g.prompt.size());
  if (room < 1)
    throw bad(chat ? QStringLiteral("messages") : QStringLiteral("prompt"),
              QStringLiteral("the prompt has %1 tokens; this server's context holds %2").arg(g.prompt.size()).arg(slotCapacity));
  const char* maxKey = chat && o.contains(QLatin1String("max_completion_tokens")) ? "max_completion_tokens" : "max_tokens";
  g.params.max_tokens = int(integer(o, maxKey, chat ? room : std::min<qint64>(16, room), 0, room));
  // llama.cpp's server extension, for benchmarks that need replies of a fixed length.
  const QJsonValue ignoreEos = o.value(QLatin1String("ignore_eos"));
  if (!ignoreEos.isUndefined() && !ignoreEos.isNull() && !ignoreEos.isBool())
    throw bad(QStringLiteral("ignore_eos"), QStringLiteral("'ignore_eos' must be true or false"));
  g.params.stop_at_eos = !ignoreEos.toBool(false);
  return g;
}

QString apiFinishReason(engine::FinishReason reason) {
  switch (reason) {
    case engine::FinishReason::Length:
    case engine::FinishReason::ContextFull: return QStringLiteral("length");
    default: return QStringLiteral("stop");
  }
}

QJsonObject generationResponse(const ApiGeneration& request, const QString& id, const QString& modelName,
                               qint64 created, const std::vector<engine::GenerationResult>& results,
                               const engine::Tokenizer* tokenizer, const QSet<int>& filtered) {
  QJsonArray choices;
  qint64 completionTokens = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const engine::GenerationResult& r = results[i];
    completionTokens += r.stats.generated_tokens;
    const QString text = QString::fromUtf8(r.text.data(), qsizetype(r.text.size()));
    QJsonObject choice{{QStringLiteral("index"), int(i)},
                       {QStringLiteral("finish_reason"),
                        filtered.contains(int(i)) ? QStringLiteral("content_filter") : apiFinishReason(r.finish)}};
    if (request.chat)
      choice.insert(QStringLiteral("message"),
                    QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")}, {QStringLiteral("content"), text}});
    else
      choice.insert(QStringLiteral("text"), text);
    if (request.logprobs >= 0)
      choice.insert(QStringLiteral("logprobs"), request.chat ? chatLogprobs(r, tokenizer) : completionLogprobs(r, tokenizer));
    else
      choice.insert(QStringLiteral("logprobs"), QJsonValue());
    choices.append(choice);
  }
  const qint64 promptTokens = qint64(request.prompt.size());
  return {{QStringLiteral("id"), id},
          {QStringLiteral("object"), request.chat ? QStringLiteral("chat.completion") : QStringLiteral("text_completion")},
          {QStringLiteral("created"), created},
          {QStringLiteral("model"), modelName},
          {QStringLiteral("choices"), choices},
          {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), promptTokens},
                                                {QStringLiteral("completion_tokens"), completionTokens},
                                                {QStringLiteral("total_tokens"), promptTokens + completionTokens}}}};
}

QJsonObject streamChunk(const ApiGeneration& request, const QString& id, const QString& modelName, qint64 created,
                        int index, const QString& text, const QString& finishReason, bool first) {
  QJsonObject choice{{QStringLiteral("index"), index},
                     {QStringLiteral("finish_reason"), finishReason.isEmpty() ? QJsonValue() : QJsonValue(finishReason)}};
  if (request.chat) {
    QJsonObject delta;
    if (first) delta.insert(QStringLiteral("role"), QStringLiteral("assistant"));
    if (!text.isEmpty() || first) delta.insert(QStringLiteral("content"), text);
    choice.insert(QStringLiteral("delta"), delta);
  } else {
    choice.insert(QStringLiteral("text"), text);
  }
  const QJsonObject chunk{
      {QStringLiteral("id"), id},
      {QStringLiteral("object"), request.chat ? QStringLiteral("chat.completion.chunk") : QStringLiteral("text_completion")},
      {QStringLiteral("created"), created},
      {QStringLiteral("model"), modelName},
      {QStringLiteral("choices"), QJsonArray{choice}}};
  return chunk;
}

QByteArray streamEvent(const ApiGeneration& request, const QString& id, const QString& modelName, qint64 created,
                       int index, const QString& text, const QString& finishReason, bool first) {
  return "data: " +
         QJsonDocument(streamChunk(request, id, modelName, created, index, text, finishReason, first))
             .toJson(QJsonDocument::Compact) +
         "\n\n";
}

QByteArray streamDone() { return "data: [DONE]\n\n"; }
