// Stands in for AppController + EngineWorker in ChatController tests: records what the controller asks to
// generate or stop, and feeds back reply text and the end of a reply as the worker would.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include "services/chatcontroller.h"

class FakeChatEngine : public QObject {
 public:
  explicit FakeChatEngine(ChatController* chat) : m_chat(chat) {
    connect(chat, &ChatController::generateRequested, this,
            [this](const QList<ChatTurn>& turns, const QString& continuation, const GenerationSettings& settings) {
              requests << Request{turns, continuation, settings};
            });
    connect(chat, &ChatController::stopRequested, this, [this] { ++stops; });
  }
  struct Request {
    QList<ChatTurn> turns;
    QString continuation;
    GenerationSettings settings;
  };
  void piece(const QString& text) { m_chat->handleText(text); }
  // The end of the reply: `tokens` generated, with the sampler seed `seed` (0: 1234, as a worker reports the
  // seed it drew for a request that asked for a random one).
  void finish(const QString& reason = QStringLiteral("eos"), int tokens = 3, quint64 seed = 0) {
    GenerationStats s;
    s.promptTokens = 10;
    s.generatedTokens = tokens;
    s.decodeTokensPerSecond = 21.5;
    s.timeToFirstTokenMs = 42;
    s.finishReason = reason;
    s.seed = seed ? seed : 1234;
    m_chat->handleFinished(s);
  }
  // One whole reply.
  void reply(const QString& text) {
    piece(text);
    finish();
  }
  QList<Request> requests;
  int stops = 0;

 private:
  ChatController* m_chat;
};

// "role:content" of each turn, for comparing what the controller sent.
inline QStringList turnTexts(const QList<ChatTurn>& turns) {
  QStringList out;
  for (const ChatTurn& t : turns) out << t.role + QLatin1Char(':') + t.content;
  return out;
}
