// ApiKeyStore: the queries behind the Server page's keys.
#include "apikeystore.h"

#include <QSqlQuery>

#include "database.h"
#include "sqlvalues.h"

QString ApiKeyStore::createKey(const QString& name, qint64* id) {
  const QString key = apikeys::generateKey();
  const QByteArray salt = apikeys::generateSalt();
  const QString label = name.trimmed().isEmpty() ? tr("Unnamed key") : name.trimmed();
  qint64 insertId = 0;
  if (!m_db.write(tr("Could not save the API key"),
                  QStringLiteral("INSERT INTO api_keys (name, prefix, salt, hash, created_ms) VALUES (?, ?, ?, ?, ?)"),
                  {label, apikeys::displayPrefix(key), salt, apikeys::hashKey(salt, key), sqlvalue::nowMs()},
                  &insertId))
    return {};
  if (id) *id = insertId;
  return key;
}

bool ApiKeyStore::revokeKey(qint64 id) {
  return m_db.write(tr("Could not revoke the API key"), QStringLiteral("DELETE FROM api_keys WHERE id = ?"), {id});
}

bool ApiKeyStore::markUsed(qint64 id, qint64 whenMs) {
  return m_db.write(tr("Could not record the API key's use"),
                    QStringLiteral("UPDATE api_keys SET last_used_ms = ? WHERE id = ?"), {whenMs, id});
}

QList<StoredApiKey> ApiKeyStore::keys() const {
  return m_db.select(tr("Could not read the API keys"),
                     QStringLiteral("SELECT id, name, prefix, created_ms, last_used_ms FROM api_keys ORDER BY id DESC"),
                     {}, [](const QSqlQuery& row) {
                       return StoredApiKey{row.value(0).toLongLong(), row.value(1).toString(), row.value(2).toString(),
                                           row.value(3).toLongLong(), row.value(4).toLongLong()};
                     });
}

QList<ApiKeyHash> ApiKeyStore::hashes() const {
  return m_db.select(tr("Could not read the API keys"), QStringLiteral("SELECT id, salt, hash FROM api_keys"), {},
                     [](const QSqlQuery& row) {
                       return ApiKeyHash{row.value(0).toLongLong(), row.value(1).toByteArray(),
                                         row.value(2).toByteArray()};
                     });
}
