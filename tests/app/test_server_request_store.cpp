// The local server's request log on disk (schema step 9, ServerRequestStore, ServerRequestLog::setStore): a step-8
// database upgrades keeping its API keys; rows round-trip every field; the table keeps only the newest `capacity`
// rows however many are added; a log over the store writes in batches, shows the stored rows again (as after a
// restart) and clearing it empties the table.
#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QTest>

#include "services/serverrequestlog.h"
#include "services/store/apikeystore.h"
#include "services/store/database.h"
#include "services/store/serverrequeststore.h"
#include "support/raw_sql.h"

namespace {

QVariantMap entry(const QString& path, int status, qint64 completion = 0, double ttft = -1) {
  return {{QStringLiteral("method"), QStringLiteral("POST")},
          {QStringLiteral("path"), path},
          {QStringLiteral("status"), status},
          {QStringLiteral("ms"), 12.5},
          {QStringLiteral("promptTokens"), qint64(7)},
          {QStringLiteral("completionTokens"), completion},
          {QStringLiteral("ttftMs"), ttft}};
}

}  // namespace

class TestServerRequestStore : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString dbPath() const { return m_dir.filePath(QStringLiteral("store.db")); }

 private Q_SLOTS:
  void init() { QFile::remove(dbPath()); }

  void migratesFromVersion8() {
    // A step-8 database (step 9 undone by hand) with an API key: the key stays, and requests can be logged.
    {
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      QVERIFY(!ApiKeyStore(db).createKey(QStringLiteral("kept")).isEmpty());
    }
    QVERIFY(rawSqlExec(dbPath(), {QStringLiteral("DROP TABLE server_requests"), QStringLiteral("PRAGMA user_version = 8")}));
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
    QVERIFY(Database::latestSchemaVersion() >= 9);
    QVERIFY(QFile::exists(dbPath() + QStringLiteral(".v8.bak")));
    QCOMPARE(ApiKeyStore(db).keys().size(), 1);
    ServerRequestStore store(db);
    QCOMPARE(store.count(), 0);
    QVERIFY(store.append(entry(QStringLiteral("/v1/completions"), 200, 3, 4.25), 1000));
    QCOMPARE(store.count(), 1);
  }

  void rowsRoundTrip() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ServerRequestStore store(db);
    QVERIFY(store.append(entry(QStringLiteral("/v1/completions"), 200, 3, 4.25), 1000));
    QVERIFY(store.append(entry(QStringLiteral("/v1/models"), 401), 2000));
    const QList<StoredServerRequest> rows = store.newest(10);
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows[0].whenMs, qint64(2000));  // newest first
    QCOMPARE(rows[0].entry.value(QStringLiteral("status")).toInt(), 401);
    QCOMPARE(rows[0].entry.value(QStringLiteral("ttftMs")).toDouble(), -1.0);  // no token: stored as NULL
    QCOMPARE(rows[1].entry, entry(QStringLiteral("/v1/completions"), 200, 3, 4.25));
    QCOMPARE(store.newest(1).size(), 1);
  }

  void keepsOnlyTheNewestCapacityRows() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ServerRequestStore store(db, 5);
    for (int i = 1; i <= 12; ++i) {
      QVERIFY(store.append(entry(QStringLiteral("/r%1").arg(i), 200), i));
      QCOMPARE(store.count(), qMin(i, 5));
    }
    const QList<StoredServerRequest> rows = store.newest(100);
    QCOMPARE(rows.size(), 5);
    for (int k = 0; k < 5; ++k) QCOMPARE(rows[k].entry.value(QStringLiteral("path")).toString(), QStringLiteral("/r%1").arg(12 - k));
  }

  void aLogOverTheStoreSurvivesARestart() {
    {
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      ServerRequestStore store(db);
      ServerRequestLog log(3);
      log.setStore(&store);
      QCOMPARE(log.rowCount(), 0);
      for (int i = 1; i <= 4; ++i) log.append(entry(QStringLiteral("/r%1").arg(i), 200 + i), 1000 * i);
      QCOMPARE(log.rowCount(), 3);  // the list's own bound
      QCOMPARE(store.count(), 0);   // written in batches, not one transaction per request
      QTRY_COMPARE_WITH_TIMEOUT(store.count(), 4, 5000);  // the store keeps more than the list
      log.append(entry(QStringLiteral("/r5"), 205), 5000);
      log.flush();  // as ServerService::shutdown does
      QCOMPARE(store.count(), 5);
    }
    Database db;  // "after a restart": a new connection, a new log
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ServerRequestStore store(db);
    ServerRequestLog log(3);
    QAbstractItemModelTester tester(&log, QAbstractItemModelTester::FailureReportingMode::QtTest);
    log.setStore(&store);
    QCOMPARE(log.rowCount(), 3);
    QCOMPARE(log.entryAt(0).value(QStringLiteral("path")).toString(), QStringLiteral("/r5"));
    QCOMPARE(log.data(log.index(0), ServerRequestLog::StatusRole).toInt(), 205);
    QCOMPARE(log.entryAt(2).value(QStringLiteral("path")).toString(), QStringLiteral("/r3"));
    log.clear();
    QCOMPARE(log.rowCount(), 0);
    QCOMPARE(store.count(), 0);
  }
};

QTEST_GUILESS_MAIN(TestServerRequestStore)
#include "test_server_request_store.moc"
