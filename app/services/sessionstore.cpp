// SessionStore: schema, migrations, fault handling and the queries behind chats, presets and models.
#include "sessionstore.h"

#include <QAtomicInteger>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <array>
#include <utility>

namespace {

// SQLite primary result codes we tell apart (sqlite3.h; stable across versions).
constexpr int kSqliteBusy = 5;
constexpr int kSqliteLocked = 6;
constexpr int kSqliteReadOnly = 8;
constexpr int kSqliteIoErr = 10;
constexpr int kSqliteCorrupt = 11;
constexpr int kSqliteCantOpen = 14;
constexpr int kSqliteNotADb = 26;

int primaryCode(const QSqlError& e) {
  bool ok = false;
  const int code = e.nativeErrorCode().toInt(&ok);
  return ok ? (code & 0xff) : 0;
}

QString errorText(const QSqlError& e) {
  const QString db = e.databaseText().trimmed();
  return db.isEmpty() ? e.text().trimmed() : db;
}

// One schema step. Migrations are append-only: a released step is never edited, renumbered or
// removed, because databases on users' disks were built by it. Later features (training runs,
// metrics, inspection snapshots) add a step at the end of this list.
struct Migration {
  int version;
  const char* what;
  QStringList statements;
};

const QList<Migration>& migrations() {
  static const QList<Migration> list = {
      {1,
       "chats and their message trees",
       {
           "CREATE TABLE chats ("
           " id INTEGER PRIMARY KEY,"
           " title TEXT NOT NULL,"
           " system_prompt TEXT NOT NULL DEFAULT '',"
           " created_ms INTEGER NOT NULL,"
           " updated_ms INTEGER NOT NULL,"
           " trashed_ms INTEGER,"
           // The chosen first message (a chat may have several when the first one was edited).
           " active_root_id INTEGER REFERENCES messages(id) ON DELETE SET NULL)",
           "CREATE TABLE messages ("
           " id INTEGER PRIMARY KEY,"
           " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
           // No cascade on the parent: a deep chat would exceed SQLite's trigger depth. Subtrees are
           // deleted in one statement (deleteMessage), checked at its end.
           " parent_id INTEGER REFERENCES messages(id),"
           " active_child_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,"
           " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),"
           " content TEXT NOT NULL,"
           " created_ms INTEGER NOT NULL,"
           " complete INTEGER NOT NULL DEFAULT 1,"
           " stats TEXT,"
           " settings TEXT)",
           "CREATE INDEX messages_by_parent ON messages(chat_id, parent_id)",
           "CREATE INDEX chats_by_update ON chats(trashed_ms, updated_ms)",
       }},
      {2,
       "folders, tags and full-text search",
       {
           "CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
           "ALTER TABLE chats ADD COLUMN folder_id INTEGER REFERENCES folders(id) ON DELETE SET NULL",
           "CREATE TABLE chat_tags ("
           " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
           " tag TEXT NOT NULL,"
           " PRIMARY KEY (chat_id, tag)) WITHOUT ROWID",
           // External-content FTS5 over messages.content, kept in sync by the triggers below.
           "CREATE VIRTUAL TABLE message_search USING fts5("
           " content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
           "CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN"
           " INSERT INTO message_search(rowid, content) VALUES (new.id, new.content); END",
           "CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN"
           " INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.id, old.content); END",
           "CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages BEGIN"
           " INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.id, old.content);"
           " INSERT INTO message_search(rowid, content) VALUES (new.id, new.content); END",
           // Messages written by version 1 enter the index now.
           "INSERT INTO message_search(message_search) VALUES ('rebuild')",
       }},
      {3,
       "Playground presets and recently opened models",
       {
           "CREATE TABLE presets ("
           " name TEXT PRIMARY KEY,"
           " settings TEXT NOT NULL,"
           " updated_ms INTEGER NOT NULL)",
           "CREATE TABLE recent_models ("
           " path TEXT PRIMARY KEY,"
           " name TEXT NOT NULL,"
           " architecture TEXT NOT NULL DEFAULT '',"
           " format TEXT NOT NULL DEFAULT '',"
           " weights TEXT NOT NULL DEFAULT '',"
           " parameter_count INTEGER NOT NULL DEFAULT 0,"
           " context_length INTEGER NOT NULL DEFAULT 0,"
           " last_opened_ms INTEGER NOT NULL)",
       }},
      {4,
       "training runs, their metrics and sample generations",
       {
           // status: queued, running, paused, done, failed, cancelled (strings, see sessionstore_runs.cpp).
           "CREATE TABLE runs ("
           " id INTEGER PRIMARY KEY,"
           " name TEXT NOT NULL,"
           " recipe TEXT NOT NULL,"
           " model_path TEXT NOT NULL,"
           " settings TEXT NOT NULL,"
           " status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'paused', 'done', 'failed', 'cancelled')),"
           " output_dir TEXT NOT NULL DEFAULT '',"
           " error TEXT NOT NULL DEFAULT '',"
           " total_steps INTEGER NOT NULL DEFAULT 0,"
           " created_ms INTEGER NOT NULL,"
           " started_ms INTEGER,"
           " finished_ms INTEGER)",
           // One row per optimizer step; a resumed run rewrites the steps after its checkpoint (REPLACE).
           "CREATE TABLE metrics ("
           " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
           " step INTEGER NOT NULL,"
           " loss REAL,"
           " val_loss REAL,"
           " lr REAL,"
           " grad_norm REAL,"
           " tokens_per_s REAL,"
           " elapsed_s REAL,"
           " skipped INTEGER NOT NULL DEFAULT 0,"
           " PRIMARY KEY (run_id, step)) WITHOUT ROWID",
           "CREATE TABLE samples ("
           " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
           " step INTEGER NOT NULL,"
           " prompt TEXT NOT NULL,"
           " text TEXT NOT NULL,"
           " PRIMARY KEY (run_id, step, prompt)) WITHOUT ROWID",
       }},
      {5,
       "inspection snapshots of chat messages",
       {
           // blob: engine::serialize_inspection of the chat up to and including the message. Deleting
           // the message (or its chat, whose messages cascade) deletes its snapshots.
           "CREATE TABLE inspections ("
           " id INTEGER PRIMARY KEY,"
           " message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,"
           " created_ms INTEGER NOT NULL,"
           " model TEXT NOT NULL DEFAULT '',"
           " token_count INTEGER NOT NULL DEFAULT 0,"
           " blob BLOB NOT NULL)",
           "CREATE INDEX inspections_by_message ON inspections(message_id, id)",
       }},
  };
  return list;
}

QString toJson(const QVariantMap& map) {
  if (map.isEmpty()) return {};
  return QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(map)).toJson(QJsonDocument::Compact));
}

