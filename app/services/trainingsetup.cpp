// Training settings as a QVariantMap: defaults, the CLI command, the memory estimate, and their
// translation into engine::TrainingRunSpec (the builder the CLI's `train` uses too).
#include "trainingsetup.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/align/reward_model.h"
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
          {"threads", 0},
          {"zero", 0}};
}

namespace {

// The alignment settings as the CLI's `train` reads them (app/cli/cmd_train.cpp): one table, so the run the app
// builds and the command it shows cannot disagree. The flag is "--" + key with '-' for '_'. beta has a row per
// recipe: DPO's must be positive, GRPO's may be 0 (no KL term).
enum RecipeBits : unsigned { kDpo = 1, kGrpo = 2, kPpo = 4 };
enum class SettingKind { Integer, Number, Text };
struct AlignmentSetting {
  const char* key;
  unsigned recipes;  // RecipeBits
  SettingKind kind;
  double value, lo, hi;   // Integer, Number: the default and the range
  const char* text = "";  // Text: the default
};
constexpr double kNoRange = 0;
const AlignmentSetting kAlignmentSettings[] = {
    {"beta", kDpo, SettingKind::Number, 0.1, 1e-6, 1e6},
    {"beta", kGrpo, SettingKind::Number, 0.04, 0.0, 1e6},
    {"group_size", kGrpo, SettingKind::Integer, 4, 2, 1024},
    {"temperature", kGrpo | kPpo, SettingKind::Number, 1.0, 1e-3, 100.0},
    {"max_new_tokens", kGrpo | kPpo, SettingKind::Integer, 24, 1, 1 << 16},
    {"clip", kGrpo | kPpo, SettingKind::Number, 0.2, 1e-6, 0.999},
    {"kl_coef", kPpo, SettingKind::Number, 0.05, 0.0, 1e6},
    {"target_kl", kPpo, SettingKind::Number, 0.0, 0.0, 1e6},
    {"kl_horizon", kPpo, SettingKind::Number, 10000.0, 1.0, 1e12},
    {"kl_estimator", kPpo, SettingKind::Text, kNoRange, kNoRange, kNoRange, "k1"},  // k1 or k3
    {"ppo_epochs", kPpo, SettingKind::Integer, 4, 1, 1024},
    {"num_minibatches", kPpo, SettingKind::Integer, 1, 1, 1 << 16},
    {"gae_gamma", kPpo, SettingKind::Number, 1.0, 0.0, 1.0},
    {"gae_lambda", kPpo, SettingKind::Number, 0.95, 0.0, 1.0},
    {"cliprange_value", kPpo, SettingKind::Number, 0.2, 1e-6, 1e6},
    {"vf_coef", kPpo, SettingKind::Number, 0.1, 0.0, 1e6},
    {"entropy_coef", kPpo, SettingKind::Number, 0.0, 0.0, 1e6},
    {"reward_model", kPpo, SettingKind::Text, kNoRange, kNoRange, kNoRange, ""},  // "": the exact-match scorer
};

unsigned recipeBit(const QString& recipe) {
  if (recipe == QLatin1String("dpo")) return kDpo;
  if (recipe == QLatin1String("grpo")) return kGrpo;
  if (recipe == QLatin1String("ppo")) return kPpo;
  return 0;
}

// The rows that apply to `recipe`, in the table's order.
std::vector<const AlignmentSetting*> alignmentSettingsOf(const QString& recipe) {
  std::vector<const AlignmentSetting*> out;
  for (const AlignmentSetting& a : kAlignmentSettings)
    if (a.recipes & recipeBit(recipe)) out.push_back(&a);
  return out;
}

QVariant defaultOf(const AlignmentSetting& a) {
  switch (a.kind) {
    case SettingKind::Integer: return qint64(a.value);
    case SettingKind::Number: return a.value;
    case SettingKind::Text: return QString::fromLatin1(a.text);
  }
  return {};
}

bool isDefault(const AlignmentSetting& a, const QVariant& v) {
  if (a.kind == SettingKind::Text) return v.toString() == QLatin1String(a.text);
  bool ok = false;
  const double d = v.toDouble(&ok);
  return ok && d == a.value;
}

// Settings merged over the defaults (the alignment ones of the map's recipe included), read with range checks.
class Settings {
 public:
  explicit Settings(const QVariantMap& s) : m_s(defaultTrainingSettings()) {
    const QVariantMap align =
        defaultAlignmentSettings(s.value(QStringLiteral("recipe"), m_s.value(QStringLiteral("recipe"))).toString());
    for (auto it = align.begin(); it != align.end(); ++it) m_s[it.key()] = it.value();
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

QVariantMap defaultAlignmentSettings(const QString& recipe) {
  QVariantMap out;
  for (const AlignmentSetting* a : alignmentSettingsOf(recipe)) out[QLatin1String(a->key)] = defaultOf(*a);
  return out;
}

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
  // The recipe's alignment settings that differ from its defaults; --kl-horizon only beside --target-kl, as the
  // CLI asks.
  const QString recipe = settings.value(QStringLiteral("recipe")).toString();
  const auto changed = [&](const AlignmentSetting& a) {
    return settings.contains(QLatin1String(a.key)) && !isDefault(a, settings.value(QLatin1String(a.key)));
  };
  bool horizon = false;
  for (const AlignmentSetting* a : alignmentSettingsOf(recipe))
    if (QLatin1String(a->key) == QLatin1String("kl_horizon")) horizon = changed(*a);
  for (const AlignmentSetting* a : alignmentSettingsOf(recipe)) {
    const QString key = QLatin1String(a->key);
    if (changed(*a) || (horizon && key == QLatin1String("target_kl")))
      add(key, settings.value(key, defaultOf(*a)).toString());
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

namespace {

// The recipe's alignment settings, range-checked by the table, into the spec; PPO's combined checks with the CLI's
// words.
void applyAlignmentSettings(const Settings& s, engine::TrainingRunSpec& spec) {
  const QString recipe = QString::fromStdString(s.str("recipe"));
  QVariantMap v;
  for (const AlignmentSetting* a : alignmentSettingsOf(recipe)) {
    const QString key = QLatin1String(a->key);
    if (a->kind == SettingKind::Integer) v[key] = qint64(s.integer(a->key, int64_t(a->lo), int64_t(a->hi)));
    else if (a->kind == SettingKind::Number) v[key] = s.number(a->key, a->lo, a->hi);
    else v[key] = QString::fromStdString(s.str(a->key));
  }
  const auto num = [&](const char* key) { return v.value(QLatin1String(key)).toDouble(); };
  const auto whole = [&](const char* key) { return static_cast<int>(v.value(QLatin1String(key)).toLongLong()); };
  if (spec.recipe == engine::Recipe::Dpo) spec.dpo_beta = num("beta");
  if (spec.recipe == engine::Recipe::Grpo) {
    spec.grpo.beta = num("beta");
    spec.grpo.group_size = whole("group_size");
    spec.grpo.temperature = static_cast<float>(num("temperature"));
    spec.grpo.max_new_tokens = whole("max_new_tokens");
    spec.grpo.clip = num("clip");
  }
  if (spec.recipe != engine::Recipe::Ppo) return;
  engine::PpoOptions& p = spec.ppo;
  p.temperature = static_cast<float>(num("temperature"));
  p.max_new_tokens = whole("max_new_tokens");
  p.cliprange = num("clip");
  p.kl_coef = num("kl_coef");
  p.target_kl = num("target_kl");
  p.kl_horizon = num("kl_horizon");
  const QString estimator = v.value(QStringLiteral("kl_estimator")).toString();
  if (estimator != QLatin1String("k1") && estimator != QLatin1String("k3"))
    throw engine::Error("training setting 'kl_estimator' must be k1 or k3, got '" + estimator.toStdString() + "'");
  p.kl_estimator = estimator == QLatin1String("k3") ? engine::KlEstimator::K3 : engine::KlEstimator::K1;
  p.ppo_epochs = whole("ppo_epochs");
  p.num_minibatches = whole("num_minibatches");
  p.gamma = num("gae_gamma");
  p.lam = num("gae_lambda");
  p.cliprange_value = num("cliprange_value");
  p.vf_coef = num("vf_coef");
  p.entropy_coef = num("entropy_coef");
  if (spec.grad_accum != 1)
    throw engine::Error("--grad-accum applies to the other recipes: ppo makes --ppo-epochs x --num-minibatches "
                        "updates per rollout instead");
  if (spec.batch % p.num_minibatches != 0)
    throw engine::Error("--num-minibatches " + std::to_string(p.num_minibatches) + " does not divide --batch " +
                        std::to_string(spec.batch));
  spec.reward_model_path = v.value(QStringLiteral("reward_model")).toString().toStdString();
  if (!spec.reward_model_path.empty() && !engine::is_reward_model(spec.reward_model_path))
    throw engine::Error("--reward-model " + spec.reward_model_path +
                        " is not a reward model (its workbench.json has no \"reward_model\"; train one with --recipe "
                        "reward)");
}

}  // namespace

engine::TrainingRunSpec trainingRunSpec(const QVariantMap& settingsMap, const QString& outDir) {
  const Settings s(settingsMap);
  engine::TrainingRunSpec spec;
  const std::string recipe = s.str("recipe");
  const auto r = engine::recipe_from_name(recipe);
  if (!r)
    throw engine::Error("training setting 'recipe' must be pretrain, sft, reward, dpo, grpo or ppo, got '" + recipe +
                        "'");
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
  spec.zero_stage = static_cast<int>(s.integer("zero", 0, 1));
  if (spec.zero_stage == 1 && spec.recipe != engine::Recipe::Pretrain && spec.recipe != engine::Recipe::Sft)
    throw engine::Error("training setting 'zero' (ZeRO stage 1) applies to the pretrain and sft recipes");
  applyAlignmentSettings(s, spec);
  spec.config_json = QJsonDocument(QJsonObject::fromVariantMap(s.map())).toJson(QJsonDocument::Compact).toStdString();
  return spec;
}

std::unique_ptr<engine::TrainingRun> buildTrainingSession(const QVariantMap& settings, const QString& outDir) {
  const engine::TrainingRunSpec spec = trainingRunSpec(settings, outDir);
  const std::string modelPath = settings.value(QStringLiteral("model")).toString().toStdString();
  if (modelPath.empty()) throw engine::Error("training setting 'model' is missing");
  return engine::build_training_run(engine::load_training_base(modelPath, spec.seed), spec);
}
