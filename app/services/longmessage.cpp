// LongMessage: cutting long messages for display (see longmessage.h).
#include "longmessage.h"

#include <QStringView>
#include <QVariantMap>

namespace longmessage {

namespace {

int lineCount(QStringView text) { return int(text.count(u'\n')) + 1; }

bool isBreak(QChar c) { return c == u'\n' || c == u' ' || c == u'\t'; }

// How many characters of `text` the head keeps. A cut within the last third of what fits is moved
// back to a line end, else to a space, so that words stay whole; a text with neither is cut where it
// must be, but never between the two halves of a surrogate pair.
qsizetype headLength(QStringView text, int chars, int lines) {
  if (lines <= 0) return 0;
  qsizetype end = qMin<qsizetype>(text.size(), qMax(0, chars));
  int seen = 0;
  for (qsizetype i = 0; i < end; ++i) {
    if (text[i] == u'\n' && ++seen >= lines) {
      end = i;  // the newline itself is where the cut goes
      break;
    }
  }
  if (end >= text.size() || text[end] == u'\n') return end;
  const qsizetype floor = end * 2 / 3;
  for (qsizetype p = end; p > floor; --p)
    if (text[p] == u'\n') return p;
  for (qsizetype p = end; p > floor; --p)
    if (isBreak(text[p])) return p;
  if (end > 0 && text[end - 1].isHighSurrogate()) --end;
  return end;
}

// Where the tail starts: the mirror of headLength.
qsizetype tailStart(QStringView text, int chars, int lines) {
  const qsizetype size = text.size();
  if (lines <= 0) return size;
  qsizetype start = size - qMin<qsizetype>(size, qMax(0, chars));
  int seen = 0;
  for (qsizetype i = size - 1; i >= start; --i) {
    if (text[i] == u'\n' && ++seen >= lines) {
      start = i + 1;
      break;
    }
  }
  if (start == 0 || text[start - 1] == u'\n') return start;
  const qsizetype ceiling = start + (size - start) / 3;
  for (qsizetype p = start; p < ceiling; ++p)
    if (text[p] == u'\n') return p + 1;
  for (qsizetype p = start; p < ceiling; ++p)
    if (isBreak(text[p])) return p + 1;
  if (start < size && text[start].isLowSurrogate()) ++start;
  return start;
}

// A cut block keeps its whole text beside the part shown: a code block's Copy copies all of it.
QVariantMap withText(QVariantMap block, const QString& text) {
  block.insert(QStringLiteral("whole"), block.value(QStringLiteral("text")));
  block.insert(QStringLiteral("text"), text);
  return block;
}

}  // namespace

bool isLong(const QString& text) {
  return text.size() > kLongChars || (text.size() > kLongLines && lineCount(text) > kLongLines);
}

QString head(const QString& text, int chars, int lines) { return text.left(headLength(text, chars, lines)); }

QString tail(const QString& text, int chars, int lines) { return text.mid(tailStart(text, chars, lines)); }

QVariantList headBlocks(const QVariantList& blocks, int chars, int lines) {
  QVariantList out;
  for (const QVariant& v : blocks) {
    const QVariantMap block = v.toMap();
    const QString text = block.value(QStringLiteral("text")).toString();
    const int n = int(text.size()), l = lineCount(text);
    if (n <= chars && l <= lines) {
      out << block;
      chars -= n;
      lines -= l;
      continue;
    }
    const QString cut = head(text, chars, lines);
    if (!cut.trimmed().isEmpty()) out << withText(block, cut);
    break;
  }
  return out;
}

QVariantList tailBlocks(const QVariantList& blocks, int chars, int lines) {
  QVariantList out;
  for (qsizetype i = blocks.size() - 1; i >= 0; --i) {
    const QVariantMap block = blocks[i].toMap();
    const QString text = block.value(QStringLiteral("text")).toString();
    const int n = int(text.size()), l = lineCount(text);
    if (n <= chars && l <= lines) {
      out.prepend(block);
      chars -= n;
      lines -= l;
      continue;
    }
    const QString cut = tail(text, chars, lines);
    if (!cut.trimmed().isEmpty()) out.prepend(withText(block, cut));
    break;
  }
  return out;
}

}  // namespace longmessage
