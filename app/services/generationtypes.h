// Plain values that travel with a generation request and its result between the GUI and the
// worker thread (queued signals copy them, so they hold no pointers into either side).
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include "engine/generation_settings.h"

// Every knob of a generation request: the engine's own description (engine/generation_settings.h),
// whose field table every conversion below goes through. The app uses it as is, so a setting has one
// typed form between QML's map and the engine's SamplerParams.
using GenerationSettings = engine::GenerationSettings;

// What the Playground starts from: the table's defaults, with alternatives per token shown (the
// Playground is where they are inspected and swapped in; the CLI reports none unless asked).
GenerationSettings playgroundDefaults();
// What the Chat page starts from: longer replies than Playground probes, no alternatives (a chat
// shows text only, so the engine is not asked for them).
GenerationSettings chatDefaults();

// A map with any of the table's keys (from QML, a preset or a stored reply) over `base`: keys it
// does not name keep base's values, numbers are clamped into the field's accepted range, and stop
// strings may be a list or one string with one per line.
GenerationSettings settingsFromMap(const QVariantMap& map, const GenerationSettings& base = {});
// Every field under its key; stop strings as one string with one per line (what a text box shows).
QVariantMap settingsToMap(const GenerationSettings& s);
// The fields stored with a chat reply (the table's stored_with_reply ones), under the same keys.
QVariantMap settingsForReply(const GenerationSettings& s);
// For QML: key -> {key, kind ("integer", "real", "text", "lines"), default (the Playground's), min,
// max, uiMin, uiMax, step, label}, so the panel spells neither defaults nor ranges itself.
QVariantMap settingFieldsForQml();

// One alternative the model considered at a position, with its probability before sampling.
struct TokenAlternative {
  qint32 id = -1;
  QString text;
  double logprob = 0;
};

// One token as the inspector shows it: a generated token, or a piece of the tokenized prompt
// (then logprob is 0 and alternatives is empty). Generated tokens travel as these records from the
// worker to the Playground's TokenStreamModel, never as maps.
struct TokenRecord {
  qint32 id = -1;
  // The complete characters this token finished. A token that ends inside a multi-byte character
  // has the bytes so far held back and carried by the next token, so text is always valid UTF-8.
  QString text;
  double logprob = 0;
  QList<TokenAlternative> alternatives;  // most likely first
  bool special = false;                  // a control token (chat-template markup), not text; set for prompt pieces
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
