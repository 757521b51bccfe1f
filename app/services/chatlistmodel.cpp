// ChatListModel: rows and roles.
#include "chatlistmodel.h"

#include <QDateTime>
#include <QLocale>

ChatListModel::ChatListModel(QObject* parent) : QAbstractListModel(parent) {}

void ChatListModel::setChats(const QList<StoredChat>& chats) {
  beginResetModel();
  m_rows.clear();
  for (const StoredChat& c : chats) m_rows << Row{c, {}, 0};
  endResetModel();
  Q_EMIT countChanged();
}

void ChatListModel::setSearchHits(const QList<SearchHit>& hits) {
  beginResetModel();
  m_rows.clear();
  for (const SearchHit& h : hits) {
    StoredChat c;
    c.id = h.chatId;
    c.title = h.chatTitle;
    m_rows << Row{c, h.messageId ? h.snippet : QString(), h.messageId};
  }
  endResetModel();
  Q_EMIT countChanged();
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
