// A 512-token byte-level BPE tokenizer for tests: the 256 bytes plus 256 two-letter merges
// "aa".."pp" (id 256 + 16 * first + second), written as GPT-2 vocab.json + merges.txt.
#pragma once

#include <QFile>
#include <QString>
#include <QStringList>
#include <QTest>

// GPT-2's byte -> printable character table, so vocab.json can spell every byte.
inline QString tinyByteToUnicode(int b) {
  int n = 0;
  for (int x = 0; x < 256; ++x) {
    const bool printable = (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF);
    const int code = printable ? x : 256 + n++;
    if (x == b) return QString(QChar(code));
  }
  return {};
}

inline void writeTinyTokenizer(const QString& dir) {
  QStringList vocab, merges{QStringLiteral("#version: 0.2")};
  auto quote = [](const QString& s) {
    QString out = s;
    out.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('"'), QLatin1String("\\\""));
    return QLatin1Char('"') + out + QLatin1Char('"');
  };
  for (int b = 0; b < 256; ++b) vocab << quote(tinyByteToUnicode(b)) + QLatin1Char(':') + QString::number(b);
  int id = 256;
  for (char x = 'a'; x <= 'p'; ++x)
    for (char y = 'a'; y <= 'p'; ++y) {
      vocab << quote(QString(QChar(x)) + QChar(y)) + QLatin1Char(':') + QString::number(id++);
      merges << QString(QChar(x)) + QLatin1Char(' ') + QChar(y);
    }
  QFile v(dir + QStringLiteral("/vocab.json"));
  QVERIFY(v.open(QIODevice::WriteOnly));
  v.write((QLatin1Char('{') + vocab.join(QLatin1Char(',')) + QLatin1Char('}')).toUtf8());
  QFile m(dir + QStringLiteral("/merges.txt"));
  QVERIFY(m.open(QIODevice::WriteOnly));
  m.write((merges.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8());
}
