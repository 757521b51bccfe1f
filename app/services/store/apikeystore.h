// ApiKeyStore: the local server's API keys (schema step 8), as salted hashes (apikeys.h).
#pragma once

#include <QList>
#include <QObject>
#include <QString>

#include "services/apikeys.h"

class Database;

struct StoredApiKey {
  qint64 id = 0;
  QString name;
  QString prefix;  // the key's first characters
  qint64 createdMs = 0;
  qint64 lastUsedMs = 0;  // 0: never
};

class ApiKeyStore : public QObject {
  Q_OBJECT

 public:
  // `db` must outlive this store.
  explicit ApiKeyStore(Database& db, QObject* parent = nullptr) : QObject(parent), m_db(db) {}

  // Makes a key named `name` and stores its hash. Returns the key (the only time it exists in the clear),
  // and its row id in *id; an empty string when the write failed (Database::lastError says why).
  QString createKey(const QString& name, qint64* id = nullptr);
  bool revokeKey(qint64 id);
  bool markUsed(qint64 id, qint64 whenMs);
  QList<StoredApiKey> keys() const;  // newest first
  QList<ApiKeyHash> hashes() const;

 private:
  Database& m_db;
};
