// FineTuneWizard: the wizard's requests as service calls, their results as properties. See finetunewizard.h.
#include "finetunewizard.h"

#include <QUrl>

#include <cmath>

#include "services/alignmentevaluation.h"
#include "services/finetuneservice.h"
#include "services/trainingexport.h"
#include "services/trainingsetup.h"

namespace {

QVariantList previewRows(const std::vector<engine::ChatExample>& rows) {
  QVariantList out;
  for (const engine::ChatExample& ex : rows) {
    QStringList parts;
    for (const engine::ChatMessage& m : ex.messages)
      parts << (m.role == "text"
                    ? QString::fromStdString(m.content)
                    : QStringLiteral("%1: %2").arg(QString::fromStdString(m.role), QString::fromStdString(m.content)));
    out << QVariantMap{{QStringLiteral("line"), qint64(ex.line)},
                       {QStringLiteral("text"), parts.join(QLatin1Char('\n'))}};
  }
  return out;
}

QString recipeName(engine::Recipe r) {
  switch (r) {
    case engine::Recipe::Pretrain: return QStringLiteral("pretrain");
    case engine::Recipe::Sft: return QStringLiteral("sft");
    case engine::Recipe::Reward: return QStringLiteral("reward");
    case engine::Recipe::Dpo: return QStringLiteral("dpo");
    case engine::Recipe::Grpo: return QStringLiteral("grpo");
    case engine::Recipe::Ppo: return QStringLiteral("ppo");
  }
  return QStringLiteral("pretrain");
}

QVariantMap toVariant(const engine::DatasetInspection& r) {
  QVariantList problems;
  for (const engine::ChatRowProblem& p : r.problems)
    problems << QVariantMap{{QStringLiteral("line"), qint64(p.line)},
                            {QStringLiteral("message"), QString::fromStdString(p.message)}};
  return {{QStringLiteral("format"), QString::fromStdString(r.format)},
          {QStringLiteral("recipe"), recipeName(r.recipe)},
          {QStringLiteral("rows"), qint64(r.rows)},
          {QStringLiteral("badRows"), qint64(r.bad_rows)},
          {QStringLiteral("problems"), problems},
          {QStringLiteral("preview"), previewRows(r.preview)},
          {QStringLiteral("tokensCounted"), r.tokens_counted},
          {QStringLiteral("totalTokens"), qint64(r.total_tokens)},
          {QStringLiteral("minRowTokens"), qint64(r.min_row_tokens)},
          {QStringLiteral("meanRowTokens"), r.mean_row_tokens},
          {QStringLiteral("maxRowTokens"), qint64(r.max_row_tokens)},
          {QStringLiteral("rowsOverSeq"), qint64(r.rows_over_seq)},
          {QStringLiteral("trainRows"), qint64(r.train_rows)},
          {QStringLiteral("valRows"), qint64(r.val_rows)},
          {QStringLiteral("trainTokens"), qint64(r.train_tokens)},
          {QStringLiteral("valTokens"), qint64(r.val_tokens)}};
}

QVariantMap lossMap(const engine::ValidationLoss& v) {
  return {{QStringLiteral("loss"), v.loss},
          {QStringLiteral("perplexity"), v.perplexity},
          {QStringLiteral("positions"), qint64(v.positions)}};
}

QVariantMap toVariant(const ModelInfo& info) {
  return {{QStringLiteral("path"), info.path},
          {QStringLiteral("architecture"), info.architecture},
          {QStringLiteral("parameters"), info.parameterCount},
          {QStringLiteral("parametersText"), ModelInfo::formatCount(info.parameterCount)},
          {QStringLiteral("layers"), info.layers},
          {QStringLiteral("width"), info.embeddingSize},
          {QStringLiteral("heads"), info.heads},
          {QStringLiteral("kvHeads"), info.kvHeads},
          {QStringLiteral("vocab"), info.vocabSize},
          {QStringLiteral("context"), info.contextLength},
          {QStringLiteral("weights"), info.weights},
          {QStringLiteral("summary"), info.summary()}};
}

QVariantMap toVariant(const finetune::TimeEstimate& t) {
  return {{QStringLiteral("secondsPerStep"), t.secondsPerStep},
          {QStringLiteral("totalSeconds"), t.totalSeconds},
          {QStringLiteral("steps"), t.steps},
          {QStringLiteral("backend"), t.backend}};
}

QVariantMap toVariant(const finetune::Evaluation& e) {
  QVariantList answers;
  for (const finetune::AnswerPair& a : e.answers)
    answers << QVariantMap{{QStringLiteral("prompt"), a.prompt},
                           {QStringLiteral("base"), a.base},
                           {QStringLiteral("tuned"), a.tuned}};
  return {{QStringLiteral("before"), lossMap(e.before)},
          {QStringLiteral("after"), lossMap(e.after)},
          {QStringLiteral("answers"), answers}};
}

QVariantMap toVariant(const finetune::AlignmentEvaluation& e) {
  QVariantList measures, answers;
  for (const finetune::AlignmentMeasure& m : e.measures)
    measures << QVariantMap{{QStringLiteral("name"), m.name},
                            {QStringLiteral("explanation"), m.explanation},
                            {QStringLiteral("before"), std::isnan(m.before) ? QVariant() : QVariant(m.before)},
                            {QStringLiteral("after"), std::isnan(m.after) ? QVariant() : QVariant(m.after)},
                            {QStringLiteral("share"), m.share}};
  for (const finetune::TaskAnswer& a : e.answers)
    answers << QVariantMap{{QStringLiteral("prompt"), a.prompt},        {QStringLiteral("expected"), a.expected},
                           {QStringLiteral("base"), a.base},            {QStringLiteral("tuned"), a.tuned},
                           {QStringLiteral("baseCorrect"), a.baseCorrect}, {QStringLiteral("tunedCorrect"), a.tunedCorrect}};
  return {{QStringLiteral("kind"), QStringLiteral("alignment")},
          {QStringLiteral("recipe"), e.recipe},
          {QStringLiteral("heldOut"), qint64(e.heldOut)},
          {QStringLiteral("measures"), measures},
          {QStringLiteral("taskAnswers"), answers}};
}

finetune::Progress progressOf(const TaskContext& context) {
  return [&context](double fraction) { return context.progress(fraction); };
}

}  // namespace

