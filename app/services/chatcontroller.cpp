// ChatController: chat commands, streaming into the store, context accounting.
#include "chatcontroller.h"

#include <QFile>
#include <QFileInfo>
#include <QUrl>

#include "chatexport.h"
#include "store/chatstore.h"
#include "store/database.h"
#include "store/inspectionstore.h"

namespace {

QString titleFrom(const QString& text) {
  QString line = text.simplified();
  if (line.size() > 48) line = line.left(47).trimmed() + QChar(0x2026);
  return line;
}

const QString kNewChatTitle = QObject::tr("New chat");

}  // namespace

ChatController::ChatController(ChatStore* chats, InspectionStore* inspections, QObject* parent)
    : QObject(parent), m_store(chats), m_inspections(inspections), m_chats(this), m_messages(this), m_newestFirst(&m_messages, this) {
  qRegisterMetaType<ChatTurn>();
  qRegisterMetaType<QList<ChatTurn>>();
  m_settings = settingsToMap(chatDefaults());
  m_settings[QStringLiteral("maxTokens")] = defaultMaxTokens();

  m_flushTimer.setSingleShot(true);
  connect(&m_flushTimer, &QTimer::timeout, this, [this] { flushStream(true); });
  m_countTimer.setSingleShot(true);
  m_countTimer.setInterval(150);
  connect(&m_countTimer, &QTimer::timeout, this, [this] {
    if (m_contextLength > 0) Q_EMIT countTokensRequested(turnsForCurrentChat(), ++m_countRequest);
  });
  connect(&m_store->database(), &Database::writeFailed, this, &ChatController::setError);

  // Chats deleted in the last session had their undo window; it ended with the session.
  m_store->purgeTrash();
  reloadChats();
  const QList<StoredChat> all = m_store->chats();
  if (!all.isEmpty()) setCurrentChat(all.first().id);
}

QString ChatController::storageProblem() const { return m_store->database().problem(); }

// ---- sidebar -------------------------------------------------------------------------------------

void ChatController::reloadChats() {
  const QStringList tags = m_store->tags();
  if (tags != m_tags) {
    m_tags = tags;
    Q_EMIT tagsChanged();
  }
  // The last chat with the chosen tag lost it: showing no chats at all would look like data loss.
  if (!m_tagFilter.isEmpty() && !m_tags.contains(m_tagFilter)) {
    m_tagFilter.clear();
    Q_EMIT tagFilterChanged();
  }
  if (!m_searchText.trimmed().isEmpty()) m_chats.setSearchHits(m_store->search(m_searchText));
  else m_chats.setChats(m_store->chats(m_folderFilter, m_tagFilter));
  const QStringList folders = m_store->folders();
  if (folders != m_folders) {
    m_folders = folders;
    Q_EMIT foldersChanged();
  }
}

void ChatController::setCurrentChat(qint64 chatId) {
  // A comparison belongs to the chat it was opened in.
  if (comparing() && chatId != m_compare.chatId) dismissComparison();
  if (m_highlightId) {
    m_highlightId = 0;
    Q_EMIT highlightChanged();
  }
  m_chatId = chatId;
  m_chat = chatId ? m_store->chat(chatId) : StoredChat{};
  if (m_chat.id == 0) m_chatId = 0;
  reloadMessages();
  Q_EMIT currentChatChanged();
  m_contextUsed = 0;
  Q_EMIT contextChanged();
  requestTokenCount();
}

void ChatController::reloadMessages() {
  QList<ChatMessageModel::Row> rows;
  if (m_chatId) {
    for (const StoredMessage& m : m_store->activePath(m_chatId)) {
      ChatMessageModel::Row row;
      row.message = m;
      const QList<qint64> siblings = m_store->siblings(m.id);
      row.siblingCount = qMax(1, int(siblings.size()));
      row.siblingIndex = qMax(0, int(siblings.indexOf(m.id)));
      if (m_generating && m.id == m_replyId) {
        row.streaming = true;
        row.message.content = m_replyText;  // the store may be a flush behind
      }
      rows << row;
    }
  }
  m_messages.setRows(rows);
  if (m_highlightId) Q_EMIT highlightChanged();  // its row may have moved or gone
  refreshScores();
  // The meter counts what is shown: every change of the messages is counted again.
  requestTokenCount();
}

