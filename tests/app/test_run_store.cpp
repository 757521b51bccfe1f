// RunStore: the training tables (schema step 4): runs, metrics, samples; and step 7's named metrics and scored
// completions. Migration from the previous schema keeps old data, rows survive a reopen, NaN values round-trip
// as "not computed", a resumed run's rewritten steps replace the old rows, and interrupted runs are found at
// startup.
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
    QVERIFY(rawSqlExec(dbPath(), {QStringLiteral("DROP TABLE server_requests"), QStringLiteral("DROP TABLE api_keys"), QStringLiteral("DROP TABLE run_completions"), QStringLiteral("DROP TABLE run_metric_values"),
                               QStringLiteral("DROP TABLE preference_pairs"), QStringLiteral("DROP TABLE inspections"),
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

  void migratesFromVersion6() {
    // A real step-6 database (step 7 undone by hand) with a run and its metrics: they stay, and the run
    // gains named metrics and completions after the upgrade.
    qint64 id = 0;
    {
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      RunStore store(db);
      StoredRun r;
      r.name = QStringLiteral("old dpo");
      r.recipe = QStringLiteral("dpo");
      r.modelPath = QStringLiteral("/m");
      id = store.createRun(r);
      QVERIFY(id > 0);
      MetricRow m;
      m.step = 1, m.loss = 0.69;
      QVERIFY(store.appendMetrics(id, {m}));
    }
    QVERIFY(rawSqlExec(dbPath(), {QStringLiteral("DROP TABLE server_requests"), QStringLiteral("DROP TABLE api_keys"), QStringLiteral("DROP TABLE run_completions"), QStringLiteral("DROP TABLE run_metric_values"),
                                  QStringLiteral("PRAGMA user_version = 6")}));
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
    QVERIFY(Database::latestSchemaVersion() >= 7);
    QVERIFY(QFile::exists(dbPath() + QStringLiteral(".v6.bak")));
    RunStore store(db);
    QCOMPARE(store.metrics(id).size(), 1);
    QCOMPARE(store.metrics(id)[0].loss, 0.69);
    QVERIFY(store.metrics(id)[0].named.isEmpty());
    QVERIFY(store.metricNames(id).isEmpty());
    MetricRow m;
    m.step = 2, m.loss = 0.6;
    m.named = {{QStringLiteral("rewards/margins"), 0.25}};
    QVERIFY(store.appendMetrics(id, {m}));
    QVERIFY(store.appendCompletions(id, {{2, 0, QStringLiteral("p"), QStringLiteral("c"), 1.0}}));
    QCOMPARE(store.metricNames(id), QStringList{QStringLiteral("rewards/margins")});
    QCOMPARE(store.completions(id).size(), 1);
  }

  void namedMetricsAndCompletions() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    RunStore store(db);
    StoredRun r;
    r.name = QStringLiteral("ppo");
    r.recipe = QStringLiteral("ppo");
    r.modelPath = QStringLiteral("/m");
    const qint64 id = store.createRun(r), other = store.createRun(r);
    QVERIFY(id > 0 && other > 0);
    QList<MetricRow> rows;
    for (int step = 1; step <= 3; ++step) {
      MetricRow m;
      m.step = step, m.loss = 1.0 / step;
      m.named = {{QStringLiteral("objective/kl"), 0.5 * step}, {QStringLiteral("val/ratio"), 1.0 + 0.01 * step}};
      if (step == 3) {
        m.named.insert(QStringLiteral("val_accuracy"), 0.75);
        m.named.insert(QStringLiteral("objective/entropy"), qQNaN());  // not finite: stored as NULL
      }
      rows << m;
    }
    QVERIFY(store.appendMetrics(id, rows));
    MetricRow foreign;
    foreign.step = 1;
    foreign.named = {{QStringLiteral("kl"), 9.0}};
    QVERIFY(store.appendMetrics(other, {foreign}));

    QCOMPARE(store.metricNames(id), (QStringList{QStringLiteral("objective/entropy"), QStringLiteral("objective/kl"),
                                                 QStringLiteral("val/ratio"), QStringLiteral("val_accuracy")}));
    const QList<MetricPoint> kl = store.metricSeries(id, QStringLiteral("objective/kl"));
    QCOMPARE(kl.size(), 3);
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(kl[i].step, qint64(i + 1));
      QCOMPARE(kl[i].value, 0.5 * (i + 1));
    }
    const QList<MetricPoint> val = store.metricSeries(id, QStringLiteral("val_accuracy"));
    QCOMPARE(val.size(), 1);  // only the step that validated
    QCOMPARE(val[0].step, qint64(3));
    QCOMPARE(val[0].value, 0.75);
    QVERIFY(std::isnan(store.metricSeries(id, QStringLiteral("objective/entropy"))[0].value));
    QVERIFY(store.metricSeries(id, QStringLiteral("nothing")).isEmpty());
    // metrics() carries each step's named values.
    const QList<MetricRow> read = store.metrics(id);
    QCOMPARE(read.size(), 3);
    QCOMPARE(read[0].named.size(), 2);
    QCOMPARE(read[1].named.value(QStringLiteral("val/ratio")), 1.02);
    QCOMPARE(read[2].named.value(QStringLiteral("val_accuracy")), 0.75);
    QVERIFY(!read[0].named.contains(QStringLiteral("val_accuracy")));

    // A resumed run rewrites step 2 with the same names: one value per (step, name) remains.
    MetricRow again;
    again.step = 2, again.loss = 0.4;
    again.named = {{QStringLiteral("objective/kl"), 7.0}};
    QVERIFY(store.appendMetrics(id, {again}));
    QCOMPARE(store.metricSeries(id, QStringLiteral("objective/kl")).size(), 3);
    QCOMPARE(store.metricSeries(id, QStringLiteral("objective/kl"))[1].value, 7.0);

    // Completions: several of one prompt at one step, scores NaN-safe, upserted by (step, index).
    QVERIFY(store.appendCompletions(id, {{1, 0, QStringLiteral("What is 2 + 3?"), QStringLiteral("5"), 1.0},
                                         {1, 1, QStringLiteral("What is 2 + 3?"), QStringLiteral("six ✓"), 0.0},
                                         {2, 0, QStringLiteral("Capital of France?"), QStringLiteral("Paris"), qQNaN()}}));
    QVERIFY(store.appendCompletions(id, {{2, 0, QStringLiteral("Capital of France?"), QStringLiteral("Paris."), 1.0}}));
    const QList<CompletionRow> c = store.completions(id);
    QCOMPARE(c.size(), 3);
    QCOMPARE(c[0].completion, QStringLiteral("5"));
    QCOMPARE(c[1].index, 1);
    QCOMPARE(c[1].completion, QStringLiteral("six ✓"));
    QCOMPARE(c[1].score, 0.0);
    QCOMPARE(c[2].step, qint64(2));
    QCOMPARE(c[2].completion, QStringLiteral("Paris."));
    QCOMPARE(c[2].score, 1.0);
    QVERIFY(store.completions(other).isEmpty());

    // Deleting a run deletes its named metrics and completions, and only its own.
    QVERIFY(store.deleteRun(id));
    QVERIFY(store.metricNames(id).isEmpty());
    QVERIFY(store.completions(id).isEmpty());
    QCOMPARE(store.metricNames(other), QStringList{QStringLiteral("kl")});
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