QVariantMap fromJson(const QVariant& text) {
  if (text.isNull()) return {};
  const QJsonDocument doc = QJsonDocument::fromJson(text.toString().toUtf8());
  return doc.isObject() ? doc.object().toVariantMap() : QVariantMap{};
}

// User text to an FTS5 query that cannot be a syntax error: every word quoted, matched as a prefix.
QString ftsQuery(const QString& text) {
  static const QRegularExpression words(QStringLiteral("[\\w]+"), QRegularExpression::UseUnicodePropertiesOption);
  QStringList terms;
  auto it = words.globalMatch(text);
  while (it.hasNext()) terms << QLatin1Char('"') + it.next().captured() + QStringLiteral("\"*");
  return terms.join(QLatin1Char(' '));
}

StoredMessage readMessage(const QSqlQuery& q) {
  // Column order of kMessageColumns.
  StoredMessage m;
  m.id = q.value(0).toLongLong();
  m.chatId = q.value(1).toLongLong();
  m.parentId = q.value(2).toLongLong();
  m.role = q.value(3).toString();
  m.content = q.value(4).toString();
  m.createdMs = q.value(5).toLongLong();
  m.complete = q.value(6).toInt() != 0;
  m.stats = fromJson(q.value(7));
  m.settings = fromJson(q.value(8));
  return m;
}
const char* const kMessageColumns = "id, chat_id, parent_id, role, content, created_ms, complete, stats, settings";

// A string to bind: QtSql binds a null QString as SQL NULL, which the NOT NULL text columns refuse.
QVariant str(const QString& s) { return s.isNull() ? QVariant(QStringLiteral("")) : QVariant(s); }

QString nextConnectionName() {
  static QAtomicInteger<int> counter;
  return QStringLiteral("wb-session-store-%1").arg(counter.fetchAndAddRelaxed(1));
}

}  // namespace

// A write transaction. BEGIN IMMEDIATE takes the write lock up front, so a busy database fails at the
// start (after busy_timeout) rather than halfway through; anything not committed is rolled back.
struct SessionStore::Tx {
  QSqlDatabase db;
  bool active = false;
  QSqlError error;
  explicit Tx(const QString& connection) : db(QSqlDatabase::database(connection, false)) {
    QSqlQuery q(db);
    active = q.exec(QStringLiteral("BEGIN IMMEDIATE"));
    if (!active) error = q.lastError();
  }
  ~Tx() {
    if (active) QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
  }
  // Runs a statement; on failure remembers the error. Returns the query for reading results.
  bool exec(QSqlQuery& q) {
    if (q.exec()) return true;
    error = q.lastError();
    return false;
  }
  bool exec(const QString& sql) {
    QSqlQuery q(db);
    if (q.exec(sql)) return true;
    error = q.lastError();
    return false;
  }
  bool commit() {
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("COMMIT"))) {
      error = q.lastError();
      return false;
    }
    active = false;
    return true;
  }
};

SessionStore::SessionStore(QObject* parent) : QObject(parent), m_connection(nextConnectionName()) {}

SessionStore::~SessionStore() { close(); }

int SessionStore::latestSchemaVersion() { return migrations().constLast().version; }

void SessionStore::close() {
  if (QSqlDatabase::contains(m_connection)) {
    {
      QSqlDatabase db = QSqlDatabase::database(m_connection, false);
      db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
  }
  m_state = OpenState::Closed;
}

qint64 SessionStore::nowMs() const { return QDateTime::currentMSecsSinceEpoch(); }

bool SessionStore::openAt(const QString& path, int busyTimeoutMs, QString* error, int* sqliteCode) {
  close();
  QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
  db.setDatabaseName(path);
  // Set before anything else runs: the driver applies it as the connection opens.
  db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(busyTimeoutMs));
  if (!db.open()) {
    *error = errorText(db.lastError());
    *sqliteCode = primaryCode(db.lastError());
    return false;
  }
  return configure(error, sqliteCode) && migrate(error, sqliteCode);
}

bool SessionStore::configure(QString* error, int* sqliteCode) {
  QSqlDatabase db = QSqlDatabase::database(m_connection, false);
  QSqlQuery q(db);
  // Reading the schema is the first thing that touches the file: a non-database fails here.
  if (!q.exec(QStringLiteral("PRAGMA quick_check"))) {
    *error = errorText(q.lastError());
    *sqliteCode = primaryCode(q.lastError());
    return false;
  }
  QStringList problems;
  while (q.next()) problems << q.value(0).toString();
  if (problems != QStringList{QStringLiteral("ok")}) {
    *error = problems.mid(0, 3).join(QStringLiteral("; "));
    *sqliteCode = kSqliteCorrupt;
    return false;
  }
  // A database from a newer app is left exactly as it is: journal_mode=WAL below would rewrite its header.
  const int version = schemaVersion();
  if (version > latestSchemaVersion()) {
    *error = tr("it was written by a newer version of LLM Workbench (schema %1; this version knows up to %2)")
                 .arg(version)
                 .arg(latestSchemaVersion());
    *sqliteCode = -1;  // not SQLite's fault: handled as "leave the file alone"
    return false;
  }
  const bool memory = db.databaseName() == QLatin1String(":memory:");
  const QStringList pragmas = {
      memory ? QStringLiteral("PRAGMA journal_mode=MEMORY") : QStringLiteral("PRAGMA journal_mode=WAL"),
      QStringLiteral("PRAGMA synchronous=FULL"), QStringLiteral("PRAGMA foreign_keys=ON"),
      QStringLiteral("PRAGMA secure_delete=ON")};
  for (const QString& p : pragmas) {
    if (!q.exec(p)) {
      *error = errorText(q.lastError());
      *sqliteCode = primaryCode(q.lastError());
      return false;
    }
    if (!memory && p.contains(QLatin1String("journal_mode")) &&
        !(q.next() && q.value(0).toString().compare(QLatin1String("wal"), Qt::CaseInsensitive) == 0)) {
      // Not fatal (a file system without shared memory), but say so in the diagnostics.
      qWarning("SessionStore: journal_mode=WAL was refused; using the rollback journal");
    }
  }
  return true;
}