// A message added below the last one shown: one row appended. Reloading the chat instead resets the
// view, which rebuilds every visible message (twice per message sent: the message, then its reply).
void ChatController::appendMessageRow(qint64 messageId) {
  ChatMessageModel::Row row;
  row.message = m_store->message(messageId);
  const QList<qint64> siblings = m_store->siblings(messageId);
  row.siblingCount = qMax(1, int(siblings.size()));
  row.siblingIndex = qMax(0, int(siblings.indexOf(messageId)));
  if (m_generating && messageId == m_replyId) {
    row.streaming = true;
    row.message.content = m_replyText;
  }
  m_messages.append(row);
  refreshScores();
  requestTokenCount();
}

qint64 ChatController::newChat() {
  // An untouched new chat is reused rather than piling up empty ones.
  if (m_chatId && m_messages.rowCount() == 0 && m_chat.title == kNewChatTitle) return m_chatId;
  const qint64 id = m_store->createChat(kNewChatTitle);
  if (!id) return 0;
  if (!m_searchText.isEmpty()) setSearchText({});
  setCurrentChat(id);
  return id;
}

void ChatController::selectChat(qint64 chatId) {
  if (chatId == m_chatId) return;
  setCurrentChat(chatId);
}

void ChatController::renameChat(qint64 chatId, const QString& title) {
  const QString t = title.simplified();
  if (t.isEmpty() || !m_store->renameChat(chatId, t)) return;
  if (chatId == m_chatId) {
    m_chat.title = t;
    Q_EMIT currentChatChanged();
  }
  reloadChats();
}

void ChatController::setChatFolder(qint64 chatId, const QString& folder) {
  if (!m_store->setChatFolder(chatId, folder)) return;
  if (chatId == m_chatId) {
    m_chat = m_store->chat(chatId);
    Q_EMIT currentChatChanged();
  }
  reloadChats();
}

void ChatController::setChatTags(qint64 chatId, const QString& commaSeparated) {
  if (!m_store->setChatTags(chatId, commaSeparated.split(QLatin1Char(','), Qt::SkipEmptyParts))) return;
  if (chatId == m_chatId) {
    m_chat = m_store->chat(chatId);
    Q_EMIT currentChatChanged();
  }
  reloadChats();
}

void ChatController::setSystemPrompt(const QString& text) {
  if (!m_chatId || text == m_chat.systemPrompt) return;
  if (!m_store->setSystemPrompt(m_chatId, text)) return;
  m_chat.systemPrompt = text;
  Q_EMIT currentChatChanged();
  requestTokenCount();
  refreshScores();  // every reply of the chat answers another conversation now
}

void ChatController::setFolderFilter(const QString& folder) {
  if (folder == m_folderFilter) return;
  m_folderFilter = folder;
  Q_EMIT folderFilterChanged();
  reloadChats();
}

void ChatController::setTagFilter(const QString& tag) {
  if (tag == m_tagFilter) return;
  m_tagFilter = tag;
  Q_EMIT tagFilterChanged();
  reloadChats();
}

void ChatController::setSearchText(const QString& text) {
  if (text == m_searchText) return;
  m_searchText = text;
  Q_EMIT searchTextChanged();
  reloadChats();
}

void ChatController::deleteChat(qint64 chatId) {
  const StoredChat chat = m_store->chat(chatId);
  if (chat.id == 0) return;
  if (m_generating && m_replyChatId == chatId) stop();
  finalizeDelete();  // one undo at a time, like a mail client
  if (!m_store->trashChat(chatId)) return;
  m_deleted = chat;
  Q_EMIT deletedChanged();
  reloadChats();
  if (chatId == m_chatId) setCurrentChat(m_chats.chatIdAt(0));
}

