// PresetStore: the Playground's named sampling presets (schema step 3).
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QVariantMap>

class Database;

struct StoredPreset {
  QString name;
  QVariantMap settings;
  qint64 updatedMs = 0;
};

class PresetStore : public QObject {
  Q_OBJECT

 public:
  // `db` must outlive this store.
  explicit PresetStore(Database& db, QObject* parent = nullptr) : QObject(parent), m_db(db) {}

  bool savePreset(const QString& name, const QVariantMap& settings);  // replaces one of that name
  bool deletePreset(const QString& name);
  QList<StoredPreset> presets() const;  // by name, case-insensitively

 private:
  Database& m_db;
};
