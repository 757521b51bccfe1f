// Parser for the Playground's logit bias box (see logitbias.h).
#include "logitbias.h"

#include <QObject>
#include <QStringList>

#include <cmath>
#include <limits>

#include "engine/tokenizer.h"

LogitBiasParse parseLogitBias(const QString& spec, const engine::Tokenizer& tokenizer) {
  LogitBiasParse out;
  const QStringList lines = spec.split(QLatin1Char('\n'));
  for (int n = 0; n < lines.size(); ++n) {
    QString line = lines[n];
    if (line.endsWith(QLatin1Char('\r'))) line.chop(1);
    if (line.trimmed().isEmpty() || line.trimmed().startsWith(QLatin1Char('#'))) continue;
    const qsizetype colon = line.lastIndexOf(QLatin1Char(':'));
    auto fail = [&](const QString& why) {
      out.entries.clear();
      out.error = QObject::tr("Logit bias, line %1 (“%2”): %3").arg(n + 1).arg(line, why);
      return out;
    };
    if (colon <= 0) return fail(QObject::tr("write id:bias or text:bias"));
    QString key = line.left(colon);
    const QString value = line.mid(colon + 1).trimmed().toLower();
    float bias = 0;
    if (value == QLatin1String("-inf") || value == QLatin1String("ban")) {
      bias = -std::numeric_limits<float>::infinity();
    } else {
      bool ok = false;
      bias = value.toFloat(&ok);
      if (!ok || !std::isfinite(bias)) return fail(QObject::tr("the bias must be a number or -inf"));
    }
    const QString trimmedKey = key.trimmed();
    bool isId = !trimmedKey.isEmpty();
    for (QChar c : trimmedKey) isId = isId && c.isDigit();
    if (isId) {
      bool ok = false;
      const qlonglong id = trimmedKey.toLongLong(&ok);
      if (!ok || id < 0 || id >= tokenizer.vocab_size())
        return fail(QObject::tr("token id out of range (the vocabulary has %1 tokens)").arg(tokenizer.vocab_size()));
      out.entries.emplace_back(static_cast<int32_t>(id), bias);
      continue;
    }
    if (key.size() >= 2 && key.startsWith(QLatin1Char('"')) && key.endsWith(QLatin1Char('"')))
      key = key.mid(1, key.size() - 2);
    const std::vector<int32_t> ids = tokenizer.encode(key.toStdString());
    if (ids.empty()) return fail(QObject::tr("the text has no tokens"));
    for (int32_t id : ids) out.entries.emplace_back(id, bias);
  }
  return out;
}

QString endOfReplyBan(const engine::Tokenizer& tokenizer) {
  QStringList lines;
  auto ban = [&](int32_t id) {
    const QString line = QStringLiteral("%1:ban").arg(id);
    if (!lines.contains(line)) lines << line;
  };
  if (auto eos = tokenizer.eos_id()) ban(*eos);
  for (const char* piece : {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "</s>"})
    if (auto id = tokenizer.token_id(piece)) ban(*id);
  return lines.join(QLatin1Char('\n'));
}