bool SessionStore::migrate(QString* error, int* sqliteCode) {
  QSqlDatabase db = QSqlDatabase::database(m_connection, false);
  const int current = schemaVersion();
  if (current < 0) {
    *error = tr("cannot read its schema version");
    return false;
  }
  if (current > latestSchemaVersion()) {
    *error = tr("it was written by a newer version of LLM Workbench (schema %1; this version knows up to %2)")
                 .arg(current)
                 .arg(latestSchemaVersion());
    *sqliteCode = -1;  // not SQLite's fault: handled as "leave the file alone"
    return false;
  }
  if (current > 0 && current < latestSchemaVersion() && db.databaseName() != QLatin1String(":memory:")) {
    // A copy of the old database before any step touches it, for a downgrade or a failed step.
    const QString backup = db.databaseName() + QStringLiteral(".v%1.bak").arg(current);
    QFile::remove(backup);
    QSqlQuery q(db);
    q.prepare(QStringLiteral("VACUUM INTO ?"));
    q.addBindValue(backup);
    if (!q.exec()) {
      *error = tr("could not back it up before upgrading: %1").arg(errorText(q.lastError()));
      *sqliteCode = primaryCode(q.lastError());
      return false;
    }
  }
  for (const Migration& m : migrations()) {
    if (m.version <= current) continue;
    Tx tx(m_connection);
    bool ok = tx.active;
    for (const QString& sql : m.statements) {
      if (!ok) break;
      ok = tx.exec(sql);
    }
    ok = ok && tx.exec(QStringLiteral("PRAGMA user_version = %1").arg(m.version)) && tx.commit();
    if (!ok) {
      *error = tr("upgrading to schema %1 (%2) failed: %3").arg(m.version).arg(QLatin1String(m.what), errorText(tx.error));
      *sqliteCode = primaryCode(tx.error);
      return false;
    }
  }
  // A write now, so a read-only or locked file is found at startup and not at the first message.
  Tx probe(m_connection);
  if (!probe.active || !probe.exec(QStringLiteral("PRAGMA user_version = %1").arg(latestSchemaVersion())) ||
      !probe.commit()) {
    *error = errorText(probe.error);
    *sqliteCode = primaryCode(probe.error);
    return false;
  }
  return true;
}

void SessionStore::openInMemory() {
  QString error;
  int code = 0;
  if (!openAt(QStringLiteral(":memory:"), 0, &error, &code))
    qWarning("SessionStore: even the in-memory database failed: %s", qPrintable(error));
}

SessionStore::OpenState SessionStore::open(const QString& path, int busyTimeoutMs) {
  m_path = path;
  m_movedAside.clear();
  m_problem.clear();
  m_lastError.clear();
  const QString name = QDir::toNativeSeparators(path);
  const QFileInfo info(path);
  QDir().mkpath(info.absolutePath());

  // Also checked by the permission bits, not only by access(): the answer is then the same when
  // running as root, where SQLite would happily write to a file nobody may write.
  const QFileDevice::Permissions anyWrite = QFileDevice::WriteOwner | QFileDevice::WriteGroup | QFileDevice::WriteOther;
  const bool readOnly = (info.exists() && (!(info.permissions() & QFileDevice::WriteUser) || !(info.permissions() & anyWrite))) ||
                        (!info.exists() && !QFileInfo(info.absolutePath()).isWritable());
  if (readOnly) {
    m_problem = tr("The chat database %1 is read-only, so chats from this session will not be saved.").arg(name);
    openInMemory();
    m_state = OpenState::MemoryOnly;
    return m_state;
  }

  QString error;
  int code = 0;
  if (openAt(path, busyTimeoutMs, &error, &code)) {
    m_state = OpenState::Ok;
    return m_state;
  }
  close();

  if (code == kSqliteCorrupt || code == kSqliteNotADb) {
    // Quarantine the file with its journal files and start fresh: the app must not crash-loop on it.
    const QString stamp = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    const QString aside = path + QStringLiteral(".corrupt-") + stamp;
    bool moved = QFile::rename(path, aside);
    for (const char* suffix : {"-wal", "-shm"})
      if (QFile::exists(path + QLatin1String(suffix))) moved = QFile::rename(path + QLatin1String(suffix), aside + QLatin1String(suffix)) && moved;
    if (moved && openAt(path, busyTimeoutMs, &error, &code)) {
      m_movedAside = aside;
      m_problem = tr("The chat database was damaged (%1). It was moved to %2 and a new, empty one was started.")
                      .arg(error.isEmpty() ? tr("not a database") : error, QDir::toNativeSeparators(aside));
      m_state = OpenState::Recovered;
      return m_state;
    }
    close();
    m_problem = tr("The chat database %1 is damaged and could not be moved aside; chats from this session will not "
                   "be saved.")
                    .arg(name);
  } else if (code == kSqliteBusy || code == kSqliteLocked) {
    m_problem = tr("The chat database %1 is locked by another program (is LLM Workbench already running?). Chats "
                   "from this session will not be saved.")
                    .arg(name);
  } else if (code == kSqliteReadOnly || code == kSqliteCantOpen || code == kSqliteIoErr) {
    m_problem = tr("The chat database %1 cannot be written (%2), so chats from this session will not be saved.")
                    .arg(name, error);
  } else if (code == -1) {
    m_problem = tr("The chat database %1 was left unchanged: %2. Chats from this session will not be saved.")
                    .arg(name, error);
  } else {
    m_problem = tr("The chat database %1 could not be opened (%2); chats from this session will not be saved.")
                    .arg(name, error);
  }
  openInMemory();
  m_state = OpenState::MemoryOnly;
  return m_state;
}

