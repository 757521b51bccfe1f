// Display text for generation results.
#include "generationtypes.h"

#include <QLocale>
#include <QObject>

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
