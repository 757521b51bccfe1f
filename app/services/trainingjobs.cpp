// TrainingJobs: queue, worker thread, per-step persistence. See trainingjobs.h.
#include "trainingjobs.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QThread>

#include <cmath>

#include "engine/error.h"
#include "engine/train/checkpoint.h"
#include "processmemory.h"
#include "trainingsetup.h"

namespace {

enum Request : int { kNone = 0, kPause = 1, kCancel = 2 };

const QString kQueued = QStringLiteral("queued"), kRunning = QStringLiteral("running"),
              kPaused = QStringLiteral("paused"), kDone = QStringLiteral("done"), kFailed = QStringLiteral("failed"),
              kCancelled = QStringLiteral("cancelled");

}  // namespace

TrainingJobs::TrainingJobs(RunStore* store, QObject* parent)
    : QObject(parent), m_store(store), m_thread(new QThread), m_workerContext(new QObject) {
  qRegisterMetaType<MetricRow>();
  qRegisterMetaType<SampleRow>();
  qRegisterMetaType<CompletionRow>();
  qRegisterMetaType<QList<CompletionRow>>();
  m_runsRoot = QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("runs"));
  m_thread->setObjectName(QStringLiteral("training"));
  m_workerContext->moveToThread(m_thread);
  m_thread->start();
  m_flushTimer.setSingleShot(true);
  m_flushTimer.setInterval(250);
  connect(&m_flushTimer, &QTimer::timeout, this, &TrainingJobs::flush);
}

TrainingJobs::~TrainingJobs() { shutdown(); }

void TrainingJobs::shutdown() {
  if (!m_thread) return;
  // The stop's checkpoint makes the run resumable; the results it posts back are dropped with this
  // object's event queue, so its row stays 'running' and recoverInterrupted() finds it next time.
  if (m_request) m_request->store(kPause);
  m_thread->quit();
  m_thread->wait();
  delete m_workerContext;
  delete m_thread;
  m_workerContext = nullptr;
  m_thread = nullptr;
  flush();
  m_queue.clear();
}

qint64 TrainingJobs::enqueue(const QString& name, const QVariantMap& settings, const QString& outDir) {
  StoredRun r;
  r.name = name;
  r.recipe = settings.value(QStringLiteral("recipe"), QStringLiteral("pretrain")).toString();
  r.modelPath = settings.value(QStringLiteral("model")).toString();
  r.settings = settings;
  r.status = kQueued;
  r.totalSteps =
      settings.value(QStringLiteral("steps"), defaultTrainingSettings().value(QStringLiteral("steps"))).toLongLong();
  const qint64 id = m_store->createRun(r);
  if (!id) return 0;
  const QString dir = outDir.isEmpty() ? QDir(m_runsRoot).filePath(QStringLiteral("run-%1").arg(id)) : outDir;
  m_store->setRunOutputDir(id, dir);
  m_queue << id;
  startNext();
  return id;
}

QString TrainingJobs::cliCommand(const QVariantMap& settings, const QString& outDir) const {
  return trainCliCommand(settings, outDir.isEmpty() ? QDir(m_runsRoot).filePath(QStringLiteral("<name>")) : outDir);
}

QVariantMap TrainingJobs::estimate(const QVariantMap& shape, const QVariantMap& settings) const {
  return estimateTrainingMemory(shape, settings);
}

QVariantMap TrainingJobs::defaults() const { return defaultTrainingSettings(); }

bool TrainingJobs::pause(qint64 runId) {
  if (runId == m_active && m_request) {
    m_request->store(kPause);
    return true;
  }
  if (!m_queue.removeOne(runId)) return false;
  return m_store->setRunStatus(runId, kPaused);
}

bool TrainingJobs::resume(qint64 runId) {
  if (m_store->run(runId).status != kPaused || m_queue.contains(runId)) return false;
  if (!m_store->setRunStatus(runId, kQueued)) return false;
  m_queue.prepend(runId);
  startNext();
  return true;
}

bool TrainingJobs::cancel(qint64 runId) {
  if (runId == m_active && m_request) {
    m_request->store(kCancel);
    return true;
  }
  const QString status = m_store->run(runId).status;
  if (status != kQueued && status != kPaused) return false;
  m_queue.removeOne(runId);
  return m_store->setRunStatus(runId, kCancelled);
}

QList<qint64> TrainingJobs::recoverInterrupted() {
  // Queued runs of the previous session wait again, in their order (oldest first).
  const QList<StoredRun> all = m_store->runs();
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->status == kQueued && !m_queue.contains(it->id) && it->id != m_active) m_queue << it->id;
  const QList<qint64> ids = m_store->pauseInterruptedRuns();
  startNext();
  return ids;
}

