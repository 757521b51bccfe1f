// InspectionStore: the queries behind inspection snapshots.
#include "inspectionstore.h"

#include <QSqlQuery>

#include "database.h"
#include "sqlvalues.h"

const char* const kInspectionColumns = "id, message_id, created_ms, model, token_count, blob";

StoredInspection inspectionFromRow(const QSqlQuery& row) {
  return StoredInspection{row.value(0).toLongLong(), row.value(1).toLongLong(), row.value(2).toLongLong(),
                          row.value(3).toString(),   row.value(4).toInt(),      row.value(5).toByteArray()};
}

qint64 InspectionStore::saveInspection(qint64 messageId, const QByteArray& blob, const QString& model, int tokenCount) {
  const QString what = tr("Could not save the inspection");
  if (blob.isEmpty()) return m_db.fail(what, tr("the snapshot is empty")), 0;
  qint64 id = 0;
  // A message that does not exist fails the foreign key: no orphan snapshot is ever written.
  if (!m_db.write(what,
                  QStringLiteral("INSERT INTO inspections (message_id, created_ms, model, token_count, blob)"
                                 " VALUES (?, ?, ?, ?, ?)"),
                  {messageId, sqlvalue::nowMs(), model, tokenCount, blob}, &id))
    return 0;
  return id;
}

StoredInspection InspectionStore::inspectionFor(qint64 messageId) const {
  return m_db
      .select(tr("Could not read the inspection"),
              QStringLiteral("SELECT %1 FROM inspections WHERE message_id = ? ORDER BY id DESC LIMIT 1")
                  .arg(QLatin1String(kInspectionColumns)),
              {messageId}, inspectionFromRow)
      .value(0);
}
