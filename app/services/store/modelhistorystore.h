// ModelHistoryStore: the models the user opened, most recent first, for the Models page and the
// open-model menu (schema step 3). One row per path: opening a model again moves it to the top.
#pragma once

#include <QList>
#include <QObject>
#include <QString>

class Database;

struct RecentModel {
  QString path;
  QString name;
  QString architecture;
  QString format;
  QString weights;
  qint64 parameterCount = 0;
  int contextLength = 0;
  qint64 lastOpenedMs = 0;
};

class ModelHistoryStore : public QObject {
  Q_OBJECT

 public:
  // `db` must outlive this store.
  explicit ModelHistoryStore(Database& db, QObject* parent = nullptr) : QObject(parent), m_db(db) {}

  bool recordModel(const RecentModel& model);  // upserts by path, stamped now
  bool forgetModel(const QString& path);
  QList<RecentModel> recentModels(int limit = 20) const;

 private:
  Database& m_db;
};
