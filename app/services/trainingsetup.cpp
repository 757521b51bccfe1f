// Building a training run from its settings: the app-side twin of `train`'s setup in cmd_train.cpp
// (pretrain on plain text, SFT on JSONL chat / Alpaca with the model's chat template or Plain).
#include "trainingsetup.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>

#include "engine/chat_template.h"
#include "engine/error.h"
#include "engine/io/model_convert.h"
#include "engine/model_loader.h"
#include "engine/train/chat_dataset.h"
#include "engine/train/sequence_loader.h"
#include "engine/train/text_dataset.h"

TrainingSession::~TrainingSession() {
  trainer.reset();
  trainModel.reset();
}

QVariantMap defaultTrainingSettings() {
  return {{"recipe", "pretrain"},   {"lora_rank", 0},        {"lora_alpha", 16.0},     {"batch", 4},
          {"seq", 128},             {"grad_accum", 1},       {"steps", 100},           {"lr", 3e-4},
          {"schedule", "cosine"},   {"warmup", 0},           {"min_lr_ratio", 0.1},    {"weight_decay", 0.1},
          {"beta1", 0.9},           {"beta2", 0.95},         {"grad_clip", 1.0},       {"dropout", 0.0},
          {"label_smoothing", 0.0}, {"shuffle", true},       {"seed", 1},              {"val_fraction", 0.05},
          {"val_every", 50},        {"val_batches", 8},      {"sample_every", 0},      {"sample_prompt", "Once upon a time"},
          {"sample_tokens", 32},    {"save_every", 0},       {"keep", 3},              {"max_skipped_steps", 0},
          {"chat_template", ""},    {"threads", 0}};
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
      throw engine::Error("training setting '" + std::string(key) + "' must be a whole number in [" + std::to_string(lo) +
                          ", " + std::to_string(hi) + "], got '" + m_s.value(QLatin1String(key)).toString().toStdString() + "'");
    return static_cast<int64_t>(v);
  }
  double number(const char* key, double lo, double hi) const {
    bool ok = false;
    const double v = m_s.value(QLatin1String(key)).toDouble(&ok);
    if (!ok || !std::isfinite(v) || v < lo || v > hi)
      throw engine::Error("training setting '" + std::string(key) + "' must be a number in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "], got '" + m_s.value(QLatin1String(key)).toString().toStdString() + "'");
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

engine::ChatTemplate pickTemplate(const std::string& name, const std::string& modelPath) {
  if (!name.empty()) {
    auto t = engine::ChatTemplate::from_name(name);
    if (!t) throw engine::Error("training setting 'chat_template': unknown template '" + name + "'");
    return *t;
  }
  const engine::ModelFileInfo info = engine::detect_model_format(modelPath);
  if (info.format != engine::ModelFormat::Gguf)
    if (auto source = engine::io::read_chat_template(info.directory))
      if (auto t = engine::ChatTemplate::detect(*source)) return *t;
  return engine::ChatTemplate();
}

}  // namespace

QString trainCliCommand(const QVariantMap& settings, const QString& outDir) {
  const QVariantMap defaults = defaultTrainingSettings();
  QStringList args = {QStringLiteral("llm-workbench-cli"), QStringLiteral("train")};
  const auto add = [&](const QString& key, const QString& value) {
    args << QStringLiteral("--") + QString(key).replace(QLatin1Char('_'), QLatin1Char('-')) << shellQuote(value);
  };
  add(QStringLiteral("recipe"), settings.value(QStringLiteral("recipe"), defaults.value(QStringLiteral("recipe"))).toString());
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
  return {{QStringLiteral("weights"), weights},         {QStringLiteral("gradients"), gradients},
          {QStringLiteral("optimizer"), optimizer},     {QStringLiteral("activations"), activations},
          {QStringLiteral("total"), weights + gradients + optimizer + activations},
          {QStringLiteral("trainable"), trainable}};
}

