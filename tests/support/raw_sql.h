// Statements on a database file behind the stores' back (to build an older schema for migration tests).
#pragma once

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QStringList>

// Runs `statements` in order on the SQLite file at `path`; stops at the first that fails (with a warning).
inline bool rawSqlExec(const QString& path, const QStringList& statements) {
  bool ok = true;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
    db.setDatabaseName(path);
    ok = db.open();
    for (const QString& sql : statements) {
      QSqlQuery q(db);
      if (ok && !q.exec(sql)) {
        qWarning("%s: %s", qPrintable(sql), qPrintable(q.lastError().text()));
        ok = false;
      }
    }
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("raw"));
  return ok;
}