void ChatController::undoDelete() {
  if (m_deletedMessages.rootId) {
    const DeletedMessages removed = m_deletedMessages;
    m_deletedMessages = {};
    Q_EMIT deletedChanged();
    if (m_generating && m_replyChatId == removed.chatId) {
      setError(tr("Stop the reply being written before restoring messages."));
      return;
    }
    if (!m_store->restoreMessages(removed)) return;  // writeFailed has set the error
    reloadChats();
    if (removed.chatId != m_chatId) {
      setCurrentChat(removed.chatId);
    } else {
      reloadMessages();
      requestTokenCount();
    }
    return;
  }
  if (!m_deleted.id) return;
  const qint64 id = m_deleted.id;
  if (!m_store->restoreChat(id)) return;
  m_deleted = {};
  Q_EMIT deletedChanged();
  reloadChats();
  setCurrentChat(id);
}

void ChatController::finalizeDelete() {
  dropMessageUndo();  // deleted for real already; only the way back is dropped
  if (!m_deleted.id) return;
  m_store->purgeTrash();
  m_deleted = {};
  Q_EMIT deletedChanged();
}

void ChatController::dropMessageUndo() {
  if (!m_deletedMessages.rootId) return;
  m_deletedMessages = {};
  Q_EMIT deletedChanged();
}

QString ChatController::undoText() const {
  if (m_deleted.id) return tr("Deleted “%1”.").arg(m_deleted.title);
  if (!m_deletedMessages.rootId) return {};
  const int below = int(m_deletedMessages.messages.size()) - 1;
  if (below == 0) return tr("Deleted a message.");
  if (below == 1) return tr("Deleted a message and the one below it.");
  return tr("Deleted a message and the %1 messages below it.").arg(below);
}

void ChatController::openSearchHit(qint64 chatId, qint64 messageId) {
  if (chatId != m_chatId) setCurrentChat(chatId);
  if (m_chatId != chatId) return;  // the chat is gone
  // A hit on a branch not shown: switch every level above it to that branch (not while a reply is
  // written into this chat, whose path must stay as it is).
  if (messageId && m_messages.rowOf(messageId) < 0 && !(m_generating && m_replyChatId == chatId)) {
    if (m_store->message(messageId).chatId == chatId && m_store->activatePathTo(messageId)) {
      reloadMessages();
      requestTokenCount();
    }
  }
  // The words found may lie in the part of a long message that is not shown.
  if (messageId) m_messages.setExpanded(messageId, true);
  if (messageId != m_highlightId) {
    m_highlightId = messageId;
    Q_EMIT highlightChanged();
  }
}

void ChatController::setMessageExpanded(qint64 messageId, bool expanded) {
  m_messages.setExpanded(messageId, expanded);
}

void ChatController::clearHighlight() {
  if (!m_highlightId) return;
  m_highlightId = 0;
  Q_EMIT highlightChanged();
}

// ---- conversation --------------------------------------------------------------------------------

QList<ChatTurn> ChatController::turnsForCurrentChat() const {
  QList<ChatTurn> turns;
  if (!m_chat.systemPrompt.trimmed().isEmpty()) turns << ChatTurn{QStringLiteral("system"), m_chat.systemPrompt};
  for (const ChatMessageModel::Row& r : m_messages.rows()) turns << ChatTurn{r.message.role, r.message.content};
  return turns;
}

