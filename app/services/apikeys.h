// API keys of the app's local server: how a key is made, how it is stored (salted SHA-256, never the key
// itself) and how a presented key is checked against the stored hashes.
//
// Invariants
// - A key is shown once, when it is made; afterwards only its hash and its first characters (to tell keys
//   apart in a list) exist anywhere.
// - ApiKeyVerifier is read by the server's thread for every request and replaced by the GUI thread when a key
//   is created or revoked; a revoked key is refused from the next request on.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <mutex>

struct ApiKeyHash {
  qint64 id = 0;
  QByteArray salt;
  QByteArray hash;  // SHA-256 of salt followed by the key's UTF-8 bytes
};

namespace apikeys {

// "sk-wb-" followed by 32 hex digits from the system's random source (128 bits).
QString generateKey();
QByteArray generateSalt();  // 16 random bytes, one per key
QByteArray hashKey(const QByteArray& salt, const QString& key);
// The part of a key shown in lists ("sk-wb-1a2b…").
QString displayPrefix(const QString& key);

}  // namespace apikeys

class ApiKeyVerifier {
 public:
  void setKeys(const QList<ApiKeyHash>& keys);
  // The id of the stored key `key` is, 0 when none. Thread-safe.
  qint64 match(const QString& key) const;
  bool isEmpty() const;

 private:
  mutable std::mutex m_mutex;
  QList<ApiKeyHash> m_keys;
};
