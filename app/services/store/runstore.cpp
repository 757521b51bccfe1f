// RunStore: the queries behind training runs, metrics and samples.
#include "runstore.h"

#include <QSqlQuery>

#include <QHash>

#include "database.h"
#include "sqlvalues.h"
#include "transaction.h"

using sqlvalue::realOrNaN;
using sqlvalue::realOrNull;

namespace {

const char* const kRunColumns =
    "id, name, recipe, model_path, settings, status, output_dir, error, total_steps, created_ms, started_ms,"
    " finished_ms";

StoredRun runFromRow(const QSqlQuery& row) {
  StoredRun r;
  r.id = row.value(0).toLongLong();
  r.name = row.value(1).toString();
  r.recipe = row.value(2).toString();
  r.modelPath = row.value(3).toString();
  r.settings = sqlvalue::mapFromJson(row.value(4));
  r.status = row.value(5).toString();
  r.outputDir = row.value(6).toString();
  r.error = row.value(7).toString();
  r.totalSteps = row.value(8).toLongLong();
  r.createdMs = row.value(9).toLongLong();
  r.startedMs = row.value(10).toLongLong();
  r.finishedMs = row.value(11).toLongLong();
  return r;
}

}  // namespace

qint64 RunStore::createRun(const StoredRun& run) {
  qint64 id = 0;
  if (!m_db.write(tr("Could not save the training run"),
                  QStringLiteral(
                      "INSERT INTO runs (name, recipe, model_path, settings, status, output_dir, total_steps,"
                      " created_ms, started_ms, finished_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                  {run.name, run.recipe, run.modelPath, sqlvalue::json(run.settings),
                   run.status.isEmpty() ? QStringLiteral("queued") : run.status, run.outputDir, run.totalSteps,
                   sqlvalue::nowMs(), sqlvalue::msOrNull(run.startedMs), sqlvalue::msOrNull(run.finishedMs)},
                  &id))
    return 0;
  Q_EMIT runsChanged();
  return id;
}

bool RunStore::setRunStatus(qint64 runId, const QString& status, const QString& error) {
  // started_ms is the first start; finished_ms is set by an end state and cleared by a resume.
  const bool end =
      status == QLatin1String("done") || status == QLatin1String("failed") || status == QLatin1String("cancelled");
  const qint64 now = sqlvalue::nowMs();
  if (!m_db.write(tr("Could not save the run's status"),
                  QStringLiteral(
                      "UPDATE runs SET status = ?, error = ?,"
                      " started_ms = CASE WHEN ? = 'running' THEN COALESCE(started_ms, ?) ELSE started_ms END,"
                      " finished_ms = ? WHERE id = ?"),
                  {status, error, status, now, end ? QVariant(now) : QVariant(), runId}))
    return false;
  Q_EMIT runsChanged();
  return true;
}

bool RunStore::setRunOutputDir(qint64 runId, const QString& dir) {
  return m_db.write(tr("Could not save the run's output directory"),
                    QStringLiteral("UPDATE runs SET output_dir = ? WHERE id = ?"), {dir, runId});
}

bool RunStore::deleteRun(qint64 runId) {
  if (!m_db.write(tr("Could not delete the run"), QStringLiteral("DELETE FROM runs WHERE id = ?"), {runId}))
    return false;
  Q_EMIT runsChanged();
  return true;
}

bool RunStore::appendMetrics(qint64 runId, const QList<MetricRow>& rows) {
  if (rows.isEmpty()) return true;
  Transaction tx(m_db, tr("Could not save the training metrics"));
  // The fixed columns of every row first, then every named value: each statement is prepared once.
  for (const MetricRow& m : rows)
    tx.exec(QStringLiteral("INSERT OR REPLACE INTO metrics (run_id, step, loss, val_loss, lr, grad_norm, tokens_per_s,"
                           " elapsed_s, skipped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            {runId, m.step, realOrNull(m.loss), realOrNull(m.valLoss), realOrNull(m.lr), realOrNull(m.gradNorm),
             realOrNull(m.tokensPerS), realOrNull(m.elapsedS), m.skipped ? 1 : 0});
  for (const MetricRow& m : rows)
    for (auto it = m.named.cbegin(); it != m.named.cend(); ++it)
      tx.exec(QStringLiteral("INSERT OR REPLACE INTO run_metric_values (run_id, name, step, value) VALUES (?, ?, ?, ?)"),
              {runId, it.key(), m.step, realOrNull(it.value())});
  return tx.commit();
}

bool RunStore::appendSamples(qint64 runId, const QList<SampleRow>& rows) {
  if (rows.isEmpty()) return true;
  QList<QVariantList> values;
  values.reserve(rows.size());
  for (const SampleRow& s : rows) values << QVariantList{runId, s.step, s.prompt, s.text};
  return m_db.writeEach(tr("Could not save the sample generations"),
                        QStringLiteral(
                            "INSERT OR REPLACE INTO samples (run_id, step, prompt, text) VALUES (?, ?, ?, ?)"),
                        values);
}