bool ChatController::send(const QString& text) {
  if (text.trimmed().isEmpty()) return false;
  if (refuseWhileComparing()) return false;
  if (m_generating) {
    setError(tr("A reply is still being written. Stop it (Esc) or wait, then send."));
    return false;
  }
  if (!m_chatId && !newChat()) return false;
  const qint64 parent = m_messages.rowCount() ? m_messages.rows().last().message.id : 0;
  dropMessageUndo();
  clearHighlight();  // the conversation moves on from the search hit
  // A reply cut off by a crash or an error has no answer to give; a new message follows it anyway.
  const qint64 id = m_store->addMessage(m_chatId, parent, QStringLiteral("user"), text);
  if (!id) return false;
  if (m_chat.title == kNewChatTitle && parent == 0) {
    m_store->renameChat(m_chatId, titleFrom(text));
    m_chat.title = titleFrom(text);
    Q_EMIT currentChatChanged();
  }
  reloadChats();
  appendMessageRow(id);
  return startReply(id, 0);
}

bool ChatController::startReply(qint64 parentId, qint64 continueId) {
  if (refuseWhileComparing()) return false;
  if (m_generating) {
    setError(tr("A reply is still being written. Stop it (Esc) or wait."));
    return false;
  }
  const int parentRow = m_messages.rowOf(parentId);
  if (parentRow < 0) return false;
  QList<ChatTurn> turns;
  if (!m_chat.systemPrompt.trimmed().isEmpty()) turns << ChatTurn{QStringLiteral("system"), m_chat.systemPrompt};
  for (int i = 0; i <= parentRow; ++i)
    turns << ChatTurn{m_messages.rowAt(i).message.role, m_messages.rowAt(i).message.content};

  const GenerationSettings settings = settingsFromMap(m_settings, chatDefaults());
  QString continuation;
  if (continueId) {
    const StoredMessage m = m_store->message(continueId);
    continuation = m.content;
    if (!m_store->updateMessage(continueId, m.content, false)) return false;
    m_replyId = continueId;
  } else {
    dropMessageUndo();
    m_replyId = m_store->addMessage(m_chatId, parentId, QStringLiteral("assistant"), QString(), false);
    if (!m_replyId) return false;
  }
  m_replyChatId = m_chatId;
  m_replyText = continuation;
  m_replyDirty = false;
  // Saved beside the reply; the seed is replaced by the one actually used when it finishes.
  m_replySettings = settingsForReply(settings);
  m_replyTurnsLeftOut = 0;
  setGenerating(true);
  // A reply to the last message shown (a message just sent) is one more row; a reply anywhere else
  // (regenerate, edit) changes the path below its parent, and a continued one its own row.
  if (!continueId && parentRow == m_messages.rowCount() - 1) appendMessageRow(m_replyId);
  else reloadMessages();
  m_sinceFlush.start();
  clearError();
  Q_EMIT generateRequested(turns, continuation, settings);
  return true;
}

void ChatController::stop() {
  if (m_generating) Q_EMIT stopRequested();
}

bool ChatController::regenerate(qint64 messageId) {
  const StoredMessage m = m_store->message(messageId);
  if (m.id == 0 || m.chatId != m_chatId) return false;
  if (m.role == QLatin1String("assistant")) {
    if (!m.parentId) {
      setError(tr("This reply has no message before it to answer."));
      return false;
    }
    return startReply(m.parentId, 0);
  }
  return startReply(m.id, 0);
}

bool ChatController::continueReply(qint64 messageId) {
  const StoredMessage m = m_store->message(messageId);
  if (m.id == 0 || m.chatId != m_chatId || m.role != QLatin1String("assistant") || !m.parentId) return false;
  return startReply(m.parentId, m.id);
}

bool ChatController::editMessage(qint64 messageId, const QString& text) {
  if (refuseWhileComparing()) return false;
  if (m_generating) {
    setError(tr("Stop the reply being written before editing."));
    return false;
  }
  const StoredMessage m = m_store->message(messageId);
  if (m.id == 0 || m.chatId != m_chatId || text == m.content) return false;
  dropMessageUndo();
  const qint64 id = m_store->addMessage(m_chatId, m.parentId, m.role, text);
  if (!id) return false;
  reloadMessages();
  requestTokenCount();
  if (m.role == QLatin1String("user")) return startReply(id, 0);
  return true;
}

