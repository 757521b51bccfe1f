// InspectionStore: inspection snapshots of chat messages (schema step 5), so that inspecting a reply
// a second time, or after a restart, shows what was computed without running the model again.
//
// A snapshot is deleted with its message (ON DELETE CASCADE); ChatStore's undoable delete keeps the
// snapshots of the messages it deletes and puts them back with them.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>

class Database;
class QSqlQuery;

// An inspection snapshot of a chat message (engine::serialize_inspection bytes, not yet checked:
// deserialize_inspection validates them when they are opened).
struct StoredInspection {
  qint64 id = 0;  // 0: there is none
  qint64 messageId = 0;
  qint64 createdMs = 0;
  QString model;  // the model's name when it was taken
  int tokenCount = 0;
  QByteArray blob;
};

// The columns of `inspections` in the order inspectionFromRow() reads them, for a SELECT of them.
extern const char* const kInspectionColumns;
StoredInspection inspectionFromRow(const QSqlQuery& row);

class InspectionStore : public QObject {
  Q_OBJECT

 public:
  // `db` must outlive this store.
  explicit InspectionStore(Database& db, QObject* parent = nullptr) : QObject(parent), m_db(db) {}

  // Returns the new row's id, 0 on failure (Database::lastError says why).
  qint64 saveInspection(qint64 messageId, const QByteArray& blob, const QString& model = {}, int tokenCount = 0);
  StoredInspection inspectionFor(qint64 messageId) const;  // the newest; id 0 when there is none

 private:
  Database& m_db;
};
