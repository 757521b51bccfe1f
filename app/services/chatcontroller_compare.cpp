// ChatController: Compare, a second reply beside the last one and the user's pick between them,
// saved as a preference pair (see chatcontroller.h).
#include <QRandomGenerator>

#include "chatcontroller.h"
#include "store/chatstore.h"
#include "store/database.h"
#include "store/preferencestore.h"

namespace {

const QString kSeed = QStringLiteral("seed");

// The one-line summary under a reply, without what only the chat view needs.
QVariantMap statsForStore(const GenerationStats& stats) {
  QVariantMap map = stats.toVariantMap();
  map.remove(QStringLiteral("summary"));
  return map;
}

}  // namespace

QString ChatController::compareOriginalStats() const { return ChatMessageModel::statsText(m_compare.originalStats); }

QString ChatController::compareAlternativeStats() const {
  return ChatMessageModel::statsText(m_compare.alternativeStats);
}

bool ChatController::refuseWhileComparing() {
  if (!comparing()) return false;
  setError(tr("Pick the better of the two replies, or dismiss the comparison, first."));
  return true;
}

bool ChatController::compareLastReply() {
  if (m_messages.rowCount() == 0) {
    setError(tr("There is no reply to compare yet."));
    return false;
  }
  return compareReply(m_messages.rows().constLast().message.id);
}

bool ChatController::compareReply(qint64 messageId) {
  if (!m_preferences) {
    setError(tr("Preference pairs cannot be saved in this window, so replies cannot be compared."));
    return false;
  }
  if (comparing()) {
    setError(tr("A comparison is already open: pick the better reply or dismiss it."));
    return false;
  }
  if (m_generating) {
    setError(tr("A reply is still being written. Stop it (Esc) or wait, then compare."));
    return false;
  }
  const int row = m_messages.rowOf(messageId);
  if (row < 0) {
    setError(tr("That message is not in the open chat."));
    return false;
  }
  const StoredMessage& reply = m_messages.rowAt(row).message;
  if (reply.role != QLatin1String("assistant") || row != m_messages.rowCount() - 1) {
    setError(tr("Only the chat's last reply can be compared."));
    return false;
  }
  if (!reply.complete || reply.content.trimmed().isEmpty()) {
    setError(tr("This reply is incomplete or empty; regenerate it before comparing."));
    return false;
  }
  if (row == 0 || m_messages.rowAt(row - 1).message.role != QLatin1String("user")) {
    setError(tr("This reply does not answer a message of yours, so there is nothing to compare it on."));
    return false;
  }

  // The reply's own settings over the chat's current ones (those not stored with a reply), with
  // another seed. A greedy reply would come out the same whatever the seed: the chat's temperature
  // is used then, and when that is greedy too there is nothing to compare.
  const GenerationSettings current = settingsFromMap(m_settings, chatDefaults());
  GenerationSettings settings = settingsFromMap(reply.settings, current);
  if (settings.temperature <= 0) settings.temperature = current.temperature;
  if (settings.temperature <= 0) {
    setError(
        tr("With temperature 0 every seed writes the same reply. Raise the temperature under Sampling, then "
           "compare."));
    return false;
  }
  bool seedKnown = false;
  const qint64 originalSeed = reply.settings.value(kSeed).toLongLong(&seedKnown);
  qint64 seed = QRandomGenerator::global()->bounded(qint64(1) << 31);
  if (seedKnown && seed == originalSeed) seed = (seed + 1) % (qint64(1) << 31);
  settings.seed = seed;

  QList<ChatTurn> prompt;
  if (!m_chat.systemPrompt.trimmed().isEmpty()) prompt << ChatTurn{QStringLiteral("system"), m_chat.systemPrompt};
  for (int i = 0; i < row; ++i)
    prompt << ChatTurn{m_messages.rowAt(i).message.role, m_messages.rowAt(i).message.content};

  dropMessageUndo();  // an undo would change the conversation the two replies answer
  m_compare = {};
  m_compare.messageId = reply.id;
  m_compare.chatId = m_chatId;
  m_compare.prompt = prompt;
  m_compare.model = m_modelName;
  m_compare.original = reply.content;
  m_compare.originalStats = reply.stats;
  m_compare.originalSettings = reply.settings;
  m_compare.alternativeSettings = settingsForReply(settings);
  m_compareInFlight = true;
  m_replyChatId = m_chatId;
  m_replyTurnsLeftOut = 0;
  clearError();
  setGenerating(true);
  Q_EMIT comparisonChanged();
  Q_EMIT compareAlternativeChanged();
  scoreComparison();  // A now; B once written
  // May answer at once (handleFailed from a busy engine): everything above is in place for that.
  Q_EMIT generateRequested(prompt, QString(), settings);
  return true;
}