void ChatController::switchSibling(qint64 messageId, int delta) {
  if (refuseWhileComparing()) return;
  if (m_generating) {
    setError(tr("Stop the reply being written before switching branches."));
    return;
  }
  const QList<qint64> siblings = m_store->siblings(messageId);
  const int target = int(siblings.indexOf(messageId)) + delta;
  if (target < 0 || target >= siblings.size() || !m_store->setActiveMessage(siblings[target])) return;
  reloadMessages();
  requestTokenCount();
}

void ChatController::deleteMessage(qint64 messageId) {
  if (refuseWhileComparing()) return;
  if (m_generating) {
    setError(tr("Stop the reply being written before deleting messages."));
    return;
  }
  finalizeDelete();  // one undo at a time
  DeletedMessages removed;
  if (!m_store->deleteMessage(messageId, &removed)) return;
  m_deletedMessages = removed;
  Q_EMIT deletedChanged();
  reloadMessages();
  requestTokenCount();
}

void ChatController::clearError() { setError({}); }

bool ChatController::inspectMessage(qint64 messageId) {
  const QList<ChatMessageModel::Row>& rows = m_messages.rows();
  qsizetype at = -1;
  for (qsizetype i = 0; i < rows.size() && at < 0; ++i)
    if (rows[i].message.id == messageId) at = i;
  if (at < 0) {
    setError(tr("That message is not in the open chat."));
    return false;
  }
  if (rows[at].streaming || !rows[at].message.complete) {
    setError(tr("Wait for the reply to finish before inspecting it."));
    return false;
  }
  const StoredInspection saved = m_inspections->inspectionFor(messageId);
  if (saved.id != 0) {
    Q_EMIT inspectionStored(messageId, saved.blob);
    return true;
  }
  // The same turns as turnsForCurrentChat(), cut at the message.
  QList<ChatTurn> turns = turnsForCurrentChat().mid(0, (m_chat.systemPrompt.trimmed().isEmpty() ? 0 : 1) + at + 1);
  QString continuation;
  if (rows[at].message.role == QLatin1String("assistant")) continuation = turns.takeLast().content;
  Q_EMIT inspectRequested(messageId, turns, continuation);
  return true;
}

bool ChatController::storeInspection(qint64 messageId, const QByteArray& blob, const QString& model, int tokenCount) {
  return m_inspections->saveInspection(messageId, blob, model, tokenCount) != 0;
}

void ChatController::setError(const QString& message) {
  if (message == m_lastError) return;
  m_lastError = message;
  Q_EMIT lastErrorChanged();
}

void ChatController::setGenerating(bool on) {
  if (on == m_generating) return;
  m_generating = on;
  Q_EMIT generatingChanged();
}

// ---- results from the engine ---------------------------------------------------------------------

void ChatController::handleGenerationStarted() {}

void ChatController::handleText(const QString& text) {
  if (!m_generating || text.isEmpty()) return;
  if (m_compareInFlight) return handleComparisonText(text);
  m_replyText += text;
  m_replyDirty = true;
  if (m_replyChatId == m_chatId) {
    const int row = m_messages.rowOf(m_replyId);
    if (row >= 0) m_messages.appendTo(row, text);
  }
  flushStream(false);
}

void ChatController::flushStream(bool force) {
  if (!m_replyDirty || !m_replyId) return;
  if (!force && m_sinceFlush.elapsed() < m_flushMs) {
    if (!m_flushTimer.isActive()) m_flushTimer.start(int(qMax<qint64>(1, m_flushMs - m_sinceFlush.elapsed())));
    return;
  }
  m_flushTimer.stop();
  m_store->updateMessage(m_replyId, m_replyText, false);
  m_replyDirty = false;
  m_sinceFlush.restart();
}

