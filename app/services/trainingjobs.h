// TrainingJobs: the queue of training runs. One run trains at a time, on this object's own worker
// thread; every step's metrics go to SQLite (RunStore) as they arrive and out as signals.
//
// Why a thread of its own and not EngineWorker's: one optimizer step takes from milliseconds to
// minutes and the Trainer holds its thread for the whole run; on EngineWorker's thread chat and the
// Playground would wait for the run to end. The training model is a separate copy (widened to f32),
// so the two threads share no engine object. They do share the CPU cores (the job's `threads`
// setting limits its share).
//
// Control: pause and cancel are std::atomic flags polled by the Trainer's per-step callback (a
// queued call would arrive only after the run). Pause = stop after the current step with a
// checkpoint; resume = train on from the newest checkpoint, which the Trainer makes exact (the same
// losses an uninterrupted run has). A run found 'running' at startup was killed: recoverInterrupted()
// marks it 'paused', so it resumes from its newest checkpoint (or from step 0 when it had none).
//
// Invariants
// - Statuses move queued → running → paused | done | failed | cancelled; paused → queued (resume);
//   queued | paused → cancelled. Only the GUI thread writes the store.
// - Metric rows (with their named metrics), samples and scored completions are flushed to the store at
//   most ~250 ms after they arrive and always before a run's end state is written, so a finished run has
//   exactly one row per step.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QVariantMap>

#include <atomic>
#include <functional>
#include <memory>

#include "store/runstore.h"

class QThread;

class TrainingJobs : public QObject {
  Q_OBJECT
  Q_PROPERTY(qint64 activeRunId READ activeRunId NOTIFY activeRunChanged)
  Q_PROPERTY(bool busy READ busy NOTIFY activeRunChanged)
  // The app's resident memory, bytes, read as each step of a run arrives (-1: not known yet or not
  // readable here); the dashboard's Memory figure.
  Q_PROPERTY(qint64 residentMemory READ residentMemory NOTIFY residentMemoryChanged)

 public:
  // `store` must outlive this object.
  explicit TrainingJobs(RunStore* store, QObject* parent = nullptr);
  ~TrainingJobs() override;  // shutdown()
  // Stops a running job after its current step (it stays 'running' in the store, so the next start
  // finds it interrupted and resumable), joins the thread and flushes pending rows. Idempotent; call
  // it before the store goes away.
  void shutdown();

  // Creates a queued run: settings as trainingsetup.h (model, data, recipe, ...). outDir empty: a
  // directory under runsRoot(). Returns the run id, 0 when it could not be stored.
  Q_INVOKABLE qint64 enqueue(const QString& name, const QVariantMap& settings, const QString& outDir = {});
  Q_INVOKABLE bool pause(qint64 runId);   // running: after this step; queued: at once
  Q_INVOKABLE bool resume(qint64 runId);  // paused → queued (first in line)
  Q_INVOKABLE bool cancel(qint64 runId);  // running: after this step; queued/paused: at once
  // The equivalent `llm-workbench-cli train ...` (outDir empty: <runsRoot>/<name>).
  Q_INVOKABLE QString cliCommand(const QVariantMap& settings, const QString& outDir = {}) const;
  // estimateTrainingMemory (trainingsetup.h) for QML.
  Q_INVOKABLE QVariantMap estimate(const QVariantMap& shape, const QVariantMap& settings) const;
  // The CLI's defaults for every setting (trainingsetup.h).
  Q_INVOKABLE QVariantMap defaults() const;
  // Marks runs left 'running' by a killed app as 'paused'. Call once after opening the store.
  QList<qint64> recoverInterrupted();

  qint64 activeRunId() const { return m_active; }
  bool busy() const { return m_active != 0; }
  qint64 residentMemory() const { return m_residentMemory; }
  QList<qint64> queued() const { return m_queue; }
  void setRunsRoot(const QString& dir) { m_runsRoot = dir; }
  QString runsRoot() const { return m_runsRoot; }
  RunStore* store() const { return m_store; }
  // Called on the training thread after each step has been reported and before pause/cancel are
  // checked (tests use it to act at an exact step). Set before enqueueing.
  using StepHook = std::function<void(qint64 runId, qint64 step)>;
  void setStepHook(StepHook hook) { m_stepHook = std::move(hook); }

 Q_SIGNALS:
  void activeRunChanged();
  void residentMemoryChanged();
  void runStarted(qint64 runId, qint64 fromStep, qint64 totalSteps);
  void metricsArrived(qint64 runId, const MetricRow& row);
  void sampleArrived(qint64 runId, const SampleRow& row);
  // The completions an online recipe sampled at one step, with their rewards.
  void completionsArrived(qint64 runId, const QList<CompletionRow>& rows);
  // status: paused, done, failed or cancelled; error: why it failed.
  void runFinished(qint64 runId, const QString& status, const QString& error);

 private:
  void startNext();
  // sample: null when none.
  void onStep(qint64 runId, const MetricRow& row, const SampleRow* sample, const QList<CompletionRow>& completions);
  void onFinished(qint64 runId, const QString& status, const QString& error);
  void flush();

  RunStore* m_store;
  QThread* m_thread;
  QObject* m_workerContext;  // lives on m_thread: jobs are posted to it
  QList<qint64> m_queue;
  qint64 m_active = 0;
  QString m_runsRoot;
  // Polled by the running job; reset at each start.
  std::shared_ptr<std::atomic<int>> m_request;  // 0 none, 1 pause, 2 cancel
  QList<MetricRow> m_pendingMetrics;
  QList<SampleRow> m_pendingSamples;
  QList<CompletionRow> m_pendingCompletions;
  qint64 m_pendingRun = 0;
  QTimer m_flushTimer;
  StepHook m_stepHook;
  qint64 m_residentMemory = -1;
};
