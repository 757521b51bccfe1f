// FineTuneWizard: the view model of the fine-tuning wizard (TrainWizard.qml). Its long steps --
// reading the base model's shape, checking the data file, timing real training steps, evaluating base
// against tuned model, exporting the result -- are app services (finetuneservice.h, trainingexport.h)
// run off the GUI thread by a LatestTask; this class turns the page's requests into those calls and
// their results into properties.
//
// Why not EngineWorker or TrainingJobs: each task loads its own engine objects (a second copy of the
// model in f32, as a training job does) and must not wait behind a chat reply or a training run.
//
// Invariants
// - One task at a time: starting a task while one runs cancels the old one; its result is dropped.
//   Tasks share one thread (finetune::taskPool()), so the next starts once the old one has stopped.
// - Results and errors arrive on the GUI thread; `error` is a readable sentence, "" when none.
// - Nothing waits for a task: cancel() and the destructor tell it to stop and drop its outcome.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>
#include <QtQml/qqml.h>

#include <functional>

#include "services/finetuneservice.h"
#include "services/latesttask.h"

class FineTuneWizard : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(bool busy READ busy NOTIFY taskChanged)
  Q_PROPERTY(QString task READ task NOTIFY taskChanged)  // "model", "dataset", "time", "evaluate", "export" or ""
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  Q_PROPERTY(QString error READ error NOTIFY errorChanged)
  Q_PROPERTY(QVariantMap model READ model NOTIFY modelChanged)
  Q_PROPERTY(QVariantMap dataset READ dataset NOTIFY datasetChanged)
  Q_PROPERTY(QVariantMap timeEstimate READ timeEstimate NOTIFY timeEstimateChanged)
  Q_PROPERTY(QVariantMap evaluation READ evaluation NOTIFY evaluationChanged)
  Q_PROPERTY(QString exported READ exported NOTIFY exportedChanged)

 public:
  explicit FineTuneWizard(QObject* parent = nullptr);
  ~FineTuneWizard() override;

  // {path, architecture, parameters, layers, width, heads, kvHeads, vocab, context, summary}.
  Q_INVOKABLE void inspectModel(const QString& path);
  // {format, recipe, rows, badRows, problems: [{line, message}], preview: [{line, text}], tokensCounted,
  //  totalTokens, minRowTokens, meanRowTokens, maxRowTokens, rowsOverSeq, trainRows, valRows,
  //  trainTokens, valTokens}. modelPath: whose tokenizer counts (empty: no counts).
  Q_INVOKABLE void inspectDataset(const QString& path, const QString& modelPath, int seq, double valFraction);
  // Times two real optimizer steps of these settings (the first warms up; the second is measured):
  // {secondsPerStep, totalSeconds, steps}. An estimate: validation and samples add to it.
  Q_INVOKABLE void estimateTime(const QVariantMap& settings);
  // Validation loss/perplexity of the base model and of the tuned one (in tunedDir) on the run's own
  // validation split, and both models' greedy answers to `prompts`:
  // {before: {loss, perplexity}, after: {...}, answers: [{prompt, base, tuned}]}.
  // For the alignment recipes (reward, dpo, grpo, ppo; alignmentevaluation.h) instead, on the held-out pairs or
  // prompts: {kind: "alignment", recipe, heldOut, measures: [{name, explanation, before, after, share}] (before or
  // after undefined where a measure does not apply), taskAnswers: [{prompt, expected, base, tuned, baseCorrect,
  // tunedCorrect}]}; `prompts` is not used.
  Q_INVOKABLE void evaluate(const QVariantMap& settings, const QString& tunedDir, const QStringList& prompts);
  // exportTrainedModel (trainingexport.h) of kind "hf", "adapter" or "gguf".
  Q_INVOKABLE void exportModel(const QString& runDir, const QString& kind, const QString& destination,
                               const QString& ggufType = QStringLiteral("f32"));
  Q_INVOKABLE void cancel();
  Q_INVOKABLE void clearError();

  // Hyper-parameters that suit a model of `parameters` weights: {lr, batch, steps, warmup, lora_rank}.
  // Smaller models take larger steps; LoRA adapters start at zero and take a higher rate; the alignment
  // recipes a third of the rate.
  Q_INVOKABLE QVariantMap suggestedSettings(double parameters, bool lora, const QString& recipe = {}) const;
  // The alignment settings of `recipe` with the CLI's defaults (defaultAlignmentSettings, trainingsetup.h).
  Q_INVOKABLE QVariantMap alignmentDefaults(const QString& recipe) const;
  // Three prompts to compare base and tuned answers on, for this recipe.
  Q_INVOKABLE QStringList defaultPrompts(const QString& recipe) const;

  bool busy() const { return !m_task.isEmpty(); }
  QString task() const { return m_task; }
  double progress() const { return m_progress; }
  QString error() const { return m_error; }
  QVariantMap model() const { return m_model; }
  QVariantMap dataset() const { return m_dataset; }
  QVariantMap timeEstimate() const { return m_time; }
  QVariantMap evaluation() const { return m_evaluation; }
  QString exported() const { return m_exported; }

 Q_SIGNALS:
  void taskChanged();
  void progressChanged();
  void errorChanged();
  void modelChanged();
  void datasetChanged();
  void timeEstimateChanged();
  void evaluationChanged();
  void exportedChanged();
  // A task ended: ok false when it failed or was cancelled.
  void finished(const QString& task, bool ok);

 private:
  // Runs `work` as `task` (its result as a QVariant for `apply`), replacing the running one.
  void start(const QString& task, LatestTask<QVariant>::Work work, std::function<void(const QVariant&)> apply);
  void end(const QString& task, bool ok);

  QString m_task;
  double m_progress = 0;
  QString m_error;
  QVariantMap m_model, m_dataset, m_time, m_evaluation;
  QString m_exported;
  LatestTask<QVariant> m_runner{this, finetune::taskPool()};
};
