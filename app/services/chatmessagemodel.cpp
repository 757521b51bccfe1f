// ChatMessageModel: rows, roles and the one-line summaries under each reply.
#include "chatmessagemodel.h"

#include <QDateTime>
#include <QLocale>

#include "longmessage.h"

ChatMessageModel::ChatMessageModel(QObject* parent) : QAbstractListModel(parent) {}

void ChatMessageModel::setRows(const QList<Row>& rows) {
  beginResetModel();
  m_rows = rows;
  // Another chat's messages: what was expanded there is forgotten, as a reader expects of a page left.
  QSet<qint64> shown;
  for (const Row& r : m_rows)
    if (m_expanded.contains(r.message.id)) shown.insert(r.message.id);
  m_expanded = shown;
  endResetModel();
  Q_EMIT countChanged();
}

void ChatMessageModel::append(const Row& row) {
  const int at = int(m_rows.size());
  beginInsertRows({}, at, at);
  m_rows << row;
  endInsertRows();
  Q_EMIT countChanged();
}

void ChatMessageModel::appendTo(int row, const QString& text) {
  if (row < 0 || row >= m_rows.size() || text.isEmpty()) return;
  m_rows[row].message.content += text;
  const QModelIndex i = index(row);
  Q_EMIT dataChanged(i, i, {ContentRole, BlocksRole, ShownTextRole, CutRole, LongRole, LengthRole});
}

void ChatMessageModel::updateRow(int row, const StoredMessage& message, bool streaming) {
  if (row < 0 || row >= m_rows.size()) return;
  m_rows[row].message = message;
  m_rows[row].streaming = streaming;
  const QModelIndex i = index(row);
  Q_EMIT dataChanged(i, i);
}

int ChatMessageModel::rowOf(qint64 messageId) const {
  for (int i = 0; i < m_rows.size(); ++i)
    if (m_rows[i].message.id == messageId) return i;
  return -1;
}

void ChatMessageModel::setExpanded(qint64 messageId, bool expanded) {
  const int row = rowOf(messageId);
  if (row < 0 || expanded == m_expanded.contains(messageId)) return;
  if (expanded) m_expanded.insert(messageId);
  else m_expanded.remove(messageId);
  const QModelIndex i = index(row);
  Q_EMIT dataChanged(i, i, {BlocksRole, ShownTextRole, CutRole});
}

// A long reply being written shows its end (where the words arrive); any other long message its
// beginning. Expanded: all of it.
ChatMessageModel::Cut ChatMessageModel::cutOf(const Row& row) const {
  if (m_expanded.contains(row.message.id) || !longmessage::isLong(row.message.content)) return Cut::None;
  return row.streaming ? Cut::Tail : Cut::Head;
}

int ChatMessageModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QVariant ChatMessageModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = m_rows[index.row()];
  switch (role) {
    case Qt::DisplayRole:
    case ContentRole: return r.message.content;
    case MessageIdRole: return r.message.id;
    case RoleRole: return r.message.role;
    case CompleteRole: return r.message.complete;
    case StreamingRole: return r.streaming;
    case StatsRole: return r.message.stats;
    case StatsTextRole: return statsText(r.message.stats);
    case SettingsTextRole: return settingsText(r.message.settings);
    case SiblingIndexRole: return r.siblingIndex;
    case SiblingCountRole: return r.siblingCount;
    case BlocksRole: {
      // Split first, then cut: a cut through a code fence would turn the rest into code (or the end
      // of a code block into prose).
      const Cut cut = cutOf(r);
      const QVariantList blocks = markdownBlocks(r.message.content);
      return cut == Cut::None ? blocks : cut == Cut::Head ? longmessage::headBlocks(blocks) : longmessage::tailBlocks(blocks);
    }
    case ShownTextRole: {
      const Cut cut = cutOf(r);
      return cut == Cut::None ? r.message.content
             : cut == Cut::Head ? longmessage::head(r.message.content)
                                : longmessage::tail(r.message.content);
    }
    case CutRole: {
      const Cut cut = cutOf(r);
      return cut == Cut::None ? QString() : cut == Cut::Head ? QStringLiteral("head") : QStringLiteral("tail");
    }
    case LongRole: return longmessage::isLong(r.message.content);
    case LengthRole: return int(r.message.content.size());
    case CreatedRole:
      return r.message.createdMs ? QLocale().toString(QDateTime::fromMSecsSinceEpoch(r.message.createdMs).time(),
                                                      QStringLiteral("HH:mm"))
                                 : QString();
    default: return {};
  }
}

QHash<int, QByteArray> ChatMessageModel::roleNames() const {
  return {{MessageIdRole, "messageId"},       {RoleRole, "role"},
          {ContentRole, "content"},           {CompleteRole, "complete"},
          {StreamingRole, "streaming"},       {StatsRole, "stats"},
          {StatsTextRole, "statsText"},       {SettingsTextRole, "settingsText"},
          {SiblingIndexRole, "siblingIndex"}, {SiblingCountRole, "siblingCount"},
          {CreatedRole, "created"},           {BlocksRole, "blocks"},
          {ShownTextRole, "shownText"},       {CutRole, "cut"},
          {LongRole, "collapsible"},                 {LengthRole, "length"}};
}

