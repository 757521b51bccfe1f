// ServerRequestStore: the local server's request log on disk (schema step 9), so the Server page shows the last
// requests after a restart.
//
// Bounded: each append deletes the rows beyond the newest `capacity` in the same transaction, so a server that
// runs for months keeps a table of a fixed size (and the delete touches one or a few rows: the ids are the primary
// key's order).
#pragma once

#include <QList>
#include <QObject>
#include <QVariantMap>

class Database;

struct StoredServerRequest {
  qint64 whenMs = 0;
  QVariantMap entry;  // {method, path, status, ms, promptTokens, completionTokens, ttftMs} as the server logged it
};

class ServerRequestStore : public QObject {
  Q_OBJECT

 public:
  static constexpr int kDefaultCapacity = 5000;

  // `db` must outlive this store.
  explicit ServerRequestStore(Database& db, int capacity = kDefaultCapacity, QObject* parent = nullptr)
      : QObject(parent), m_db(db), m_capacity(qMax(1, capacity)) {}

  int capacity() const { return m_capacity; }
  // Adds answered requests (oldest first) in one transaction and drops the oldest beyond capacity(). False when
  // the write failed.
  bool append(const QList<StoredServerRequest>& requests);
  bool append(const QVariantMap& entry, qint64 whenMs) { return append({StoredServerRequest{whenMs, entry}}); }
  // The newest `limit` requests, newest first.
  QList<StoredServerRequest> newest(int limit) const;
  int count() const;
  bool clear();

 private:
  Database& m_db;
  int m_capacity;
};
