// ModelHistoryStore: the queries behind the recently opened models.
#include "modelhistorystore.h"

#include <QSqlQuery>

#include "database.h"
#include "sqlvalues.h"

bool ModelHistoryStore::recordModel(const RecentModel& model) {
  return m_db.write(tr("Could not remember the model"),
                    QStringLiteral(
                        "INSERT OR REPLACE INTO recent_models"
                        " (path, name, architecture, format, weights, parameter_count, context_length, last_opened_ms)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                    {model.path, model.name, model.architecture, model.format, model.weights, model.parameterCount,
                     model.contextLength, sqlvalue::nowMs()});
}

bool ModelHistoryStore::forgetModel(const QString& path) {
  return m_db.write(tr("Could not forget the model"), QStringLiteral("DELETE FROM recent_models WHERE path = ?"),
                    {path});
}

QList<RecentModel> ModelHistoryStore::recentModels(int limit) const {
  return m_db.select(tr("Could not read the recent models"),
                     QStringLiteral("SELECT path, name, architecture, format, weights, parameter_count, context_length,"
                                    " last_opened_ms"
                                    " FROM recent_models ORDER BY last_opened_ms DESC, rowid DESC LIMIT ?"),
                     {limit}, [](const QSqlQuery& row) {
                       return RecentModel{row.value(0).toString(), row.value(1).toString(),  row.value(2).toString(),
                                          row.value(3).toString(), row.value(4).toString(),  row.value(5).toLongLong(),
                                          row.value(6).toInt(),    row.value(7).toLongLong()};
                     });
}
