// Database: opening with its fallbacks, migrations, and the statement runner under every store.
#include "database.h"

#include <QAtomicInteger>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMetaType>
#include <QSqlDatabase>
#include <QStringList>

#include "schema.h"
#include "transaction.h"

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

bool failed(const QSqlError& e) { return e.type() != QSqlError::NoError; }

QString nextConnectionName() {
  static QAtomicInteger<int> counter;
  return QStringLiteral("wb-session-store-%1").arg(counter.fetchAndAddRelaxed(1));
}

}  // namespace

QSqlError Database::run(QSqlQuery& query, const QString& sql, const QVariantList& values, const RowVisitor& eachRow) {
  if (query.lastQuery() != sql && !query.prepare(sql)) return query.lastError();
  for (const QVariant& v : values) {
    // QtSql binds a null QString as SQL NULL, which the NOT NULL text columns refuse.
    const bool nullText = v.typeId() == QMetaType::QString && v.toString().isNull();
    query.addBindValue(nullText ? QVariant(QStringLiteral("")) : v);
  }
  if (!query.exec()) return query.lastError();
  if (query.isSelect()) {
    while (query.next())
      if (eachRow) eachRow(query);
    // next() also ends the rows when a step fails (a damaged page): that is an error, not the end.
    if (failed(query.lastError())) return query.lastError();
  }
  return {};
}

QString Database::reason(const QSqlError& e) {
  const QString db = e.databaseText().trimmed();
  return db.isEmpty() ? e.text().trimmed() : db;
}

Database::Database(QObject* parent) : QObject(parent), m_connection(nextConnectionName()) {}

Database::~Database() { close(); }

int Database::latestSchemaVersion() { return schemaSteps().constLast().version; }

QSqlDatabase Database::connection() const { return QSqlDatabase::database(m_connection, false); }

void Database::close() {
  if (QSqlDatabase::contains(m_connection)) {
    {
      QSqlDatabase db = connection();
      db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
  }
  m_state = OpenState::Closed;
}

bool Database::openAt(const QString& path, int busyTimeoutMs, QString* error, int* sqliteCode) {
  close();
  QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
  db.setDatabaseName(path);
  // Set before anything else runs: the driver applies it as the connection opens.
  db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(busyTimeoutMs));
  if (!db.open()) {
    *error = reason(db.lastError());
    *sqliteCode = primaryCode(db.lastError());
    return false;
  }
  return configure(error, sqliteCode) && migrate(error, sqliteCode);
}

bool Database::configure(QString* error, int* sqliteCode) {
  QSqlQuery q(connection());
  // Reading the schema is the first thing that touches the file: a non-database fails here.
  QStringList problems;
  QSqlError e = run(q, QStringLiteral("PRAGMA quick_check"), {},
                    [&](const QSqlQuery& row) { problems << row.value(0).toString(); });
  if (failed(e)) {
    *error = reason(e);
    *sqliteCode = primaryCode(e);
    return false;
  }
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
  const bool memory = connection().databaseName() == QLatin1String(":memory:");
  QString journalMode;
  e = run(q, memory ? QStringLiteral("PRAGMA journal_mode=MEMORY") : QStringLiteral("PRAGMA journal_mode=WAL"), {},
          [&](const QSqlQuery& row) { journalMode = row.value(0).toString(); });
  if (!failed(e) && !memory && journalMode.compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0) {
    // Not fatal (a file system without shared memory), but say so in the diagnostics.
    qWarning("Database: journal_mode=WAL was refused; using the rollback journal");
  }
  for (const char* pragma : {"PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON", "PRAGMA secure_delete=ON"}) {
    if (failed(e)) break;
    e = run(q, QLatin1String(pragma), {});
  }
  if (failed(e)) {
    *error = reason(e);
    *sqliteCode = primaryCode(e);
    return false;
  }
  return true;
}