int SessionStore::schemaVersion() const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) return -1;
  return q.value(0).toInt();
}

bool SessionStore::quickCheck() const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  return q.exec(QStringLiteral("PRAGMA quick_check")) && q.next() && q.value(0).toString() == QLatin1String("ok");
}

bool SessionStore::fail(const QString& what, const QString& detail) {
  m_lastError = detail.isEmpty() ? what : tr("%1: %2").arg(what, detail);
  Q_EMIT writeFailed(m_lastError);
  return false;
}

void SessionStore::readFailed(const QString& what, const QString& detail) const {
  m_lastError = tr("%1: %2").arg(what, detail);
  qWarning("SessionStore: %s", qPrintable(m_lastError));
}

// ---- chats ---------------------------------------------------------------------------------------

qint64 SessionStore::createChat(const QString& title, const QString& systemPrompt) {
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  q.prepare(QStringLiteral("INSERT INTO chats (title, system_prompt, created_ms, updated_ms) VALUES (?, ?, ?, ?)"));
  const qint64 now = nowMs();
  q.addBindValue(str(title));
  q.addBindValue(str(systemPrompt));
  q.addBindValue(now);
  q.addBindValue(now);
  if (!tx.active || !tx.exec(q)) return fail(tr("Could not create the chat"), errorText(tx.error)), 0;
  const qint64 id = q.lastInsertId().toLongLong();
  if (!tx.commit()) return fail(tr("Could not create the chat"), errorText(tx.error)), 0;
  m_lastError.clear();
  Q_EMIT chatsChanged();
  return id;
}

qint64 SessionStore::importChat(const QString& title, const QString& systemPrompt, const QList<ChatTurn>& turns) {
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  const qint64 now = nowMs();
  q.prepare(QStringLiteral("INSERT INTO chats (title, system_prompt, created_ms, updated_ms) VALUES (?, ?, ?, ?)"));
  for (const QVariant& v : {str(title), str(systemPrompt), QVariant(now), QVariant(now)}) q.addBindValue(v);
  bool ok = tx.active && tx.exec(q);
  const qint64 chatId = ok ? q.lastInsertId().toLongLong() : 0;
  qint64 parent = 0;
  for (const ChatTurn& t : turns) {
    if (!ok) break;
    q.prepare(QStringLiteral("INSERT INTO messages (chat_id, parent_id, role, content, created_ms) VALUES (?, ?, ?, ?, ?)"));
    for (const QVariant& v : {QVariant(chatId), parent ? QVariant(parent) : QVariant(), str(t.role), str(t.content), QVariant(now)})
      q.addBindValue(v);
    ok = tx.exec(q);
    const qint64 id = ok ? q.lastInsertId().toLongLong() : 0;
    if (ok) {
      q.prepare(parent ? QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?")
                       : QStringLiteral("UPDATE chats SET active_root_id = ? WHERE id = ?"));
      q.addBindValue(id);
      q.addBindValue(parent ? parent : chatId);
      ok = tx.exec(q);
    }
    parent = id;
  }
  if (!ok || !tx.commit()) return fail(tr("Could not import the chat"), errorText(tx.error)), 0;
  m_lastError.clear();
  Q_EMIT chatsChanged();
  return chatId;
}

bool SessionStore::execWrite(const QString& what, const QString& sql, const QVariantList& values) {
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  q.prepare(sql);
  for (const QVariant& v : values) q.addBindValue(v);
  if (!tx.active || !tx.exec(q) || !tx.commit()) return fail(what, errorText(tx.error));
  m_lastError.clear();
  return true;
}

bool SessionStore::execMany(const QString& what, const QString& sql, const QList<QVariantList>& rows, qint64* lastId) {
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  bool ok = tx.active && q.prepare(sql);
  for (const QVariantList& row : rows) {
    if (!ok) break;
    for (const QVariant& v : row) q.addBindValue(v);
    ok = tx.exec(q);
  }
  if (ok && lastId) *lastId = q.lastInsertId().toLongLong();
  if (!ok || !tx.commit()) return fail(what, errorText(tx.error.isValid() ? tx.error : q.lastError()));
  m_lastError.clear();
  return true;
}

bool SessionStore::renameChat(qint64 chatId, const QString& title) {
  if (!execWrite(tr("Could not rename the chat"), QStringLiteral("UPDATE chats SET title = ?, updated_ms = ? WHERE id = ?"),
                 {str(title), nowMs(), chatId}))
    return false;
  Q_EMIT chatsChanged();
  return true;
}

bool SessionStore::setSystemPrompt(qint64 chatId, const QString& systemPrompt) {
  return execWrite(tr("Could not save the system prompt"),
                   QStringLiteral("UPDATE chats SET system_prompt = ?, updated_ms = ? WHERE id = ?"), {str(systemPrompt), nowMs(), chatId});
}

bool SessionStore::setChatFolder(qint64 chatId, const QString& folder) {
  Tx tx(m_connection);
  const QString name = folder.trimmed();
  QSqlQuery q(tx.db);
  bool ok = tx.active;
  if (ok && !name.isEmpty()) {
    q.prepare(QStringLiteral("INSERT OR IGNORE INTO folders (name) VALUES (?)"));
    q.addBindValue(name);
    ok = tx.exec(q);
  }
  if (ok) {
    q.prepare(QStringLiteral("UPDATE chats SET folder_id = (SELECT id FROM folders WHERE name = ?) WHERE id = ?"));
    q.addBindValue(name.isEmpty() ? QVariant() : QVariant(name));
    q.addBindValue(chatId);
    ok = tx.exec(q);
  }
  // Folders live as long as a chat is in them.
  ok = ok && tx.exec(QStringLiteral("DELETE FROM folders WHERE id NOT IN (SELECT folder_id FROM chats WHERE folder_id IS NOT NULL)"));
  if (!ok || !tx.commit()) return fail(tr("Could not move the chat"), errorText(tx.error));
  Q_EMIT chatsChanged();
  return true;
}