void ChatController::handleComparisonText(const QString& text) {
  if (!comparing()) return;  // dismissed; the engine has not stopped yet
  m_compare.alternative += text;
  Q_EMIT compareAlternativeChanged();
}

void ChatController::handleComparisonFinished(const GenerationStats& stats) {
  m_compareInFlight = false;
  setGenerating(false);
  if (!comparing()) return;
  m_compare.alternativeStats = statsForStore(stats);
  if (m_replyTurnsLeftOut > 0) m_compare.alternativeStats[QStringLiteral("turnsLeftOut")] = m_replyTurnsLeftOut;
  m_compare.alternativeSettings[kSeed] = QString::number(stats.seed);
  Q_EMIT comparisonChanged();
  scoreComparison();
}

void ChatController::handleComparisonFailed(const QString& message) {
  m_compareInFlight = false;
  setGenerating(false);
  if (!comparing()) return;
  closeComparison();
  setError(tr("The second reply could not be written: %1").arg(message));
}

bool ChatController::keepComparison(const QString& side, const QString& text) {
  if (!comparing()) {
    setError(tr("There is no comparison open."));
    return false;
  }
  if (m_compareInFlight) {
    setError(tr("The second reply is still being written. Wait for it, or stop it (Esc), then pick."));
    return false;
  }
  const bool pickedA = side.compare(QLatin1String("A"), Qt::CaseInsensitive) == 0;
  if (!pickedA && side.compare(QLatin1String("B"), Qt::CaseInsensitive) != 0) return false;
  const QString written = pickedA ? m_compare.original : m_compare.alternative;
  StoredPreferencePair pair;
  pair.chatId = m_compare.chatId;
  pair.prompt = m_compare.prompt;
  pair.chosen = text.isEmpty() ? written : text;
  pair.rejected = pickedA ? m_compare.alternative : m_compare.original;
  pair.chosenEdited = pair.chosen != written;
  pair.model = m_compare.model;
  // Refusals in the user's terms before the store's general ones.
  if (pair.rejected.trimmed().isEmpty()) {
    setError(
        tr("The other reply is empty (it was stopped before it wrote anything), so there is nothing to prefer "
           "this one to. Dismiss the comparison, or compare again."));
    return false;
  }
  if (pair.chosen == pair.rejected) {
    setError(tr("The two replies are the same, so there is nothing to prefer. Edit the better one, or dismiss."));
    return false;
  }
  QVariantMap stats = pickedA ? m_compare.originalStats : m_compare.alternativeStats;
  if (pair.chosenEdited) stats[QStringLiteral("edited")] = true;
  const QVariantMap settings = pickedA ? m_compare.originalSettings : m_compare.alternativeSettings;
  const qint64 pairId = m_preferences->savePair(pair, m_compare.messageId, stats, settings);
  if (!pairId) {
    // The database said why (writeFailed → lastError); the comparison stays open to try again.
    if (m_lastError.isEmpty()) setError(m_store->database().lastError());
    return false;
  }
  // B kept as written: the chat's reply is now B, and so is its score.
  if (m_rewardScores.contains(kCompareB) && !pickedA && !pair.chosenEdited) {
    m_rewardScores.insert(m_compare.messageId, m_rewardScores.value(kCompareB));
    for (auto& request : m_scoreRequests)  // a score still on its way lands there too
      if (request.first == kCompareB) request.first = m_compare.messageId;
  }
  closeComparison();
  reloadMessages();
  Q_EMIT preferencePairSaved(pairId);
  return true;
}

void ChatController::dismissComparison() {
  if (!comparing()) return;
  if (m_compareInFlight) Q_EMIT stopRequested();
  closeComparison();
}

void ChatController::closeComparison() {
  m_compare = {};
  m_rewardScores.remove(kCompareB);
  Q_EMIT comparisonChanged();
  Q_EMIT compareAlternativeChanged();
  refreshScores(true);
}
