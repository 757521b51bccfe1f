// ServerRequestLog: the local server's last answered requests, newest first, for the Server page's list.
//
// One row per ApiServer::requestFinished entry (the JSON line `serve` prints per request), bounded so a busy
// server cannot grow it without end.
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QVariantMap>

class ServerRequestLog : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Role {
    TimeRole = Qt::UserRole + 1,  // "14:03:21"
    MethodRole,
    PathRole,
    StatusRole,
    PromptTokensRole,
    CompletionTokensRole,
    DurationMsRole,
    FirstTokenMsRole,  // -1 when no token came
  };

  explicit ServerRequestLog(int capacity = 200, QObject* parent = nullptr);

  // `entry`: {method, path, status, ms, promptTokens, completionTokens, ttftMs}; `whenMs`: when it ended.
  void append(const QVariantMap& entry, qint64 whenMs);
  Q_INVOKABLE void clear();
  // The row as the entry it came from, with "time" added (tests, copying a row).
  QVariantMap entryAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

 Q_SIGNALS:
  void countChanged();

 private:
  struct Row {
    qint64 whenMs = 0;
    QVariantMap entry;
  };
  int m_capacity;
  QList<Row> m_rows;  // newest first
};
