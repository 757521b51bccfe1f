// Preference pairs to the trainer's JSONL.
#include "preferenceexport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace {

QJsonObject message(const QString& role, const QString& content) {
  return {{QStringLiteral("role"), role}, {QStringLiteral("content"), content}};
}

}  // namespace

QByteArray preferencePairsToJsonl(const QList<StoredPreferencePair>& pairs, int* skipped) {
  QByteArray out;
  int left = 0;
  for (const StoredPreferencePair& pair : pairs) {
    if (!PreferenceStore::problemWith(pair).isEmpty()) {
      ++left;
      continue;
    }
    QJsonArray prompt;
    for (const ChatTurn& t : pair.prompt) prompt.append(message(t.role, t.content));
    const QJsonObject row{
        {QStringLiteral("prompt"), prompt},
        {QStringLiteral("chosen"), QJsonArray{message(QStringLiteral("assistant"), pair.chosen)}},
        {QStringLiteral("rejected"), QJsonArray{message(QStringLiteral("assistant"), pair.rejected)}},
    };
    out += QJsonDocument(row).toJson(QJsonDocument::Compact);
    out += '\n';
  }
  if (skipped) *skipped = left;
  return out;
}
