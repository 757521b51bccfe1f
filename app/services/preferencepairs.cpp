// PreferencePairs: listing, deleting and exporting the collected pairs.
#include "preferencepairs.h"

#include <QDateTime>
#include <QLocale>
#include <QUrl>

#include "chatexport.h"
#include "preferenceexport.h"
#include "store/database.h"

PreferencePairs::PreferencePairs(PreferenceStore* store, QObject* parent) : QObject(parent), m_store(store) {
  connect(m_store, &PreferenceStore::pairsChanged, this, &PreferencePairs::reload);
  reload();
}

void PreferencePairs::reload() {
  m_pairs = m_store->pairs();
  Q_EMIT pairsChanged();
}

QVariantList PreferencePairs::pairs() const {
  QVariantList out;
  out.reserve(m_pairs.size());
  for (const StoredPreferencePair& p : m_pairs) {
    const QString prompt = p.prompt.isEmpty() ? QString() : p.prompt.constLast().content.simplified();
    out << QVariantMap{
        {QStringLiteral("id"), p.id},
        {QStringLiteral("prompt"), prompt},
        {QStringLiteral("turns"), int(p.prompt.size())},
        {QStringLiteral("chosen"), p.chosen},
        {QStringLiteral("rejected"), p.rejected},
        {QStringLiteral("edited"), p.chosenEdited},
        {QStringLiteral("model"), p.model},
        {QStringLiteral("created"),
         QLocale().toString(QDateTime::fromMSecsSinceEpoch(p.createdMs), QStringLiteral("yyyy-MM-dd HH:mm"))},
    };
  }
  return out;
}

bool PreferencePairs::deletePair(qint64 pairId) {
  if (!m_store->deletePair(pairId)) {
    setError(m_store->database().lastError());
    return false;
  }
  clearError();
  return true;
}

QString PreferencePairs::exportJsonl(const QString& pathOrUrl) {
  const QUrl url(pathOrUrl);
  const QString path = url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
  if (path.trimmed().isEmpty()) return tr("Choose a file to export to.");
  if (m_pairs.isEmpty())
    return tr("There are no preference pairs to export yet: compare two replies in Chat and pick the better one.");
  int skipped = 0;
  const QByteArray jsonl = preferencePairsToJsonl(m_pairs, &skipped);
  if (jsonl.isEmpty()) return tr("Cannot export: none of the %1 pairs is one the trainer accepts.").arg(m_pairs.size());
  const QString error = writeFileAtomically(path, jsonl);
  if (!error.isEmpty()) return error;
  if (skipped > 0) qWarning("PreferencePairs: %d damaged pairs were left out of %s", skipped, qPrintable(path));
  return {};
}

void PreferencePairs::clearError() { setError({}); }

void PreferencePairs::setError(const QString& message) {
  if (message == m_lastError) return;
  m_lastError = message;
  Q_EMIT lastErrorChanged();
}
