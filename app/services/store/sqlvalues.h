// How the stores' values become SQL values and back, in one place so every table agrees:
// - timestamps are milliseconds since the epoch (UTC), 0 or NULL meaning "not yet";
// - an id column that may be empty (a first message's parent) is NULL, read back as 0;
// - a real that was not computed (NaN, a step's val_loss) is NULL, read back as NaN;
// - a settings or stats map is compact JSON text; a map that may be empty is NULL when it is.
// Text needs no rule here: Database binds every QString as text, a null one as ''.
#pragma once

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QVariant>
#include <QVariantMap>
#include <QtNumeric>

#include <cmath>

namespace sqlvalue {

inline qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

inline QVariant idOrNull(qint64 id) { return id != 0 ? QVariant(id) : QVariant(); }
inline QVariant msOrNull(qint64 ms) { return ms > 0 ? QVariant(ms) : QVariant(); }

inline QVariant realOrNull(double v) { return std::isfinite(v) ? QVariant(v) : QVariant(); }
inline double realOrNaN(const QVariant& v) { return v.isNull() ? qQNaN() : v.toDouble(); }

inline QString json(const QVariantMap& map) {
  return QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(map)).toJson(QJsonDocument::Compact));
}
inline QVariant jsonOrNull(const QVariantMap& map) { return map.isEmpty() ? QVariant() : QVariant(json(map)); }
// NULL, and text that is not a JSON object, read as an empty map.
inline QVariantMap mapFromJson(const QVariant& text) {
  if (text.isNull()) return {};
  const QJsonDocument doc = QJsonDocument::fromJson(text.toString().toUtf8());
  return doc.isObject() ? doc.object().toVariantMap() : QVariantMap{};
}

}  // namespace sqlvalue
