// Generation settings through the engine's field table, and display text for results.
#include "generationtypes.h"

#include <QLocale>
#include <QObject>

#include <algorithm>

QString GenerationStats::summary() const {
  const QLocale locale = QLocale::system();
  QString reason = finishReason;
  if (reason == QLatin1String("length")) reason = QObject::tr("token limit reached");
  else if (reason == QLatin1String("eos")) reason = QObject::tr("end of text");
  else if (reason == QLatin1String("stop")) reason = QObject::tr("stop string");
  else if (reason == QLatin1String("cancelled")) reason = QObject::tr("stopped by you");
  else if (reason == QLatin1String("context_full")) reason = QObject::tr("context full");
  return QObject::tr("%1 prompt + %2 generated tokens · %3 tok/s · first token %4 ms · %5")
      .arg(promptTokens)
      .arg(generatedTokens)
      .arg(locale.toString(decodeTokensPerSecond, 'f', 1))
      .arg(locale.toString(timeToFirstTokenMs, 'f', 0))
      .arg(reason);
}

GenerationSettings playgroundDefaults() {
  GenerationSettings s;
  s.top_logprobs = 5;
  return s;
}

GenerationSettings chatDefaults() {
  GenerationSettings s;
  s.max_tokens = 512;
  return s;
}

namespace {

using engine::GenerationSettingField;
using engine::SettingKind;

QString keyOf(const GenerationSettingField& f) { return QString::fromLatin1(f.key); }
QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// A number as QML, JSON or a stored reply gives it. Integers are read exactly when they come as
// integers or text (a seed above 2^53 survives); anything else goes through double.
void setNumber(GenerationSettings& s, const GenerationSettingField& f, const QVariant& v) {
  if (f.integer) {
    const int type = v.typeId();
    if (type == QMetaType::LongLong || type == QMetaType::Int || type == QMetaType::QString) {
      bool ok = false;
      const qlonglong n = v.toLongLong(&ok);
      if (ok) {
        s.*f.integer = std::clamp<qlonglong>(n, engine::integer_min(f), engine::integer_max(f));
        return;
      }
    }
  }
  bool ok = false;
  const double d = v.toDouble(&ok);
  if (ok) engine::set_setting_number(s, f, d);
}

QVariant valueOf(const GenerationSettings& s, const GenerationSettingField& f) {
  switch (f.kind) {
    case SettingKind::Integer: return QVariant::fromValue(static_cast<qlonglong>(s.*f.integer));
    case SettingKind::Real: return s.*f.real;
    case SettingKind::Text: return fromStd(s.*f.text);
    case SettingKind::TextList: {
      QStringList lines;
      for (const std::string& line : s.*f.text_list) lines << fromStd(line);
      return lines.join(QLatin1Char('\n'));
    }
  }
  return {};
}

const char* kindName(SettingKind kind) {
  switch (kind) {
    case SettingKind::Integer: return "integer";
    case SettingKind::Real: return "real";
    case SettingKind::Text: return "text";
    case SettingKind::TextList: return "lines";
  }
  return "";
}

}  // namespace

GenerationSettings settingsFromMap(const QVariantMap& map, const GenerationSettings& base) {
  GenerationSettings s = base;
  for (const GenerationSettingField& f : engine::generation_setting_fields()) {
    const auto it = map.constFind(keyOf(f));
    if (it == map.constEnd() || !it->isValid()) continue;
    switch (f.kind) {
      case SettingKind::Integer:
      case SettingKind::Real: setNumber(s, f, *it); break;
      case SettingKind::Text: s.*f.text = it->toString().toStdString(); break;
      case SettingKind::TextList: {
        // QML may pass a list, or one string with one entry per line.
        const QStringList parts =
            it->typeId() == QMetaType::QString ? it->toString().split(QLatin1Char('\n')) : it->toStringList();
        auto& list = s.*f.text_list;
        list.clear();
        for (const QString& p : parts)
          if (!p.isEmpty()) list.push_back(p.toStdString());
        break;
      }
    }
  }
  return s;
}

QVariantMap settingsToMap(const GenerationSettings& s) {
  QVariantMap map;
  for (const GenerationSettingField& f : engine::generation_setting_fields()) map.insert(keyOf(f), valueOf(s, f));
  return map;
}

QVariantMap settingsForReply(const GenerationSettings& s) {
  QVariantMap map;
  for (const GenerationSettingField& f : engine::generation_setting_fields())
    if (f.stored_with_reply) map.insert(keyOf(f), valueOf(s, f));
  return map;
}

QVariantMap settingFieldsForQml() {
  const GenerationSettings defaults = playgroundDefaults();
  QVariantMap out;
  for (const GenerationSettingField& f : engine::generation_setting_fields()) {
    QVariantMap field{{QStringLiteral("key"), keyOf(f)},
                      {QStringLiteral("kind"), QString::fromLatin1(kindName(f.kind))},
                      {QStringLiteral("default"), valueOf(defaults, f)},
                      {QStringLiteral("label"), QString::fromUtf8(f.label)}};
    if (f.integer || f.real) {
      field.insert(QStringLiteral("min"), f.min);
      field.insert(QStringLiteral("max"), f.max);
      field.insert(QStringLiteral("uiMin"), f.ui_min);
      field.insert(QStringLiteral("uiMax"), f.ui_max);
      field.insert(QStringLiteral("step"), f.ui_step);
    }
    out.insert(keyOf(f), field);
  }
  return out;
}

QVariantMap GenerationStats::toVariantMap() const {
  return {{QStringLiteral("promptTokens"), promptTokens},
          {QStringLiteral("generatedTokens"), generatedTokens},
          {QStringLiteral("tokensPerSecond"), decodeTokensPerSecond},
          {QStringLiteral("timeToFirstTokenMs"), timeToFirstTokenMs},
          {QStringLiteral("finishReason"), finishReason},
          {QStringLiteral("seed"), QString::number(seed)},
          {QStringLiteral("summary"), summary()}};
}

QList<int> tokenIdsFrom(const QVariantList& ids) {
  QList<int> out;
  out.reserve(ids.size());
  for (const QVariant& v : ids) out << v.toInt();
  return out;
}