bool RunStore::appendCompletions(qint64 runId, const QList<CompletionRow>& rows) {
  if (rows.isEmpty()) return true;
  QList<QVariantList> values;
  values.reserve(rows.size());
  for (const CompletionRow& c : rows)
    values << QVariantList{runId, c.step, c.index, c.prompt, c.completion, realOrNull(c.score)};
  return m_db.writeEach(tr("Could not save the sampled completions"),
                        QStringLiteral("INSERT OR REPLACE INTO run_completions (run_id, step, idx, prompt, completion,"
                                       " score) VALUES (?, ?, ?, ?, ?, ?)"),
                        values);
}

StoredRun RunStore::run(qint64 runId) const {
  return m_db
      .select(tr("Could not read the run"),
              QStringLiteral("SELECT %1 FROM runs WHERE id = ?").arg(QLatin1String(kRunColumns)), {runId}, runFromRow)
      .value(0);
}

QList<StoredRun> RunStore::runs() const {
  return m_db
      .select(tr("Could not read the runs"),
              QStringLiteral("SELECT %1 FROM runs ORDER BY created_ms DESC, id DESC").arg(QLatin1String(kRunColumns)),
              {}, runFromRow);
}

QList<MetricRow> RunStore::metrics(qint64 runId) const {
  QList<MetricRow> rows =
      m_db.select(tr("Could not read the metrics"),
                  QStringLiteral(
                      "SELECT step, loss, val_loss, lr, grad_norm, tokens_per_s, elapsed_s, skipped FROM metrics"
                      " WHERE run_id = ? ORDER BY step"),
                  {runId}, [](const QSqlQuery& row) {
                    return MetricRow{row.value(0).toLongLong(), realOrNaN(row.value(1)),  realOrNaN(row.value(2)),
                                     realOrNaN(row.value(3)),   realOrNaN(row.value(4)),  realOrNaN(row.value(5)),
                                     realOrNaN(row.value(6)),   row.value(7).toInt() != 0, {}};
                  });
  QHash<qint64, int> rowOfStep;
  rowOfStep.reserve(rows.size());
  for (int i = 0; i < rows.size(); ++i) rowOfStep.insert(rows[i].step, i);
  struct Named {
    qint64 step;
    QString name;
    double value;
  };
  const QList<Named> named = m_db.select(
      tr("Could not read the metrics"), QStringLiteral("SELECT step, name, value FROM run_metric_values WHERE run_id = ?"),
      {runId}, [](const QSqlQuery& row) {
        return Named{row.value(0).toLongLong(), row.value(1).toString(), realOrNaN(row.value(2))};
      });
  // A named value without its step's row (not written by TrainingJobs, which writes both at once) is
  // still readable through metricSeries().
  for (const Named& n : named)
    if (const auto it = rowOfStep.constFind(n.step); it != rowOfStep.cend()) rows[*it].named.insert(n.name, n.value);
  return rows;
}

QList<MetricPoint> RunStore::metricSeries(qint64 runId, const QString& name) const {
  return m_db.select(tr("Could not read the metrics"),
                     QStringLiteral("SELECT step, value FROM run_metric_values WHERE run_id = ? AND name = ? ORDER BY step"),
                     {runId, name}, [](const QSqlQuery& row) {
                       return MetricPoint{row.value(0).toLongLong(), realOrNaN(row.value(1))};
                     });
}

QStringList RunStore::metricNames(qint64 runId) const {
  return m_db.select(tr("Could not read the metrics"),
                     QStringLiteral("SELECT DISTINCT name FROM run_metric_values WHERE run_id = ? ORDER BY name"),
                     {runId}, [](const QSqlQuery& row) { return row.value(0).toString(); });
}

QList<SampleRow> RunStore::samples(qint64 runId) const {
  return m_db.select(tr("Could not read the samples"),
                     QStringLiteral("SELECT step, prompt, text FROM samples WHERE run_id = ? ORDER BY step, prompt"),
                     {runId}, [](const QSqlQuery& row) {
                       return SampleRow{row.value(0).toLongLong(), row.value(1).toString(), row.value(2).toString()};
                     });
}

QList<CompletionRow> RunStore::completions(qint64 runId) const {
  return m_db.select(tr("Could not read the sampled completions"),
                     QStringLiteral("SELECT step, idx, prompt, completion, score FROM run_completions WHERE run_id = ?"
                                    " ORDER BY step, idx"),
                     {runId}, [](const QSqlQuery& row) {
                       return CompletionRow{row.value(0).toLongLong(), row.value(1).toInt(), row.value(2).toString(),
                                            row.value(3).toString(), realOrNaN(row.value(4))};
                     });
}

QList<qint64> RunStore::pauseInterruptedRuns() {
  const QList<qint64> ids = m_db.select(tr("Could not read the runs"),
                                        QStringLiteral("SELECT id FROM runs WHERE status = 'running' ORDER BY id"), {},
                                        [](const QSqlQuery& row) { return row.value(0).toLongLong(); });
  if (ids.isEmpty()) return ids;
  if (!m_db.write(tr("Could not mark interrupted runs as paused"),
                  QStringLiteral("UPDATE runs SET status = 'paused' WHERE status = 'running'")))
    return {};
  Q_EMIT runsChanged();
  return ids;
}
