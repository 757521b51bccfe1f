// SessionStore: training runs, per-step metrics and sample generations (schema step 4).
//
// Metrics are written as they arrive (TrainingJobs flushes every ~250 ms, one transaction each), so a
// run killed mid-way keeps its curve up to its last flush. Values that were not computed (a step's
// val_loss) are SQL NULL, read back as NaN.
#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

#include <cmath>

#include "sessionstore.h"

namespace {

QVariant nullable(double v) { return std::isfinite(v) ? QVariant(v) : QVariant(); }
double orNaN(const QVariant& v) { return v.isNull() ? qQNaN() : v.toDouble(); }
QVariant nullableMs(qint64 ms) { return ms > 0 ? QVariant(ms) : QVariant(); }

const char* const kRunColumns =
    "id, name, recipe, model_path, settings, status, output_dir, error, total_steps, created_ms, started_ms, finished_ms";

StoredRun readRun(const QSqlQuery& q) {
  StoredRun r;
  r.id = q.value(0).toLongLong();
  r.name = q.value(1).toString();
  r.recipe = q.value(2).toString();
  r.modelPath = q.value(3).toString();
  r.settings = QJsonDocument::fromJson(q.value(4).toString().toUtf8()).object().toVariantMap();
  r.status = q.value(5).toString();
  r.outputDir = q.value(6).toString();
  r.error = q.value(7).toString();
  r.totalSteps = q.value(8).toLongLong();
  r.createdMs = q.value(9).toLongLong();
  r.startedMs = q.value(10).toLongLong();
  r.finishedMs = q.value(11).toLongLong();
  return r;
}

QString orEmpty(const QString& s) { return s.isNull() ? QStringLiteral("") : s; }

}  // namespace

qint64 SessionStore::createRun(const StoredRun& run) {
  const QString settings =
      QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(run.settings)).toJson(QJsonDocument::Compact));
  qint64 id = 0;
  if (!execMany(tr("Could not save the training run"),
                QStringLiteral("INSERT INTO runs (name, recipe, model_path, settings, status, output_dir, total_steps, "
                               "created_ms, started_ms, finished_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                {{orEmpty(run.name), orEmpty(run.recipe), orEmpty(run.modelPath), settings,
                  run.status.isEmpty() ? QStringLiteral("queued") : run.status, orEmpty(run.outputDir), run.totalSteps,
                  nowMs(), nullableMs(run.startedMs), nullableMs(run.finishedMs)}},
                &id))
    return 0;
  Q_EMIT runsChanged();
  return id;
}

bool SessionStore::setRunStatus(qint64 runId, const QString& status, const QString& error) {
  // started_ms is the first start; finished_ms is set by an end state and cleared by a resume.
  const bool end = status == QLatin1String("done") || status == QLatin1String("failed") || status == QLatin1String("cancelled");
  const qint64 now = nowMs();
  if (!execWrite(tr("Could not save the run's status"),
                 QStringLiteral("UPDATE runs SET status = ?, error = ?,"
                                " started_ms = CASE WHEN ? = 'running' THEN COALESCE(started_ms, ?) ELSE started_ms END,"
                                " finished_ms = ? WHERE id = ?"),
                 {status, orEmpty(error), status, now, end ? QVariant(now) : QVariant(), runId}))
    return false;
  Q_EMIT runsChanged();
  return true;
}

bool SessionStore::setRunOutputDir(qint64 runId, const QString& dir) {
  return execWrite(tr("Could not save the run's output directory"),
                   QStringLiteral("UPDATE runs SET output_dir = ? WHERE id = ?"), {orEmpty(dir), runId});
}

bool SessionStore::deleteRun(qint64 runId) {
  if (!execWrite(tr("Could not delete the run"), QStringLiteral("DELETE FROM runs WHERE id = ?"), {runId})) return false;
  Q_EMIT runsChanged();
  return true;
}

