// SessionStore: the app's SQLite database (QtSql, QSQLITE): chats as message trees, folders and
// tags, full-text search, Playground presets, recently opened models, and training runs with their
// per-step metrics and sample generations (sessionstore_runs.cpp), and inspection snapshots of chat
// messages (schema step 5).
//
// Invariants
// - Every connection: busy_timeout first (journal_mode=WAL may itself meet a lock), then WAL,
//   synchronous=FULL (a reply the user saw survives a power loss), foreign_keys=ON, secure_delete=ON
//   (deleting a chat removes its text from the file).
// - The schema version is PRAGMA user_version. Each migration runs in one transaction that also sets
//   user_version, so a database is never half-migrated; an existing database is copied aside
//   (VACUUM INTO <file>.v<N>.bak) before it is upgraded; a database newer than this app is never
//   modified.
// - Every write is one BEGIN IMMEDIATE … COMMIT transaction, rolled back on any error; data is saved
//   as it happens, never at quit.
// - Opening never fails the app. A corrupt file is moved aside and a fresh database started; a
//   read-only, locked or too-new file leaves the store running on an in-memory database, so the app
//   works but nothing is saved. Either way `problem()` says what happened in one readable sentence.
// - Roles and other persisted enums are stored as strings ("user", "assistant"), never renumbered.
//
// Lives on the GUI thread (one connection per store; the statements are small and indexed).
#pragma once

#include <QByteArray>
#include <QList>
#include <QtNumeric>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>

#include "chattypes.h"

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
  QString snippet;  // matched words wrapped in [ and ]
};

struct StoredPreset {
  QString name;
  QVariantMap settings;
  qint64 updatedMs = 0;
};

struct RecentModel {
  QString path;
  QString name;
  QString architecture;
  QString format;
  QString weights;
  qint64 parameterCount = 0;
  int contextLength = 0;
  qint64 lastOpenedMs = 0;
};

// A training run (the jobs of TrainingJobs). Status strings: queued, running, paused, done, failed,
// cancelled.
struct StoredRun {
  qint64 id = 0;
  QString name;
  QString recipe;     // "pretrain" or "sft"
  QString modelPath;  // the model it started from
  QVariantMap settings;  // the run's settings, keyed as the `train` CLI's config (trainingsetup.h)
  QString status;
  QString outputDir;  // the trained model and checkpoints/ inside it
  QString error;      // why it failed
  qint64 totalSteps = 0;
  qint64 createdMs = 0;
  qint64 startedMs = 0;   // 0: not started
  qint64 finishedMs = 0;  // 0: not finished
};

// One optimizer step of a run. NaN marks a value that was not computed (val_loss on most steps).
struct MetricRow {
  qint64 step = 0;
  double loss = 0;
  double valLoss = qQNaN();
  double lr = 0;
  double gradNorm = 0;
  double tokensPerS = 0;
  double elapsedS = 0;
  bool skipped = false;
};

struct SampleRow {
  qint64 step = 0;
  QString prompt;
  QString text;
};

// An inspection snapshot of a chat message (engine::serialize_inspection bytes, not yet checked:
// deserialize_inspection validates them when they are opened).
struct StoredInspection {
  qint64 id = 0;  // 0: there is none
  qint64 messageId = 0;
  qint64 createdMs = 0;
  QString model;  // the model's name when it was taken
  int tokenCount = 0;
  QByteArray blob;
};

Q_DECLARE_METATYPE(MetricRow)
Q_DECLARE_METATYPE(SampleRow)

// A deleted message with every reply below it, exactly as they were stored (ids, parents, which
// branch each one had chosen, inspection snapshots), so that restoreMessages() can put them back.
struct DeletedMessages {
  qint64 chatId = 0;
  qint64 rootId = 0;        // the message that was deleted; 0: nothing was
  bool wasActive = false;   // it was the branch its parent (or the chat) showed
  QList<StoredMessage> messages;  // parents before their children
  QList<qint64> activeChildIds;   // per message: its chosen reply, 0 for none
  QList<StoredInspection> inspections;
};

class SessionStore : public QObject {
  Q_OBJECT

 public:
  enum class OpenState {
    Closed,
    Ok,           // the file at path() is in use
    Recovered,    // it was unreadable; moved to movedAsidePath(), a fresh database is in use
    MemoryOnly,   // it could not be used (read-only, locked, too new): nothing is saved this session
  };

  explicit SessionStore(QObject* parent = nullptr);
  ~SessionStore() override;

  // Opens (creating if needed) and migrates the database at `path`. Always leaves a usable store;
  // see OpenState. busyTimeoutMs: how long a statement waits for another connection's lock.
  OpenState open(const QString& path, int busyTimeoutMs = 3000);
  void close();