bool SessionStore::setChatTags(qint64 chatId, const QStringList& tags) {
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  q.prepare(QStringLiteral("DELETE FROM chat_tags WHERE chat_id = ?"));
  q.addBindValue(chatId);
  bool ok = tx.active && tx.exec(q);
  for (const QString& raw : tags) {
    const QString tag = raw.trimmed();
    if (!ok || tag.isEmpty()) continue;
    q.prepare(QStringLiteral("INSERT OR IGNORE INTO chat_tags (chat_id, tag) VALUES (?, ?)"));
    q.addBindValue(chatId);
    q.addBindValue(tag);
    ok = tx.exec(q);
  }
  if (!ok || !tx.commit()) return fail(tr("Could not save the tags"), errorText(tx.error));
  Q_EMIT chatsChanged();
  return true;
}

bool SessionStore::trashChat(qint64 chatId) {
  if (!execWrite(tr("Could not delete the chat"), QStringLiteral("UPDATE chats SET trashed_ms = ? WHERE id = ?"), {nowMs(), chatId}))
    return false;
  Q_EMIT chatsChanged();
  return true;
}

bool SessionStore::restoreChat(qint64 chatId) {
  if (!execWrite(tr("Could not restore the chat"), QStringLiteral("UPDATE chats SET trashed_ms = NULL WHERE id = ?"), {chatId}))
    return false;
  Q_EMIT chatsChanged();
  return true;
}

bool SessionStore::purgeTrash() {
  {
    // Nothing to do most of the time (it runs at every start); the index merge below is not free.
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (q.exec(QStringLiteral("SELECT 1 FROM chats WHERE trashed_ms IS NOT NULL LIMIT 1")) && !q.next()) return true;
  }
  {
    Tx tx(m_connection);
    bool ok = tx.active && tx.exec(QStringLiteral("DELETE FROM chats WHERE trashed_ms IS NOT NULL")) &&
              tx.exec(QStringLiteral("DELETE FROM folders WHERE id NOT IN (SELECT folder_id FROM chats WHERE folder_id IS NOT NULL)")) &&
              // Merges the index segments, so deleted words leave the index's pages too.
              tx.exec(QStringLiteral("INSERT INTO message_search(message_search) VALUES ('optimize')"));
    if (!ok || !tx.commit()) return fail(tr("Could not delete chats"), errorText(tx.error));
  }
  // secure_delete zeroes freed pages in the database; the WAL still holds the old ones until a checkpoint.
  QSqlQuery(QSqlDatabase::database(m_connection, false)).exec(QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)"));
  return true;
}

namespace {
const char* const kChatColumns =
    "c.id, c.title, c.system_prompt, c.created_ms, c.updated_ms, f.name,"
    " (SELECT group_concat(tag, char(31)) FROM (SELECT tag FROM chat_tags t WHERE t.chat_id = c.id ORDER BY tag))";

StoredChat readChat(const QSqlQuery& q) {
  StoredChat c;
  c.id = q.value(0).toLongLong();
  c.title = q.value(1).toString();
  c.systemPrompt = q.value(2).toString();
  c.createdMs = q.value(3).toLongLong();
  c.updatedMs = q.value(4).toLongLong();
  c.folder = q.value(5).toString();
  const QString tags = q.value(6).toString();
  if (!tags.isEmpty()) c.tags = tags.split(QChar(31));
  return c;
}
}  // namespace

QList<StoredChat> SessionStore::chats(const QString& folder, const QString& tag) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT %1 FROM chats c LEFT JOIN folders f ON f.id = c.folder_id"
                           " WHERE c.trashed_ms IS NULL AND (? = '' OR f.name = ?)"
                           " AND (? = '' OR EXISTS (SELECT 1 FROM chat_tags t WHERE t.chat_id = c.id AND t.tag = ?))"
                           " ORDER BY c.updated_ms DESC, c.id DESC")
                .arg(QLatin1String(kChatColumns)));
  for (const QString& value : {folder, folder, tag, tag}) q.addBindValue(str(value));
  QList<StoredChat> out;
  if (!q.exec()) {
    readFailed(tr("Could not read the chats"), errorText(q.lastError()));
    return out;
  }
  while (q.next()) out << readChat(q);
  return out;
}

StoredChat SessionStore::chat(qint64 chatId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT %1 FROM chats c LEFT JOIN folders f ON f.id = c.folder_id WHERE c.id = ? AND c.trashed_ms IS NULL")
                .arg(QLatin1String(kChatColumns)));
  q.addBindValue(chatId);
  if (q.exec() && q.next()) return readChat(q);
  return {};
}

QStringList SessionStore::folders() const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  QStringList out;
  if (q.exec(QStringLiteral("SELECT name FROM folders ORDER BY name COLLATE NOCASE")))
    while (q.next()) out << q.value(0).toString();
  return out;
}

QStringList SessionStore::tags() const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  QStringList out;
  if (q.exec(QStringLiteral("SELECT DISTINCT t.tag FROM chat_tags t JOIN chats c ON c.id = t.chat_id"
                            " WHERE c.trashed_ms IS NULL ORDER BY t.tag COLLATE NOCASE")))
    while (q.next()) out << q.value(0).toString();
  return out;
}

bool SessionStore::touchChat(qint64 chatId) {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("UPDATE chats SET updated_ms = ? WHERE id = ?"));
  q.addBindValue(nowMs());
  q.addBindValue(chatId);
  return q.exec();
}

// ---- messages ------------------------------------------------------------------------------------

