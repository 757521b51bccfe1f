// Transaction: BEGIN IMMEDIATE … COMMIT with a sticky first failure (see transaction.h).
#include "transaction.h"

#include <utility>

Transaction::Transaction(Database& db, QString what) : m_db(db), m_what(std::move(what)), m_query(db.connection()) {
  m_error = Database::run(m_query, QStringLiteral("BEGIN IMMEDIATE"), {});
  m_open = ok();
}

Transaction::~Transaction() { rollback(); }

bool Transaction::step(const QString& sql, const QVariantList& values, const Database::RowVisitor& eachRow) {
  if (!ok()) return false;
  m_error = Database::run(m_query, sql, values, eachRow);
  return ok();
}

bool Transaction::exec(const QString& sql, const QVariantList& values) { return step(sql, values); }

qint64 Transaction::insert(const QString& sql, const QVariantList& values) {
  return step(sql, values) ? lastInsertId() : 0;
}

qint64 Transaction::lastInsertId() const { return ok() ? m_query.lastInsertId().toLongLong() : 0; }

bool Transaction::commit() {
  if (m_refused) return false;  // fail() has rolled back and reported it
  if (step(QStringLiteral("COMMIT"), {})) {
    m_open = false;
    m_db.succeeded();
    return true;
  }
  rollback();
  return report(Database::reason(m_error));
}

bool Transaction::fail(const QString& reason) {
  if (!ok()) return false;  // already failed: that failure is the one reported
  m_refused = true;
  rollback();
  return report(reason);
}

void Transaction::rollback() {
  if (!m_open) return;
  m_open = false;
  QSqlQuery q(m_db.connection());
  Database::run(q, QStringLiteral("ROLLBACK"), {});
}

bool Transaction::report(const QString& reason) {
  if (!m_what.isEmpty()) m_db.fail(m_what, reason);
  return false;
}
