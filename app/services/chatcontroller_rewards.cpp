// ChatController: reward scores of replies, kept in memory for the session (see chatcontroller.h).
#include "chatcontroller.h"

namespace {

// A fingerprint of what a score is of: the conversation and the reply. fold() adds one turn; a reply's
// fingerprint is its conversation's folded with the reply as an assistant turn, so that refreshScores can
// fold the chat's rows once, top to bottom.
size_t fold(size_t seed, const QString& role, const QString& content) { return qHashMulti(seed, role, content); }

size_t fingerprintOf(const QList<ChatTurn>& prompt, const QString& reply) {
  size_t h = 0;
  for (const ChatTurn& t : prompt) h = fold(h, t.role, t.content);
  return fold(h, QStringLiteral("assistant"), reply);
}

// A score as the views read it (ChatController::rewardScores).
QVariantMap scoreMap(double score, bool pending, const QString& error, int turnsLeftOut) {
  QString text;
  if (!pending && error.isEmpty())
    text = (score >= 0 ? QStringLiteral("+") : QString()) + QString::number(score, 'f', 2);
  return {{QStringLiteral("score"), score},
          {QStringLiteral("text"), text},
          {QStringLiteral("pending"), pending},
          {QStringLiteral("error"), error},
          {QStringLiteral("turnsLeftOut"), turnsLeftOut}};
}

}  // namespace

void ChatController::setRewardModel(const QString& name) {
  if (name == m_rewardModel) return;
  m_rewardModel = name;
  m_rewardScores.clear();
  m_scoreRequests.clear();  // answers still on their way are another model's
  Q_EMIT rewardModelChanged();
  refreshScores(true);
  scoreComparison();
}

bool ChatController::scoreLastReply() {
  for (qsizetype row = m_messages.rowCount() - 1; row >= 0; --row)
    if (m_messages.rowAt(row).message.role == QLatin1String("assistant"))
      return scoreMessage(m_messages.rowAt(row).message.id);
  setError(tr("There is no reply to score yet."));
  return false;
}

bool ChatController::scoreMessage(qint64 messageId) {
  if (m_rewardModel.isEmpty()) {
    setError(tr("Choose a reward model first (Reward model…, under the list of chats)."));
    return false;
  }
  const int row = m_messages.rowOf(messageId);
  if (row < 0) {
    setError(tr("That message is not in the open chat."));
    return false;
  }
  const StoredMessage& reply = m_messages.rowAt(row).message;
  if (reply.role != QLatin1String("assistant")) {
    setError(tr("Only the model's replies can be scored."));
    return false;
  }
  if (m_generating && reply.id == m_replyId) {
    setError(tr("This reply is still being written; score it when it has finished."));
    return false;
  }
  if (reply.content.trimmed().isEmpty()) {
    setError(tr("This reply is empty, so there is nothing to score."));
    return false;
  }
  if (row == 0 || m_messages.rowAt(row - 1).message.role != QLatin1String("user")) {
    setError(tr("This reply does not answer a message of yours, so the reward model has nothing to score it on."));
    return false;
  }
  QList<ChatTurn> prompt;
  if (!m_chat.systemPrompt.trimmed().isEmpty()) prompt << ChatTurn{QStringLiteral("system"), m_chat.systemPrompt};
  for (int i = 0; i < row; ++i)
    prompt << ChatTurn{m_messages.rowAt(i).message.role, m_messages.rowAt(i).message.content};
  requestScore(reply.id, prompt, reply.content);
  return true;
}

void ChatController::scoreComparison() {
  if (m_rewardModel.isEmpty() || !comparing()) return;
  requestScore(m_compare.messageId, m_compare.prompt, m_compare.original);
  if (!m_compareInFlight && !m_compare.alternative.trimmed().isEmpty())
    requestScore(kCompareB, m_compare.prompt, m_compare.alternative);
}

void ChatController::requestScore(qint64 key, const QList<ChatTurn>& prompt, const QString& reply) {
  const size_t fingerprint = fingerprintOf(prompt, reply);
  const auto kept = m_rewardScores.constFind(key);
  // A score of this text is kept or on its way; a failed one is tried again.
  if (kept != m_rewardScores.cend() && kept->fingerprint == fingerprint && kept->error.isEmpty()) return;
  RewardEntry entry;
  entry.fingerprint = fingerprint;
  entry.pending = true;
  m_rewardScores.insert(key, entry);
  const quint64 requestId = ++m_nextScoreRequest;
  m_scoreRequests.insert(requestId, {key, fingerprint});
  refreshScores(true);
  // May answer at once (a scorer without a model): the entry above is in place for that.
  Q_EMIT scoreRequested(requestId, prompt, reply);
}

void ChatController::handleScore(quint64 requestId, double score, int turnsLeftOut) {
  if (!m_scoreRequests.contains(requestId)) return;  // asked of a reward model since replaced
  const auto request = m_scoreRequests.take(requestId);
  auto entry = m_rewardScores.find(request.first);
  // A newer request for this message (another text, another conversation) is the one that counts.
  if (entry == m_rewardScores.end() || entry->fingerprint != request.second) return;
  entry->pending = false;
  entry->score = score;
  entry->turnsLeftOut = turnsLeftOut;
  entry->error.clear();
  refreshScores(true);
}

void ChatController::handleScoreFailed(quint64 requestId, const QString& message) {
  if (!m_scoreRequests.contains(requestId)) return;  // asked of a reward model since replaced
  const auto request = m_scoreRequests.take(requestId);
  auto entry = m_rewardScores.find(request.first);
  // A newer request for this message (another text, another conversation) is the one that counts.
  if (entry == m_rewardScores.end() || entry->fingerprint != request.second) return;
  entry->pending = false;
  entry->error = message;
  refreshScores(true);
  setError(tr("The reply could not be scored: %1").arg(message));
}

QVariantMap ChatController::scoreEntry(qint64 key, const QList<ChatTurn>& prompt, const QString& reply) const {
  const auto entry = m_rewardScores.constFind(key);
  if (entry == m_rewardScores.cend() || entry->fingerprint != fingerprintOf(prompt, reply)) return {};
  return scoreMap(entry->score, entry->pending, entry->error, entry->turnsLeftOut);
}

QVariantMap ChatController::compareOriginalScore() const {
  return comparing() ? scoreEntry(m_compare.messageId, m_compare.prompt, m_compare.original) : QVariantMap{};
}

QVariantMap ChatController::compareAlternativeScore() const {
  return comparing() && !m_compareInFlight ? scoreEntry(kCompareB, m_compare.prompt, m_compare.alternative)
                                           : QVariantMap{};
}

void ChatController::refreshScores(bool notify) {
  QVariantMap view;
  if (!m_rewardScores.isEmpty()) {
    // The conversation above each row, folded as fingerprintOf folds a score's prompt.
    size_t above = 0;
    if (!m_chat.systemPrompt.trimmed().isEmpty()) above = fold(above, QStringLiteral("system"), m_chat.systemPrompt);
    for (const ChatMessageModel::Row& row : m_messages.rows()) {
      const StoredMessage& m = row.message;
      const auto entry = m_rewardScores.constFind(m.id);
      if (entry != m_rewardScores.cend() && !row.streaming &&
          entry->fingerprint == fold(above, QStringLiteral("assistant"), m.content))
        view.insert(QString::number(m.id), scoreMap(entry->score, entry->pending, entry->error, entry->turnsLeftOut));
      above = fold(above, m.role, m.content);
    }
  }
  if (view == m_scoreView && !notify) return;
  m_scoreView = view;
  Q_EMIT rewardScoresChanged();
}
