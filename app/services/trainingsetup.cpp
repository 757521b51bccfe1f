// Training settings as a QVariantMap: defaults, the CLI command, the memory estimate, and their
// translation into engine::TrainingRunSpec (the builder the CLI's `train` uses too).
#include "trainingsetup.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>

#include "engine/error.h"

QVariantMap defaultTrainingSettings() {
  return {{"recipe", "pretrain"},
          {"lora_rank", 0},
          {"lora_alpha", 16.0},
          {"lora_dropout", 0.0},
          {"lora_targets", ""},
          {"step_size", 100},
          {"gamma", 0.5},
          {"batch", 4},
          {"seq", 128},
          {"grad_accum", 1},
          {"steps", 100},
          {"lr", 3e-4},
          {"schedule", "cosine"},
          {"warmup", 0},
          {"min_lr_ratio", 0.1},
          {"weight_decay", 0.1},
          {"beta1", 0.9},
          {"beta2", 0.95},
          {"grad_clip", 1.0},
          {"dropout", 0.0},
          {"label_smoothing", 0.0},
          {"shuffle", true},
          {"seed", 1},
          {"val_fraction", 0.05},
          {"val_every", 50},
          {"val_batches", 8},
          {"sample_every", 0},
          {"sample_prompt", "Once upon a time"},
          {"sample_tokens", 32},
          {"save_every", 0},
          {"keep", 3},
          {"max_skipped_steps", 0},
          {"chat_template", ""},
          {"threads", 0}};
}

namespace {

// Settings merged over the defaults, read with range checks.
class Settings {
 public:
  explicit Settings(const QVariantMap& s) : m_s(defaultTrainingSettings()) {
    for (auto it = s.begin(); it != s.end(); ++it) m_s[it.key()] = it.value();
  }
  std::string str(const char* key) const { return m_s.value(QLatin1String(key)).toString().toStdString(); }
  int64_t integer(const char* key, int64_t lo, int64_t hi) const {
    bool ok = false;
    const double v = m_s.value(QLatin1String(key)).toDouble(&ok);
    if (!ok || !std::isfinite(v) || v != std::floor(v) || v < double(lo) || v > double(hi))
      throw engine::Error("training setting '" + std::string(key) + "' must be a whole number in [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                          m_s.value(QLatin1String(key)).toString().toStdString() + "'");
    return static_cast<int64_t>(v);
  }
  double number(const char* key, double lo, double hi) const {
    bool ok = false;
    const double v = m_s.value(QLatin1String(key)).toDouble(&ok);
    if (!ok || !std::isfinite(v) || v < lo || v > hi)
      throw engine::Error("training setting '" + std::string(key) + "' must be a number in [" + std::to_string(lo) +
                          ", " + std::to_string(hi) + "], got '" +
                          m_s.value(QLatin1String(key)).toString().toStdString() + "'");
    return v;
  }
  bool flag(const char* key) const { return m_s.value(QLatin1String(key)).toBool(); }
  const QVariantMap& map() const { return m_s; }

 private:
  QVariantMap m_s;
};

QString shellQuote(const QString& s) {
  static const QString safe = QStringLiteral("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:+,");
  if (!s.isEmpty() && std::all_of(s.begin(), s.end(), [](QChar c) { return safe.contains(c); })) return s;
  QString q = s;
  q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + q + QLatin1Char('\'');
}

}  // namespace

QString trainCliCommand(const QVariantMap& settings, const QString& outDir) {
  const QVariantMap defaults = defaultTrainingSettings();
  QStringList args = {QStringLiteral("llm-workbench-cli"), QStringLiteral("train")};
  const auto add = [&](const QString& key, const QString& value) {
    args << QStringLiteral("--") + QString(key).replace(QLatin1Char('_'), QLatin1Char('-')) << shellQuote(value);
  };
  add(QStringLiteral("recipe"),
      settings.value(QStringLiteral("recipe"), defaults.value(QStringLiteral("recipe"))).toString());
  add(QStringLiteral("model"), settings.value(QStringLiteral("model")).toString());
  add(QStringLiteral("data"), settings.value(QStringLiteral("data")).toString());
  add(QStringLiteral("out"), outDir);
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    if (it.key() == QLatin1String("recipe") || !settings.contains(it.key())) continue;
    const QVariant v = settings.value(it.key());
    if (v.toString() == it.value().toString()) continue;
    if (it.key() == QLatin1String("shuffle")) add(it.key(), v.toBool() ? QStringLiteral("on") : QStringLiteral("off"));
    else add(it.key(), v.toString());
  }
  return args.join(QLatin1Char(' '));
}

