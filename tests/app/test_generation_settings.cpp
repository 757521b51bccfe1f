// The generation settings' field table and the conversions derived from it: every field round-trips
// map -> settings -> map and through JSON, the defaults are SamplerParams' own, out-of-range values
// are clamped, the reply JSON keeps the keys databases already hold, and the engine parameters come
// out as the fields say.
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTest>

#include <cmath>
#include <limits>

#include "engine/generation_settings.h"
#include "engine/sampler.h"
#include "services/generationtypes.h"

using engine::GenerationSettingField;
using engine::SettingKind;

class TestGenerationSettings : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void tableIsWellFormed();
  void defaultsAreTheSamplersDefaults();
  void everyFieldRoundTripsThroughMapAndJson();
  void missingKeysKeepTheBase();
  void outOfRangeValuesAreClamped();
  void replyJsonKeepsTodaysKeys();
  void qmlFieldsCarryDefaultsAndRanges();
  void generateParamsFollowTheFields();
};

// A value for every field that differs from its default and lies inside its range.
static GenerationSettings nonDefaultSettings() {
  GenerationSettings s;
  s.max_tokens = 77;
  s.temperature = 0.35;
  s.top_k = 7;
  s.top_p = 0.5;
  s.min_p = 0.2;
  s.repeat_penalty = 1.3;
  s.repeat_last_n = -1;
  s.frequency_penalty = 0.25;
  s.presence_penalty = -0.5;
  s.logit_bias = "42:-inf\n dragon:3";
  s.seed = 9007199254740993;  // 2^53 + 1: not exact as a double
  s.stop = {"END", "###"};
  s.top_logprobs = 3;
  return s;
}

static void compareSettings(const GenerationSettings& a, const GenerationSettings& b) {
  for (const GenerationSettingField& f : engine::generation_setting_fields()) {
    switch (f.kind) {
      case SettingKind::Integer: QCOMPARE(a.*f.integer, b.*f.integer); break;
      case SettingKind::Real: QCOMPARE(a.*f.real, b.*f.real); break;
      case SettingKind::Text: QCOMPARE(a.*f.text, b.*f.text); break;
      case SettingKind::TextList: QCOMPARE(a.*f.text_list, b.*f.text_list); break;
    }
  }
}

void TestGenerationSettings::tableIsWellFormed() {
  QSet<QString> keys, flags;
  int members = 0;
  for (const GenerationSettingField& f : engine::generation_setting_fields()) {
    QVERIFY2(!keys.contains(QLatin1String(f.key)), f.key);
    QVERIFY2(!flags.contains(QLatin1String(f.flag)), f.flag);
    keys.insert(QLatin1String(f.key));
    flags.insert(QLatin1String(f.flag));
    QVERIFY(f.label && *f.label && f.help && *f.help);
    // Exactly the member its kind names.
    const int set = (f.integer != nullptr) + (f.real != nullptr) + (f.text != nullptr) + (f.text_list != nullptr);
    QCOMPARE(set, 1);
    QCOMPARE(f.integer != nullptr, f.kind == SettingKind::Integer);
    QCOMPARE(f.real != nullptr, f.kind == SettingKind::Real);
    if (f.integer || f.real) {
      const GenerationSettings d;
      const double def = engine::setting_number(d, f);
      QVERIFY2(f.min <= def && def <= f.max, f.key);
      QVERIFY2(f.min <= f.ui_min && f.ui_min < f.ui_max && f.ui_max <= f.max, f.key);
      QVERIFY2(f.ui_step > 0, f.key);
    }
    QCOMPARE(engine::find_generation_setting(f.key), &f);
    QCOMPARE(engine::find_generation_setting(f.flag), &f);
    ++members;
  }
  QCOMPARE(members, 13);  // every member of GenerationSettings has its row
  QVERIFY(!engine::find_generation_setting("no-such-setting"));
  // The CLI contract's flags (DESIGN.md §5) are all in the table.
  for (const char* flag :
       {"max-tokens", "temperature", "top-k", "top-p", "min-p", "repeat-penalty", "seed", "stop", "top-logprobs"})
    QVERIFY2(flags.contains(QLatin1String(flag)), flag);
}