void ChatController::handleFinished(const GenerationStats& stats) {
  if (!m_generating) return;
  if (m_compareInFlight) return handleComparisonFinished(stats);
  m_flushTimer.stop();
  QVariantMap statsMap = stats.toVariantMap();
  statsMap.remove(QStringLiteral("summary"));
  if (m_replyTurnsLeftOut > 0) statsMap[QStringLiteral("turnsLeftOut")] = m_replyTurnsLeftOut;
  m_replySettings[QStringLiteral("seed")] = QString::number(stats.seed);
  const qint64 id = m_replyId;
  m_store->finishMessage(id, m_replyText, statsMap, m_replySettings);
  m_replyDirty = false;
  setGenerating(false);
  if (m_replyChatId == m_chatId) {
    const int row = m_messages.rowOf(id);
    if (row >= 0) m_messages.updateRow(row, m_store->message(id), false);
    requestTokenCount();
    refreshScores();  // a continued reply is not the one scored
  }
  m_replyId = 0;
  Q_EMIT replyFinished(id, {});
}

void ChatController::handleFailed(const QString& message) {
  if (!m_generating) return;
  if (m_compareInFlight) return handleComparisonFailed(message);
  m_flushTimer.stop();
  const qint64 id = m_replyId;
  if (m_replyText.isEmpty()) {
    m_store->deleteMessage(id);  // nothing was written: no empty bubble stays behind
  } else {
    m_store->finishMessage(id, m_replyText, {{QStringLiteral("finishReason"), QStringLiteral("error")}},
                           m_replySettings);
  }
  m_replyId = 0;
  setGenerating(false);
  if (m_replyChatId == m_chatId) reloadMessages();
  setError(message);
  Q_EMIT replyFinished(id, message);
}

// ---- context -------------------------------------------------------------------------------------

void ChatController::requestTokenCount() { m_countTimer.start(); }

void ChatController::handleTokenCount(quint64 requestId, int tokens) {
  if (requestId != m_countRequest) return;  // an older count answered late
  m_contextUsed = tokens;
  Q_EMIT contextChanged();
}

void ChatController::setContextLength(int tokens) {
  if (tokens == m_contextLength) return;
  m_contextLength = tokens;
  followDefaultMaxTokens();
  Q_EMIT contextChanged();
  requestTokenCount();
}

void ChatController::handleModelChanged(int contextLength) {
  m_contextLength = contextLength;
  m_contextUsed = 0;
  followDefaultMaxTokens();
  // A refusal or failure under the old model says nothing about the new one.
  clearError();
  Q_EMIT contextChanged();
  requestTokenCount();
}

void ChatController::handleTurnsLeftOut(int turns) {
  if (m_generating) m_replyTurnsLeftOut = turns;
}

int ChatController::defaultMaxTokens() const {
  constexpr int kDefault = 256;
  return m_contextLength > 0 ? qBound(1, m_contextLength / 4, kDefault) : kDefault;
}

void ChatController::followDefaultMaxTokens() {
  if (m_maxTokensChosen) return;
  const QString key = QStringLiteral("maxTokens");
  if (m_settings.value(key).toInt() == defaultMaxTokens()) return;
  m_settings[key] = defaultMaxTokens();
  Q_EMIT generationSettingsChanged();
}

QString ChatController::contextWarning() const {
  if (m_contextLength <= 0 || m_contextUsed <= 0) return {};
  // The engine leaves the oldest messages out of the prompt until the reply has this much room
  // (EngineWorker::generateChat): the warning says when that happens, with the same numbers.
  const int maxTokens = static_cast<int>(settingsFromMap(m_settings, chatDefaults()).max_tokens);
  const int replyRoom = qBound(1, maxTokens, qMax(1, m_contextLength / 4));
  if (m_contextUsed > m_contextLength)
    return tr("This chat is %1 tokens, more than the model's context of %2: the model reads only its most recent "
              "messages; the oldest are left out of what it reads (they stay in the chat).")
        .arg(m_contextUsed)
        .arg(m_contextLength);
  if (m_contextLength - m_contextUsed < replyRoom)
    return tr("%1 of %2 context tokens used: to leave room for a reply of up to %3 tokens, the oldest messages are "
              "left out of what the model reads (they stay in the chat).")
        .arg(m_contextUsed)
        .arg(m_contextLength)
        .arg(replyRoom);
  return {};
}

