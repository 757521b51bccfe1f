// AppController: the Playground's chat mode. The Playground sends a system prompt and a few turns;
// the worker renders them with the model's chat template (special tokens only from its markup, as
// the Chat page does) and the reply streams per token into the Playground's lanes ("main", "A",
// "B"), with probabilities and alternatives, exactly as a raw completion does.
#include "appcontroller.h"

#include "engineworker.h"

namespace {

// [{role, content}] from QML. An empty system prompt is left out (the Chat page does the same).
QList<ChatTurn> turnsFrom(const QVariantList& list) {
  QList<ChatTurn> turns;
  for (const QVariant& v : list) {
    const QVariantMap m = v.toMap();
    const ChatTurn t{m.value(QStringLiteral("role")).toString(), m.value(QStringLiteral("content")).toString()};
    if (t.role == QLatin1String("system") && t.content.trimmed().isEmpty()) continue;
    turns << t;
  }
  return turns;
}

}  // namespace

void AppController::connectPlaygroundChat() {
  connect(this, &AppController::playgroundChatRequested, m_worker, &EngineWorker::generateChatTokens,
          Qt::QueuedConnection);
  connect(this, &AppController::tokenizeChatRequested, m_worker, &EngineWorker::tokenizeChat, Qt::QueuedConnection);
}

void AppController::generateChatWith(const QVariantList& turns, const QVariantMap& settings, const QString& lane) {
  continueChatWith(turns, {}, settings, lane);
}

void AppController::continueChatWith(const QVariantList& turns, const QVariantList& forcedIds,
                                     const QVariantMap& settings, const QString& lane) {
  if (m_generating || m_shutDown) return;
  // The Chat page's lane is its own; a Playground run never writes into a chat.
  beginGeneration(lane == QLatin1String("chat") ? QStringLiteral("main") : lane);
  Q_EMIT playgroundChatRequested(turnsFrom(turns), tokenIdsFrom(forcedIds),
                                 settingsFromMap(settings, playgroundDefaults()), m_worker->issueGenerationTicket());
}

void AppController::tokenizeChat(const QVariantList& turns) {
  if (m_shutDown) return;
  Q_EMIT tokenizeChatRequested(turnsFrom(turns), ++m_tokenizeRequest);
}
