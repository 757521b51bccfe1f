// ChatListModel: the sidebar's rows: every chat (or the chats of one folder), or, while a search is
// active, one row per hit with its snippet. Read from the ChatStore on every change and brought up to
// date row by row (moves, inserts, removals, dataChanged), never reset: a reset rebuilt every visible
// row of the sidebar, menus and all, for each message sent (tens of milliseconds with forty chats).
#pragma once

#include <QAbstractListModel>
#include <QList>

#include "store/chatstore.h"

class ChatListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Role {
    ChatIdRole = Qt::UserRole + 1,
    TitleRole,
    FolderRole,
    TagsRole,
    UpdatedRole,    // "14:05" today, else "3 Dec"
    SnippetRole,    // search hits only: the matching words in context, matches in [ ]
    MessageIdRole,  // search hits only: 0 when the title matched
  };

  explicit ChatListModel(QObject* parent = nullptr);

  void setChats(const QList<StoredChat>& chats);
  void setSearchHits(const QList<SearchHit>& hits);
  qint64 chatIdAt(int row) const;
  int rowOf(qint64 chatId) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

 Q_SIGNALS:
  void countChanged();

 private:
  struct Row {
    StoredChat chat;
    QString snippet;
    qint64 messageId = 0;
  };
  // The same chat (and, for a search hit, the same message).
  static bool sameRow(const Row& a, const Row& b);
  void update(const QList<Row>& rows);

  QList<Row> m_rows;
};