  OpenState state() const { return m_state; }
  bool isPersistent() const { return m_state == OpenState::Ok || m_state == OpenState::Recovered; }
  QString path() const { return m_path; }
  QString movedAsidePath() const { return m_movedAside; }
  // Why the store is not simply Ok, for the UI; empty when it is.
  QString problem() const { return m_problem; }
  // The last failed operation's message ("Could not save the message: database is locked"); cleared
  // by the next successful write.
  QString lastError() const { return m_lastError; }
  int schemaVersion() const;
  static int latestSchemaVersion();

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
  StoredChat chat(qint64 chatId) const;                        // id 0 when there is none
  QStringList folders() const;
  QStringList tags() const;

  // Messages: a tree per chat. Adding a message makes it the active child of its parent, so the
  // active path always ends in the newest branch the user worked on.
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
  StoredMessage message(qint64 messageId) const;
  // From the active first message down the active children to a leaf.
  QList<StoredMessage> activePath(qint64 chatId) const;
  // The message's siblings (itself included), oldest first.
  QList<qint64> siblings(qint64 messageId) const;

  // Full-text search over message content (FTS5) and chat titles. Any text is accepted: it is
  // split into words, each matched as a prefix.
  QList<SearchHit> search(const QString& text, int limit = 50) const;

  bool savePreset(const QString& name, const QVariantMap& settings);  // replaces one of that name
  bool deletePreset(const QString& name);
  QList<StoredPreset> presets() const;

  bool recordModel(const RecentModel& model);  // upserts by path, stamped now
  bool forgetModel(const QString& path);
  QList<RecentModel> recentModels(int limit = 20) const;

  // Training runs. Metrics and samples are upserted by (run, step[, prompt]): a run resumed from an
  // earlier checkpoint rewrites the steps after it with the same values (resume is exact).
  qint64 createRun(const StoredRun& run);  // returns the id (0 on failure); createdMs is stamped now
  bool setRunStatus(qint64 runId, const QString& status, const QString& error = {});
  bool setRunOutputDir(qint64 runId, const QString& dir);
  bool deleteRun(qint64 runId);  // with its metrics and samples
  // All rows in one transaction (the worker's rows of ~250 ms arrive together).
  bool appendMetrics(qint64 runId, const QList<MetricRow>& rows);
  bool appendSamples(qint64 runId, const QList<SampleRow>& rows);
  StoredRun run(qint64 runId) const;        // id 0 when there is none
  QList<StoredRun> runs() const;            // newest first
  QList<MetricRow> metrics(qint64 runId) const;  // by step
  QList<SampleRow> samples(qint64 runId) const;  // by step
  // At startup: runs left 'running' by a crash or kill become 'paused' (resumable from their newest
  // checkpoint). Returns their ids.
  QList<qint64> pauseInterruptedRuns();

  // Inspection snapshots of chat messages (schema step 5), deleted with their message. Returns the
  // new row's id, 0 on failure (lastError says why).
  qint64 saveInspection(qint64 messageId, const QByteArray& blob, const QString& model = {}, int tokenCount = 0);
  StoredInspection inspectionFor(qint64 messageId) const;  // the newest; id 0 when there is none

  // PRAGMA quick_check == "ok" (tests and diagnostics).
  bool quickCheck() const;

 Q_SIGNALS:
  // A write failed (lastError() says why); the UI shows it. Not emitted for read errors.
  void writeFailed(const QString& message);
  // Chats were added, renamed, moved, trashed or restored.
  void chatsChanged();
  // A run was created, deleted or changed status.
  void runsChanged();

 private:
  struct Tx;  // RAII write transaction
  bool openAt(const QString& path, int busyTimeoutMs, QString* error, int* sqliteCode);
  bool configure(QString* error, int* sqliteCode);
  bool migrate(QString* error, int* sqliteCode);
  void openInMemory();
  bool fail(const QString& what, const QString& detail);       // a write failed: record, signal
  void readFailed(const QString& what, const QString& detail) const;
  qint64 nowMs() const;
  bool touchChat(qint64 chatId);
  // One statement in its own write transaction; on failure records `what` and the reason.
  bool execWrite(const QString& what, const QString& sql, const QVariantList& values);
  // One statement run once per row, all in one write transaction; lastId: the last row's rowid.
  bool execMany(const QString& what, const QString& sql, const QList<QVariantList>& rows, qint64* lastId = nullptr);

  QString m_connection;
  QString m_path;
  QString m_movedAside;
  QString m_problem;
  mutable QString m_lastError;
  OpenState m_state = OpenState::Closed;
};