qint64 SessionStore::addMessage(qint64 chatId, qint64 parentId, const QString& role, const QString& content,
                                bool complete, const QVariantMap& stats, const QVariantMap& settings) {
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  bool ok = tx.active;
  if (ok && parentId != 0) {
    // The parent must be in the same chat: a tree never spans chats.
    q.prepare(QStringLiteral("SELECT 1 FROM messages WHERE id = ? AND chat_id = ?"));
    q.addBindValue(parentId);
    q.addBindValue(chatId);
    if (!tx.exec(q)) return fail(tr("Could not save the message"), errorText(tx.error)), 0;
    if (!q.next()) return fail(tr("Could not save the message"), tr("message %1 is not in chat %2").arg(parentId).arg(chatId)), 0;
  }
  q.prepare(QStringLiteral("INSERT INTO messages (chat_id, parent_id, role, content, created_ms, complete, stats, settings)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
  q.addBindValue(chatId);
  q.addBindValue(parentId ? QVariant(parentId) : QVariant());
  q.addBindValue(str(role));
  q.addBindValue(str(content));
  q.addBindValue(nowMs());
  q.addBindValue(complete ? 1 : 0);
  q.addBindValue(stats.isEmpty() ? QVariant() : QVariant(toJson(stats)));
  q.addBindValue(settings.isEmpty() ? QVariant() : QVariant(toJson(settings)));
  ok = ok && tx.exec(q);
  const qint64 id = ok ? q.lastInsertId().toLongLong() : 0;
  if (ok) {
    q.prepare(parentId ? QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?")
                       : QStringLiteral("UPDATE chats SET active_root_id = ? WHERE id = ?"));
    q.addBindValue(id);
    q.addBindValue(parentId ? parentId : chatId);
    ok = tx.exec(q);
  }
  ok = ok && touchChat(chatId);
  if (!ok || !tx.commit()) return fail(tr("Could not save the message"), errorText(tx.error)), 0;
  m_lastError.clear();
  return id;
}

bool SessionStore::updateMessage(qint64 messageId, const QString& content, bool complete) {
  return execWrite(tr("Could not save the message"), QStringLiteral("UPDATE messages SET content = ?, complete = ? WHERE id = ?"),
                   {str(content), complete ? 1 : 0, messageId});
}

bool SessionStore::finishMessage(qint64 messageId, const QString& content, const QVariantMap& stats,
                                 const QVariantMap& settings) {
  return execWrite(tr("Could not save the reply"),
                   QStringLiteral("UPDATE messages SET content = ?, complete = 1, stats = ?, settings = ? WHERE id = ?"),
                   {str(content), stats.isEmpty() ? QVariant() : QVariant(toJson(stats)),
                    settings.isEmpty() ? QVariant() : QVariant(toJson(settings)), messageId});
}

bool SessionStore::setActiveMessage(qint64 messageId) {
  const StoredMessage m = message(messageId);
  if (m.id == 0) return fail(tr("Could not switch the reply"), tr("message %1 does not exist").arg(messageId));
  return execWrite(tr("Could not switch the reply"),
                   m.parentId ? QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?")
                              : QStringLiteral("UPDATE chats SET active_root_id = ? WHERE id = ?"),
                   {messageId, m.parentId ? m.parentId : m.chatId});
}

namespace {
// The subtree below and including ?, parents before children (depth first by the recursion).
const char* const kSubtreeCte =
    "WITH RECURSIVE sub(id, depth) AS (SELECT ?, 0 UNION ALL"
    " SELECT m.id, sub.depth + 1 FROM messages m JOIN sub ON m.parent_id = sub.id)";
}  // namespace

bool SessionStore::deleteMessage(qint64 messageId, DeletedMessages* removed) {
  const StoredMessage m = message(messageId);
  if (m.id == 0) return fail(tr("Could not delete the message"), tr("message %1 does not exist").arg(messageId));
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  bool ok = tx.active;
  DeletedMessages out;
  if (ok && removed) {
    // Read inside the write transaction: exactly what the DELETE below removes.
    out.chatId = m.chatId;
    out.rootId = m.id;
    q.prepare(m.parentId ? QStringLiteral("SELECT active_child_id = ? FROM messages WHERE id = ?")
                         : QStringLiteral("SELECT active_root_id = ? FROM chats WHERE id = ?"));
    q.addBindValue(m.id);
    q.addBindValue(m.parentId ? m.parentId : m.chatId);
    ok = tx.exec(q);
    out.wasActive = ok && q.next() && q.value(0).toInt() == 1;
    q.prepare(QStringLiteral("%1 SELECT %2, coalesce(active_child_id, 0) FROM sub JOIN messages USING (id) ORDER BY depth, id")
                  .arg(QLatin1String(kSubtreeCte),
                       QStringLiteral("messages.id, chat_id, parent_id, role, content, created_ms, complete, stats, settings")));
    q.addBindValue(messageId);
    ok = ok && tx.exec(q);
    while (ok && q.next()) {
      out.messages << readMessage(q);
      out.activeChildIds << q.value(9).toLongLong();
    }
    q.prepare(QStringLiteral("%1 SELECT i.id, i.message_id, i.created_ms, i.model, i.token_count, i.blob"
                             " FROM inspections i JOIN sub ON i.message_id = sub.id ORDER BY i.id")
                  .arg(QLatin1String(kSubtreeCte)));
    q.addBindValue(messageId);
    ok = ok && tx.exec(q);
    while (ok && q.next())
      out.inspections << StoredInspection{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toLongLong(),
                                          q.value(3).toString(),    q.value(4).toInt(),       q.value(5).toByteArray()};
  }
  // The whole subtree in one statement: the parent references are checked once, at its end.
  q.prepare(QStringLiteral("%1 DELETE FROM messages WHERE id IN (SELECT id FROM sub)").arg(QLatin1String(kSubtreeCte)));
  q.addBindValue(messageId);
  ok = ok && tx.exec(q);
  if (ok) {
    // The nearest remaining sibling becomes active (ON DELETE SET NULL cleared the pointer).
    const QString sibling = QStringLiteral(
        "(SELECT id FROM messages WHERE chat_id = ? AND parent_id IS ? ORDER BY abs(id - ?), id LIMIT 1)");
    q.prepare(m.parentId ? QStringLiteral("UPDATE messages SET active_child_id = %1 WHERE id = ?").arg(sibling)
                         : QStringLiteral("UPDATE chats SET active_root_id = %1 WHERE id = ?").arg(sibling));
    q.addBindValue(m.chatId);
    q.addBindValue(m.parentId ? QVariant(m.parentId) : QVariant());
    q.addBindValue(messageId);
    q.addBindValue(m.parentId ? m.parentId : m.chatId);
    ok = tx.exec(q);
  }
  ok = ok && touchChat(m.chatId);
  if (!ok || !tx.commit()) return fail(tr("Could not delete the message"), errorText(tx.error));
  if (removed) *removed = out;
  return true;
}

bool SessionStore::restoreMessages(const DeletedMessages& removed) {
  const QString what = tr("Could not restore the message");
  if (removed.rootId == 0 || removed.messages.isEmpty()) return fail(what, tr("there is nothing to restore"));
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  bool ok = tx.active;
  // Parents first, with their old ids: a taken id or a missing parent or chat fails the statement.
  for (const StoredMessage& m : removed.messages) {
    if (!ok) break;
    q.prepare(QStringLiteral("INSERT INTO messages (id, chat_id, parent_id, role, content, created_ms, complete, stats, settings)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    for (const QVariant& v : {QVariant(m.id), QVariant(m.chatId), m.parentId ? QVariant(m.parentId) : QVariant(), str(m.role),
                              str(m.content), QVariant(m.createdMs), QVariant(m.complete ? 1 : 0),
                              m.stats.isEmpty() ? QVariant() : QVariant(toJson(m.stats)),
                              m.settings.isEmpty() ? QVariant() : QVariant(toJson(m.settings))})
      q.addBindValue(v);
    ok = tx.exec(q);
  }
  // Each message's chosen reply, now that all of them exist again.
  for (qsizetype i = 0; ok && i < removed.messages.size(); ++i) {
    if (!removed.activeChildIds.value(i)) continue;
    q.prepare(QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?"));
    q.addBindValue(removed.activeChildIds[i]);
    q.addBindValue(removed.messages[i].id);
    ok = tx.exec(q);
  }
  for (const StoredInspection& s : removed.inspections) {
    if (!ok) break;
    q.prepare(QStringLiteral("INSERT INTO inspections (id, message_id, created_ms, model, token_count, blob) VALUES (?, ?, ?, ?, ?, ?)"));
    for (const QVariant& v : {QVariant(s.id), QVariant(s.messageId), QVariant(s.createdMs), str(s.model), QVariant(s.tokenCount),
                              QVariant(s.blob)})
      q.addBindValue(v);
    ok = tx.exec(q);
  }
  const StoredMessage& root = removed.messages.first();
  if (ok && removed.wasActive) {
    q.prepare(root.parentId ? QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?")
                            : QStringLiteral("UPDATE chats SET active_root_id = ? WHERE id = ?"));
    q.addBindValue(root.id);
    q.addBindValue(root.parentId ? root.parentId : root.chatId);
    ok = tx.exec(q);
  }
  ok = ok && touchChat(root.chatId);
  if (!ok || !tx.commit()) return fail(what, errorText(tx.error));
  m_lastError.clear();
  return true;
}

bool SessionStore::activatePathTo(qint64 messageId) {
  const QString what = tr("Could not show the message");
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  // Each ancestor (and the message) with its parent: every parent's active child becomes the next
  // message down, and the chat's active first message the top one.
  q.prepare(QStringLiteral("WITH RECURSIVE up(id, parent_id, chat_id, depth) AS ("
                           " SELECT id, parent_id, chat_id, 0 FROM messages WHERE id = ?"
                           " UNION ALL SELECT m.id, m.parent_id, m.chat_id, up.depth + 1 FROM messages m JOIN up ON m.id = up.parent_id"
                           " WHERE up.depth < 10000000)"
                           " SELECT id, parent_id, chat_id FROM up"));
  q.addBindValue(messageId);
  bool ok = tx.active && tx.exec(q);
  QList<std::array<qint64, 3>> chain;
  while (ok && q.next())
    chain.append(std::array<qint64, 3>{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toLongLong()});
  if (ok && chain.isEmpty()) return fail(what, tr("message %1 does not exist").arg(messageId));
  for (const auto& [id, parentId, chatId] : chain) {
    if (!ok) break;
    q.prepare(parentId ? QStringLiteral("UPDATE messages SET active_child_id = ? WHERE id = ?")
                       : QStringLiteral("UPDATE chats SET active_root_id = ? WHERE id = ?"));
    q.addBindValue(id);
    q.addBindValue(parentId ? parentId : chatId);
    ok = tx.exec(q);
  }
  if (!ok || !tx.commit()) return fail(what, errorText(tx.error));
  m_lastError.clear();
  return true;
}

StoredMessage SessionStore::message(qint64 messageId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE id = ?").arg(QLatin1String(kMessageColumns)));
  q.addBindValue(messageId);
  if (q.exec() && q.next()) return readMessage(q);
  return {};
}

QList<StoredMessage> SessionStore::activePath(qint64 chatId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  // Follows the active pointers from the chat's active first message; `depth` keeps the order.
  q.prepare(QStringLiteral("WITH RECURSIVE path(id, depth) AS ("
                           " SELECT active_root_id, 0 FROM chats WHERE id = ? AND active_root_id IS NOT NULL"
                           " UNION ALL SELECT m.active_child_id, p.depth + 1 FROM messages m JOIN path p ON m.id = p.id"
                           // The depth bound stops a cycle that only a damaged file could hold.
                           " WHERE m.active_child_id IS NOT NULL AND p.depth < 10000000)"
                           " SELECT %1 FROM path JOIN messages USING (id) ORDER BY depth")
                .arg(QStringLiteral("messages.id, chat_id, parent_id, role, content, created_ms, complete, stats, settings")));
  q.addBindValue(chatId);
  QList<StoredMessage> out;
  if (!q.exec()) {
    readFailed(tr("Could not read the chat"), errorText(q.lastError()));
    return out;
  }
  while (q.next()) out << readMessage(q);
  return out;
}

QList<qint64> SessionStore::siblings(qint64 messageId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT s.id FROM messages m JOIN messages s ON s.chat_id = m.chat_id AND s.parent_id IS m.parent_id"
                           " WHERE m.id = ? ORDER BY s.id"));
  q.addBindValue(messageId);
  QList<qint64> out;
  if (q.exec())
    while (q.next()) out << q.value(0).toLongLong();
  return out;
}

QList<SearchHit> SessionStore::search(const QString& text, int limit) const {
  QList<SearchHit> out;
  const QString query = ftsQuery(text);
  if (query.isEmpty()) return out;
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  // Titles first (LIKE on the words), then message hits ranked by bm25.
  q.prepare(QStringLiteral("SELECT id, title FROM chats WHERE trashed_ms IS NULL AND title LIKE ? ESCAPE '\\'"
                           " ORDER BY updated_ms DESC LIMIT ?"));
  QString like = text.trimmed();
  like.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('%'), QLatin1String("\\%")).replace(QLatin1Char('_'), QLatin1String("\\_"));
  q.addBindValue(QLatin1Char('%') + like + QLatin1Char('%'));
  q.addBindValue(limit);
  if (q.exec())
    while (q.next()) out << SearchHit{q.value(0).toLongLong(), 0, q.value(1).toString(), q.value(1).toString()};
  q.prepare(QStringLiteral("SELECT c.id, m.id, c.title, snippet(message_search, 0, '[', ']', '…', 12)"
                           " FROM message_search JOIN messages m ON m.id = message_search.rowid JOIN chats c ON c.id = m.chat_id"
                           " WHERE message_search MATCH ? AND c.trashed_ms IS NULL ORDER BY bm25(message_search) LIMIT ?"));
  q.addBindValue(query);
  q.addBindValue(limit);
  if (!q.exec()) {
    readFailed(tr("Search failed"), errorText(q.lastError()));
    return out;
  }
  while (q.next()) out << SearchHit{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toString(), q.value(3).toString()};
  return out;
}

