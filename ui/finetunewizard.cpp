// FineTuneWizard: the wizard's long steps off the GUI thread. See finetunewizard.h.
#include "finetunewizard.h"

#include <QDir>
#include <QPointer>
#include <QTemporaryDir>
#include <QThread>
#include <QUrl>

#include <chrono>
#include <cmath>

#include "engine/error.h"
#include "engine/model_loader.h"
#include "engine/train/dataset_inspection.h"
#include "engine/train/finetune_eval.h"
#include "services/modelinfo.h"
#include "services/trainingexport.h"
#include "services/trainingsetup.h"

namespace {

const QString kStopped = QStringLiteral("stopped");

QVariantList previewRows(const std::vector<engine::ChatExample>& rows) {
  QVariantList out;
  for (const engine::ChatExample& ex : rows) {
    QStringList parts;
    for (const engine::ChatMessage& m : ex.messages)
      parts << (m.role == "text" ? QString::fromStdString(m.content)
                                 : QStringLiteral("%1: %2").arg(QString::fromStdString(m.role), QString::fromStdString(m.content)));
    out << QVariantMap{{QStringLiteral("line"), qint64(ex.line)}, {QStringLiteral("text"), parts.join(QLatin1Char('\n'))}};
  }
  return out;
}

QVariantMap toVariant(const engine::DatasetInspection& r) {
  QVariantList problems;
  for (const engine::ChatRowProblem& p : r.problems)
    problems << QVariantMap{{QStringLiteral("line"), qint64(p.line)}, {QStringLiteral("message"), QString::fromStdString(p.message)}};
  return {{QStringLiteral("format"), QString::fromStdString(r.format)},
          {QStringLiteral("recipe"), r.recipe == engine::Recipe::Sft ? QStringLiteral("sft") : QStringLiteral("pretrain")},
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
  return {{QStringLiteral("loss"), v.loss}, {QStringLiteral("perplexity"), v.perplexity}, {QStringLiteral("positions"), qint64(v.positions)}};
}

}  // namespace

FineTuneWizard::FineTuneWizard(QObject* parent) : QObject(parent) {}

FineTuneWizard::~FineTuneWizard() {
  if (m_control) m_control->cancelled = true;
  joinThread();
}

void FineTuneWizard::joinThread() {
  if (!m_thread) return;
  m_thread->wait();
  delete m_thread;
  m_thread = nullptr;
}

void FineTuneWizard::start(const QString& task, Work work, std::function<void(const QVariant&)> apply) {
  if (m_control) m_control->cancelled = true;
  joinThread();  // a cancelled task stops at its next progress report
  const quint64 serial = ++m_serial;
  auto control = std::make_shared<Control>();
  m_control = control;
  m_task = task;
  m_progress = 0;
  m_error.clear();
  Q_EMIT taskChanged();
  Q_EMIT progressChanged();
  Q_EMIT errorChanged();
  QPointer<FineTuneWizard> self(this);
  m_thread = QThread::create([self, serial, control, work = std::move(work), apply = std::move(apply), task]() {
    const Report report = [self, serial, control](double f) {
      QMetaObject::invokeMethod(self, [self, serial, f] {
        if (!self || serial != self->m_serial) return;
        self->m_progress = f;
        Q_EMIT self->progressChanged();
      }, Qt::QueuedConnection);
      return !control->cancelled.load();
    };
    QVariant result;
    QString error;
    try {
      result = work(report);
      if (control->cancelled) error = kStopped;
    } catch (const std::exception& e) {
      error = control->cancelled ? kStopped : QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(self, [self, serial, result, error, apply, task] {
      if (!self || serial != self->m_serial) return;
      self->m_task.clear();
      self->m_control.reset();
      if (error.isEmpty()) apply(result);
      else if (error != kStopped) self->m_error = error;
      Q_EMIT self->taskChanged();
      Q_EMIT self->errorChanged();
      Q_EMIT self->finished(task, error.isEmpty());
    }, Qt::QueuedConnection);
  });
  m_thread->start();
}

void FineTuneWizard::cancel() {
  if (!m_control) return;
  m_control->cancelled = true;
  // The result (if any) is dropped: bump the serial and end the task now, so the page need not wait.
  ++m_serial;
  const QString task = m_task;
  m_task.clear();
  m_control.reset();
  Q_EMIT taskChanged();
  Q_EMIT finished(task, false);
}

void FineTuneWizard::clearError() {
  if (m_error.isEmpty()) return;
  m_error.clear();
  Q_EMIT errorChanged();
}

void FineTuneWizard::inspectModel(const QString& path) {
  start(QStringLiteral("model"), [path](const Report& report) -> QVariant {
    report(0.1);
    // The shape only: quantized weights stay as they are (training widens them later).
    const std::unique_ptr<engine::Model> m = engine::load_model(path.toStdString());
    const ModelInfo info = ModelInfo::fromModel(*m, path, QString());
    if (!info.hasTokenizer) throw engine::Error(path.toStdString() + ": the model has no tokenizer, so it cannot be trained on text");
    return QVariantMap{{QStringLiteral("path"), path},
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
  }, [this](const QVariant& r) {
    m_model = r.toMap();
    Q_EMIT modelChanged();
  });
}

void FineTuneWizard::inspectDataset(const QString& path, const QString& modelPath, int seq, double valFraction) {
  start(QStringLiteral("dataset"), [path, modelPath, seq, valFraction](const Report& report) -> QVariant {
    engine::DatasetInspectionOptions o;
    o.path = path.toStdString();
    o.seq = seq;
    o.val_fraction = valFraction;
    std::unique_ptr<engine::Model> model;
    if (!modelPath.isEmpty()) {
      model = engine::load_model(modelPath.toStdString());
      o.chat_template = engine::training_chat_template({}, engine::detect_model_format(modelPath.toStdString()), nullptr);
    }
    const engine::Tokenizer* tok = model ? model->tokenizer() : nullptr;
    return toVariant(engine::inspect_dataset(o, tok, report));
  }, [this](const QVariant& r) {
    m_dataset = r.toMap();
    Q_EMIT datasetChanged();
  });
}

void FineTuneWizard::estimateTime(const QVariantMap& settings) {
  start(QStringLiteral("time"), [settings](const Report& report) -> QVariant {
    // Two real steps of these settings on a throwaway copy: the first pays for warm-up (allocation,
    // caches), the second is what every further step costs.
    QTemporaryDir scratch;
    if (!scratch.isValid()) throw engine::Error("no temporary folder for the time estimate");
    QVariantMap s = settings;
    s[QStringLiteral("steps")] = 2;
    s[QStringLiteral("val_every")] = 0;
    s[QStringLiteral("sample_every")] = 0;
    s[QStringLiteral("save_every")] = 0;
    std::unique_ptr<engine::TrainingRun> run = buildTrainingSession(s, scratch.path());
    report(0.3);
    using Clock = std::chrono::steady_clock;
    Clock::time_point last = Clock::now();
    double measured = 0;
    run->trainer->run([&](const engine::StepMetrics& m) {
      const Clock::time_point now = Clock::now();
      if (m.step == 2) measured = std::chrono::duration<double>(now - last).count();
      last = now;
      return report(m.step == 1 ? 0.65 : 1.0);
    });
    const double steps = settings.value(QStringLiteral("steps"), 100).toDouble();
    return QVariantMap{{QStringLiteral("secondsPerStep"), measured},
                       {QStringLiteral("totalSeconds"), measured * steps},
                       {QStringLiteral("steps"), steps},
                       {QStringLiteral("backend"), QString::fromStdString(run->backend.reason)}};
  }, [this](const QVariant& r) {
    m_time = r.toMap();
    Q_EMIT timeEstimateChanged();
  });
}

void FineTuneWizard::evaluate(const QVariantMap& settings, const QString& tunedDir, const QStringList& prompts) {
  start(QStringLiteral("evaluate"), [settings, tunedDir, prompts](const Report& report) -> QVariant {
    const engine::TrainingRunSpec spec = trainingRunSpec(settings, tunedDir);
    const std::string basePath = settings.value(QStringLiteral("model")).toString().toStdString();
    const engine::ChatTemplate tmpl = spec.recipe == engine::Recipe::Sft
                                          ? engine::training_chat_template(spec.chat_template, engine::detect_model_format(basePath), nullptr)
                                          : engine::ChatTemplate();
    std::vector<std::string> ps;
    for (const QString& p : prompts)
      if (!p.trimmed().isEmpty()) ps.push_back(p.toStdString());
    engine::BackendChoice backend = engine::choose_backend(engine::BackendPreference::Auto, spec.threads);
    const engine::LoadOptions f32{.dequantize = true};
    // Base first, then tuned: one model in memory at a time.
    QVariantMap out;
    std::vector<std::string> baseAnswers, tunedAnswers;
    for (int which = 0; which < 2; ++which) {
      const std::string path = which == 0 ? basePath : tunedDir.toStdString();
      const std::unique_ptr<engine::Model> m = engine::load_model(path, {}, f32);
      const double from = which * 0.5;
      const engine::ValidationLoss v = engine::validation_loss_of(*m, *backend.backend, spec, tmpl, [&](int done, int total) {
        return report(from + 0.3 * done / total);
      });
      out[which == 0 ? QStringLiteral("before") : QStringLiteral("after")] = lossMap(v);
      (which == 0 ? baseAnswers : tunedAnswers) = engine::greedy_answers(*m, *backend.backend, ps, spec.recipe, tmpl, 48,
                                                                        [&] { return report(from + 0.4); });
    }
    QVariantList answers;
    for (size_t i = 0; i < ps.size() && i < baseAnswers.size() && i < tunedAnswers.size(); ++i)
      answers << QVariantMap{{QStringLiteral("prompt"), QString::fromStdString(ps[i])},
                             {QStringLiteral("base"), QString::fromStdString(baseAnswers[i])},
                             {QStringLiteral("tuned"), QString::fromStdString(tunedAnswers[i])}};
    out[QStringLiteral("answers")] = answers;
    return out;
  }, [this](const QVariant& r) {
    m_evaluation = r.toMap();
    Q_EMIT evaluationChanged();
  });
}

void FineTuneWizard::exportModel(const QString& runDir, const QString& kind, const QString& destination, const QString& ggufType) {
  QString dest = destination;
  if (dest.startsWith(QLatin1String("file://"))) dest = QUrl(dest).toLocalFile();
  start(QStringLiteral("export"), [runDir, kind, dest, ggufType](const Report& report) -> QVariant {
    return QStringLiteral("%1 → %2").arg(exportTrainedModel(runDir, kind, dest, ggufType, report), dest);
  }, [this](const QVariant& r) {
    m_exported = r.toString();
    Q_EMIT exportedChanged();
  });
}

QVariantMap FineTuneWizard::suggestedSettings(double parameters, bool lora) const {
  // Rates that train small models quickly without diverging; large models move less per step.
  double lr = parameters < 5e6 ? 1e-3 : parameters < 200e6 ? 3e-4 : parameters < 2e9 ? 1e-4 : 3e-5;
  if (lora) lr = std::min(1e-3, lr * 5);
  const int batch = parameters < 200e6 ? 8 : parameters < 2e9 ? 4 : 1;
  const int steps = parameters < 5e6 ? 200 : 100;
  return {{QStringLiteral("lr"), lr},
          {QStringLiteral("batch"), batch},
          {QStringLiteral("steps"), steps},
          {QStringLiteral("warmup"), steps / 10},
          {QStringLiteral("lora_rank"), parameters < 200e6 ? 8 : 16}};
}

QStringList FineTuneWizard::defaultPrompts(const QString& recipe) const {
  if (recipe == QLatin1String("sft"))
    return {tr("What can you help me with?"), tr("Explain what a language model is in one sentence."), tr("Write a short greeting.")};
  return {tr("Once upon a time"), tr("The little fox"), tr("One day, a girl named")};
}
