// Display text for generation results.
#include "generationtypes.h"

#include <QLocale>
#include <QObject>

#include <cmath>
#include <type_traits>

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

GenerationSettings GenerationSettings::fromVariantMap(const QVariantMap& map) {
  GenerationSettings s;
  auto num = [&](const char* key, auto& field) {
    const auto it = map.constFind(QLatin1String(key));
    if (it != map.constEnd() && it->isValid()) field = it->value<std::decay_t<decltype(field)>>();
  };
  num("maxTokens", s.maxTokens);
  num("temperature", s.temperature);
  num("topK", s.topK);
  num("topP", s.topP);
  num("minP", s.minP);
  num("repeatPenalty", s.repeatPenalty);
  num("repeatLastN", s.repeatLastN);
  num("frequencyPenalty", s.frequencyPenalty);
  num("presencePenalty", s.presencePenalty);
  num("seed", s.seed);
  num("topLogprobs", s.topLogprobs);
  if (map.contains(QLatin1String("logitBias"))) s.logitBias = map.value(QLatin1String("logitBias")).toString();
  const QVariant stop = map.value(QLatin1String("stop"));
  // QML may pass a list or one string with one stop string per line.
  const QStringList parts = stop.typeId() == QMetaType::QString ? stop.toString().split(QLatin1Char('\n')) : stop.toStringList();
  for (const QString& p : parts)
    if (!p.isEmpty()) s.stop << p;
  s.maxTokens = qMax(1, s.maxTokens);
  return s;
}

QVariantMap TokenRecord::toVariantMap() const {
  QVariantList alts;
  alts.reserve(alternatives.size());
  for (const TokenAlternative& a : alternatives)
    alts << QVariantMap{{QStringLiteral("id"), a.id},
                        {QStringLiteral("text"), a.text},
                        {QStringLiteral("logprob"), a.logprob},
                        {QStringLiteral("prob"), std::exp(a.logprob)}};
  return {{QStringLiteral("id"), id},
          {QStringLiteral("text"), text},
          {QStringLiteral("logprob"), logprob},
          {QStringLiteral("prob"), std::exp(logprob)},
          {QStringLiteral("alternatives"), alts}};
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
