// Plain values that travel with a generation request and its result between the GUI and the
// worker thread (queued signals copy them, so they hold no pointers into either side).
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVariantMap>

// Every knob of the engine's sampler chain (engine/sampler.h) plus the generator's options.
// Defaults match what the Playground shows after "Reset to defaults".
struct GenerationSettings {
  int maxTokens = 128;
  double temperature = 0.8;       // <= 0: greedy
  int topK = 40;                  // <= 0: off
  double topP = 0.95;             // >= 1: off
  double minP = 0.05;             // <= 0: off
  double repeatPenalty = 1.0;     // 1: off
  int repeatLastN = 64;           // penalty window in tokens; 0: off, -1: whole history
  double frequencyPenalty = 0.0;  // 0: off
  double presencePenalty = 0.0;   // 0: off
  qint64 seed = -1;               // < 0: a fresh random seed per request
  QStringList stop;               // generation ends before the first of these that appears
  // One "id:bias" or "text:bias" per line; text is tokenized and every token of it gets the bias.
  // Parsed on the worker, which owns the tokenizer (see logitbias.h).
  QString logitBias;
  int topLogprobs = 5;            // alternatives reported per generated token (0: none)

  // From QML: a JS object with any of the field names above; missing keys keep the defaults.
  static GenerationSettings fromVariantMap(const QVariantMap& map);
};

// One alternative the model considered at a position, with its probability before sampling.
struct TokenAlternative {
  qint32 id = -1;
  QString text;
  double logprob = 0;
};

// One token as the inspector shows it: a generated token, or a piece of the tokenized prompt
// (then logprob is 0 and alternatives is empty).
struct TokenRecord {
  qint32 id = -1;
  // The complete characters this token finished. A token that ends inside a multi-byte character
  // has the bytes so far held back and carried by the next token, so text is always valid UTF-8.
  QString text;
  double logprob = 0;
  QList<TokenAlternative> alternatives;  // most likely first
  bool special = false;  // a control token (chat-template markup), not text; set for prompt pieces

  QVariantMap toVariantMap() const;  // roles for QML: id, text, logprob, prob, alternatives
};

struct GenerationStats {
  int promptTokens = 0;
  int generatedTokens = 0;
  double prefillTokensPerSecond = 0;
  double decodeTokensPerSecond = 0;
  double timeToFirstTokenMs = 0;
  QString finishReason;  // the engine's name: "length", "eos", "stop", "cancelled", "context_full"
  quint64 seed = 0;

  // "24 tokens · 310.2 tok/s · first token 12 ms · stopped: length"
  QString summary() const;
  QVariantMap toVariantMap() const;
};

// Token ids as QML hands them over (a list of numbers).
QList<int> tokenIdsFrom(const QVariantList& ids);

Q_DECLARE_METATYPE(GenerationSettings)
Q_DECLARE_METATYPE(GenerationStats)
Q_DECLARE_METATYPE(TokenAlternative)
Q_DECLARE_METATYPE(TokenRecord)