void TestGenerationSettings::defaultsAreTheSamplersDefaults() {
  const engine::SamplerParams sampler;
  const engine::GenerateParams params = engine::to_generate_params(GenerationSettings{}, 123);
  QCOMPARE(params.sampler.temperature, sampler.temperature);
  QCOMPARE(params.sampler.top_k, sampler.top_k);
  QCOMPARE(params.sampler.top_p, sampler.top_p);
  QCOMPARE(params.sampler.min_p, sampler.min_p);
  QCOMPARE(params.sampler.repeat_penalty, sampler.repeat_penalty);
  QCOMPARE(params.sampler.repeat_last_n, sampler.repeat_last_n);
  QCOMPARE(params.sampler.frequency_penalty, sampler.frequency_penalty);
  QCOMPARE(params.sampler.presence_penalty, sampler.presence_penalty);
  QVERIFY(params.sampler.logit_bias.empty());
  QCOMPARE(params.sampler.seed, uint64_t(123));  // the default seed is "pick one"
  QCOMPARE(params.top_logprobs, engine::GenerateParams{}.top_logprobs);
  QVERIFY(params.stop.empty());
  QCOMPARE(params.max_tokens, 128);
  // The views differ from the table only where they say so.
  QCOMPARE(playgroundDefaults().top_logprobs, int64_t(5));
  QCOMPARE(chatDefaults().max_tokens, int64_t(512));
  QCOMPARE(chatDefaults().top_logprobs, int64_t(0));
  QCOMPARE(QString::fromStdString(engine::setting_default_text(*engine::find_generation_setting("temperature"))),
           QStringLiteral("0.8"));
  QCOMPARE(QString::fromStdString(engine::setting_default_text(*engine::find_generation_setting("top-k"))),
           QStringLiteral("40"));
}

void TestGenerationSettings::everyFieldRoundTripsThroughMapAndJson() {
  const GenerationSettings s = nonDefaultSettings();
  const QVariantMap map = settingsToMap(s);
  QCOMPARE(map.size(), 13);
  for (const GenerationSettingField& f : engine::generation_setting_fields())
    QVERIFY2(map.contains(QLatin1String(f.key)), f.key);
  QCOMPARE(map.value(QStringLiteral("stop")).toString(), QStringLiteral("END\n###"));
  compareSettings(settingsFromMap(map), s);
  // Through JSON text, as presets and replies are stored (numbers become doubles there).
  const QByteArray json = QJsonDocument(QJsonObject::fromVariantMap(map)).toJson();
  GenerationSettings back = settingsFromMap(QJsonDocument::fromJson(json).object().toVariantMap());
  back.seed = s.seed;  // a double cannot hold 2^53 + 1; the reply stores its seed as text instead
  compareSettings(back, s);
  // The seed as text (how a reply stores the seed it used) is exact.
  QCOMPARE(settingsFromMap({{QStringLiteral("seed"), QStringLiteral("9007199254740993")}}).seed, s.seed);
  // Stop strings also as a list.
  QCOMPARE(settingsFromMap({{QStringLiteral("stop"), QStringList{QStringLiteral("a"), QString(), QStringLiteral("b")}}})
               .stop,
           (std::vector<std::string>{"a", "b"}));
}

void TestGenerationSettings::missingKeysKeepTheBase() {
  const GenerationSettings base = nonDefaultSettings();
  GenerationSettings expected = base;
  expected.top_k = 3;
  compareSettings(settingsFromMap({{QStringLiteral("topK"), 3}, {QStringLiteral("unknown"), 5}}, base), expected);
  // An invalid value (a JS undefined) keeps the base too.
  compareSettings(settingsFromMap({{QStringLiteral("temperature"), QVariant()}}, base), base);
}

void TestGenerationSettings::outOfRangeValuesAreClamped() {
  const GenerationSettings s = settingsFromMap({{QStringLiteral("temperature"), 500.0},
                                                {QStringLiteral("topP"), -1.0},
                                                {QStringLiteral("topLogprobs"), 1000},
                                                {QStringLiteral("maxTokens"), -5},
                                                {QStringLiteral("repeatLastN"), -9},
                                                {QStringLiteral("seed"), -7},
                                                {QStringLiteral("topK"), 2.9}});
  QCOMPARE(s.temperature, 100.0);
  QCOMPARE(s.top_p, 0.0);
  QCOMPARE(s.top_logprobs, int64_t(100));
  QCOMPARE(s.max_tokens, int64_t(0));
  QCOMPARE(s.repeat_last_n, int64_t(-1));
  QCOMPARE(s.seed, int64_t(-1));
  QCOMPARE(s.top_k, int64_t(2));
  // Set directly (not from a map), the engine parameters are clamped all the same.
  GenerationSettings direct;
  direct.top_logprobs = 5000;
  direct.repeat_penalty = 0;
  direct.min_p = std::numeric_limits<double>::quiet_NaN();
  const engine::GenerateParams p = engine::to_generate_params(direct, 1);
  QCOMPARE(p.top_logprobs, 100);
  QCOMPARE(p.sampler.repeat_penalty, 0.01f);
  QCOMPARE(p.sampler.min_p, 0.05f);  // not a number: the default
}

