// Transaction: one write transaction on a Database, for writes of more than one statement.
//
// BEGIN IMMEDIATE takes the write lock up front, so a busy database fails at the start (after
// busy_timeout) rather than halfway through. The first failure sticks: statements after it do not
// run, and commit() rolls back and reports it. So a write reads as the list of its statements,
//
//   Transaction tx(db, tr("Could not move the chat"));
//   tx.exec(..., {...});
//   tx.exec(..., {...});
//   if (!tx.commit()) return false;  // lastError() and writeFailed say "Could not move the chat: <why>"
//
// with one error check at the end. Anything not committed is rolled back when it goes out of scope.
#pragma once

#include <QList>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

#include "database.h"

class Transaction {
 public:
  // what: the sentence a failure is reported with (lastError, writeFailed). Empty: the caller reports
  // it itself from error() (migrations, which fail the open and not a write).
  explicit Transaction(Database& db, QString what = {});
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // Nothing has failed so far.
  bool ok() const { return m_error.type() == QSqlError::NoError && !m_refused; }
  QSqlError error() const { return m_error; }

  // Each runs the statement as Database::select() describes, unless something failed before.
  bool exec(const QString& sql, const QVariantList& values = {});
  // The rowid of the row the INSERT added; 0 when it (or anything before it) failed.
  qint64 insert(const QString& sql, const QVariantList& values);
  // The rowid of the row the last statement inserted (0 when none did or it failed).
  qint64 lastInsertId() const;
  // Rows read inside the transaction (what a write is about to change); none once it failed.
  template <typename MapRow>
  auto select(const QString& sql, const QVariantList& values, MapRow mapRow)
      -> QList<std::invoke_result_t<MapRow&, const QSqlQuery&>>;

  // COMMIT. False, rolled back and reported, when anything failed; a success clears lastError().
  bool commit();
  // Gives up for a reason of the caller's ("message 7 is not in chat 3"): rolls back and reports
  // "what: reason". Always false.
  bool fail(const QString& reason);

 private:
  bool step(const QString& sql, const QVariantList& values, const Database::RowVisitor& eachRow = {});
  void rollback();
  bool report(const QString& reason);

  Database& m_db;
  QString m_what;
  QSqlQuery m_query;  // reused: a statement run once per row is prepared once
  QSqlError m_error;
  bool m_refused = false;  // fail() was called
  bool m_open = false;     // BEGIN succeeded and neither COMMIT nor ROLLBACK has run
};

template <typename MapRow>
auto Transaction::select(const QString& sql, const QVariantList& values, MapRow mapRow)
    -> QList<std::invoke_result_t<MapRow&, const QSqlQuery&>> {
  QList<std::invoke_result_t<MapRow&, const QSqlQuery&>> rows;
  if (!step(sql, values, [&](const QSqlQuery& row) { rows.append(mapRow(row)); })) return {};
  return rows;
}