QVariantList ChatMessageModel::markdownBlocks(const QString& content) {
  QVariantList blocks;
  QStringList text, code;
  QString fence, language;  // fence: the opening marker while inside a code block
  auto block = [](const QString& kind, const QStringList& lines, const QString& lang) {
    return QVariantMap{{QStringLiteral("kind"), kind},
                       {QStringLiteral("text"), lines.join(QLatin1Char('\n'))},
                       {QStringLiteral("language"), lang}};
  };
  auto flushText = [&] {
    // Blank lines around a code block belong to neither side.
    while (!text.isEmpty() && text.first().trimmed().isEmpty()) text.removeFirst();
    while (!text.isEmpty() && text.last().trimmed().isEmpty()) text.removeLast();
    if (!text.isEmpty()) blocks << block(QStringLiteral("text"), text, {});
    text.clear();
  };
  for (const QString& line : content.split(QLatin1Char('\n'))) {
    // CommonMark: up to three spaces of indentation, then at least three backticks or tildes.
    const QString trimmed = line.trimmed();
    const bool indentOk = !line.startsWith(QLatin1String("    ")) && !line.startsWith(QLatin1Char('\t'));
    const bool isFence =
        indentOk && (trimmed.startsWith(QLatin1String("```")) || trimmed.startsWith(QLatin1String("~~~")));
    if (fence.isEmpty()) {
      if (isFence) {
        flushText();
        fence = trimmed.left(3);
        language = trimmed.mid(3).trimmed().section(QLatin1Char(' '), 0, 0);
      } else {
        text << line;
      }
    } else if (isFence && trimmed.startsWith(fence) && trimmed.mid(3).trimmed().isEmpty()) {
      blocks << block(QStringLiteral("code"), code, language);
      code.clear();
      fence.clear();
    } else {
      code << line;
    }
  }
  if (!fence.isEmpty()) blocks << block(QStringLiteral("code"), code, language);
  flushText();
  return blocks;
}

QString ChatMessageModel::statsText(const QVariantMap& stats) {
  if (stats.isEmpty()) return {};
  const QLocale locale;
  QStringList parts;
  const int tokens = stats.value(QStringLiteral("generatedTokens")).toInt();
  parts << (tokens == 1 ? tr("1 token") : tr("%1 tokens").arg(tokens));
  // A rate needs at least two tokens: the first one's time is the time to first token.
  if (tokens > 1)
    parts << tr("%1 tok/s").arg(locale.toString(stats.value(QStringLiteral("tokensPerSecond")).toDouble(), 'f', 1));
  parts << tr("first token %1 ms")
               .arg(locale.toString(stats.value(QStringLiteral("timeToFirstTokenMs")).toDouble(), 'f', 0));
  const QString reason = stats.value(QStringLiteral("finishReason")).toString();
  if (reason == QLatin1String("length")) parts << tr("token limit reached");
  else if (reason == QLatin1String("eos") || reason == QLatin1String("stop")) parts << tr("end of turn");
  else if (reason == QLatin1String("cancelled")) parts << tr("stopped by you");
  else if (reason == QLatin1String("context_full")) parts << tr("stopped: context full");
  const int leftOut = stats.value(QStringLiteral("turnsLeftOut")).toInt();
  if (leftOut == 1) parts << tr("the oldest message was not read (context)");
  else if (leftOut > 1) parts << tr("the oldest %1 messages were not read (context)").arg(leftOut);
  return parts.join(QStringLiteral(" · "));
}

QString ChatMessageModel::settingsText(const QVariantMap& s) {
  if (s.isEmpty()) return {};
  const QLocale locale;
  auto num = [&](const char* key) { return locale.toString(s.value(QLatin1String(key)).toDouble(), 'g', 3); };
  QStringList parts;
  const double temperature = s.value(QStringLiteral("temperature")).toDouble();
  parts << (temperature <= 0 ? tr("greedy") : tr("temperature %1").arg(num("temperature")));
  if (temperature > 0) {
    if (s.value(QStringLiteral("topK")).toInt() > 0)
      parts << tr("top-k %1").arg(s.value(QStringLiteral("topK")).toInt());
    if (s.value(QStringLiteral("topP")).toDouble() < 1) parts << tr("top-p %1").arg(num("topP"));
    if (s.value(QStringLiteral("minP")).toDouble() > 0) parts << tr("min-p %1").arg(num("minP"));
  }
  if (s.value(QStringLiteral("repeatPenalty"), 1.0).toDouble() != 1.0)
    parts << tr("repeat penalty %1").arg(num("repeatPenalty"));
  parts << tr("max %1 tokens").arg(s.value(QStringLiteral("maxTokens")).toInt());
  if (s.contains(QStringLiteral("seed"))) parts << tr("seed %1").arg(s.value(QStringLiteral("seed")).toString());
  return parts.join(QStringLiteral(" · "));
}