void TestGenerationSettings::replyJsonKeepsTodaysKeys() {
  const QVariantMap reply = settingsForReply(nonDefaultSettings());
  // Exactly the keys chat replies have always been stored with, so existing databases read back.
  const QStringList expected{QStringLiteral("frequencyPenalty"),
                             QStringLiteral("maxTokens"),
                             QStringLiteral("minP"),
                             QStringLiteral("presencePenalty"),
                             QStringLiteral("repeatLastN"),
                             QStringLiteral("repeatPenalty"),
                             QStringLiteral("seed"),
                             QStringLiteral("temperature"),
                             QStringLiteral("topK"),
                             QStringLiteral("topP")};
  QCOMPARE(reply.keys(), expected);
  QCOMPARE(reply.value(QStringLiteral("topK")).toInt(), 7);
  QCOMPARE(reply.value(QStringLiteral("temperature")).toDouble(), 0.35);
  // A reply stored before reads back into the settings it was made with.
  const QVariantMap old = QJsonDocument::fromJson(R"({"maxTokens":512,"temperature":0.8,"topK":40,"topP":0.95,
      "minP":0.05,"repeatPenalty":1,"repeatLastN":64,"frequencyPenalty":0,"presencePenalty":0,"seed":"1234"})")
                              .object()
                              .toVariantMap();
  const GenerationSettings s = settingsFromMap(old, chatDefaults());
  QCOMPARE(s.max_tokens, int64_t(512));
  QCOMPARE(s.seed, int64_t(1234));
  QCOMPARE(s.temperature, 0.8);
}

void TestGenerationSettings::qmlFieldsCarryDefaultsAndRanges() {
  const QVariantMap fields = settingFieldsForQml();
  QCOMPARE(fields.size(), 13);
  const QVariantMap temperature = fields.value(QStringLiteral("temperature")).toMap();
  QCOMPARE(temperature.value(QStringLiteral("kind")).toString(), QStringLiteral("real"));
  QCOMPARE(temperature.value(QStringLiteral("default")).toDouble(), 0.8);
  QCOMPARE(temperature.value(QStringLiteral("uiMin")).toDouble(), 0.0);
  QCOMPARE(temperature.value(QStringLiteral("uiMax")).toDouble(), 2.0);
  QCOMPARE(temperature.value(QStringLiteral("step")).toDouble(), 0.05);
  // The Playground's defaults, which show alternatives.
  QCOMPARE(fields.value(QStringLiteral("topLogprobs")).toMap().value(QStringLiteral("default")).toInt(), 5);
  QCOMPARE(fields.value(QStringLiteral("stop")).toMap().value(QStringLiteral("kind")).toString(),
           QStringLiteral("lines"));
  QVERIFY(!fields.value(QStringLiteral("stop")).toMap().contains(QStringLiteral("min")));
  // The defaults map QML resets to is the same values.
  const QVariantMap defaults = settingsToMap(playgroundDefaults());
  for (auto it = fields.constBegin(); it != fields.constEnd(); ++it)
    QCOMPARE(it.value().toMap().value(QStringLiteral("default")), defaults.value(it.key()));
}

void TestGenerationSettings::generateParamsFollowTheFields() {
  const engine::GenerateParams p = engine::to_generate_params(nonDefaultSettings(), 99);
  QCOMPARE(p.max_tokens, 77);
  QCOMPARE(p.sampler.temperature, 0.35f);
  QCOMPARE(p.sampler.top_k, 7);
  QCOMPARE(p.sampler.top_p, 0.5f);
  QCOMPARE(p.sampler.min_p, 0.2f);
  QCOMPARE(p.sampler.repeat_penalty, 1.3f);
  QCOMPARE(p.sampler.repeat_last_n, -1);
  QCOMPARE(p.sampler.frequency_penalty, 0.25f);
  QCOMPARE(p.sampler.presence_penalty, -0.5f);
  QCOMPARE(p.sampler.seed, uint64_t(9007199254740993ull));
  QCOMPARE(p.stop, (std::vector<std::string>{"END", "###"}));
  QCOMPARE(p.top_logprobs, 3);
  QVERIFY(p.sampler.logit_bias.empty());  // text needs the tokenizer: the caller's job
}

QTEST_GUILESS_MAIN(TestGenerationSettings)
#include "test_generation_settings.moc"
