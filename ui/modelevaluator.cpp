// ModelEvaluator: the Models page's card and evaluations. See modelevaluator.h.
#include "modelevaluator.h"

#include <QJsonObject>

#include "services/finetuneservice.h"
#include "services/localfile.h"
#include "services/modelcard.h"
#include "services/modelevaluation.h"

// The wizard's thread: model-loading tasks take turns, so at most one extra copy of a model is in memory.
ModelEvaluator::ModelEvaluator(QObject* parent)
    : QObject(parent), m_items(modeleval::kDefaultItems), m_runner(this, finetune::taskPool()) {}

ModelEvaluator::~ModelEvaluator() = default;

void ModelEvaluator::setModelPath(const QString& path) {
  const QString local = localPathOf(path);
  if (local == m_modelPath) return;
  cancel();
  m_modelPath = local;
  Q_EMIT modelPathChanged();
  if (!m_results.isEmpty()) {
    m_results.clear();
    Q_EMIT resultsChanged();
  }
  if (!m_error.isEmpty()) {
    m_error.clear();
    Q_EMIT errorChanged();
  }
  reloadCard();
}

void ModelEvaluator::reloadCard() {
  const QVariantMap card = modelcard::readModelCard(m_modelPath);
  if (card == m_card) return;
  m_card = card;
  Q_EMIT cardChanged();
}

void ModelEvaluator::setItems(int items) {
  items = qBound(1, items, 100000);
  if (items == m_items) return;
  m_items = items;
  Q_EMIT itemsChanged();
}

void ModelEvaluator::evaluate() {
  if (m_modelPath.isEmpty()) return;
  const QString path = m_modelPath;
  const int n = m_items;
  m_busy = true;
  m_progress = 0;
  m_error.clear();
  m_runner.start(
      [path, n](const TaskContext& context) {
        const QJsonObject evals = modeleval::evaluateModel(
            path, {QStringLiteral("arith"), QStringLiteral("facts"), QStringLiteral("chat")}, n,
            [&context](double fraction) { return context.progress(fraction); });
        return QVariant(modelcard::evalRows(evals));
      },
      [this](const QVariant& rows) {
        m_results = rows.toList();
        Q_EMIT resultsChanged();
        end(true);
      },
      [this](const QString& message) {
        m_error = message;
        end(false);
      },
      [this](double fraction) {
        m_progress = fraction;
        Q_EMIT progressChanged();
      });
  Q_EMIT busyChanged();
  Q_EMIT progressChanged();
  Q_EMIT errorChanged();
}

void ModelEvaluator::end(bool ok) {
  m_busy = false;
  Q_EMIT busyChanged();
  Q_EMIT errorChanged();
  Q_EMIT finished(ok);
}

void ModelEvaluator::cancel() {
  if (!m_runner.busy()) return;
  // The task is told to stop and its outcome dropped; the page need not wait for it.
  m_runner.cancel();
  end(false);
}

void ModelEvaluator::clearError() {
  if (m_error.isEmpty()) return;
  m_error.clear();
  Q_EMIT errorChanged();
}
