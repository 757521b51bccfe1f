// ChatStore: the queries behind chats, message trees and search.
#include "chatstore.h"

#include <QRegularExpression>
#include <QSqlQuery>

#include <array>
#include <utility>

#include "database.h"
#include "sqlvalues.h"
#include "transaction.h"

using sqlvalue::idOrNull;
using sqlvalue::jsonOrNull;
using sqlvalue::nowMs;

namespace {

// User text to an FTS5 query that cannot be a syntax error: every word quoted, matched as a prefix.
QString ftsQuery(const QString& text) {
  static const QRegularExpression words(QStringLiteral("[\\w]+"), QRegularExpression::UseUnicodePropertiesOption);
  QStringList terms;
  auto it = words.globalMatch(text);
  while (it.hasNext()) terms << QLatin1Char('"') + it.next().captured() + QStringLiteral("\"*");
  return terms.join(QLatin1Char(' '));
}

// The columns messageFromRow() reads, in its order; qualified where a query joins `messages` with a
// recursive walk that also has an id.
const char* const kMessageColumns =
    "messages.id, chat_id, parent_id, role, content, created_ms, complete, stats, settings";

StoredMessage messageFromRow(const QSqlQuery& row) {
  StoredMessage m;
  m.id = row.value(0).toLongLong();
  m.chatId = row.value(1).toLongLong();
  m.parentId = row.value(2).toLongLong();
  m.role = row.value(3).toString();
  m.content = row.value(4).toString();
  m.createdMs = row.value(5).toLongLong();
  m.complete = row.value(6).toInt() != 0;
  m.stats = sqlvalue::mapFromJson(row.value(7));
  m.settings = sqlvalue::mapFromJson(row.value(8));
  return m;
}

const char* const kChatColumns =
    "c.id, c.title, c.system_prompt, c.created_ms, c.updated_ms, f.name,"
    " (SELECT group_concat(tag, char(31)) FROM (SELECT tag FROM chat_tags t WHERE t.chat_id = c.id ORDER BY tag))";

StoredChat chatFromRow(const QSqlQuery& row) {
  StoredChat c;
  c.id = row.value(0).toLongLong();
  c.title = row.value(1).toString();
  c.systemPrompt = row.value(2).toString();
  c.createdMs = row.value(3).toLongLong();
  c.updatedMs = row.value(4).toLongLong();
  c.folder = row.value(5).toString();
  const QString tags = row.value(6).toString();
  if (!tags.isEmpty()) c.tags = tags.split(QChar(31));
  return c;
}

QString textFromRow(const QSqlQuery& row) { return row.value(0).toString(); }
qint64 idFromRow(const QSqlQuery& row) { return row.value(0).toLongLong(); }

// The subtree below and including ?, parents before children (depth first by the recursion).
const char* const kSubtreeCte =
    "WITH RECURSIVE sub(id, depth) AS (SELECT ?, 0 UNION ALL"
    " SELECT m.id, sub.depth + 1 FROM messages m JOIN sub ON m.parent_id = sub.id)";

// Folders live as long as a chat is in them.
const char* const kDropEmptyFolders =
    "DELETE FROM folders WHERE id NOT IN (SELECT folder_id FROM chats WHERE folder_id IS NOT NULL)";

// Makes `messageId` the reply its parent shows or, for a first message, the first message its chat shows.
void showBranch(Transaction& tx, qint64 chatId, qint64 parentId, qint64 messageId) {
  if (parentId) tx.exec(QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?"), {messageId, parentId});
  else tx.exec(QStringLiteral("UPDATE chats SET active_root_id = ? WHERE id = ?"), {messageId, chatId});
}

// A change to a chat's messages moves it up the sidebar.
void touchChat(Transaction& tx, qint64 chatId) {
  tx.exec(QStringLiteral("UPDATE chats SET updated_ms = ? WHERE id = ?"), {nowMs(), chatId});
}

}  // namespace

// ---- chats ---------------------------------------------------------------------------------------

qint64 ChatStore::createChat(const QString& title, const QString& systemPrompt) {
  const qint64 now = nowMs();
  qint64 id = 0;
  if (!m_db.write(tr("Could not create the chat"),
                  QStringLiteral("INSERT INTO chats (title, system_prompt, created_ms, updated_ms)"
                                 " VALUES (?, ?, ?, ?)"),
                  {title, systemPrompt, now, now}, &id))
    return 0;
  Q_EMIT chatsChanged();
  return id;
}

qint64 ChatStore::importChat(const QString& title, const QString& systemPrompt, const QList<ChatTurn>& turns) {
  Transaction tx(m_db, tr("Could not import the chat"));
  const qint64 now = nowMs();
  const qint64 chatId =
      tx.insert(QStringLiteral("INSERT INTO chats (title, system_prompt, created_ms, updated_ms) VALUES (?, ?, ?, ?)"),
                {title, systemPrompt, now, now});
  qint64 parent = 0;
  for (const ChatTurn& t : turns) {
    const qint64 id = tx.insert(QStringLiteral("INSERT INTO messages (chat_id, parent_id, role, content, created_ms)"
                                               " VALUES (?, ?, ?, ?, ?)"),
                                {chatId, idOrNull(parent), t.role, t.content, now});
    showBranch(tx, chatId, parent, id);
    parent = id;
  }
  if (!tx.commit()) return 0;
  Q_EMIT chatsChanged();
  return chatId;
}

bool ChatStore::renameChat(qint64 chatId, const QString& title) {
  if (!m_db.write(tr("Could not rename the chat"),
                  QStringLiteral("UPDATE chats SET title = ?, updated_ms = ? WHERE id = ?"), {title, nowMs(), chatId}))
    return false;
  Q_EMIT chatsChanged();
  return true;
}

bool ChatStore::setSystemPrompt(qint64 chatId, const QString& systemPrompt) {
  return m_db.write(tr("Could not save the system prompt"),
                    QStringLiteral("UPDATE chats SET system_prompt = ?, updated_ms = ? WHERE id = ?"),
                    {systemPrompt, nowMs(), chatId});
}

bool ChatStore::setChatFolder(qint64 chatId, const QString& folder) {
  const QString name = folder.trimmed();
  Transaction tx(m_db, tr("Could not move the chat"));
  if (!name.isEmpty()) tx.exec(QStringLiteral("INSERT OR IGNORE INTO folders (name) VALUES (?)"), {name});
  tx.exec(QStringLiteral("UPDATE chats SET folder_id = (SELECT id FROM folders WHERE name = ?) WHERE id = ?"),
          {name.isEmpty() ? QVariant() : QVariant(name), chatId});
  tx.exec(QLatin1String(kDropEmptyFolders));
  if (!tx.commit()) return false;
  Q_EMIT chatsChanged();
  return true;
}

bool ChatStore::setChatTags(qint64 chatId, const QStringList& tags) {
  Transaction tx(m_db, tr("Could not save the tags"));
  tx.exec(QStringLiteral("DELETE FROM chat_tags WHERE chat_id = ?"), {chatId});
  for (const QString& raw : tags) {
    const QString tag = raw.trimmed();
    if (!tag.isEmpty())
      tx.exec(QStringLiteral("INSERT OR IGNORE INTO chat_tags (chat_id, tag) VALUES (?, ?)"), {chatId, tag});
  }
  if (!tx.commit()) return false;
  Q_EMIT chatsChanged();
  return true;
}

bool ChatStore::trashChat(qint64 chatId) {
  if (!m_db.write(tr("Could not delete the chat"), QStringLiteral("UPDATE chats SET trashed_ms = ? WHERE id = ?"),
                  {nowMs(), chatId}))
    return false;
  Q_EMIT chatsChanged();
  return true;
}

bool ChatStore::restoreChat(qint64 chatId) {
  if (!m_db.write(tr("Could not restore the chat"), QStringLiteral("UPDATE chats SET trashed_ms = NULL WHERE id = ?"),
                  {chatId}))
    return false;
  Q_EMIT chatsChanged();
  return true;
}

bool ChatStore::purgeTrash() {
  const QString what = tr("Could not delete chats");
  // Nothing to do most of the time (it runs at every start); the index merge below is not free.
  if (m_db.select(what, QStringLiteral("SELECT id FROM chats WHERE trashed_ms IS NOT NULL LIMIT 1"), {}, idFromRow)
          .isEmpty())
    return true;
  Transaction tx(m_db, what);
  tx.exec(QStringLiteral("DELETE FROM chats WHERE trashed_ms IS NOT NULL"));
  tx.exec(QLatin1String(kDropEmptyFolders));
  // Merges the index segments, so deleted words leave the index's pages too.
  tx.exec(QStringLiteral("INSERT INTO message_search(message_search) VALUES ('optimize')"));
  if (!tx.commit()) return false;
  // secure_delete zeroes freed pages in the database; the WAL still holds the old ones until a checkpoint.
  m_db.checkpoint();
  return true;
}

QList<StoredChat> ChatStore::chats(const QString& folder, const QString& tag) const {
  return m_db.select(tr("Could not read the chats"),
                     QStringLiteral(
                         "SELECT %1 FROM chats c LEFT JOIN folders f ON f.id = c.folder_id"
                         " WHERE c.trashed_ms IS NULL AND (? = '' OR f.name = ?)"
                         " AND (? = '' OR EXISTS (SELECT 1 FROM chat_tags t WHERE t.chat_id = c.id AND t.tag = ?))"
                         " ORDER BY c.updated_ms DESC, c.id DESC")
                         .arg(QLatin1String(kChatColumns)),
                     {folder, folder, tag, tag}, chatFromRow);
}

StoredChat ChatStore::chat(qint64 chatId) const {
  return m_db
      .select(tr("Could not read the chat"),
              QStringLiteral("SELECT %1 FROM chats c LEFT JOIN folders f ON f.id = c.folder_id"
                             " WHERE c.id = ? AND c.trashed_ms IS NULL")
                  .arg(QLatin1String(kChatColumns)),
              {chatId}, chatFromRow)
      .value(0);
}

QStringList ChatStore::folders() const {
  return m_db.select(tr("Could not read the folders"),
                     QStringLiteral("SELECT name FROM folders ORDER BY name COLLATE NOCASE"), {}, textFromRow);
}

QStringList ChatStore::tags() const {
  return m_db.select(tr("Could not read the tags"),
                     QStringLiteral("SELECT DISTINCT t.tag FROM chat_tags t JOIN chats c ON c.id = t.chat_id"
                                    " WHERE c.trashed_ms IS NULL ORDER BY t.tag COLLATE NOCASE"),
                     {}, textFromRow);
}

// ---- messages ------------------------------------------------------------------------------------

qint64 ChatStore::addMessage(qint64 chatId, qint64 parentId, const QString& role, const QString& content, bool complete,
                             const QVariantMap& stats, const QVariantMap& settings) {
  Transaction tx(m_db, tr("Could not save the message"));
  if (parentId != 0) {
    // The parent must be in the same chat: a tree never spans chats.
    const bool inChat = !tx.select(QStringLiteral("SELECT id FROM messages WHERE id = ? AND chat_id = ?"),
                                   {parentId, chatId}, idFromRow)
                             .isEmpty();
    if (tx.ok() && !inChat) {
      tx.fail(tr("message %1 is not in chat %2").arg(parentId).arg(chatId));
      return 0;
    }
  }
  const qint64 id =
      tx.insert(QStringLiteral("INSERT INTO messages"
                               " (chat_id, parent_id, role, content, created_ms, complete, stats, settings)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                {chatId, idOrNull(parentId), role, content, nowMs(), complete ? 1 : 0, jsonOrNull(stats),
                 jsonOrNull(settings)});
  showBranch(tx, chatId, parentId, id);
  touchChat(tx, chatId);
  return tx.commit() ? id : 0;
}

bool ChatStore::updateMessage(qint64 messageId, const QString& content, bool complete) {
  return m_db.write(tr("Could not save the message"),
                    QStringLiteral("UPDATE messages SET content = ?, complete = ? WHERE id = ?"),
                    {content, complete ? 1 : 0, messageId});
}

bool ChatStore::finishMessage(qint64 messageId, const QString& content, const QVariantMap& stats,
                              const QVariantMap& settings) {
  return m_db.write(tr("Could not save the reply"),
                    QStringLiteral(
                        "UPDATE messages SET content = ?, complete = 1, stats = ?, settings = ? WHERE id = ?"),
                    {content, jsonOrNull(stats), jsonOrNull(settings), messageId});
}

bool ChatStore::setActiveMessage(qint64 messageId) {
  const QString what = tr("Could not switch the reply");
  const StoredMessage m = message(messageId);
  if (m.id == 0) return m_db.fail(what, tr("message %1 does not exist").arg(messageId));
  Transaction tx(m_db, what);
  showBranch(tx, m.chatId, m.parentId, messageId);
  return tx.commit();
}

bool ChatStore::deleteMessage(qint64 messageId, DeletedMessages* removed) {
  const QString what = tr("Could not delete the message");
  const StoredMessage m = message(messageId);
  if (m.id == 0) return m_db.fail(what, tr("message %1 does not exist").arg(messageId));
  Transaction tx(m_db, what);
  DeletedMessages out;
  if (removed) {
    // Read inside the write transaction: exactly what the DELETE below removes.
    out.chatId = m.chatId;
    out.rootId = m.id;
    out.wasActive = tx.select(m.parentId ? QStringLiteral("SELECT active_child_id = ? FROM messages WHERE id = ?")
                                         : QStringLiteral("SELECT active_root_id = ? FROM chats WHERE id = ?"),
                              {m.id, m.parentId ? m.parentId : m.chatId},
                              [](const QSqlQuery& row) { return row.value(0).toInt() == 1; })
                        .value(0, false);
    const auto subtree =
        tx.select(QStringLiteral(
                      "%1 SELECT %2, coalesce(active_child_id, 0) FROM sub JOIN messages USING (id) ORDER BY depth, id")
                      .arg(QLatin1String(kSubtreeCte), QLatin1String(kMessageColumns)),
                  {messageId},
                  [](const QSqlQuery& row) { return std::pair(messageFromRow(row), row.value(9).toLongLong()); });
    for (const auto& [stored, activeChildId] : subtree) {
      out.messages << stored;
      out.activeChildIds << activeChildId;
    }
    out.inspections =
        tx.select(QStringLiteral("%1 SELECT %2 FROM inspections WHERE message_id IN (SELECT id FROM sub) ORDER BY id")
                      .arg(QLatin1String(kSubtreeCte), QLatin1String(kInspectionColumns)),
                  {messageId}, inspectionFromRow);
  }
  // The whole subtree in one statement: the parent references are checked once, at its end.
  tx.exec(QStringLiteral("%1 DELETE FROM messages WHERE id IN (SELECT id FROM sub)").arg(QLatin1String(kSubtreeCte)),
          {messageId});
  // The nearest remaining sibling becomes active (ON DELETE SET NULL cleared the pointer).
  const QString sibling =
      QStringLiteral("(SELECT id FROM messages WHERE chat_id = ? AND parent_id IS ? ORDER BY abs(id - ?), id LIMIT 1)");
  tx.exec(m.parentId ? QStringLiteral("UPDATE messages SET active_child_id = %1 WHERE id = ?").arg(sibling)
                     : QStringLiteral("UPDATE chats SET active_root_id = %1 WHERE id = ?").arg(sibling),
          {m.chatId, idOrNull(m.parentId), messageId, m.parentId ? m.parentId : m.chatId});
  touchChat(tx, m.chatId);
  if (!tx.commit()) return false;
  if (removed) *removed = out;
  return true;
}

bool ChatStore::restoreMessages(const DeletedMessages& removed) {
  const QString what = tr("Could not restore the message");
  if (removed.rootId == 0 || removed.messages.isEmpty()) return m_db.fail(what, tr("there is nothing to restore"));
  Transaction tx(m_db, what);
  // Parents first, with their old ids: a taken id or a missing parent or chat fails the statement.
  for (const StoredMessage& m : removed.messages)
    tx.exec(QStringLiteral(
                "INSERT INTO messages (id, chat_id, parent_id, role, content, created_ms, complete, stats, settings)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            {m.id, m.chatId, idOrNull(m.parentId), m.role, m.content, m.createdMs, m.complete ? 1 : 0,
             jsonOrNull(m.stats), jsonOrNull(m.settings)});
  // Each message's chosen reply, now that all of them exist again.
  for (qsizetype i = 0; i < removed.messages.size(); ++i)
    if (const qint64 child = removed.activeChildIds.value(i))
      tx.exec(QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?"), {child, removed.messages[i].id});
  for (const StoredInspection& s : removed.inspections)
    tx.exec(QStringLiteral("INSERT INTO inspections (id, message_id, created_ms, model, token_count, blob)"
                           " VALUES (?, ?, ?, ?, ?, ?)"),
            {s.id, s.messageId, s.createdMs, s.model, s.tokenCount, s.blob});
  const StoredMessage& root = removed.messages.first();
  if (removed.wasActive) showBranch(tx, root.chatId, root.parentId, root.id);
  touchChat(tx, root.chatId);
  return tx.commit();
}

bool ChatStore::activatePathTo(qint64 messageId) {
  Transaction tx(m_db, tr("Could not show the message"));
  // Each ancestor (and the message) with its parent: every parent's active child becomes the next
  // message down, and the chat's active first message the top one.
  const QList<std::array<qint64, 3>> chain = tx.select(
      QStringLiteral(
          "WITH RECURSIVE up(id, parent_id, chat_id, depth) AS ("
          " SELECT id, parent_id, chat_id, 0 FROM messages WHERE id = ?"
          " UNION ALL SELECT m.id, m.parent_id, m.chat_id, up.depth + 1 FROM messages m JOIN up ON m.id = up.parent_id"
          " WHERE up.depth < 10000000)"
          " SELECT id, parent_id, chat_id FROM up"),
      {messageId}, [](const QSqlQuery& row) {
        return std::array<qint64, 3>{row.value(0).toLongLong(), row.value(1).toLongLong(), row.value(2).toLongLong()};
      });
  if (tx.ok() && chain.isEmpty()) return tx.fail(tr("message %1 does not exist").arg(messageId));
  for (const auto& [id, parentId, chatId] : chain) showBranch(tx, chatId, parentId, id);
  return tx.commit();
}

StoredMessage ChatStore::message(qint64 messageId) const {
  return m_db
      .select(tr("Could not read the message"),
              QStringLiteral("SELECT %1 FROM messages WHERE id = ?").arg(QLatin1String(kMessageColumns)), {messageId},
              messageFromRow)
      .value(0);
}

QList<StoredMessage> ChatStore::activePath(qint64 chatId) const {
  // Follows the active pointers from the chat's active first message; `depth` keeps the order.
  return m_db.select(tr("Could not read the chat"),
                     QStringLiteral(
                         "WITH RECURSIVE path(id, depth) AS ("
                         " SELECT active_root_id, 0 FROM chats WHERE id = ? AND active_root_id IS NOT NULL"
                         " UNION ALL SELECT m.active_child_id, p.depth + 1 FROM messages m JOIN path p ON m.id = p.id"
                         // The depth bound stops a cycle that only a damaged file could hold.
                         " WHERE m.active_child_id IS NOT NULL AND p.depth < 10000000)"
                         " SELECT %1 FROM path JOIN messages USING (id) ORDER BY depth")
                         .arg(QLatin1String(kMessageColumns)),
                     {chatId}, messageFromRow);
}

QList<qint64> ChatStore::siblings(qint64 messageId) const {
  return m_db.select(tr("Could not read the replies"),
                     QStringLiteral("SELECT s.id FROM messages m"
                                    " JOIN messages s ON s.chat_id = m.chat_id AND s.parent_id IS m.parent_id"
                                    " WHERE m.id = ? ORDER BY s.id"),
                     {messageId}, idFromRow);
}

QList<SearchHit> ChatStore::search(const QString& text, int limit) const {
  const QString query = ftsQuery(text);
  if (query.isEmpty()) return {};
  const QString what = tr("Search failed");
  // Titles first (LIKE on the words), then message hits ranked by bm25.
  QString like = text.trimmed();
  like.replace(QLatin1Char('\\'), QLatin1String("\\\\"))
      .replace(QLatin1Char('%'), QLatin1String("\\%"))
      .replace(QLatin1Char('_'), QLatin1String("\\_"));
  QList<SearchHit> hits =
      m_db.select(what,
                  QStringLiteral("SELECT id, title FROM chats WHERE trashed_ms IS NULL AND title LIKE ? ESCAPE '\\'"
                                 " ORDER BY updated_ms DESC LIMIT ?"),
                  {QLatin1Char('%') + like + QLatin1Char('%'), limit}, [](const QSqlQuery& row) {
                    return SearchHit{row.value(0).toLongLong(), 0, row.value(1).toString(), row.value(1).toString()};
                  });
  hits << m_db.select(what,
                      QStringLiteral("SELECT c.id, m.id, c.title, snippet(message_search, 0, char(57344), char(57345), '…', 12)"
                                     " FROM message_search JOIN messages m ON m.id = message_search.rowid"
                                     " JOIN chats c ON c.id = m.chat_id"
                                     " WHERE message_search MATCH ? AND c.trashed_ms IS NULL"
                                     " ORDER BY bm25(message_search) LIMIT ?"),
                      {query, limit}, [](const QSqlQuery& row) {
                        return SearchHit{row.value(0).toLongLong(), row.value(1).toLongLong(), row.value(2).toString(),
                                         row.value(3).toString()};
                      });
  return hits;
}
