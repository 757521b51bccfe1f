// Database: the app's SQLite file (QtSql, QSQLITE) under the per-concern stores (ChatStore,
// PresetStore, ModelHistoryStore, InspectionStore, RunStore, PreferenceStore): opening it with its fallbacks, the
// schema migrations (schema.h), and the one query helper every statement of the stores runs through
// (select() for reads; write() and Transaction for writes).
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
//   read-only, locked or too-new file leaves the database running in memory, so the app works but
//   nothing is saved. Either way `problem()` says what happened in one readable sentence.
// - A failed write of any store is reported here (writeFailed, lastError), so one place shows them.
//
// Lives on the GUI thread (one connection per Database; the statements are small and indexed).
#pragma once

#include <QList>
#include <QObject>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

#include <functional>
#include <type_traits>

class Database : public QObject {
  Q_OBJECT

 public:
  enum class OpenState {
    Closed,
    Ok,          // the file at path() is in use
    Recovered,   // it was unreadable; moved to movedAsidePath(), a fresh database is in use
    MemoryOnly,  // it could not be used (read-only, locked, too new): nothing is saved this session
  };

  explicit Database(QObject* parent = nullptr);
  ~Database() override;

  // Opens (creating if needed) and migrates the database at `path`. Always leaves a usable database;
  // see OpenState. busyTimeoutMs: how long a statement waits for another connection's lock.
  OpenState open(const QString& path, int busyTimeoutMs = 3000);
  void close();

  OpenState state() const { return m_state; }
  bool isPersistent() const { return m_state == OpenState::Ok || m_state == OpenState::Recovered; }
  QString path() const { return m_path; }
  QString movedAsidePath() const { return m_movedAside; }
  // Why the database is not simply Ok, for the UI; empty when it is.
  QString problem() const { return m_problem; }
  // The last failed operation's message ("Could not save the message: database is locked"); cleared
  // by the next successful write.
  QString lastError() const { return m_lastError; }
  int schemaVersion() const;  // -1 when it cannot be read
  static int latestSchemaVersion();
  // PRAGMA quick_check == "ok" (tests and diagnostics).
  bool quickCheck() const;
  // Folds the WAL into the database file and empties it (after a purge, so that deleted text is gone
  // from the WAL too). False when another connection kept it from finishing.
  bool checkpoint();

  // The query helper. Runs `sql` with `values` bound to its ? in order and returns every result row
  // mapped by `mapRow(const QSqlQuery&)` (read the row with value(column)). A QString is bound as text,
  // a null one as '' (the text columns are NOT NULL); SQL NULL is bound only from a QVariant().
  // On failure: no rows, and "what: <SQLite's reason>" in lastError() and the log (not writeFailed:
  // the UI shows what it could read). Inside a write, use Transaction::select.
  template <typename MapRow>
  auto select(const QString& what, const QString& sql, const QVariantList& values, MapRow mapRow) const
      -> QList<std::invoke_result_t<MapRow&, const QSqlQuery&>>;

  // One statement in its own write transaction (Transaction for several). insertId: the rowid of the
  // row it inserted. On failure: false, "what: <SQLite's reason>" in lastError(), writeFailed.
  bool write(const QString& what, const QString& sql, const QVariantList& values = {}, qint64* insertId = nullptr);
  // One statement run once per row of `rows`, all in one write transaction; lastInsertId: the last
  // row's rowid. Failure as write().
  bool writeEach(const QString& what, const QString& sql, const QList<QVariantList>& rows,
                 qint64* lastInsertId = nullptr);
  // A write refused before it reached SQLite ("it needs a name"): reported as a failed write is.
  // Always false.
  bool fail(const QString& what, const QString& reason);

 Q_SIGNALS:
  // A write failed (lastError() says why); the UI shows it. Not emitted for read errors.
  void writeFailed(const QString& message);

 private:
  friend class Transaction;
  using RowVisitor = std::function<void(const QSqlQuery&)>;

  // Where every statement runs (reads, writes and migrations alike): prepares `sql` on `query` unless
  // that is the statement it holds already, binds `values` (see select()), executes it and hands each
  // result row to `eachRow`. Returns SQLite's error; NoError on success.
  static QSqlError run(QSqlQuery& query, const QString& sql, const QVariantList& values,
                       const RowVisitor& eachRow = {});
  // The reason in an error, as SQLite words it ("database is locked").
  static QString reason(const QSqlError& error);

  QSqlDatabase connection() const;
  bool openAt(const QString& path, int busyTimeoutMs, QString* error, int* sqliteCode);
  bool configure(QString* error, int* sqliteCode);
  bool migrate(QString* error, int* sqliteCode);
  void openInMemory();
  void readFailed(const QString& what, const QSqlError& error) const;
  void succeeded() { m_lastError.clear(); }

  QString m_connection;
  QString m_path;
  QString m_movedAside;
  QString m_problem;
  mutable QString m_lastError;
  OpenState m_state = OpenState::Closed;
};

template <typename MapRow>
auto Database::select(const QString& what, const QString& sql, const QVariantList& values, MapRow mapRow) const
    -> QList<std::invoke_result_t<MapRow&, const QSqlQuery&>> {
  QList<std::invoke_result_t<MapRow&, const QSqlQuery&>> rows;
  QSqlQuery query(connection());
  const QSqlError error = run(query, sql, values, [&](const QSqlQuery& row) { rows.append(mapRow(row)); });
  if (error.type() == QSqlError::NoError) return rows;
  readFailed(what, error);
  return {};
}
