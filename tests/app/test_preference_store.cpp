// PreferenceStore and the preference dataset export: the schema step that brought the table (from a
// real step-5 database, data kept), saving / listing / deleting pairs, the reply replaced with the
// pair in one transaction, and the exported JSONL read back by the engine's own preference loader.
#include <QFile>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <string>

#include "engine/train/preference_data.h"
#include "services/preferenceexport.h"
#include "services/preferencepairs.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "services/store/inspectionstore.h"
#include "services/store/preferencestore.h"
#include "support/raw_sql.h"

namespace {

StoredPreferencePair pair(const QString& question, const QString& chosen, const QString& rejected, qint64 chatId = 0) {
  StoredPreferencePair p;
  p.chatId = chatId;
  p.prompt = {{QStringLiteral("system"), QStringLiteral("Be brief.")},
              {QStringLiteral("user"), QStringLiteral("hello")},
              {QStringLiteral("assistant"), QStringLiteral("Hi!")},
              {QStringLiteral("user"), question}};
  p.chosen = chosen;
  p.rejected = rejected;
  p.model = QStringLiteral("tiny");
  return p;
}

}  // namespace

class TestPreferenceStore : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString dbPath() const { return m_dir.filePath(QStringLiteral("prefs.db")); }

 private Q_SLOTS:
  void init() {
    for (const char* suffix : {"", "-wal", "-shm", ".v5.bak"}) QFile::remove(dbPath() + QLatin1String(suffix));
  }

  void migratesFromVersion5KeepingData() {
    qint64 chat = 0, reply = 0;
    {
      // A real step-5 database: the current schema with steps 6 and 7 undone by hand.
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      ChatStore chats(db);
      chat = chats.createChat(QStringLiteral("Kept"));
      const qint64 user = chats.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("still here"));
      reply = chats.addMessage(chat, user, QStringLiteral("assistant"), QStringLiteral("so am I"));
      QVERIFY(InspectionStore(db).saveInspection(reply, QByteArray("snapshot")) > 0);
    }
    QVERIFY(
        rawSqlExec(dbPath(), {QStringLiteral("DROP TABLE server_requests"), QStringLiteral("DROP TABLE api_keys"), QStringLiteral("DROP TABLE run_completions"), QStringLiteral("DROP TABLE run_metric_values"),
                              QStringLiteral("DROP TABLE preference_pairs"), QStringLiteral("PRAGMA user_version = 5")}));

    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
    QVERIFY(Database::latestSchemaVersion() >= 6);
    QVERIFY(QFile::exists(dbPath() + QStringLiteral(".v5.bak")));
    ChatStore chats(db);
    QCOMPARE(chats.chat(chat).title, QStringLiteral("Kept"));
    QCOMPARE(chats.activePath(chat).size(), 2);
    QCOMPARE(chats.activePath(chat).last().content, QStringLiteral("so am I"));
    QCOMPARE(InspectionStore(db).inspectionFor(reply).blob, QByteArray("snapshot"));
    PreferenceStore store(db);
    QCOMPARE(store.count(), 0);
    QVERIFY(store.savePair(pair(QStringLiteral("q"), QStringLiteral("good"), QStringLiteral("bad"), chat)) > 0);
    QCOMPARE(store.count(), 1);
    QVERIFY(db.quickCheck());
  }

  void saveListAndDelete() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ChatStore chats(db);
    const qint64 chat = chats.createChat(QStringLiteral("c"));
    PreferenceStore store(db);
    QSignalSpy changed(&store, &PreferenceStore::pairsChanged);
    const qint64 first =
        store.savePair(pair(QStringLiteral("first?"), QStringLiteral("yes"), QStringLiteral("no"), chat));
    QTest::qWait(2);  // distinct created_ms, so "newest first" is decided by time
    StoredPreferencePair edited = pair(QStringLiteral("second?"), QStringLiteral("better"), QStringLiteral("worse"));
    edited.chosenEdited = true;
    const qint64 second = store.savePair(edited);
    QVERIFY(first > 0 && second > first);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(store.count(), 2);

    QList<StoredPreferencePair> all = store.pairs();
    QCOMPARE(all.size(), 2);
    QCOMPARE(all[0].id, second);  // newest first
    QCOMPARE(all[0].chosen, QStringLiteral("better"));
    QVERIFY(all[0].chosenEdited);
    QCOMPARE(all[0].chatId, 0);
    QCOMPARE(all[1].chatId, chat);
    QCOMPARE(all[1].model, QStringLiteral("tiny"));
    QVERIFY(all[1].createdMs > 0);
    QCOMPARE(all[1].prompt.size(), 4);
    QCOMPARE(all[1].prompt[0].role, QStringLiteral("system"));
    QCOMPARE(all[1].prompt[3].content, QStringLiteral("first?"));

    // The pair outlives its chat: it is data the user chose to keep.
    QVERIFY(chats.trashChat(chat));
    QVERIFY(chats.purgeTrash());
    all = store.pairs();
    QCOMPARE(all.size(), 2);
    QCOMPARE(all[1].chatId, 0);

    QVERIFY(store.deletePair(second));
    QCOMPARE(changed.count(), 3);
    QCOMPARE(store.count(), 1);
    QCOMPARE(store.pairs().first().id, first);

    // Reopened: still there.
    db.close();
    Database again;
    QCOMPARE(again.open(dbPath()), Database::OpenState::Ok);
    QCOMPARE(PreferenceStore(again).pairs().first().chosen, QStringLiteral("yes"));
  }

  void refusesWhatTheTrainerRefuses_data() {
    QTest::addColumn<int>("breakage");
    QTest::newRow("empty prompt") << 0;
    QTest::newRow("prompt ends with the assistant") << 1;
    QTest::newRow("chosen equals rejected") << 2;
    QTest::newRow("empty rejected") << 3;
    QTest::newRow("blank chosen") << 4;
    QTest::newRow("unknown role") << 5;
  }
  void refusesWhatTheTrainerRefuses() {
    QFETCH(int, breakage);
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    PreferenceStore store(db);
    QSignalSpy failed(&db, &Database::writeFailed);
    StoredPreferencePair p = pair(QStringLiteral("q"), QStringLiteral("a"), QStringLiteral("b"));
    if (breakage == 0) p.prompt.clear();
    if (breakage == 1) p.prompt.removeLast();
    if (breakage == 2) p.rejected = p.chosen;
    if (breakage == 3) p.rejected.clear();
    if (breakage == 4) p.chosen = QStringLiteral("  \n");
    if (breakage == 5) p.prompt[0].role = QStringLiteral("tool");
    QVERIFY(!PreferenceStore::problemWith(p).isEmpty());
    QCOMPARE(store.savePair(p), 0);
    QCOMPARE(failed.count(), 1);
    QVERIFY(db.lastError().startsWith(QStringLiteral("Could not save the preference pair: ")));
    QCOMPARE(store.count(), 0);
  }

  void pickReplacesTheReplyInTheSameTransaction() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ChatStore chats(db);
    InspectionStore inspections(db);
    PreferenceStore store(db);
    const qint64 chat = chats.createChat(QStringLiteral("c"));
    const qint64 user = chats.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("q"));
    const qint64 reply =
        chats.addMessage(chat, user, QStringLiteral("assistant"), QStringLiteral("first"), true,
                         {{QStringLiteral("generatedTokens"), 1}}, {{QStringLiteral("seed"), QStringLiteral("1")}});
    QVERIFY(inspections.saveInspection(reply, QByteArray("of first")) > 0);
    StoredPreferencePair p;
    p.chatId = chat;
    p.prompt = {{QStringLiteral("user"), QStringLiteral("q")}};

    // The chosen reply is the one the chat had: its text and its snapshot stay.
    p.chosen = QStringLiteral("first");
    p.rejected = QStringLiteral("second");
    QVERIFY(store.savePair(p, reply, chats.message(reply).stats, chats.message(reply).settings) > 0);
    QCOMPARE(chats.message(reply).content, QStringLiteral("first"));
    QCOMPARE(inspections.inspectionFor(reply).blob, QByteArray("of first"));

    // The other one chosen: the chat's reply becomes it, with its stats and settings; the snapshot
    // of the old text goes.
    p.chosen = QStringLiteral("second");
    p.rejected = QStringLiteral("first");
    QVERIFY(store.savePair(p, reply, {{QStringLiteral("generatedTokens"), 2}},
                           {{QStringLiteral("seed"), QStringLiteral("2")}}) > 0);
    const StoredMessage m = chats.message(reply);
    QCOMPARE(m.content, QStringLiteral("second"));
    QVERIFY(m.complete);
    QCOMPARE(m.stats.value(QStringLiteral("generatedTokens")).toInt(), 2);
    QCOMPARE(m.settings.value(QStringLiteral("seed")).toString(), QStringLiteral("2"));
    QCOMPARE(inspections.inspectionFor(reply).id, 0);
    QCOMPARE(chats.activePath(chat).size(), 2);
    QCOMPARE(chats.siblings(reply).size(), 1);  // replaced, not branched: the other is not kept in the chat
    QCOMPARE(store.count(), 2);

    // A reply that is not there (or a user message) fails the whole write: no pair either.
    p.chosen = QStringLiteral("third");
    QCOMPARE(store.savePair(p, reply + 100), 0);
    QCOMPARE(store.savePair(p, user), 0);
    QCOMPARE(store.count(), 2);
    QCOMPARE(chats.message(user).content, QStringLiteral("q"));
  }

  void exportIsReadByTheTrainer() {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    PreferenceStore store(db);
    PreferencePairs prefs(&store);
    const QString out = m_dir.filePath(QStringLiteral("prefs.jsonl"));
    // Nothing to export yet: said, and no file.
    QVERIFY(prefs.exportJsonl(out).contains(QStringLiteral("no preference pairs")));
    QVERIFY(!QFile::exists(out));

    QVERIFY(store.savePair(pair(QStringLiteral("What is 2+2?"), QStringLiteral("4"), QStringLiteral("5"))) > 0);
    QTest::qWait(2);
    QVERIFY(store.savePair(pair(QStringLiteral("Say \"hi\"\nin JSON"), QStringLiteral("{\"hi\": 1}\n"),
                                QStringLiteral("hi ünïcode ✓"))) > 0);
    QCOMPARE(prefs.count(), 2);
    QCOMPARE(prefs.pairs().first().toMap().value(QStringLiteral("prompt")).toString(),
             QStringLiteral("Say \"hi\" in JSON"));

    const QByteArray jsonl = preferencePairsToJsonl(store.pairs());
    QCOMPARE(jsonl.count('\n'), 2);
    const engine::PreferenceDataset parsed =
        engine::parse_preference_jsonl(std::string_view(jsonl.constData(), size_t(jsonl.size())), "export");
    QCOMPARE(parsed.pairs.size(), size_t(2));
    QVERIFY(parsed.conversational);
    const engine::PreferencePair& newest = parsed.pairs[0];
    QCOMPARE(newest.prompt.size(), size_t(4));
    QCOMPARE(newest.prompt[0].role, std::string("system"));
    QCOMPARE(newest.prompt[3].role, std::string("user"));
    QCOMPARE(QString::fromStdString(newest.prompt[3].content), QStringLiteral("Say \"hi\"\nin JSON"));
    QCOMPARE(QString::fromStdString(newest.chosen), QStringLiteral("{\"hi\": 1}\n"));
    QCOMPARE(QString::fromStdString(newest.rejected), QStringLiteral("hi ünïcode ✓"));
    QCOMPARE(parsed.pairs[1].chosen, std::string("4"));
    QCOMPARE(parsed.pairs[1].rejected, std::string("5"));

    // Through the file, as the train command reads it; a second export replaces the file whole.
    {
      QFile old(out);  // something at the path already
      QVERIFY(old.open(QIODevice::WriteOnly));
      old.write("old contents\n");
    }
    QCOMPARE(prefs.exportJsonl(QUrl::fromLocalFile(out).toString()), QString());
    QVERIFY(prefs.deletePair(store.pairs().first().id));
    QCOMPARE(prefs.exportJsonl(out), QString());
    const engine::PreferenceDataset loaded = engine::load_preference_dataset(out.toStdString());
    QCOMPARE(loaded.pairs.size(), size_t(1));
    QCOMPARE(loaded.pairs[0].chosen, std::string("4"));

    // A file that cannot be written: a clear error, and the old file is left as it was.
    const QString missingDir = m_dir.filePath(QStringLiteral("no/such/dir/prefs.jsonl"));
    const QString error = prefs.exportJsonl(missingDir);
    QVERIFY2(error.startsWith(QStringLiteral("Cannot write")), qPrintable(error));
    QCOMPARE(engine::load_preference_dataset(out.toStdString()).pairs.size(), size_t(1));
  }
};

QTEST_GUILESS_MAIN(TestPreferenceStore)
#include "test_preference_store.moc"