void TrainingJobs::startNext() {
  if (m_active || m_queue.isEmpty() || !m_thread) return;
  const qint64 id = m_queue.takeFirst();
  const StoredRun run = m_store->run(id);
  if (!run.id) return startNext();
  const bool resume =
      !engine::list_checkpoints(QDir(run.outputDir).filePath(QStringLiteral("checkpoints")).toStdString()).empty();
  // Elapsed time continues from the last stored row at or before the checkpoint the run resumes at;
  // the worker reports the checkpoint's step back and the rows after it are rewritten.
  const QList<MetricRow> before = m_store->metrics(id);
  m_active = id;
  m_request = std::make_shared<std::atomic<int>>(kNone);
  m_store->setRunStatus(id, kRunning);
  Q_EMIT activeRunChanged();

  auto request = m_request;
  const StepHook hook = m_stepHook;
  const QVariantMap settings = run.settings;
  const QString outDir = run.outputDir;
  QMetaObject::invokeMethod(
      m_workerContext,
      [this, id, settings, outDir, resume, request, before, hook]() {
        // On the training thread. Results go back as queued calls on `this` (dropped if it is gone).
        QString status = kDone, error;
        try {
          std::unique_ptr<engine::TrainingRun> s = buildTrainingSession(settings, outDir);
          qint64 from = 0;
          if (resume) from = s->trainer->resume().step;
          double baseElapsed = 0;
          for (const MetricRow& m : before)
            if (m.step <= from && std::isfinite(m.elapsedS)) baseElapsed = m.elapsedS;
          const qint64 total = settings.value(QStringLiteral("steps"), 100).toLongLong();
          QMetaObject::invokeMethod(
              this, [this, id, from, total] { Q_EMIT runStarted(id, from, total); }, Qt::QueuedConnection);
          const QString prompt =
              settings.value(QStringLiteral("sample_prompt"), QStringLiteral("Once upon a time")).toString();
          QElapsedTimer clock;
          clock.start();
          const engine::TrainResult r = s->trainer->run([&](const engine::StepMetrics& m) {
            MetricRow row;
            row.step = m.step;
            row.loss = m.loss;
            row.valLoss = m.val_loss ? double(*m.val_loss) : qQNaN();
            row.lr = m.lr;
            row.gradNorm = m.grad_norm;
            row.tokensPerS = m.tokens_per_s;
            row.elapsedS = baseElapsed + clock.nsecsElapsed() / 1e9;
            row.skipped = m.skipped;
            for (const auto& [name, value] : m.metrics) row.named.insert(QString::fromStdString(name), value);
            // The CLI's names for validation metrics, so a series reads the same in the app and in --metrics.
            for (const auto& [name, value] : m.val_metrics)
              row.named.insert(QStringLiteral("val_") + QString::fromStdString(name), value);
            QList<CompletionRow> completions;
            for (const engine::CompletionSample& c : m.samples)
              completions << CompletionRow{m.step, int(completions.size()), QString::fromStdString(c.prompt),
                                           QString::fromUtf8(c.completion.data(), qsizetype(c.completion.size())),
                                           c.score};
            // Raw bytes, possibly cut mid-character: fromUtf8 shows a cut as U+FFFD.
            const bool hasSample = m.sample.has_value();
            const SampleRow sample{m.step, prompt,
                                   hasSample ? QString::fromUtf8(m.sample->data(), qsizetype(m.sample->size()))
                                             : QString()};
            QMetaObject::invokeMethod(
                this,
                [this, id, row, sample, hasSample, completions] {
                  onStep(id, row, hasSample ? &sample : nullptr, completions);
                },
                Qt::QueuedConnection);
            if (hook) hook(id, m.step);
            return request->load() == kNone;
          });
          if (r.stopped) status = request->load() == kCancel ? kCancelled : kPaused;
          if (status == kDone) {
            const QJsonObject provenance{{QStringLiteral("created_by"), QStringLiteral("LLM Workbench training job")},
                                         {QStringLiteral("base_model"),
                                          settings.value(QStringLiteral("model")).toString()},
                                         {QStringLiteral("steps"), qint64(r.steps_done)},
                                         {QStringLiteral("training"), QJsonObject::fromVariantMap(settings)}};
            engine::save_training_result(*s, QJsonDocument(provenance).toJson().toStdString());
          }
        } catch (const std::exception& e) {
          status = kFailed;
          error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, id, status, error] { onFinished(id, status, error); }, Qt::QueuedConnection);
      },
      Qt::QueuedConnection);
}

void TrainingJobs::onStep(qint64 runId, const MetricRow& row, const SampleRow* sample,
                          const QList<CompletionRow>& completions) {
  if (m_pendingRun != runId) flush();
  m_pendingRun = runId;
  m_pendingMetrics << row;
  if (const qint64 rss = residentMemoryBytes(); rss != m_residentMemory) {
    m_residentMemory = rss;
    Q_EMIT residentMemoryChanged();
  }
  Q_EMIT metricsArrived(runId, row);
  if (sample) {
    m_pendingSamples << *sample;
    Q_EMIT sampleArrived(runId, *sample);
  }
  if (!completions.isEmpty()) {
    m_pendingCompletions << completions;
    Q_EMIT completionsArrived(runId, completions);
  }
  if (!m_flushTimer.isActive()) m_flushTimer.start();
}

void TrainingJobs::flush() {
  m_flushTimer.stop();
  if (!m_pendingRun) return;
  m_store->appendMetrics(m_pendingRun, m_pendingMetrics);
  m_store->appendSamples(m_pendingRun, m_pendingSamples);
  m_store->appendCompletions(m_pendingRun, m_pendingCompletions);
  m_pendingMetrics.clear();
  m_pendingSamples.clear();
  m_pendingCompletions.clear();
}

void TrainingJobs::onFinished(qint64 runId, const QString& status, const QString& error) {
  flush();
  m_store->setRunStatus(runId, status, error);
  m_active = 0;
  m_request.reset();
  Q_EMIT activeRunChanged();
  Q_EMIT runFinished(runId, status, error);
  startNext();
}
