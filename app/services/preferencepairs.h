// PreferencePairs: the preference pairs collected in Chat as the Train page shows them (a count and
// a list, newest first), deleting one, and exporting them all as the trainer's JSONL. The pairs
// themselves are made by ChatController's compare flow; this object only reads, deletes and exports.
#pragma once

#include <QObject>
#include <QString>
#include <QVariantList>

#include "store/preferencestore.h"

class PreferencePairs : public QObject {
  Q_OBJECT
  Q_PROPERTY(int count READ count NOTIFY pairsChanged)
  // [{id, prompt (the user turn the replies answer, one line), turns (messages in the prompt), chosen,
  //   rejected, edited, model, created ("2026-12-07 14:05")}], newest first.
  Q_PROPERTY(QVariantList pairs READ pairs NOTIFY pairsChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)

 public:
  // `store` must outlive this object.
  explicit PreferencePairs(PreferenceStore* store, QObject* parent = nullptr);
  PreferenceStore* store() const { return m_store; }

  int count() const { return int(m_pairs.size()); }
  QVariantList pairs() const;
  QString lastError() const { return m_lastError; }

  Q_INVOKABLE bool deletePair(qint64 pairId);
  // Writes every pair to `pathOrUrl` (a local path or a file: URL) atomically: the file is either the
  // whole new dataset or left as it was. Returns an error message, empty on success.
  Q_INVOKABLE QString exportJsonl(const QString& pathOrUrl);
  Q_INVOKABLE void clearError();

 Q_SIGNALS:
  void pairsChanged();
  void lastErrorChanged();

 private:
  void reload();
  void setError(const QString& message);

  PreferenceStore* m_store;
  QList<StoredPreferencePair> m_pairs;
  QString m_lastError;
};
