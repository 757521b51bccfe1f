// The local server's API keys (schema step 8, ApiKeyStore, apikeys.h): a step-7 database upgrades keeping its
// data; a key is stored only as a salted SHA-256 (never in the clear, a fresh salt per key); the verifier accepts
// exactly the stored keys and forgets a revoked one; last use is recorded.
#include <QCryptographicHash>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "services/apikeys.h"
#include "services/store/apikeystore.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "support/raw_sql.h"

class TestApiKeyStore : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString dbPath() const { return m_dir.filePath(QStringLiteral("store.db")); }

  // Every text and blob value of every api_keys row, as bytes.
  QList<QByteArray> rawKeyColumns() {
    QList<QByteArray> values;
    {
      QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("peek"));
      db.setDatabaseName(dbPath());
      if (db.open()) {
        QSqlQuery q(db);
        q.exec(QStringLiteral("SELECT name, prefix, salt, hash FROM api_keys"));
        while (q.next())
          for (int c = 0; c < 4; ++c) values << q.value(c).toByteArray();
      }
      db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("peek"));
    return values;
  }

 private Q_SLOTS:
  void init() { QFile::remove(dbPath()); }

  void migratesFromVersion7() {
    // A step-7 database (step 8 undone by hand) with a chat: it stays, and keys can be made after the upgrade.
    {
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      QVERIFY(ChatStore(db).createChat(QStringLiteral("kept")));
    }
    QVERIFY(rawSqlExec(dbPath(), {QStringLiteral("DROP TABLE server_requests"), QStringLiteral("DROP TABLE api_keys"), QStringLiteral("PRAGMA user_version = 7")}));
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
    QVERIFY(Database::latestSchemaVersion() >= 8);
    QVERIFY(QFile::exists(dbPath() + QStringLiteral(".v7.bak")));
    QCOMPARE(ChatStore(db).chats().size(), 1);
    ApiKeyStore store(db);
    QVERIFY(store.keys().isEmpty());
    qint64 id = 0;
    QVERIFY(!store.createKey(QStringLiteral("laptop"), &id).isEmpty());
    QVERIFY(id > 0);
    QCOMPARE(store.keys().size(), 1);
  }

  void keysAreStoredSaltedAndHashedOnly() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ApiKeyStore store(db);
    qint64 a = 0, b = 0;
    const QString keyA = store.createKey(QStringLiteral("script"), &a);
    const QString keyB = store.createKey(QStringLiteral("  "), &b);
    QVERIFY(keyA.startsWith(QStringLiteral("sk-wb-")));
    QCOMPARE(keyA.size(), 6 + 32);
    QVERIFY(keyA != keyB);

    const QList<StoredApiKey> keys = store.keys();
    QCOMPARE(keys.size(), 2);
    QCOMPARE(keys[0].id, b);  // newest first
    QCOMPARE(keys[0].name, QStringLiteral("Unnamed key"));
    QCOMPARE(keys[1].name, QStringLiteral("script"));
    QCOMPARE(keys[1].prefix, keyA.left(10) + QStringLiteral("…"));
    QVERIFY(keys[1].createdMs > 0);
    QCOMPARE(keys[1].lastUsedMs, qint64(0));

    // Nothing on disk holds a key, or its plain unsalted hash.
    const QByteArray plainHash = QCryptographicHash::hash(keyA.toUtf8(), QCryptographicHash::Sha256);
    for (const QByteArray& value : rawKeyColumns()) {
      QVERIFY(!value.contains(keyA.toUtf8()));
      QVERIFY(!value.contains(keyB.toUtf8()));
      QVERIFY(value != plainHash);
    }
    const QList<ApiKeyHash> hashes = store.hashes();
    QCOMPARE(hashes.size(), 2);
    QCOMPARE(hashes[0].salt.size(), 16);
    QVERIFY(hashes[0].salt != hashes[1].salt);
    QCOMPARE(hashes[0].hash.size(), 32);
    for (const ApiKeyHash& h : hashes)
      QCOMPARE(h.hash, apikeys::hashKey(h.salt, h.id == a ? keyA : keyB));
  }

  void verifierAcceptsExactlyTheStoredKeys() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ApiKeyStore store(db);
    qint64 a = 0, b = 0;
    const QString keyA = store.createKey(QStringLiteral("a"), &a);
    const QString keyB = store.createKey(QStringLiteral("b"), &b);
    ApiKeyVerifier verifier;
    QVERIFY(verifier.isEmpty());
    QCOMPARE(verifier.match(keyA), qint64(0));  // nothing loaded yet
    verifier.setKeys(store.hashes());
    QCOMPARE(verifier.match(keyA), a);
    QCOMPARE(verifier.match(keyB), b);
    QCOMPARE(verifier.match(QString()), qint64(0));
    QCOMPARE(verifier.match(keyA + QLatin1Char('x')), qint64(0));
    QCOMPARE(verifier.match(keyA.chopped(1)), qint64(0));
    QCOMPARE(verifier.match(keyA.toUpper()), qint64(0));

    QVERIFY(store.revokeKey(a));
    verifier.setKeys(store.hashes());
    QCOMPARE(verifier.match(keyA), qint64(0));
    QCOMPARE(verifier.match(keyB), b);
    QCOMPARE(store.keys().size(), 1);

    QVERIFY(store.markUsed(b, 1234));
    QCOMPARE(store.keys().first().lastUsedMs, qint64(1234));
  }
};

QTEST_GUILESS_MAIN(TestApiKeyStore)
#include "test_api_key_store.moc"
