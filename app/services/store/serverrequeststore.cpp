// ServerRequestStore: the queries behind the Server page's request log.
#include "serverrequeststore.h"

#include <QSqlQuery>

#include "database.h"
#include "transaction.h"

bool ServerRequestStore::append(const QList<StoredServerRequest>& requests) {
  if (requests.isEmpty()) return true;
  Transaction tx(m_db, tr("Could not save the server's request log"));
  for (const StoredServerRequest& r : requests) {
    const QVariantMap& e = r.entry;
    const double ttft = e.value(QStringLiteral("ttftMs"), -1.0).toDouble();
    tx.exec(QStringLiteral("INSERT INTO server_requests (when_ms, method, path, status, prompt_tokens, "
                           "completion_tokens, ms, ttft_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
            {r.whenMs, e.value(QStringLiteral("method")).toString(), e.value(QStringLiteral("path")).toString(),
             e.value(QStringLiteral("status")).toInt(), e.value(QStringLiteral("promptTokens"), 0).toLongLong(),
             e.value(QStringLiteral("completionTokens"), 0).toLongLong(), e.value(QStringLiteral("ms"), 0.0).toDouble(),
             ttft >= 0 ? QVariant(ttft) : QVariant()});
  }
  // Everything older than the capacity-th newest row (ids only grow, so these are the oldest ones).
  tx.exec(QStringLiteral("DELETE FROM server_requests WHERE id <= (SELECT id FROM server_requests ORDER BY id DESC "
                         "LIMIT 1 OFFSET ?)"),
          {m_capacity});
  return tx.commit();
}

QList<StoredServerRequest> ServerRequestStore::newest(int limit) const {
  return m_db.select(tr("Could not read the server's request log"),
                     QStringLiteral("SELECT when_ms, method, path, status, prompt_tokens, completion_tokens, ms, ttft_ms "
                                    "FROM server_requests ORDER BY id DESC LIMIT ?"),
                     {qMax(0, limit)}, [](const QSqlQuery& row) {
                       return StoredServerRequest{
                           row.value(0).toLongLong(),
                           {{QStringLiteral("method"), row.value(1).toString()},
                            {QStringLiteral("path"), row.value(2).toString()},
                            {QStringLiteral("status"), row.value(3).toInt()},
                            {QStringLiteral("promptTokens"), row.value(4).toLongLong()},
                            {QStringLiteral("completionTokens"), row.value(5).toLongLong()},
                            {QStringLiteral("ms"), row.value(6).toDouble()},
                            {QStringLiteral("ttftMs"), row.value(7).isNull() ? -1.0 : row.value(7).toDouble()}}};
                     });
}

int ServerRequestStore::count() const {
  const QList<int> n = m_db.select(tr("Could not read the server's request log"),
                                   QStringLiteral("SELECT COUNT(*) FROM server_requests"), {},
                                   [](const QSqlQuery& row) { return row.value(0).toInt(); });
  return n.isEmpty() ? 0 : n.first();
}

bool ServerRequestStore::clear() {
  return m_db.write(tr("Could not clear the server's request log"), QStringLiteral("DELETE FROM server_requests"));
}