QVariantMap estimateTrainingMemory(const QVariantMap& shape, const QVariantMap& settings) {
  const QVariantMap d = defaultTrainingSettings();
  const auto get = [&](const QVariantMap& m, const char* key) {
    return m.value(QLatin1String(key), d.value(QLatin1String(key))).toDouble();
  };
  const double P = get(shape, "parameters"), L = get(shape, "layers"), C = get(shape, "width");
  const double NH = get(shape, "heads"), V = get(shape, "vocab");
  const double B = get(settings, "batch"), T = get(settings, "seq"), r = get(settings, "lora_rank");
  const double trainable = r > 0 ? L * r * (4 * C + 2 * C) : P;
  const double weights = 4 * P + (r > 0 ? 4 * trainable : 0);
  const double gradients = 4 * trainable, optimizer = 8 * trainable;
  const double activations = 4 * B * T * (L * (16 * C + 2 * NH * T) + 2 * V);
  return {{QStringLiteral("weights"), weights},
          {QStringLiteral("gradients"), gradients},
          {QStringLiteral("optimizer"), optimizer},
          {QStringLiteral("activations"), activations},
          {QStringLiteral("total"), weights + gradients + optimizer + activations},
          {QStringLiteral("trainable"), trainable}};
}

engine::TrainingRunSpec trainingRunSpec(const QVariantMap& settingsMap, const QString& outDir) {
  const Settings s(settingsMap);
  engine::TrainingRunSpec spec;
  const std::string recipe = s.str("recipe");
  const auto r = engine::recipe_from_name(recipe);
  if (!r) throw engine::Error("training setting 'recipe' must be pretrain or sft, got '" + recipe + "'");
  // The alignment recipes run with the engine's defaults for their own settings (beta, group size,
  // sampling) until the app offers them.
  spec.recipe = *r;
  spec.data_path = s.str("data");
  if (spec.data_path.empty()) throw engine::Error("training setting 'data' is missing");
  spec.out_dir = outDir.toStdString();
  spec.lora.rank = static_cast<int>(s.integer("lora_rank", 0, 4096));
  spec.lora.alpha = static_cast<float>(s.number("lora_alpha", 1e-6, 1e6));
  spec.lora.dropout = static_cast<float>(s.number("lora_dropout", 0.0, 0.95));
  for (const QString& t :
       s.map().value(QStringLiteral("lora_targets")).toString().split(QLatin1Char(','), Qt::SkipEmptyParts))
    spec.lora.targets.push_back(t.trimmed().toStdString());
  spec.batch = static_cast<int>(s.integer("batch", 1, 1 << 16));
  spec.seq = static_cast<int>(s.integer("seq", 1, 1 << 20));
  spec.grad_accum = static_cast<int>(s.integer("grad_accum", 1, 1 << 16));
  spec.steps = s.integer("steps", 1, int64_t(1) << 40);
  const auto kind = engine::lr_schedule_from_name(s.str("schedule"));
  if (!kind) throw engine::Error("training setting 'schedule' must be constant, cosine, linear or step");
  spec.schedule = *kind;
  spec.lr = static_cast<float>(s.number("lr", 0.0, 10.0));
  spec.warmup = static_cast<int>(s.integer("warmup", 0, INT32_MAX));
  spec.min_lr_ratio = static_cast<float>(s.number("min_lr_ratio", 0.0, 1.0));
  spec.step_size = static_cast<int>(s.integer("step_size", 1, INT32_MAX));
  spec.gamma = static_cast<float>(s.number("gamma", 1e-9, 1.0));
  spec.beta1 = s.number("beta1", 0.0, 0.999999);
  spec.beta2 = s.number("beta2", 0.0, 0.999999);
  spec.weight_decay = s.number("weight_decay", 0.0, 10.0);
  spec.grad_clip = static_cast<float>(s.number("grad_clip", 0.0, 1e9));
  spec.dropout = static_cast<float>(s.number("dropout", 0.0, 0.95));
  spec.label_smoothing = static_cast<float>(s.number("label_smoothing", 0.0, 0.95));
  spec.shuffle = s.flag("shuffle");
  spec.seed = static_cast<uint64_t>(s.integer("seed", 0, INT64_MAX));
  spec.val_fraction = s.number("val_fraction", 0.0, 0.5);
  spec.val_every = static_cast<int>(s.integer("val_every", 0, INT32_MAX));
  spec.val_batches = static_cast<int>(s.integer("val_batches", 1, 1 << 20));
  spec.sample_every = static_cast<int>(s.integer("sample_every", 0, INT32_MAX));
  spec.sample_prompt = s.str("sample_prompt");
  spec.sample_tokens = static_cast<int>(s.integer("sample_tokens", 1, 1 << 16));
  spec.save_every = static_cast<int>(s.integer("save_every", 0, INT32_MAX));
  spec.keep_checkpoints = static_cast<int>(s.integer("keep", 0, 1 << 20));
  spec.max_skipped_steps = static_cast<int>(s.integer("max_skipped_steps", 0, INT32_MAX));
  spec.chat_template = s.str("chat_template");
  spec.threads = static_cast<int>(s.integer("threads", 0, 1024));
  spec.config_json = QJsonDocument(QJsonObject::fromVariantMap(s.map())).toJson(QJsonDocument::Compact).toStdString();
  return spec;
}

std::unique_ptr<engine::TrainingRun> buildTrainingSession(const QVariantMap& settings, const QString& outDir) {
  const engine::TrainingRunSpec spec = trainingRunSpec(settings, outDir);
  const std::string modelPath = settings.value(QStringLiteral("model")).toString().toStdString();
  if (modelPath.empty()) throw engine::Error("training setting 'model' is missing");
  return engine::build_training_run(engine::load_training_base(modelPath, spec.seed), spec);
}