// ---- presets and models ----------------------------------------------------------------------------

bool SessionStore::savePreset(const QString& name, const QVariantMap& settings) {
  if (name.trimmed().isEmpty()) return fail(tr("Could not save the preset"), tr("it needs a name"));
  return execWrite(tr("Could not save the preset"),
                   QStringLiteral("INSERT OR REPLACE INTO presets (name, settings, updated_ms) VALUES (?, ?, ?)"),
                   {name.trimmed(),
                    QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(settings)).toJson(QJsonDocument::Compact)),
                    nowMs()});
}

bool SessionStore::deletePreset(const QString& name) {
  return execWrite(tr("Could not delete the preset"), QStringLiteral("DELETE FROM presets WHERE name = ?"), {name});
}

QList<StoredPreset> SessionStore::presets() const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  QList<StoredPreset> out;
  if (q.exec(QStringLiteral("SELECT name, settings, updated_ms FROM presets ORDER BY name COLLATE NOCASE")))
    while (q.next()) out << StoredPreset{q.value(0).toString(), fromJson(q.value(1)), q.value(2).toLongLong()};
  return out;
}

bool SessionStore::recordModel(const RecentModel& model) {
  return execWrite(tr("Could not remember the model"),
                   QStringLiteral("INSERT OR REPLACE INTO recent_models"
                                  " (path, name, architecture, format, weights, parameter_count, context_length, last_opened_ms)"
                                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                   {str(model.path), str(model.name), str(model.architecture), str(model.format), str(model.weights),
                    model.parameterCount,
                    model.contextLength, nowMs()});
}

bool SessionStore::forgetModel(const QString& path) {
  return execWrite(tr("Could not forget the model"), QStringLiteral("DELETE FROM recent_models WHERE path = ?"), {path});
}

QList<RecentModel> SessionStore::recentModels(int limit) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT path, name, architecture, format, weights, parameter_count, context_length, last_opened_ms"
                           " FROM recent_models ORDER BY last_opened_ms DESC, rowid DESC LIMIT ?"));
  q.addBindValue(limit);
  QList<RecentModel> out;
  if (q.exec())
    while (q.next())
      out << RecentModel{q.value(0).toString(),   q.value(1).toString(), q.value(2).toString(),
                         q.value(3).toString(),   q.value(4).toString(), q.value(5).toLongLong(),
                         q.value(6).toInt(),      q.value(7).toLongLong()};
  return out;
}

