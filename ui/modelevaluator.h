// ModelEvaluator: the view model of the Models page's card and Evaluate button. It reads the open
// model's card from its workbench.json (modelcard.h) and runs the arith / facts / chat evaluations
// (modelevaluation.h) off the GUI thread with a LatestTask, with progress and cancel.
//
// Invariants
// - `card` always belongs to `modelPath`; a new path drops the old card, the old results and any
//   evaluation still running (its outcome is never shown for another model).
// - One evaluation at a time: evaluate() while one runs restarts it; cancel() ends it now.
// - `results` are the last finished evaluation of this model, as modelcard::evalRows rows; `error` is
//   a readable sentence, "" when none.
#pragma once

#include <QObject>
#include <QString>
#include <QVariantList>
#include <QVariantMap>
#include <QtQml/qqml.h>

#include "services/latesttask.h"

class ModelEvaluator : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QString modelPath READ modelPath WRITE setModelPath NOTIFY modelPathChanged)
  // {title?, summary?, trainedOn?, limitations?, evals?, path}; {} when the model has no card.
  Q_PROPERTY(QVariantMap card READ card NOTIFY cardChanged)
  Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  Q_PROPERTY(QString error READ error NOTIFY errorChanged)
  // [{task, n, correct, accuracy, categories: [{name, n, correct, accuracy}]}]
  Q_PROPERTY(QVariantList results READ results NOTIFY resultsChanged)
  // Items per task (default 100).
  Q_PROPERTY(int items READ items WRITE setItems NOTIFY itemsChanged)

 public:
  explicit ModelEvaluator(QObject* parent = nullptr);
  ~ModelEvaluator() override;

  QString modelPath() const { return m_modelPath; }
  void setModelPath(const QString& path);
  QVariantMap card() const { return m_card; }
  bool busy() const { return m_busy; }
  double progress() const { return m_progress; }
  QString error() const { return m_error; }
  QVariantList results() const { return m_results; }
  int items() const { return m_items; }
  void setItems(int items);

  // Runs arith, facts and chat on the model at modelPath.
  Q_INVOKABLE void evaluate();
  Q_INVOKABLE void cancel();
  Q_INVOKABLE void clearError();
  // Reads the card again (after the model's workbench.json changed on disk).
  Q_INVOKABLE void reloadCard();

 Q_SIGNALS:
  void modelPathChanged();
  void cardChanged();
  void busyChanged();
  void progressChanged();
  void errorChanged();
  void resultsChanged();
  void itemsChanged();
  // An evaluation ended: ok false when it failed or was cancelled.
  void finished(bool ok);

 private:
  void end(bool ok);

  QString m_modelPath;
  QVariantMap m_card;
  bool m_busy = false;
  double m_progress = 0;
  QString m_error;
  QVariantList m_results;
  int m_items;
  LatestTask<QVariant> m_runner;
};