std::unique_ptr<TrainingSession> buildTrainingSession(const QVariantMap& settingsMap, const QString& outDir) {
  const Settings s(settingsMap);
  auto ses = std::make_unique<TrainingSession>();
  const std::string recipe = s.str("recipe");
  if (recipe != "pretrain" && recipe != "sft")
    throw engine::Error("training setting 'recipe' must be pretrain or sft, got '" + recipe + "'");
  const std::string modelPath = s.str("model"), dataPath = s.str("data");
  if (modelPath.empty()) throw engine::Error("training setting 'model' is missing");
  if (dataPath.empty()) throw engine::Error("training setting 'data' is missing");
  const int B = static_cast<int>(s.integer("batch", 1, 1 << 16));
  const int accum = static_cast<int>(s.integer("grad_accum", 1, 1 << 16));
  const int64_t steps = s.integer("steps", 1, int64_t(1) << 40);
  const auto kind = engine::lr_schedule_from_name(s.str("schedule"));
  if (!kind) throw engine::Error("training setting 'schedule' must be constant, cosine, linear or step");
  const double valFraction = s.number("val_fraction", 0.0, 0.5);
  const int valEvery = static_cast<int>(s.integer("val_every", 0, INT32_MAX));
  const bool shuffle = s.flag("shuffle");
  const uint64_t seed = static_cast<uint64_t>(s.integer("seed", 0, INT64_MAX));

  ses->model = engine::load_model(modelPath, {}, engine::LoadOptions{.dequantize = true});
  const engine::Tokenizer* tok = ses->model->tokenizer();
  if (!tok) throw engine::Error(modelPath + ": the model has no tokenizer, so text cannot be turned into tokens");
  const int T = static_cast<int>(s.integer("seq", 1, ses->model->config().max_seq_len));
  ses->backend = engine::choose_backend(engine::BackendPreference::Auto, static_cast<int>(s.integer("threads", 0, 1024)));

  if (recipe == "pretrain") {
    engine::TextDataset d = engine::load_text_dataset(dataPath, *tok, valFraction);
    ses->trainLoader = std::make_unique<engine::TokenStreamLoader>(std::move(d.train), B, T, shuffle, seed, dataPath);
    if (!d.val.empty() && valEvery > 0) {
      const int vb = static_cast<int>(std::min<size_t>(size_t(B), (d.val.size() - 1) / size_t(T)));
      if (vb < 1)
        throw engine::Error(dataPath + ": the validation part (" + std::to_string(d.val.size()) +
                            " tokens) is shorter than one row; raise val_fraction or set val_every to 0");
      ses->valLoader = std::make_unique<engine::TokenStreamLoader>(std::move(d.val), vb, T, false, 0, dataPath);
    }
  } else {
    const engine::ChatDataset chats = engine::load_chat_dataset(dataPath);
    std::vector<engine::EncodedChat> enc =
        engine::encode_chat_dataset(chats, *tok, pickTemplate(s.str("chat_template"), modelPath));
    const size_t nVal = valEvery > 0 ? static_cast<size_t>(double(enc.size()) * valFraction) : 0;
    std::vector<engine::EncodedChat> val(std::make_move_iterator(enc.end() - std::ptrdiff_t(nVal)),
                                         std::make_move_iterator(enc.end()));
    enc.resize(enc.size() - nVal);
    const int32_t pad = tok->eos_id().value_or(0);
    ses->trainLoader = std::make_unique<engine::SequenceLoader>(std::move(enc), B, T, shuffle, seed, pad, dataPath);
    if (!val.empty()) {
      const int vb = static_cast<int>(std::min<size_t>(size_t(B), val.size()));
      ses->valLoader = std::make_unique<engine::SequenceLoader>(std::move(val), vb, T, false, 0, pad,
                                                                dataPath + " (validation part)");
    }
  }

  engine::LoraConfig lora;
  lora.rank = static_cast<int>(s.integer("lora_rank", 0, 4096));
  lora.alpha = static_cast<float>(s.number("lora_alpha", 1e-6, 1e6));
  lora.seed = seed;
  ses->trainModel = std::make_unique<engine::TrainModel>(*ses->model, *ses->backend.backend, lora);

  engine::TrainerOptions o;
  o.steps = steps;
  o.grad_accum = accum;
  o.grad_clip = static_cast<float>(s.number("grad_clip", 0.0, 1e9));
  o.schedule.kind = *kind;
  o.schedule.base_lr = static_cast<float>(s.number("lr", 0.0, 10.0));
  o.schedule.warmup_steps = static_cast<int>(s.integer("warmup", 0, INT32_MAX));
  o.schedule.total_steps = static_cast<int>(std::min<int64_t>(steps, INT32_MAX));
  o.schedule.min_lr_ratio = static_cast<float>(s.number("min_lr_ratio", 0.0, 1.0));
  o.adam.beta1 = s.number("beta1", 0.0, 0.999999);
  o.adam.beta2 = s.number("beta2", 0.0, 0.999999);
  o.adam.weight_decay = s.number("weight_decay", 0.0, 10.0);
  o.dropout = static_cast<float>(s.number("dropout", 0.0, 0.95));
  o.label_smoothing = static_cast<float>(s.number("label_smoothing", 0.0, 0.95));
  o.seed = seed;
  o.val_every = ses->valLoader ? valEvery : 0;
  o.val_batches = static_cast<int>(s.integer("val_batches", 1, 1 << 20));
  o.sample_every = static_cast<int>(s.integer("sample_every", 0, INT32_MAX));
  o.sample_tokens = static_cast<int>(s.integer("sample_tokens", 1, 1 << 16));
  if (o.sample_every > 0) {
    o.sample_prompt = tok->encode(s.str("sample_prompt"));
    if (o.sample_prompt.empty()) throw engine::Error("training setting 'sample_prompt' is empty");
  }
  o.save_every = static_cast<int>(s.integer("save_every", 0, INT32_MAX));
  o.checkpoint_dir = QDir(outDir).filePath(QStringLiteral("checkpoints")).toStdString();
  o.keep_checkpoints = static_cast<int>(s.integer("keep", 0, 1 << 20));
  o.max_skipped_steps = static_cast<int>(s.integer("max_skipped_steps", 0, INT32_MAX));
  ses->configJson = QJsonDocument(QJsonObject::fromVariantMap(s.map())).toJson(QJsonDocument::Compact).toStdString();
  o.config_json = ses->configJson;
  ses->tokensPerStep = int64_t(B) * T * accum;
  ses->trainer = std::make_unique<engine::Trainer>(*ses->trainModel, *ses->trainLoader, ses->valLoader.get(),
                                                   ses->backend.backend.get(), o);
  return ses;
}