// ---- inspection snapshots --------------------------------------------------------------------------

qint64 SessionStore::saveInspection(qint64 messageId, const QByteArray& blob, const QString& model, int tokenCount) {
  const QString what = tr("Could not save the inspection");
  if (blob.isEmpty()) return fail(what, tr("the snapshot is empty")), 0;
  Tx tx(m_connection);
  QSqlQuery q(tx.db);
  q.prepare(QStringLiteral("INSERT INTO inspections (message_id, created_ms, model, token_count, blob) VALUES (?, ?, ?, ?, ?)"));
  q.addBindValue(messageId);
  q.addBindValue(nowMs());
  q.addBindValue(str(model));
  q.addBindValue(tokenCount);
  q.addBindValue(blob);
  // A message that does not exist fails the foreign key: no orphan snapshot is ever written.
  if (!tx.active || !tx.exec(q)) return fail(what, errorText(tx.error)), 0;
  const qint64 id = q.lastInsertId().toLongLong();
  if (!tx.commit()) return fail(what, errorText(tx.error)), 0;
  return id;
}

StoredInspection SessionStore::inspectionFor(qint64 messageId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT id, message_id, created_ms, model, token_count, blob FROM inspections"
                           " WHERE message_id = ? ORDER BY id DESC LIMIT 1"));
  q.addBindValue(messageId);
  StoredInspection out;
  if (!q.exec()) {
    readFailed(tr("Could not read the inspection"), errorText(q.lastError()));
    return out;
  }
  if (!q.next()) return out;
  out.id = q.value(0).toLongLong();
  out.messageId = q.value(1).toLongLong();
  out.createdMs = q.value(2).toLongLong();
  out.model = q.value(3).toString();
  out.tokenCount = q.value(4).toInt();
  out.blob = q.value(5).toByteArray();
  return out;
}