FineTuneWizard::FineTuneWizard(QObject* parent) : QObject(parent) {}

FineTuneWizard::~FineTuneWizard() = default;

void FineTuneWizard::start(const QString& task, LatestTask<QVariant>::Work work,
                           std::function<void(const QVariant&)> apply) {
  m_task = task;
  m_progress = 0;
  m_error.clear();
  m_runner.start(
      std::move(work),
      [this, task, apply = std::move(apply)](const QVariant& result) {
        apply(result);
        end(task, true);
      },
      [this, task](const QString& message) {
        m_error = message;
        end(task, false);
      },
      [this](double fraction) {
        m_progress = fraction;
        Q_EMIT progressChanged();
      });
  Q_EMIT taskChanged();
  Q_EMIT progressChanged();
  Q_EMIT errorChanged();
}

void FineTuneWizard::end(const QString& task, bool ok) {
  m_task.clear();
  Q_EMIT taskChanged();
  Q_EMIT errorChanged();
  Q_EMIT finished(task, ok);
}

void FineTuneWizard::cancel() {
  if (!m_runner.busy()) return;
  // The result (if any) is dropped and the task ends now, so the page need not wait for it to stop.
  m_runner.cancel();
  end(m_task, false);
}

void FineTuneWizard::clearError() {
  if (m_error.isEmpty()) return;
  m_error.clear();
  Q_EMIT errorChanged();
}

void FineTuneWizard::inspectModel(const QString& path) {
  start(
      QStringLiteral("model"),
      [path](const TaskContext& c) -> QVariant { return toVariant(finetune::inspectBaseModel(path, progressOf(c))); },
      [this](const QVariant& r) {
        m_model = r.toMap();
        Q_EMIT modelChanged();
      });
}

void FineTuneWizard::inspectDataset(const QString& path, const QString& modelPath, int seq, double valFraction) {
  start(
      QStringLiteral("dataset"),
      [path, modelPath, seq, valFraction](const TaskContext& c) -> QVariant {
        return toVariant(finetune::inspectTrainingData(path, modelPath, seq, valFraction, progressOf(c)));
      },
      [this](const QVariant& r) {
        m_dataset = r.toMap();
        Q_EMIT datasetChanged();
      });
}

void FineTuneWizard::estimateTime(const QVariantMap& settings) {
  start(
      QStringLiteral("time"),
      [settings](const TaskContext& c) -> QVariant {
        return toVariant(finetune::estimateTrainingTime(settings, progressOf(c)));
      },
      [this](const QVariant& r) {
        m_time = r.toMap();
        Q_EMIT timeEstimateChanged();
      });
}

void FineTuneWizard::evaluate(const QVariantMap& settings, const QString& tunedDir, const QStringList& prompts) {
  start(
      QStringLiteral("evaluate"),
      [settings, tunedDir, prompts](const TaskContext& c) -> QVariant {
        if (finetune::isAlignmentRecipe(settings.value(QStringLiteral("recipe")).toString()))
          return toVariant(finetune::evaluateAlignment(settings, tunedDir, 4, progressOf(c)));
        return toVariant(finetune::evaluateFineTune(settings, tunedDir, prompts, progressOf(c)));
      },
      [this](const QVariant& r) {
        m_evaluation = r.toMap();
        Q_EMIT evaluationChanged();
      });
}

void FineTuneWizard::exportModel(const QString& runDir, const QString& kind, const QString& destination,
                                 const QString& ggufType) {
  QString dest = destination;
  if (dest.startsWith(QLatin1String("file://"))) dest = QUrl(dest).toLocalFile();
  start(
      QStringLiteral("export"),
      [runDir, kind, dest, ggufType](const TaskContext& c) -> QVariant {
        return QStringLiteral("%1 → %2").arg(exportTrainedModel(runDir, kind, dest, ggufType, progressOf(c)), dest);
      },
      [this](const QVariant& r) {
        m_exported = r.toString();
        Q_EMIT exportedChanged();
      });
}

QVariantMap FineTuneWizard::suggestedSettings(double parameters, bool lora, const QString& recipe) const {
  QVariantMap s = finetune::suggestedHyperParameters(parameters, lora);
  // Alignment starts from a model that already writes: it is nudged, not taught, so a gentler rate keeps it from
  // drifting away from what it knew (and from its reference).
  // One significant digit, as a person would type it (3e-4, not 3.333e-4).
  if (finetune::isAlignmentRecipe(recipe))
    s[QStringLiteral("lr")] = QString::number(s.value(QStringLiteral("lr")).toDouble() / 3, 'g', 1).toDouble();
  return s;
}

QVariantMap FineTuneWizard::alignmentDefaults(const QString& recipe) const { return defaultAlignmentSettings(recipe); }

QStringList FineTuneWizard::defaultPrompts(const QString& recipe) const {
  if (recipe == QLatin1String("sft"))
    return {tr("What can you help me with?"), tr("Explain what a language model is in one sentence."),
            tr("Write a short greeting.")};
  return {tr("Once upon a time"), tr("The little fox"), tr("One day, a girl named")};
}
