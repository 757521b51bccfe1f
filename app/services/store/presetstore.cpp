// PresetStore: the queries behind the Playground's presets.
#include "presetstore.h"

#include <QSqlQuery>

#include "database.h"
#include "sqlvalues.h"

bool PresetStore::savePreset(const QString& name, const QVariantMap& settings) {
  const QString what = tr("Could not save the preset");
  if (name.trimmed().isEmpty()) return m_db.fail(what, tr("it needs a name"));
  return m_db.write(what,
                    QStringLiteral("INSERT OR REPLACE INTO presets (name, settings, updated_ms) VALUES (?, ?, ?)"),
                    {name.trimmed(), sqlvalue::json(settings), sqlvalue::nowMs()});
}

bool PresetStore::deletePreset(const QString& name) {
  return m_db.write(tr("Could not delete the preset"), QStringLiteral("DELETE FROM presets WHERE name = ?"), {name});
}

QList<StoredPreset> PresetStore::presets() const {
  return m_db.select(
      tr("Could not read the presets"),
      QStringLiteral("SELECT name, settings, updated_ms FROM presets ORDER BY name COLLATE NOCASE"), {},
      [](const QSqlQuery& row) {
        return StoredPreset{row.value(0).toString(), sqlvalue::mapFromJson(row.value(1)), row.value(2).toLongLong()};
      });
}