void ChatController::setGenerationSettings(const QVariantMap& settings) {
  // Keys left out keep their values; every value is checked against the field table.
  const QVariantMap merged = settingsToMap(settingsFromMap(settings, settingsFromMap(m_settings, chatDefaults())));
  if (merged == m_settings) return;
  const QString maxTokens = QStringLiteral("maxTokens");
  if (merged.value(maxTokens) != m_settings.value(maxTokens)) m_maxTokensChosen = true;
  m_settings = merged;
  Q_EMIT generationSettingsChanged();
  Q_EMIT contextChanged();  // the warning depends on maxTokens
}

QVariantMap ChatController::changedGenerationSettings() const {
  const QVariantMap defaults = settingsToMap(chatDefaults());
  QVariantMap changed;
  for (auto it = m_settings.cbegin(); it != m_settings.cend(); ++it)
    if (defaults.value(it.key()) != it.value()) changed.insert(it.key(), it.value());
  const QString maxTokens = QStringLiteral("maxTokens");
  if (m_maxTokensChosen) changed[maxTokens] = m_settings.value(maxTokens);
  else changed.remove(maxTokens);
  return changed;
}

void ChatController::restoreGenerationSettings(const QVariantMap& changed) {
  m_settings = settingsToMap(settingsFromMap(changed, chatDefaults()));
  m_maxTokensChosen = changed.contains(QStringLiteral("maxTokens"));
  if (!m_maxTokensChosen) m_settings[QStringLiteral("maxTokens")] = defaultMaxTokens();
  Q_EMIT generationSettingsChanged();
  Q_EMIT contextChanged();
}

// ---- files ---------------------------------------------------------------------------------------

QString ChatController::localPath(const QString& pathOrUrl) const {
  const QUrl url(pathOrUrl);
  return url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
}

QString ChatController::exportMarkdown(const QString& pathOrUrl) {
  if (!m_chatId) return tr("Open a chat to export.");
  QList<StoredMessage> path;
  for (const ChatMessageModel::Row& r : m_messages.rows()) path << r.message;
  return writeFileAtomically(localPath(pathOrUrl), chatToMarkdown(m_chat, path).toUtf8());
}

QString ChatController::exportJson(const QString& pathOrUrl) {
  if (!m_chatId) return tr("Open a chat to export.");
  QList<StoredMessage> path;
  for (const ChatMessageModel::Row& r : m_messages.rows()) path << r.message;
  return writeFileAtomically(localPath(pathOrUrl), chatToOpenAiJson(m_chat, path));
}

QString ChatController::importJson(const QString& pathOrUrl) {
  const QString path = localPath(pathOrUrl);
  QFile file(path);
  // A chat export is kilobytes; this bound keeps a wrong file from being read into memory whole.
  constexpr qint64 kMaxImportBytes = 64ll << 20;
  if (!file.open(QIODevice::ReadOnly))
    return tr("Cannot import %1: %2").arg(QFileInfo(path).fileName(), file.errorString());
  if (file.size() > kMaxImportBytes)
    return tr("Cannot import %1: it is %2 MiB; a chat file is at most 64 MiB")
        .arg(QFileInfo(path).fileName())
        .arg(file.size() >> 20);
  const ImportedChat chat = chatFromOpenAiJson(file.readAll(), path);
  if (!chat.error.isEmpty()) return chat.error;
  dropMessageUndo();
  const qint64 id = m_store->importChat(chat.title, chat.systemPrompt, chat.messages);
  if (!id) return m_store->database().lastError();
  if (!m_searchText.isEmpty()) setSearchText({});
  reloadChats();
  setCurrentChat(id);
  return {};
}
