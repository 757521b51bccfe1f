// PreferenceStore: preference pairs collected in Chat (schema step 6): two replies to the same
// conversation and which one the user preferred, the data a reward model or DPO trains on.
//
// Invariants
// - Every stored pair is one the trainer accepts (engine/train/preference_data.h): the prompt ends
//   with a user turn and has only system / user / assistant turns, chosen and rejected are not empty
//   and differ. savePair() refuses anything else, so an export never holds a row the trainer refuses.
// - A pair is written only when the user picks, in one transaction with the chat's reply becoming the
//   chosen text: after a crash either both happened or neither did.
// - Pairs outlive their chat (chatId becomes 0): they are a dataset the user chose to keep.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QVariantMap>

#include "services/chattypes.h"

class Database;

struct StoredPreferencePair {
  qint64 id = 0;
  qint64 chatId = 0;       // the chat it was collected in; 0 once that chat is deleted
  QList<ChatTurn> prompt;  // system prompt first when there was one; ends with the user turn
  QString chosen;          // the reply the user preferred (as kept, after any edit)
  QString rejected;
  bool chosenEdited = false;  // the user edited the chosen reply before keeping it
  QString model;              // the model that wrote the replies
  qint64 createdMs = 0;
};

class PreferenceStore : public QObject {
  Q_OBJECT

 public:
  // `db` must outlive this store.
  explicit PreferenceStore(Database& db, QObject* parent = nullptr) : QObject(parent), m_db(db) {}
  // Where a failed write is reported (writeFailed, lastError).
  Database& database() const { return m_db; }

  // Saves the pair (createdMs is stamped now) and returns its id; 0 when it was refused or failed
  // (Database::lastError and writeFailed say why). With a replyId, that assistant message of the chat
  // becomes the chosen text, with `replyStats` and `replySettings`, in the same transaction; its
  // inspection snapshots go when its text changes (they were of the other text).
  qint64 savePair(const StoredPreferencePair& pair, qint64 replyId = 0, const QVariantMap& replyStats = {},
                  const QVariantMap& replySettings = {});
  bool deletePair(qint64 pairId);
  // Every pair, newest first: what the Train page lists and what an alignment run trains on.
  QList<StoredPreferencePair> pairs() const;
  int count() const;

  // Why a pair would be refused by the trainer; empty when it is fine.
  static QString problemWith(const StoredPreferencePair& pair);

 Q_SIGNALS:
  // A pair was saved or deleted.
  void pairsChanged();

 private:
  Database& m_db;
};
