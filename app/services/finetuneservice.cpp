// The fine-tuning wizard's engine work (see finetuneservice.h).
#include "services/finetuneservice.h"

#include <QCoreApplication>
#include <QPointer>
#include <QTemporaryDir>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/model_loader.h"
#include "engine/train/training_run.h"
#include "services/trainingsetup.h"

namespace finetune {

namespace {

bool report(const Progress& progress, double fraction) { return !progress || progress(fraction); }

}  // namespace

QThreadPool* taskPool() {
  // Owned by the application, like the global pool: at quit it lets a task that was told to stop reach
  // its next progress report (rather than cutting it off mid-write while the process tears down).
  static QPointer<QThreadPool> pool;
  if (!pool) {
    pool = new QThreadPool(QCoreApplication::instance());
    pool->setMaxThreadCount(1);
  }
  return pool;
}

ModelInfo inspectBaseModel(const QString& path, const Progress& progress) {
  report(progress, 0.1);
  const std::unique_ptr<engine::Model> m = engine::load_model(path.toStdString());
  ModelInfo info = ModelInfo::fromModel(*m, path, QString());
  if (!info.hasTokenizer)
    throw engine::Error(path.toStdString() + ": the model has no tokenizer, so it cannot be trained on text");
  return info;
}

engine::DatasetInspection inspectTrainingData(const QString& path, const QString& modelPath, int seq,
                                              double valFraction, const Progress& progress) {
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
  return engine::inspect_dataset(o, tok, progress);
}

TimeEstimate estimateTrainingTime(const QVariantMap& settings, const Progress& progress) {
  QTemporaryDir scratch;
  if (!scratch.isValid()) throw engine::Error("no temporary folder for the time estimate");
  QVariantMap s = settings;
  s[QStringLiteral("steps")] = 2;
  s[QStringLiteral("val_every")] = 0;
  s[QStringLiteral("sample_every")] = 0;
  s[QStringLiteral("save_every")] = 0;
  std::unique_ptr<engine::TrainingRun> run = buildTrainingSession(s, scratch.path());
  if (!report(progress, 0.3)) return {};
  using Clock = std::chrono::steady_clock;
  Clock::time_point last = Clock::now();
  double measured = 0;
  run->trainer->run([&](const engine::StepMetrics& m) {
    const Clock::time_point now = Clock::now();
    if (m.step == 2) measured = std::chrono::duration<double>(now - last).count();
    last = now;
    return report(progress, m.step == 1 ? 0.65 : 1.0);
  });
  TimeEstimate out;
  out.secondsPerStep = measured;
  out.steps = settings.value(QStringLiteral("steps"), 100).toInt();
  out.totalSeconds = measured * out.steps;
  out.backend = QString::fromStdString(run->backend.reason);
  return out;
}

Evaluation evaluateFineTune(const QVariantMap& settings, const QString& tunedDir, const QStringList& prompts,
                            const Progress& progress) {
  const engine::TrainingRunSpec spec = trainingRunSpec(settings, tunedDir);
  const std::string basePath = settings.value(QStringLiteral("model")).toString().toStdString();
  const engine::ChatTemplate tmpl =
      spec.recipe == engine::Recipe::Sft
          ? engine::training_chat_template(spec.chat_template, engine::detect_model_format(basePath), nullptr)
          : engine::ChatTemplate();
  std::vector<std::string> ps;
  for (const QString& p : prompts)
    if (!p.trimmed().isEmpty()) ps.push_back(p.toStdString());
  engine::BackendChoice backend = engine::choose_backend(engine::BackendPreference::Auto, spec.threads);
  const engine::LoadOptions f32{.dequantize = true};
  Evaluation out;
  std::vector<std::string> answers[2];
  for (int which = 0; which < 2; ++which) {
    const std::string path = which == 0 ? basePath : tunedDir.toStdString();
    const std::unique_ptr<engine::Model> m = engine::load_model(path, {}, f32);
    const double from = which * 0.5;
    (which == 0 ? out.before : out.after) =
        engine::validation_loss_of(*m, *backend.backend, spec, tmpl,
                                   [&](int done, int total) { return report(progress, from + 0.3 * done / total); });
    answers[which] = engine::greedy_answers(*m, *backend.backend, ps, spec.recipe, tmpl, 48,
                                            [&] { return report(progress, from + 0.4); });
  }
  const size_t n = std::min({ps.size(), answers[0].size(), answers[1].size()});
  for (size_t i = 0; i < n; ++i)
    out.answers.push_back(
        {QString::fromStdString(ps[i]), QString::fromStdString(answers[0][i]), QString::fromStdString(answers[1][i])});
  return out;
}

QVariantMap suggestedHyperParameters(double parameters, bool lora) {
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

}  // namespace finetune
