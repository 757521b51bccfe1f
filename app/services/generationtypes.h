// Plain values that travel with a generation request and its result between the GUI and the
// worker thread (queued signals copy them, so they hold no pointers into either side).
#pragma once

#include <QMetaType>
#include <QString>

struct GenerationSettings {
  int maxTokens = 128;
  double temperature = 0.8;  // <= 0: greedy
  int topK = 40;             // <= 0: off
  double topP = 0.95;        // >= 1: off
  qint64 seed = -1;          // < 0: a fresh random seed per request
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
};

Q_DECLARE_METATYPE(GenerationSettings)
Q_DECLARE_METATYPE(GenerationStats)
