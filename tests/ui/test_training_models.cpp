// The dashboard's view models under QAbstractItemModelTester: MetricsModel (live rows, a resumed
// run's rewritten steps, EMA smoothing against TensorBoard's formula computed here, gradient-norm
// outliers against a median computed here, ETA, CSV export, chart series; an alignment run's named series,
// health warnings and completions) and RunListModel (follows the store, overlay selection).
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QFile>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

#include "metricsmodel.h"
#include "runlistmodel.h"
#include "services/store/database.h"
#include "services/store/runstore.h"
#include "services/trainingjobs.h"

namespace {

MetricRow row(qint64 step, double loss, double gradNorm, double valLoss = qQNaN()) {
  MetricRow r;
  r.step = step;
  r.loss = loss;
  r.valLoss = valLoss;
  r.lr = 1e-3;
  r.gradNorm = gradNorm;
  r.tokensPerS = 1000;
  r.elapsedS = 0.5 * double(step);
  return r;
}

}  // namespace

class TestTrainingModels : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  int m_db = 0;

 private Q_SLOTS:
  void metricsModelRowsAndDerivedValues() {
    Database db;
    QCOMPARE(db.open(m_dir.filePath(QStringLiteral("m%1.db").arg(++m_db))), Database::OpenState::Ok);
    RunStore store(db);
    TrainingJobs jobs(&store);
    StoredRun run;
    run.name = QStringLiteral("r");
    run.recipe = QStringLiteral("pretrain");
    run.modelPath = QStringLiteral("/m");
    run.totalSteps = 40;
    const qint64 id = store.createRun(run);
    // Rows already stored load with the run.
    QVERIFY(store.appendMetrics(id, {row(1, 5.0, 1.0), row(2, 4.0, 1.1, 4.5)}));

    MetricsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setJobs(&jobs);
    model.setRunId(id);
    QCOMPARE(model.count(), 2);
    QCOMPARE(model.totalSteps(), 40);
    QCOMPARE(model.lastValLoss(), 4.5);

    // Live rows: 3..30, with a spike at 20.
    QList<double> loss{5.0, 4.0}, grad{1.0, 1.1};
    for (int s = 3; s <= 30; ++s) {
      loss << 4.0 - 0.05 * s + 0.1 * std::sin(double(s));
      grad << (s == 20 ? 9.0 : 1.0 + 0.01 * (s % 7));
      model.addRow(row(s, loss.last(), grad.last()));
    }
    QCOMPARE(model.count(), 30);
    QCOMPARE(model.lastStep(), 30);
    QCOMPARE(model.etaS(), 15.0 / 30.0 * 10.0);  // 0.5 s per step, 10 steps left

    // Smoothing: TensorBoard's debiased EMA, computed independently here.
    for (double w : {0.0, 0.6, 0.95}) {
      model.setSmoothing(w);
      double last = 0;
      for (int i = 0; i < loss.size(); ++i) {
        last = last * w + (1 - w) * loss[i];
        const double expected = w > 0 ? last / (1 - std::pow(w, i + 1)) : loss[i];
        const double got = model.data(model.index(i), MetricsModel::SmoothedLossRole).toDouble();
        QVERIFY2(std::abs(got - expected) < 1e-12,
                 qPrintable(QStringLiteral("w %1 step %2: %3 vs %4").arg(w).arg(i + 1).arg(got).arg(expected)));
      }
    }
    // Outliers: above 3x the median of up to 25 steps before, with at least 8 of them.
    for (int i = 0; i < grad.size(); ++i) {
      std::vector<double> prev(grad.begin() + std::max(0, i - 25), grad.begin() + i);
      bool expected = false;
      if (prev.size() >= 8) {
        std::sort(prev.begin(), prev.end());
        expected = grad[i] > 3 * prev[prev.size() / 2];
      }
      QCOMPARE(model.data(model.index(i), MetricsModel::GradNormOutlierRole).toBool(), expected);
    }
    QCOMPARE(model.outlierCount(), 1);

    // A resumed run reports step 25 again: rows 25.. are replaced, not doubled.
    model.addRow(row(25, 1.25, 1.0));
    QCOMPARE(model.count(), 25);
    QCOMPARE(model.data(model.index(24), MetricsModel::LossRole).toDouble(), 1.25);

    // Chart series and ranges.
    QLineSeries series;
    QCOMPARE(model.fillSeries(&series, QStringLiteral("loss")), 25);
    QCOMPARE(series.at(0), QPointF(1, 5.0));
    QCOMPARE(model.fillSeries(&series, QStringLiteral("val")), 1);
    QCOMPARE(series.at(0), QPointF(2, 4.5));
    QCOMPARE(model.fillSeries(&series, QStringLiteral("outliers")), 1);
    QCOMPARE(series.at(0), QPointF(20, 9.0));
    QCOMPARE(model.range(QStringLiteral("gradNorm")).value(QStringLiteral("max")).toDouble(), 9.0);
    model.addRow(row(26, -1.0, 1.0));  // a log axis cannot show it
    QCOMPARE(model.fillSeries(&series, QStringLiteral("loss"), true), 25);

    // Live rows from TrainingJobs of this run only.
    Q_EMIT jobs.metricsArrived(id, row(27, 1.0, 1.0));
    Q_EMIT jobs.metricsArrived(id + 1, row(28, 1.0, 1.0));
    QCOMPARE(model.lastStep(), 27);

    // CSV: a header and one line per row; not computed = empty field.
    const QString csv = m_dir.filePath(QStringLiteral("m.csv"));
    QCOMPARE(model.exportCsv(QUrl::fromLocalFile(csv).toString()), QString());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 1 + 27);
    QCOMPARE(lines[0], QByteArray("step,loss,smoothed_loss,val_loss,lr,grad_norm,grad_norm_outlier,tokens_per_s,"
                                  "elapsed_s,skipped"));
    QVERIFY2(lines[1].startsWith("1,5,"), lines[1].constData());
    QCOMPARE(lines[1].split(',')[3], QByteArray());
    QCOMPARE(lines[2].split(',')[3], QByteArray("4.5"));
    QVERIFY(!model.exportCsv(m_dir.filePath(QStringLiteral("no/such/dir/m.csv"))).isEmpty());

    // Another run: the model switches to its rows.
    model.setRunId(0);
    QCOMPARE(model.count(), 0);
  }

  void metricsModelAlignmentRun() {
    Database db;
    QCOMPARE(db.open(m_dir.filePath(QStringLiteral("m%1.db").arg(++m_db))), Database::OpenState::Ok);
    RunStore store(db);
    TrainingJobs jobs(&store);
    StoredRun run;
    run.name = QStringLiteral("grpo");
    run.recipe = QStringLiteral("grpo");
    run.modelPath = QStringLiteral("/m");
    run.totalSteps = 30;
    const qint64 id = store.createRun(run);
    // Stored steps 1-10: a healthy start.
    QList<MetricRow> rows;
    for (int s = 1; s <= 10; ++s) {
      MetricRow r = row(s, 0.1, 1.0);
      r.named = {{QStringLiteral("reward"), 0.2 + 0.01 * s}, {QStringLiteral("kl"), 0.001 * s}};
      rows << r;
    }
    QVERIFY(store.appendMetrics(id, rows));
    QVERIFY(store.appendCompletions(id, {{9, 0, QStringLiteral("p9"), QStringLiteral("c9"), 0.0},
                                         {10, 0, QStringLiteral("p10"), QStringLiteral("a"), 1.0},
                                         {10, 1, QStringLiteral("p10"), QStringLiteral("b"), 0.0}}));

    MetricsModel model;
    QSignalSpy health(&model, &MetricsModel::healthChanged);
    model.setJobs(&jobs);
    model.setRunId(id);
    QCOMPARE(model.recipe(), QStringLiteral("grpo"));
    QVERIFY(model.isAlignment());
    QCOMPARE(model.metricNames(), (QStringList{QStringLiteral("kl"), QStringLiteral("reward")}));
    QVERIFY(model.healthWarnings().isEmpty());
    QLineSeries series;
    QCOMPARE(model.fillSeries(&series, QStringLiteral("kl")), 10);
    QCOMPARE(series.at(9), QPointF(10, 0.01));
    QCOMPARE(model.lastValue(QStringLiteral("reward")), 0.3);
    QCOMPARE(model.healthyBand(QStringLiteral("kl")).value(QStringLiteral("high")).toDouble(), 0.5);
    QVERIFY(model.healthyBand(QStringLiteral("reward")).isEmpty());
    // Completions: newest step first, each step's in their order.
    QCOMPARE(model.completions().size(), 3);
    QCOMPARE(model.completions()[0].toMap().value(QStringLiteral("completion")).toString(), QStringLiteral("a"));
    QCOMPARE(model.completions()[1].toMap().value(QStringLiteral("completion")).toString(), QStringLiteral("b"));
    QCOMPARE(model.completions()[2].toMap().value(QStringLiteral("step")).toLongLong(), 9);

    // Live steps 11-30: the KL runs away and a new metric appears; the warnings follow step by step.
    for (int s = 11; s <= 30; ++s) {
      MetricRow r = row(s, 0.1, 1.0);
      r.named = {{QStringLiteral("reward"), 0.2 + 0.01 * s}, {QStringLiteral("kl"), 0.05 * (s - 10)},
                 {QStringLiteral("clip_ratio"), 0.0}};
      Q_EMIT jobs.metricsArrived(id, r);
    }
    QCOMPARE(model.count(), 30);
    QCOMPARE(model.metricNames(),
             (QStringList{QStringLiteral("clip_ratio"), QStringLiteral("kl"), QStringLiteral("reward")}));
    QStringList rules;
    for (const QVariant& w : model.healthWarnings()) rules << w.toMap().value(QStringLiteral("rule")).toString();
    QCOMPARE(rules, (QStringList{QStringLiteral("kl"), QStringLiteral("reward_hacking")}));
    QVERIFY(health.size() >= 1);
    // A resumed run reports step 12 again with a tame KL: the warnings go.
    MetricRow again = row(12, 0.1, 1.0);
    again.named = {{QStringLiteral("reward"), 0.3}, {QStringLiteral("kl"), 0.01}};
    Q_EMIT jobs.metricsArrived(id, again);
    QCOMPARE(model.count(), 12);
    QVERIFY(model.healthWarnings().isEmpty());

    // Live completions, and a resumed step's replace the list's from that step on.
    Q_EMIT jobs.completionsArrived(id, {{11, 0, QStringLiteral("p11"), QStringLiteral("x"), 0.5}});
    QCOMPARE(model.completions().size(), 4);
    QCOMPARE(model.completions()[0].toMap().value(QStringLiteral("score")).toDouble(), 0.5);
    Q_EMIT jobs.completionsArrived(id, {{10, 0, QStringLiteral("p10"), QStringLiteral("again"), 1.0}});
    QCOMPARE(model.completions().size(), 2);
    QCOMPARE(model.completions()[0].toMap().value(QStringLiteral("completion")).toString(), QStringLiteral("again"));
    Q_EMIT jobs.completionsArrived(id + 1, {{20, 0, QStringLiteral("other"), QStringLiteral("run"), 1.0}});
    QCOMPARE(model.completions().size(), 2);

    // CSV: the named metrics follow the fixed columns; a step without one leaves its cell empty.
    const QString csv = m_dir.filePath(QStringLiteral("grpo.csv"));
    QCOMPARE(model.exportCsv(csv), QString());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 1 + 12);
    QVERIFY2(lines[0].endsWith(",skipped,clip_ratio,kl,reward"), lines[0].constData());
    QVERIFY2(lines[1].endsWith(",,0.001,0.21"), lines[1].constData());
    QVERIFY2(lines[11].endsWith(",0,0.05,0.31"), lines[11].constData());

    // A pretrain run is not an alignment run.
    run.recipe = QStringLiteral("pretrain");
    model.setRunId(store.createRun(run));
    QVERIFY(!model.isAlignment());
    QVERIFY(model.metricNames().isEmpty() && model.completions().isEmpty() && model.healthWarnings().isEmpty());
  }

  void runListModelFollowsTheStore() {
    Database db;
    QCOMPARE(db.open(m_dir.filePath(QStringLiteral("r%1.db").arg(++m_db))), Database::OpenState::Ok);
    RunStore store(db);
    TrainingJobs jobs(&store);
    RunListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setJobs(&jobs);
    QCOMPARE(model.count(), 0);
    StoredRun run;
    run.recipe = QStringLiteral("sft");
    run.modelPath = QStringLiteral("/m");
    run.settings = {{QStringLiteral("model"), QStringLiteral("/m")},
                    {QStringLiteral("data"), QStringLiteral("/d.jsonl")},
                    {QStringLiteral("recipe"), QStringLiteral("sft")},
                    {QStringLiteral("steps"), 7}};
    run.name = QStringLiteral("first");
    const qint64 a = store.createRun(run);
    run.name = QStringLiteral("second");
    const qint64 b = store.createRun(run);
    QCOMPARE(model.count(), 2);
    QCOMPARE(model.data(model.index(0), RunListModel::RunIdRole).toLongLong(), b);  // newest first
    QCOMPARE(model.data(model.index(1), RunListModel::NameRole).toString(), QStringLiteral("first"));
    QCOMPARE(model.data(model.index(1), RunListModel::StatusRole).toString(), QStringLiteral("queued"));
    QVERIFY(model.data(model.index(1), RunListModel::CommandRole)
                .toString()
                .contains(QStringLiteral("--recipe sft --model /m --data /d.jsonl")));
    QVERIFY(model.data(model.index(1), RunListModel::CommandRole).toString().contains(QStringLiteral("--steps 7")));
    QVERIFY(store.setRunStatus(a, QStringLiteral("cancelled")));
    QCOMPARE(model.data(model.index(model.rowOf(a)), RunListModel::StatusRole).toString(), QStringLiteral("cancelled"));

    QSignalSpy selection(&model, &RunListModel::selectionChanged);
    QVERIFY(model.setData(model.index(model.rowOf(a)), true, RunListModel::SelectedRole));
    model.setSelected(b, true);
    QCOMPARE(model.selectedIds(), (QVariantList{b, a}));
    QCOMPARE(selection.size(), 2);
    QVERIFY(store.deleteRun(b));
    QCOMPARE(model.count(), 1);
    QCOMPARE(model.selectedIds(), QVariantList{a});
  }
};

QTEST_MAIN(TestTrainingModels)
#include "test_training_models.moc"