bool SessionStore::appendMetrics(qint64 runId, const QList<MetricRow>& rows) {
  if (rows.isEmpty()) return true;
  QList<QVariantList> values;
  values.reserve(rows.size());
  for (const MetricRow& m : rows)
    values << QVariantList{runId, m.step, nullable(m.loss), nullable(m.valLoss), nullable(m.lr), nullable(m.gradNorm),
                           nullable(m.tokensPerS), nullable(m.elapsedS), m.skipped ? 1 : 0};
  return execMany(tr("Could not save the training metrics"),
                  QStringLiteral("INSERT OR REPLACE INTO metrics (run_id, step, loss, val_loss, lr, grad_norm, tokens_per_s,"
                                 " elapsed_s, skipped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                  values);
}

bool SessionStore::appendSamples(qint64 runId, const QList<SampleRow>& rows) {
  if (rows.isEmpty()) return true;
  QList<QVariantList> values;
  for (const SampleRow& s : rows) values << QVariantList{runId, s.step, orEmpty(s.prompt), orEmpty(s.text)};
  return execMany(tr("Could not save the sample generations"),
                  QStringLiteral("INSERT OR REPLACE INTO samples (run_id, step, prompt, text) VALUES (?, ?, ?, ?)"), values);
}

StoredRun SessionStore::run(qint64 runId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT %1 FROM runs WHERE id = ?").arg(QLatin1String(kRunColumns)));
  q.addBindValue(runId);
  if (!q.exec()) return readFailed(tr("Could not read the run"), q.lastError().text()), StoredRun{};
  return q.next() ? readRun(q) : StoredRun{};
}

QList<StoredRun> SessionStore::runs() const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  QList<StoredRun> out;
  if (!q.exec(QStringLiteral("SELECT %1 FROM runs ORDER BY created_ms DESC, id DESC").arg(QLatin1String(kRunColumns))))
    return readFailed(tr("Could not read the runs"), q.lastError().text()), out;
  while (q.next()) out << readRun(q);
  return out;
}

QList<MetricRow> SessionStore::metrics(qint64 runId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT step, loss, val_loss, lr, grad_norm, tokens_per_s, elapsed_s, skipped FROM metrics"
                           " WHERE run_id = ? ORDER BY step"));
  q.addBindValue(runId);
  QList<MetricRow> out;
  if (!q.exec()) return readFailed(tr("Could not read the metrics"), q.lastError().text()), out;
  while (q.next())
    out << MetricRow{q.value(0).toLongLong(), orNaN(q.value(1)), orNaN(q.value(2)), orNaN(q.value(3)),
                     orNaN(q.value(4)),       orNaN(q.value(5)), orNaN(q.value(6)), q.value(7).toInt() != 0};
  return out;
}

QList<SampleRow> SessionStore::samples(qint64 runId) const {
  QSqlQuery q(QSqlDatabase::database(m_connection, false));
  q.prepare(QStringLiteral("SELECT step, prompt, text FROM samples WHERE run_id = ? ORDER BY step, prompt"));
  q.addBindValue(runId);
  QList<SampleRow> out;
  if (!q.exec()) return readFailed(tr("Could not read the samples"), q.lastError().text()), out;
  while (q.next()) out << SampleRow{q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString()};
  return out;
}

QList<qint64> SessionStore::pauseInterruptedRuns() {
  QList<qint64> ids;
  {
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (!q.exec(QStringLiteral("SELECT id FROM runs WHERE status = 'running' ORDER BY id")))
      return readFailed(tr("Could not read the runs"), q.lastError().text()), ids;
    while (q.next()) ids << q.value(0).toLongLong();
  }
  if (ids.isEmpty()) return ids;
  if (!execWrite(tr("Could not mark interrupted runs as paused"),
                 QStringLiteral("UPDATE runs SET status = 'paused' WHERE status = 'running'"), {}))
    return {};
  Q_EMIT runsChanged();
  return ids;
}
