// API keys: generation, salted hashing and the thread-safe check the server calls.
#include "apikeys.h"

#include <QCryptographicHash>
#include <QRandomGenerator>

namespace {

QByteArray randomBytes(int count) {
  QByteArray bytes(count, Qt::Uninitialized);
  QRandomGenerator* random = QRandomGenerator::system();
  for (int i = 0; i < count; ++i) bytes[i] = char(random->bounded(256));
  return bytes;
}

// Compares every byte whatever the first difference, so the time taken says nothing about a stored hash.
bool sameBytes(const QByteArray& a, const QByteArray& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (qsizetype i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

namespace apikeys {

QString generateKey() { return QStringLiteral("sk-wb-") + QString::fromLatin1(randomBytes(16).toHex()); }

QByteArray generateSalt() { return randomBytes(16); }

QByteArray hashKey(const QByteArray& salt, const QString& key) {
  QCryptographicHash hash(QCryptographicHash::Sha256);
  hash.addData(salt);
  hash.addData(key.toUtf8());
  return hash.result();
}

QString displayPrefix(const QString& key) { return key.left(10) + QStringLiteral("…"); }

}  // namespace apikeys

void ApiKeyVerifier::setKeys(const QList<ApiKeyHash>& keys) {
  std::lock_guard lock(m_mutex);
  m_keys = keys;
}

qint64 ApiKeyVerifier::match(const QString& key) const {
  std::lock_guard lock(m_mutex);
  for (const ApiKeyHash& stored : m_keys)
    if (sameBytes(apikeys::hashKey(stored.salt, key), stored.hash)) return stored.id;
  return 0;
}

bool ApiKeyVerifier::isEmpty() const {
  std::lock_guard lock(m_mutex);
  return m_keys.isEmpty();
}
