// ChatListModel: rows and roles.
#include "chatlistmodel.h"

#include <QDateTime>
#include <QLocale>

#include <algorithm>

ChatListModel::ChatListModel(QObject* parent) : QAbstractListModel(parent) {}

void ChatListModel::setChats(const QList<StoredChat>& chats) {
  QList<Row> rows;
  for (const StoredChat& c : chats) rows << Row{c, {}, 0};
  update(rows);
}

void ChatListModel::setSearchHits(const QList<SearchHit>& hits) {
  QList<Row> rows;
  for (const SearchHit& h : hits) {
    StoredChat c;
    c.id = h.chatId;
    c.title = h.chatTitle;
    rows << Row{c, h.messageId ? h.snippet : QString(), h.messageId};
  }
  update(rows);
}

bool ChatListModel::sameRow(const Row& a, const Row& b) {
  return a.chat.id == b.chat.id && a.messageId == b.messageId;
}

// Row by row: a row that stays keeps its delegate (moved when its place changed, its roles signalled
// when its data did); only rows that come or go make or drop one. A message sent moves its chat to the
// top and changes its time: one move and one dataChanged, not forty delegates rebuilt.
void ChatListModel::update(const QList<Row>& rows) {
  const int before = int(m_rows.size());
  // Rows no longer there go first (from the end, so that the rows before keep their numbers).
  for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
    const bool kept = std::any_of(rows.cbegin(), rows.cend(), [&](const Row& r) { return sameRow(r, m_rows[i]); });
    if (kept) continue;
    beginRemoveRows({}, i, i);
    m_rows.removeAt(i);
    endRemoveRows();
  }
  for (int i = 0; i < rows.size(); ++i) {
    int from = -1;
    for (int j = i; j < m_rows.size(); ++j)
      if (sameRow(m_rows[j], rows[i])) {
        from = j;
        break;
      }
    if (from < 0) {
      beginInsertRows({}, i, i);
      m_rows.insert(i, rows[i]);
      endInsertRows();
      continue;
    }
    if (from != i) {
      beginMoveRows({}, from, from, {}, i);
      m_rows.move(from, i);
      endMoveRows();
    }
    const Row& old = m_rows[i];
    const bool changed = old.chat.title != rows[i].chat.title || old.chat.folder != rows[i].chat.folder ||
                         old.chat.tags != rows[i].chat.tags || old.chat.updatedMs != rows[i].chat.updatedMs ||
                         old.snippet != rows[i].snippet;
    m_rows[i] = rows[i];
    if (changed) Q_EMIT dataChanged(index(i), index(i));
  }
  if (m_rows.size() != before) Q_EMIT countChanged();
}

qint64 ChatListModel::chatIdAt(int row) const { return row >= 0 && row < m_rows.size() ? m_rows[row].chat.id : 0; }

int ChatListModel::rowOf(qint64 chatId) const {
  for (int i = 0; i < m_rows.size(); ++i)
    if (m_rows[i].chat.id == chatId) return i;
  return -1;
}

int ChatListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QVariant ChatListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = m_rows[index.row()];
  switch (role) {
    case Qt::DisplayRole:
    case TitleRole: return r.chat.title;
    case ChatIdRole: return r.chat.id;
    case FolderRole: return r.chat.folder;
    case TagsRole: return r.chat.tags;
    case UpdatedRole: {
      if (r.chat.updatedMs == 0) return QString();
      const QDateTime t = QDateTime::fromMSecsSinceEpoch(r.chat.updatedMs);
      const QLocale locale;
      return t.date() == QDate::currentDate() ? locale.toString(t.time(), QStringLiteral("HH:mm"))
                                              : locale.toString(t.date(), QStringLiteral("d MMM"));
    }
    case SnippetRole: return r.snippet;
    case MessageIdRole: return r.messageId;
    default: return {};
  }
}

QHash<int, QByteArray> ChatListModel::roleNames() const {
  return {{ChatIdRole, "chatId"},   {TitleRole, "title"},     {FolderRole, "folder"},      {TagsRole, "tags"},
          {UpdatedRole, "updated"}, {SnippetRole, "snippet"}, {MessageIdRole, "messageId"}};
}
