// Probes of the UI soak test (see soak_probes.h).
#include "soak_probes.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTest>

#include <chrono>
#include <cstdio>

qint64 nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One read of the database through a connection of its own (WAL lets it in while the app writes).
QStringList sqlRows(const QString& path, const QString& sql, QString* error) {
  static int connections = 0;
  const QString name = QStringLiteral("soak-%1").arg(++connections);
  QStringList out;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=10000"));
    if (!db.open()) {
      if (error) *error = db.lastError().text();
    } else {
      QSqlQuery q(db);
      if (q.exec(sql)) {
        while (q.next()) {
          QStringList cols;
          for (int i = 0; i < q.record().count(); ++i) cols << q.value(i).toString();
          out << cols.join(QStringLiteral(" | "));
        }
      } else if (error) {
        *error = q.lastError().text();
      }
    }
  }
  QSqlDatabase::removeDatabase(name);
  return out;
}

// Both checks the issue names; empty when the file is sound, else what is wrong.
QString databaseProblems(const QString& path) {
  QString error;
  const QStringList integrity = sqlRows(path, QStringLiteral("PRAGMA integrity_check"), &error);
  if (!error.isEmpty()) return QStringLiteral("integrity_check: ") + error;
  if (integrity != QStringList{QStringLiteral("ok")})
    return QStringLiteral("integrity_check: ") + integrity.join(QLatin1Char(';'));
  const QStringList keys = sqlRows(path, QStringLiteral("PRAGMA foreign_key_check"), &error);
  if (!error.isEmpty()) return QStringLiteral("foreign_key_check: ") + error;
  if (!keys.isEmpty()) return QStringLiteral("foreign_key_check: ") + keys.join(QLatin1Char(';'));
  return {};
}

QString contentHash(const QString& text) {
  return QString::fromLatin1(QCryptographicHash::hash(text.toUtf8(), QCryptographicHash::Sha1).toHex());
}

// Time the calling thread has spent runnable but waiting for a CPU, ns (the second field of
// /proc/thread-self/schedstat); -1 where that is not available. On a loaded machine (a CI runner,
// parallel builds) the GUI thread waits for a core now and then; that is the machine's delay, not
// the app's, so the heartbeat subtracts it.
// `runNs` receives the time it has run on a CPU.
qint64 runQueueWaitNs(qint64* runNs) {
  FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (!f) return -1;
  unsigned long long run = 0, wait = 0;
  const int n = std::fscanf(f, "%llu %llu", &run, &wait);
  std::fclose(f);
  if (runNs) *runNs = qint64(run);
  return n == 2 ? qint64(wait) : -1;
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeoutMs) return false;
    QTest::qWait(10);
  }
  return true;
}
