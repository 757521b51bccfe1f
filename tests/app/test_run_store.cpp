// RunStore: the training tables (schema step 4): runs, metrics, samples. Migration from the previous
// schema keeps old data, rows survive a reopen, NaN values round-trip as "not computed", a resumed
// run's rewritten steps replace the old rows, and interrupted runs are found at startup.
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "services/store/runstore.h"
#include "support/raw_sql.h"

class TestRunStore : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString dbPath() const { return m_dir.filePath(QStringLiteral("store.db")); }

 private Q_SLOTS:
  void init() { QFile::remove(dbPath()); }

  void migratesFromVersion3() {
    // A database as schema 3 left it: the schema-4 tables are not there yet, a chat is.
    {
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      QVERIFY(ChatStore(db).createChat(QStringLiteral("kept")));
    }
    QVERIFY(rawSqlExec(dbPath(), {QStringLiteral("DROP TABLE preference_pairs"), QStringLiteral("DROP TABLE inspections"),
                               QStringLiteral("DROP TABLE samples"),
                               QStringLiteral("DROP TABLE metrics"), QStringLiteral("DROP TABLE runs"),
                               QStringLiteral("PRAGMA user_version = 3")}));
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    RunStore store(db);
    QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
    QCOMPARE(ChatStore(db).chats().size(), 1);
    QCOMPARE(ChatStore(db).chats().first().title, QStringLiteral("kept"));
    QVERIFY(QFile::exists(dbPath() + QStringLiteral(".v3.bak")));
    StoredRun r;
    r.name = QStringLiteral("first run");
    r.recipe = QStringLiteral("pretrain");
    r.modelPath = QStringLiteral("/models/starter");
    r.settings = {{QStringLiteral("steps"), 10}, {QStringLiteral("lr"), 0.001}};
    QVERIFY(store.createRun(r) > 0);
  }

  void rowsSurviveReopen() {
    qint64 id = 0;
    {
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      RunStore store(db);
      StoredRun r;
      r.name = QStringLiteral("tiny");
      r.recipe = QStringLiteral("sft");
      r.modelPath = QStringLiteral("/m");
      r.settings = {{QStringLiteral("steps"), 3}, {QStringLiteral("sample_prompt"), QStringLiteral("Hi ✓")}};
      r.totalSteps = 3;
      id = store.createRun(r);
      QVERIFY(id > 0);
      QVERIFY(store.setRunOutputDir(id, QStringLiteral("/out/run")));
      QVERIFY(store.setRunStatus(id, QStringLiteral("running")));
      MetricRow a;
      a.step = 1, a.loss = 6.25, a.lr = 1e-3, a.gradNorm = 2.5, a.tokensPerS = 100, a.elapsedS = 0.5;
      MetricRow b = a;
      b.step = 2, b.loss = 5.5, b.valLoss = 5.75, b.skipped = true;
      QVERIFY(store.appendMetrics(id, {a, b}));
      QVERIFY(store.appendSamples(id, {{2, QStringLiteral("Hi ✓"), QStringLiteral(" there\uFFFD")}}));
    }
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    RunStore store(db);
    const StoredRun r = store.run(id);
    QCOMPARE(r.name, QStringLiteral("tiny"));
    QCOMPARE(r.recipe, QStringLiteral("sft"));
    QCOMPARE(r.status, QStringLiteral("running"));
    QCOMPARE(r.outputDir, QStringLiteral("/out/run"));
    QCOMPARE(r.totalSteps, 3);
    QVERIFY(r.startedMs > 0);
    QCOMPARE(r.finishedMs, 0);
    QCOMPARE(r.settings.value(QStringLiteral("sample_prompt")).toString(), QStringLiteral("Hi ✓"));
    const QList<MetricRow> m = store.metrics(id);
    QCOMPARE(m.size(), 2);
    QCOMPARE(m[0].step, 1);
    QCOMPARE(m[0].loss, 6.25);
    QVERIFY(std::isnan(m[0].valLoss));  // not computed at step 1
    QCOMPARE(m[0].gradNorm, 2.5);
    QCOMPARE(m[1].valLoss, 5.75);
    QVERIFY(!m[0].skipped && m[1].skipped);
    const QList<SampleRow> s = store.samples(id);
    QCOMPARE(s.size(), 1);
    QCOMPARE(s[0].text, QStringLiteral(" there\uFFFD"));

    // A resumed run rewrites step 2: one row per step remains, with the new values.
    MetricRow again;
    again.step = 2, again.loss = 5.0;
    QVERIFY(store.appendMetrics(id, {again}));
    QCOMPARE(store.metrics(id).size(), 2);
    QCOMPARE(store.metrics(id)[1].loss, 5.0);

    // Found 'running' at startup: paused, resumable; an end state stamps finished_ms.
    QCOMPARE(store.pauseInterruptedRuns(), QList<qint64>{id});
    QCOMPARE(store.run(id).status, QStringLiteral("paused"));
    QVERIFY(store.pauseInterruptedRuns().isEmpty());
    QVERIFY(store.setRunStatus(id, QStringLiteral("failed"), QStringLiteral("out of memory")));
    QCOMPARE(store.run(id).error, QStringLiteral("out of memory"));
    QVERIFY(store.run(id).finishedMs > 0);
    // A status outside the list is refused by the schema.
    QVERIFY(!store.setRunStatus(id, QStringLiteral("exploded")));
    QCOMPARE(store.run(id).status, QStringLiteral("failed"));
    // Deleting a run deletes its rows.
    QVERIFY(store.deleteRun(id));
    QVERIFY(store.metrics(id).isEmpty());
    QVERIFY(store.samples(id).isEmpty());
    QVERIFY(store.runs().isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestRunStore)
#include "test_run_store.moc"
