// ServerRequestLog: the local server's last answered requests, newest first, for the Server page's list.
//
// One row per ApiServer::requestFinished entry (the JSON line `serve` prints per request), bounded so a busy
// server cannot grow it without end. With a store (the app's), every row is also written to the database and the
// newest rows are read back when the store is set, so the list survives a restart; the store keeps more rows than
// the list shows (ServerRequestStore's own bound). Rows reach the store in batches, at most one write a second
// (each write is a synchronous transaction on the GUI thread; a busy server must not make one per request), and
// at flush() (ServerService::shutdown calls it).
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QTimer>
#include <QVariantMap>

#include "store/serverrequeststore.h"

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

  // Persists from now on through `store` (which must outlive this log; nullptr: memory only), replacing the rows
  // with the newest `capacity` the store holds.
  void setStore(ServerRequestStore* store);

  // `entry`: {method, path, status, ms, promptTokens, completionTokens, ttftMs}; `whenMs`: when it ended.
  void append(const QVariantMap& entry, qint64 whenMs);
  // Empties the list and the store.
  Q_INVOKABLE void clear();
  // Writes the rows not yet in the store.
  void flush();
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
  ServerRequestStore* m_store = nullptr;
  QList<StoredServerRequest> m_unsaved;  // oldest first
  QTimer m_flushTimer;
};