bool Database::migrate(QString* error, int* sqliteCode) {
  const QString file = connection().databaseName();
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
  if (current > 0 && current < latestSchemaVersion() && file != QLatin1String(":memory:")) {
    // A copy of the old database before any step touches it, for a downgrade or a failed step.
    const QString backup = file + QStringLiteral(".v%1.bak").arg(current);
    QFile::remove(backup);
    QSqlQuery q(connection());
    const QSqlError e = run(q, QStringLiteral("VACUUM INTO ?"), {backup});
    if (failed(e)) {
      *error = tr("could not back it up before upgrading: %1").arg(reason(e));
      *sqliteCode = primaryCode(e);
      return false;
    }
  }
  for (const SchemaStep& step : schemaSteps()) {
    if (step.version <= current) continue;
    Transaction tx(*this);
    for (const QString& sql : step.statements) tx.exec(sql);
    tx.exec(QStringLiteral("PRAGMA user_version = %1").arg(step.version));
    if (!tx.commit()) {
      *error = tr("upgrading to schema %1 (%2) failed: %3")
                   .arg(step.version)
                   .arg(QLatin1String(step.what), reason(tx.error()));
      *sqliteCode = primaryCode(tx.error());
      return false;
    }
  }
  // A write now, so a read-only or locked file is found at startup and not at the first message.
  Transaction probe(*this);
  probe.exec(QStringLiteral("PRAGMA user_version = %1").arg(latestSchemaVersion()));
  if (!probe.commit()) {
    *error = reason(probe.error());
    *sqliteCode = primaryCode(probe.error());
    return false;
  }
  return true;
}

void Database::openInMemory() {
  QString error;
  int code = 0;
  if (!openAt(QStringLiteral(":memory:"), 0, &error, &code))
    qWarning("Database: even the in-memory database failed: %s", qPrintable(error));
}

Database::OpenState Database::open(const QString& path, int busyTimeoutMs) {
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
  const bool readOnly =
      (info.exists() && (!(info.permissions() & QFileDevice::WriteUser) || !(info.permissions() & anyWrite))) ||
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
      if (QFile::exists(path + QLatin1String(suffix)))
        moved = QFile::rename(path + QLatin1String(suffix), aside + QLatin1String(suffix)) && moved;
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
    m_problem =
        tr("The chat database %1 was left unchanged: %2. Chats from this session will not be saved.").arg(name, error);
  } else {
    m_problem = tr("The chat database %1 could not be opened (%2); chats from this session will not be saved.")
                    .arg(name, error);
  }
  openInMemory();
  m_state = OpenState::MemoryOnly;
  return m_state;
}

int Database::schemaVersion() const {
  QSqlQuery q(connection());
  int version = -1;
  if (failed(run(q, QStringLiteral("PRAGMA user_version"), {},
                 [&](const QSqlQuery& row) { version = row.value(0).toInt(); })))
    return -1;
  return version;
}

bool Database::quickCheck() const {
  QSqlQuery q(connection());
  QStringList result;
  return !failed(run(q, QStringLiteral("PRAGMA quick_check"), {}, [&](const QSqlQuery& row) {
    result << row.value(0).toString();
  })) && result.value(0) == QLatin1String("ok");
}

bool Database::checkpoint() {
  QSqlQuery q(connection());
  bool busy = true;
  const QSqlError e = run(q, QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)"), {},
                          [&](const QSqlQuery& row) { busy = row.value(0).toInt() != 0; });
  return !failed(e) && !busy;
}

bool Database::write(const QString& what, const QString& sql, const QVariantList& values, qint64* insertId) {
  Transaction tx(*this, what);
  tx.exec(sql, values);
  const qint64 id = tx.lastInsertId();
  if (!tx.commit()) return false;
  if (insertId) *insertId = id;
  return true;
}

bool Database::writeEach(const QString& what, const QString& sql, const QList<QVariantList>& rows,
                         qint64* lastInsertId) {
  Transaction tx(*this, what);
  for (const QVariantList& row : rows) tx.exec(sql, row);
  const qint64 id = tx.lastInsertId();
  if (!tx.commit()) return false;
  if (lastInsertId) *lastInsertId = id;
  return true;
}

bool Database::fail(const QString& what, const QString& reason) {
  m_lastError = reason.isEmpty() ? what : tr("%1: %2").arg(what, reason);
  Q_EMIT writeFailed(m_lastError);
  return false;
}

void Database::readFailed(const QString& what, const QSqlError& error) const {
  m_lastError = tr("%1: %2").arg(what, reason(error));
  qWarning("Database: %s", qPrintable(m_lastError));
}
