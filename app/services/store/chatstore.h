// ChatStore: chats as message trees, their folders and tags, and full-text search over them (schema
// steps 1 and 2).
//
// Invariants
// - A message tree never spans chats. Adding a message makes it the active child of its parent, so
//   the active path always ends in the newest branch the user worked on.
// - Trashed chats are hidden everywhere until restored or purged; purging deletes their text from the
//   file, its WAL and the search index.
// - Roles are stored as strings ("user", "assistant"), never renumbered.
// - A deleted subtree can be put back exactly (DeletedMessages), ids, branches and inspection
//   snapshots included: the snapshots go with their message (ON DELETE CASCADE), so bringing them
//   back is part of undoing the delete, not a separate step the caller could forget.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include "inspectionstore.h"
#include "services/chattypes.h"

class Database;

struct StoredChat {
  qint64 id = 0;
  QString title;
  QString systemPrompt;
  QString folder;  // empty: no folder
  QStringList tags;
  qint64 createdMs = 0;
  qint64 updatedMs = 0;
};

struct StoredMessage {
  qint64 id = 0;
  qint64 chatId = 0;
  qint64 parentId = 0;  // 0: a first message of the chat
  QString role;         // "system", "user" or "assistant"
  QString content;
  qint64 createdMs = 0;
  bool complete = true;  // false while a reply streams in (and for one cut off by a crash)
  QVariantMap stats;     // per reply: tokens, tok/s, time to first token, finish reason, seed
  QVariantMap settings;  // the sampling settings the reply was generated with
};

struct SearchHit {
  qint64 chatId = 0;
  qint64 messageId = 0;  // 0: the chat's title matched
  QString chatTitle;
  QString snippet;  // matched words between kSnippetMatchBegin and kSnippetMatchEnd
};
// The marks around the matched words of a SearchHit's snippet: private-use characters, which no
// message text holds (brackets could not be told from the message's own).
inline constexpr char16_t kSnippetMatchBegin = u'\uE000';
inline constexpr char16_t kSnippetMatchEnd = u'\uE001';

// A deleted message with every reply below it, exactly as they were stored (ids, parents, which
// branch each one had chosen, inspection snapshots), so that restoreMessages() can put them back.
struct DeletedMessages {
  qint64 chatId = 0;
  qint64 rootId = 0;              // the message that was deleted; 0: nothing was
  bool wasActive = false;         // it was the branch its parent (or the chat) showed
  QList<StoredMessage> messages;  // parents before their children
  QList<qint64> activeChildIds;   // per message: its chosen reply, 0 for none
  QList<StoredInspection> inspections;
};

class ChatStore : public QObject {
  Q_OBJECT

 public:
  // `db` must outlive this store.
  explicit ChatStore(Database& db, QObject* parent = nullptr) : QObject(parent), m_db(db) {}
  // The database underneath: where a failed write is reported (writeFailed, lastError) and why it
  // may not be saving (problem).
  Database& database() const { return m_db; }

  // Chats. Trashed chats are hidden everywhere until restored or purged; purge deletes for real.
  qint64 createChat(const QString& title, const QString& systemPrompt = {});
  // A whole chat (one chain of messages) in one transaction: all of it or nothing.
  qint64 importChat(const QString& title, const QString& systemPrompt, const QList<ChatTurn>& turns);
  bool renameChat(qint64 chatId, const QString& title);
  bool setSystemPrompt(qint64 chatId, const QString& systemPrompt);
  bool setChatFolder(qint64 chatId, const QString& folder);  // empty: none; the folder is created on use
  bool setChatTags(qint64 chatId, const QStringList& tags);
  bool trashChat(qint64 chatId);
  bool restoreChat(qint64 chatId);
  bool purgeTrash();  // deletes trashed chats, their messages and their search index entries
  // Most recently updated first; only those in `folder` and carrying `tag` when given.
  QList<StoredChat> chats(const QString& folder = {}, const QString& tag = {}) const;
  StoredChat chat(qint64 chatId) const;  // id 0 when there is none
  QStringList folders() const;
  QStringList tags() const;

  // Messages: a tree per chat.
  qint64 addMessage(qint64 chatId, qint64 parentId, const QString& role, const QString& content, bool complete = true,
                    const QVariantMap& stats = {}, const QVariantMap& settings = {});
  bool updateMessage(qint64 messageId, const QString& content, bool complete);
  bool finishMessage(qint64 messageId, const QString& content, const QVariantMap& stats, const QVariantMap& settings);
  // Makes `messageId` the active child of its parent (the ‹ n/m › arrows).
  bool setActiveMessage(qint64 messageId);
  // Deletes the message and every reply below it; its parent's active child moves to a sibling.
  // `removed`, when given, receives everything deleted, for restoreMessages().
  bool deleteMessage(qint64 messageId, DeletedMessages* removed = nullptr);
  // Puts deleted messages back with their ids, branches and snapshots, in one transaction; the
  // restored message becomes the shown branch again if it was. Fails, changing nothing, when its
  // chat or parent is gone or one of its ids has since been given to a new message.
  bool restoreMessages(const DeletedMessages& removed);
  // Makes every message from the chat's root down to this one the active branch, so that the chat
  // view shows it (a search hit on a branch not shown).
  bool activatePathTo(qint64 messageId);
  StoredMessage message(qint64 messageId) const;  // id 0 when there is none
  // From the active first message down the active children to a leaf.
  QList<StoredMessage> activePath(qint64 chatId) const;
  // The message's siblings (itself included), oldest first.
  QList<qint64> siblings(qint64 messageId) const;

  // Full-text search over message content (FTS5) and chat titles. Any text is accepted: it is
  // split into words, each matched as a prefix.
  QList<SearchHit> search(const QString& text, int limit = 50) const;

 Q_SIGNALS:
  // Chats were added, renamed, moved, trashed or restored.
  void chatsChanged();

 private:
  Database& m_db;
};
