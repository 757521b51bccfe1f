// PreferenceStore: the queries behind preference pairs.
#include "preferencestore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>

#include "database.h"
#include "sqlvalues.h"
#include "transaction.h"

namespace {

QString promptToJson(const QList<ChatTurn>& turns) {
  QJsonArray list;
  for (const ChatTurn& t : turns)
    list.append(QJsonObject{{QStringLiteral("role"), t.role}, {QStringLiteral("content"), t.content}});
  return QString::fromUtf8(QJsonDocument(list).toJson(QJsonDocument::Compact));
}

// Text that is not a message list (only a damaged file could hold it) reads as no turns; such a
// pair is listed (and can be deleted) but problemWith() keeps it out of exports.
QList<ChatTurn> promptFromJson(const QString& text) {
  QList<ChatTurn> turns;
  const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
  for (const QJsonValue& v : doc.array()) {
    const QJsonObject o = v.toObject();
    turns << ChatTurn{o.value(QStringLiteral("role")).toString(), o.value(QStringLiteral("content")).toString()};
  }
  return turns;
}

const char* const kPairColumns = "id, chat_id, prompt, chosen, rejected, chosen_edited, model, created_ms";

StoredPreferencePair pairFromRow(const QSqlQuery& row) {
  StoredPreferencePair p;
  p.id = row.value(0).toLongLong();
  p.chatId = row.value(1).toLongLong();
  p.prompt = promptFromJson(row.value(2).toString());
  p.chosen = row.value(3).toString();
  p.rejected = row.value(4).toString();
  p.chosenEdited = row.value(5).toInt() != 0;
  p.model = row.value(6).toString();
  p.createdMs = row.value(7).toLongLong();
  return p;
}

}  // namespace

QString PreferenceStore::problemWith(const StoredPreferencePair& pair) {
  // The trainer's rules (engine/train/preference_data.h), in the user's words.
  if (pair.prompt.isEmpty() || pair.prompt.constLast().role != QLatin1String("user"))
    return tr("the conversation before the replies does not end with a user message");
  for (const ChatTurn& t : pair.prompt) {
    if (t.role != QLatin1String("system") && t.role != QLatin1String("user") && t.role != QLatin1String("assistant"))
      return tr("the conversation has a message of an unknown role (“%1”)").arg(t.role);
    if (t.content.isEmpty()) return tr("the conversation has an empty message");
  }
  if (pair.chosen.trimmed().isEmpty()) return tr("the preferred reply is empty");
  if (pair.rejected.trimmed().isEmpty()) return tr("the other reply is empty");
  if (pair.chosen == pair.rejected) return tr("the two replies are the same, so there is nothing to prefer");
  return {};
}

qint64 PreferenceStore::savePair(const StoredPreferencePair& pair, qint64 replyId, const QVariantMap& replyStats,
                                 const QVariantMap& replySettings) {
  const QString what = tr("Could not save the preference pair");
  if (const QString problem = problemWith(pair); !problem.isEmpty()) {
    m_db.fail(what, problem);
    return 0;
  }
  Transaction tx(m_db, what);
  if (replyId != 0) {
    const QList<QString> stored =
        tx.select(QStringLiteral("SELECT content FROM messages WHERE id = ? AND role = 'assistant'"), {replyId},
                  [](const QSqlQuery& row) { return row.value(0).toString(); });
    if (tx.ok() && stored.isEmpty()) {
      tx.fail(tr("reply %1 does not exist").arg(replyId));
      return 0;
    }
    if (!stored.isEmpty() && stored.first() != pair.chosen)
      tx.exec(QStringLiteral("DELETE FROM inspections WHERE message_id = ?"), {replyId});
    tx.exec(QStringLiteral("UPDATE messages SET content = ?, complete = 1, stats = ?, settings = ? WHERE id = ?"),
            {pair.chosen, sqlvalue::jsonOrNull(replyStats), sqlvalue::jsonOrNull(replySettings), replyId});
  }
  const qint64 id = tx.insert(QStringLiteral("INSERT INTO preference_pairs (chat_id, prompt, chosen, rejected, "
                                             "chosen_edited, model, created_ms)"
                                             " VALUES (?, ?, ?, ?, ?, ?, ?)"),
                              {sqlvalue::idOrNull(pair.chatId), promptToJson(pair.prompt), pair.chosen, pair.rejected,
                               pair.chosenEdited ? 1 : 0, pair.model, sqlvalue::nowMs()});
  if (!tx.commit()) return 0;
  Q_EMIT pairsChanged();
  return id;
}

bool PreferenceStore::deletePair(qint64 pairId) {
  if (!m_db.write(tr("Could not delete the preference pair"),
                  QStringLiteral("DELETE FROM preference_pairs WHERE id = ?"), {pairId}))
    return false;
  Q_EMIT pairsChanged();
  return true;
}

QList<StoredPreferencePair> PreferenceStore::pairs() const {
  return m_db.select(tr("Could not read the preference pairs"),
                     QStringLiteral("SELECT %1 FROM preference_pairs ORDER BY created_ms DESC, id DESC")
                         .arg(QLatin1String(kPairColumns)),
                     {}, pairFromRow);
}

int PreferenceStore::count() const {
  return m_db
      .select(tr("Could not read the preference pairs"), QStringLiteral("SELECT count(*) FROM preference_pairs"), {},
              [](const QSqlQuery& row) { return row.value(0).toInt(); })
      .value(0);
}
