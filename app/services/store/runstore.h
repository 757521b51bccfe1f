// RunStore: training runs (the jobs of TrainingJobs), their per-step metrics and sample generations
// (schema step 4), the metrics objectives report under their own names and the scored completions of
// online recipes (schema step 7).
//
// Metrics are written as they arrive (TrainingJobs flushes every ~250 ms, one transaction each), so a
// run killed mid-way keeps its curve up to its last flush. Values that were not computed (a step's
// val_loss) are SQL NULL, read back as NaN. Metrics and samples are upserted by (run, step[, prompt | name |
// index]):
// a run resumed from an earlier checkpoint rewrites the steps after it with the same values (resume is
// exact).
#pragma once

#include <QList>
#include <QMap>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>
#include <QtNumeric>

class Database;

// A training run. Status strings: queued, running, paused, done, failed, cancelled.
struct StoredRun {
  qint64 id = 0;
  QString name;
  QString recipe;        // "pretrain", "sft", "reward", "dpo", "grpo" or "ppo"
  QString modelPath;     // the model it started from
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
  // The objective's own metrics of the step by the names it reports them under (TRL's: "objective/kl",
  // "rewards/margins", "accuracy", ...), and those of a validation at this step as "val_<name>" (the CLI's
  // names). NaN: not finite.
  QMap<QString, double> named;
};

struct SampleRow {
  qint64 step = 0;
  QString prompt;
  QString text;
};

// One completion an online recipe sampled at a step, with the reward it got.
struct CompletionRow {
  qint64 step = 0;
  int index = 0;  // its place among the step's completions
  QString prompt;
  QString completion;
  double score = qQNaN();
};

// One value of a named metric.
struct MetricPoint {
  qint64 step = 0;
  double value = qQNaN();
};

Q_DECLARE_METATYPE(MetricRow)
Q_DECLARE_METATYPE(SampleRow)
Q_DECLARE_METATYPE(CompletionRow)

class RunStore : public QObject {
  Q_OBJECT

 public:
  // `db` must outlive this store.
  explicit RunStore(Database& db, QObject* parent = nullptr) : QObject(parent), m_db(db) {}

  qint64 createRun(const StoredRun& run);  // returns the id (0 on failure); createdMs is stamped now
  bool setRunStatus(qint64 runId, const QString& status, const QString& error = {});
  bool setRunOutputDir(qint64 runId, const QString& dir);
  bool deleteRun(qint64 runId);  // with its metrics, samples and completions
  // All rows in one transaction (the worker's rows of ~250 ms arrive together); appendMetrics writes the
  // rows' named metrics in the same one.
  bool appendMetrics(qint64 runId, const QList<MetricRow>& rows);
  bool appendSamples(qint64 runId, const QList<SampleRow>& rows);
  bool appendCompletions(qint64 runId, const QList<CompletionRow>& rows);
  StoredRun run(qint64 runId) const;             // id 0 when there is none
  QList<StoredRun> runs() const;                 // newest first
  QList<MetricRow> metrics(qint64 runId) const;  // by step, with their named metrics
  QList<SampleRow> samples(qint64 runId) const;  // by step
  QList<CompletionRow> completions(qint64 runId) const;  // by step, then index
  // One named metric's values, by step (steps that did not report it are absent).
  QList<MetricPoint> metricSeries(qint64 runId, const QString& name) const;
  // The names of the named metrics the run has reported, sorted.
  QStringList metricNames(qint64 runId) const;
  // At startup: runs left 'running' by a crash or kill become 'paused' (resumable from their newest
  // checkpoint). Returns their ids.
  QList<qint64> pauseInterruptedRuns();

 Q_SIGNALS:
  // A run was created, deleted or changed status.
  void runsChanged();

 private:
  Database& m_db;
};
