// The session database (Database) and its stores: chats and message trees, full-text search,
// presets and models, inspection snapshots, and the faults of
// research/reliability.md §3.4: migration from an older schema, a newer schema, a corrupt file, a
// read-only file, a locked database, and SIGKILL in the middle of writes (this binary run with
// `--writer DB` is the child that gets killed).
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QSet>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <memory>

#include "engine/error.h"
#include "engine/inspect/snapshot.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "services/store/inspectionstore.h"
#include "services/store/modelhistorystore.h"
#include "services/store/presetstore.h"
#include "services/store/runstore.h"

namespace {

// A raw connection that is not the store's: what another process (or an older app) would do.
class RawDb {
 public:
  explicit RawDb(const QString& path) : m_name(QStringLiteral("raw-%1").arg(++s_count)) {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
    db.setDatabaseName(path);
    db.open();
  }
  ~RawDb() {
    QSqlDatabase::database(m_name, false).close();
    QSqlDatabase::removeDatabase(m_name);
  }
  bool exec(const QString& sql) {
    QSqlQuery q(QSqlDatabase::database(m_name, false));
    if (q.exec(sql)) return true;
    qWarning("RawDb: %s: %s", qPrintable(sql), qPrintable(q.lastError().text()));
    return false;
  }
  QVariant value(const QString& sql) {
    QSqlQuery q(QSqlDatabase::database(m_name, false));
    if (q.exec(sql) && q.next()) return q.value(0);
    return {};
  }

 private:
  QString m_name;
  static inline int s_count = 0;
};

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

// Every message of the child writer has this exact text, long enough to span pages, so a row that
// were only half written would show.
QString writerText(int n) { return QStringLiteral("m%1:").arg(n) + QString(3000, QChar(u'a' + n % 26)); }

// The SIGKILL child: appends numbered messages to the first chat forever, printing each number
// after its commit returned.
int runWriter(const QString& path) {
  Database db;
  if (db.open(path) != Database::OpenState::Ok) return 3;
  ChatStore store(db);
  QList<StoredChat> chats = store.chats();
  const qint64 chatId = chats.isEmpty() ? store.createChat(QStringLiteral("writer")) : chats.first().id;
  QList<StoredMessage> path_ = store.activePath(chatId);
  qint64 parent = path_.isEmpty() ? 0 : path_.last().id;
  int n = path_.size();
  std::printf("ready\n");
  std::fflush(stdout);
  for (;; ++n) {
    parent =
        store.addMessage(chatId, parent, n % 2 ? QStringLiteral("assistant") : QStringLiteral("user"), writerText(n));
    if (parent == 0) return 4;
    std::printf("%d\n", n);
    std::fflush(stdout);
  }
}

}  // namespace

class TestSessionStore : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init();
  void freshDatabase();
  void chatCrud();
  void trashRestoreAndPurge();
  void messageTree();
  void deepChatDeletes();
  void contentRoundTrips();
  void fullTextSearch();
  void presetsAndModels();
  void migratesFromVersion1();
  void refusesNewerSchema();
  void corruptFileIsMovedAside_data();
  void corruptFileIsMovedAside();
  void readOnlyFile();
  void lockedAtOpen();
  void lockedDuringWrite();
  void sigkillLosesNoCommittedMessage();
  void inspectionsRoundTripAndCascade();
  void inspectionsMigrateFromVersion4();
  void damagedInspectionIsRefusedWhenOpened();

 private:
  QString dbPath() const { return m_dir->filePath(QStringLiteral("chats.db")); }
  std::unique_ptr<QTemporaryDir> m_dir;
};

void TestSessionStore::init() {
  m_dir = std::make_unique<QTemporaryDir>();
  QVERIFY(m_dir->isValid());
}

void TestSessionStore::freshDatabase() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  QVERIFY(db.isPersistent());
  QVERIFY(db.problem().isEmpty());
  QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
  QVERIFY(db.quickCheck());
  RawDb raw(dbPath());
  QCOMPARE(raw.value(QStringLiteral("PRAGMA journal_mode")).toString(), QStringLiteral("wal"));
  QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")).toInt(), Database::latestSchemaVersion());
  // The foreign keys are declared (the store turns enforcement on for its connection).
  QVERIFY(raw.value(QStringLiteral("SELECT count(*) FROM pragma_foreign_key_list('messages')")).toInt() >= 3);
  db.close();
  // Reopening an up-to-date database changes nothing and makes no backup.
  Database againDb;
  QCOMPARE(againDb.open(dbPath()), Database::OpenState::Ok);
  ChatStore again(againDb);
  QVERIFY(QDir(m_dir->path()).entryList({QStringLiteral("*.bak")}).isEmpty());
}

void TestSessionStore::chatCrud() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  QSignalSpy changed(&store, &ChatStore::chatsChanged);
  const qint64 a = store.createChat(QStringLiteral("First"), QStringLiteral("You are terse."));
  QTest::qWait(2);  // distinct update times
  const qint64 b = store.createChat(QStringLiteral("Second"));
  QVERIFY(a > 0 && b > 0 && a != b);
  QCOMPARE(changed.count(), 2);
  QCOMPARE(store.chats().size(), 2);
  QCOMPARE(store.chats().first().id, b);  // newest first

  QTest::qWait(2);  // the rename must not share b's millisecond (ties fall back to the larger id)
  QVERIFY(store.renameChat(a, QStringLiteral("Renamed; DROP TABLE chats; --")));
  QCOMPARE(store.chats().first().id, a);  // renaming is an update
  QCOMPARE(store.chat(a).title, QStringLiteral("Renamed; DROP TABLE chats; --"));
  QCOMPARE(store.chat(a).systemPrompt, QStringLiteral("You are terse."));
  QVERIFY(store.setSystemPrompt(a, QStringLiteral("Answer in French.")));
  QCOMPARE(store.chat(a).systemPrompt, QStringLiteral("Answer in French."));

  QVERIFY(store.setChatFolder(a, QStringLiteral("Work")));
  QVERIFY(store.setChatFolder(b, QStringLiteral("Home")));
  QCOMPARE(store.folders(), (QStringList{QStringLiteral("Home"), QStringLiteral("Work")}));
  QCOMPARE(store.chats(QStringLiteral("Work")).size(), 1);
  QCOMPARE(store.chats(QStringLiteral("Work")).first().id, a);
  QVERIFY(store.setChatFolder(b, {}));
  QCOMPARE(store.folders(), QStringList{QStringLiteral("Work")});  // an empty folder goes away
  QCOMPARE(store.chat(b).folder, QString());

  QVERIFY(store.setChatTags(a, {QStringLiteral("rust"), QStringLiteral(" ideas "), QStringLiteral("rust"), QString()}));
  QCOMPARE(store.chat(a).tags, (QStringList{QStringLiteral("ideas"), QStringLiteral("rust")}));
  QCOMPARE(store.tags(), (QStringList{QStringLiteral("ideas"), QStringLiteral("rust")}));
  QCOMPARE(store.chat(12345).id, 0);
  db.close();

  // Everything was saved as it happened.
  Database reopenedDb;
  QCOMPARE(reopenedDb.open(dbPath()), Database::OpenState::Ok);
  ChatStore reopened(reopenedDb);
  QCOMPARE(reopened.chat(a).title, QStringLiteral("Renamed; DROP TABLE chats; --"));
  QCOMPARE(reopened.chat(a).folder, QStringLiteral("Work"));
  QCOMPARE(reopened.chat(a).tags.size(), 2);
}

void TestSessionStore::trashRestoreAndPurge() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  const qint64 keep = store.createChat(QStringLiteral("keep"));
  const qint64 gone = store.createChat(QStringLiteral("gone"));
  const qint64 m1 = store.addMessage(gone, 0, QStringLiteral("user"), QStringLiteral("zanzibarquokka secret words"));
  QVERIFY(store.addMessage(gone, m1, QStringLiteral("assistant"), QStringLiteral("a zanzibarquokka reply")) > 0);
  QVERIFY(store.addMessage(keep, 0, QStringLiteral("user"), QStringLiteral("hello")) > 0);
  QVERIFY(store.setChatFolder(gone, QStringLiteral("Trash me")));

  QVERIFY(store.trashChat(gone));
  QCOMPARE(store.chats().size(), 1);
  QCOMPARE(store.chat(gone).id, 0);
  QVERIFY(store.search(QStringLiteral("zanzibarquokka")).isEmpty());
  QVERIFY(store.restoreChat(gone));  // undo
  QCOMPARE(store.chats().size(), 2);
  QCOMPARE(store.activePath(gone).size(), 2);
  QCOMPARE(store.search(QStringLiteral("zanzibarquokka")).size(), 2);

  QVERIFY(store.trashChat(gone));
  QVERIFY(store.purgeTrash());
  QVERIFY(store.restoreChat(gone));  // nothing left to restore
  QCOMPARE(store.chats().size(), 1);
  QVERIFY(store.message(m1).id == 0);
  QVERIFY(store.folders().isEmpty());
  QCOMPARE(store.activePath(keep).size(), 1);
  // Deleting means deleting: the words are in neither the database nor its WAL.
  const QByteArray needle("zanzibarquokka");
  QVERIFY(!readAll(dbPath()).contains(needle));
  QVERIFY(!readAll(dbPath() + QStringLiteral("-wal")).contains(needle));
  QVERIFY(db.quickCheck());
}

void TestSessionStore::messageTree() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  const qint64 chat = store.createChat(QStringLiteral("tree"));
  const qint64 u1 = store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("Hi"));
  const QVariantMap stats{{QStringLiteral("generatedTokens"), 7}, {QStringLiteral("tokensPerSecond"), 12.5}};
  const QVariantMap settings{{QStringLiteral("temperature"), 0.7}, {QStringLiteral("seed"), 42}};
  const qint64 a1 = store.addMessage(chat, u1, QStringLiteral("assistant"), QString(), false);
  QVERIFY(!store.message(a1).complete);
  QVERIFY(store.updateMessage(a1, QStringLiteral("Hel"), false));
  QVERIFY(store.finishMessage(a1, QStringLiteral("Hello!"), stats, settings));
  const StoredMessage done = store.message(a1);
  QVERIFY(done.complete);
  QCOMPARE(done.content, QStringLiteral("Hello!"));
  QCOMPARE(done.stats.value(QStringLiteral("generatedTokens")).toInt(), 7);
  QCOMPARE(done.settings.value(QStringLiteral("temperature")).toDouble(), 0.7);
  QCOMPARE(done.parentId, u1);

  // Regenerate: a second reply to the same message becomes the active one.
  const qint64 a2 = store.addMessage(chat, u1, QStringLiteral("assistant"), QStringLiteral("Hey."));
  QCOMPARE(store.siblings(a1), (QList<qint64>{a1, a2}));
  auto ids = [&] {
    QList<qint64> out;
    for (const StoredMessage& m : store.activePath(chat)) out << m.id;
    return out;
  };
  QCOMPARE(ids(), (QList<qint64>{u1, a2}));
  QVERIFY(store.setActiveMessage(a1));  // ‹ arrow
  QCOMPARE(ids(), (QList<qint64>{u1, a1}));
  const qint64 u2 = store.addMessage(chat, a1, QStringLiteral("user"), QStringLiteral("More"));
  const qint64 a3 = store.addMessage(chat, u2, QStringLiteral("assistant"), QStringLiteral("Sure"));
  QCOMPARE(ids(), (QList<qint64>{u1, a1, u2, a3}));
  // The other branch keeps its own continuation pointer.
  QVERIFY(store.setActiveMessage(a2));
  QCOMPARE(ids(), (QList<qint64>{u1, a2}));
  QVERIFY(store.setActiveMessage(a1));
  QCOMPARE(ids(), (QList<qint64>{u1, a1, u2, a3}));

  // Editing the first message: a new root, with its own empty future.
  const qint64 u1b = store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("Hi again"));
  QCOMPARE(store.siblings(u1), (QList<qint64>{u1, u1b}));
  QCOMPARE(ids(), QList<qint64>{u1b});
  QVERIFY(store.setActiveMessage(u1));
  QCOMPARE(ids(), (QList<qint64>{u1, a1, u2, a3}));

  // Deleting a1 takes its subtree; the active reply moves to the sibling.
  QVERIFY(store.deleteMessage(a1));
  QCOMPARE(store.message(u2).id, 0);
  QCOMPARE(store.message(a3).id, 0);
  QCOMPARE(ids(), (QList<qint64>{u1, a2}));
  QVERIFY(store.deleteMessage(u1));
  QCOMPARE(ids(), QList<qint64>{u1b});  // the other root

  // A parent from another chat, a bad role and a missing message are refused with a reason.
  QSignalSpy failed(&db, &Database::writeFailed);
  const qint64 other = store.createChat(QStringLiteral("other"));
  QCOMPARE(store.addMessage(other, u1b, QStringLiteral("user"), QStringLiteral("x")), 0);
  QVERIFY(db.lastError().contains(QStringLiteral("not in chat")));
  QCOMPARE(store.addMessage(other, 0, QStringLiteral("wizard"), QStringLiteral("x")), 0);
  QVERIFY(db.lastError().contains(QStringLiteral("CHECK"), Qt::CaseInsensitive));
  QVERIFY(!store.setActiveMessage(999999));
  QCOMPARE(failed.count(), 3);
  QVERIFY(store.activePath(other).isEmpty());
  QVERIFY(db.quickCheck());
}

void TestSessionStore::deepChatDeletes() {
  // Deeper than SQLite's trigger recursion limit (1000): a cascade per level would fail here.
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  const qint64 chat = store.createChat(QStringLiteral("long"));
  qint64 parent = 0, first = 0;
  {
    RawDb raw(dbPath());  // faster than 1500 transactions
    QVERIFY(raw.exec(QStringLiteral("BEGIN")));
    for (int i = 0; i < 1500; ++i) {
      QVERIFY(raw.exec(QStringLiteral("INSERT INTO messages (chat_id, parent_id, role, content, created_ms) VALUES "
                                      "(%1, %2, 'user', 'x', 0)")
                           .arg(chat)
                           .arg(parent ? QString::number(parent) : QStringLiteral("NULL"))));
      const qint64 id = raw.value(QStringLiteral("SELECT last_insert_rowid()")).toLongLong();
      QVERIFY(
          raw.exec(parent ? QStringLiteral("UPDATE messages SET active_child_id = %1 WHERE id = %2").arg(id).arg(parent)
                          : QStringLiteral("UPDATE chats SET active_root_id = %1 WHERE id = %2").arg(id).arg(chat)));
      if (!first) first = id;
      parent = id;
    }
    QVERIFY(raw.exec(QStringLiteral("COMMIT")));
  }
  QCOMPARE(store.activePath(chat).size(), 1500);
  QVERIFY2(store.deleteMessage(first), qPrintable(db.lastError()));
  QVERIFY(store.activePath(chat).isEmpty());
  QVERIFY(store.trashChat(chat) && store.purgeTrash());
  QVERIFY(db.quickCheck());
}

void TestSessionStore::contentRoundTrips() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  const qint64 chat = store.createChat(QStringLiteral("content"));
  const QStringList texts{QStringLiteral("emoji 😀👍🏽 and RTL שלום עולם"),
                          QString::fromUtf16(u"nul\u0000inside"), QStringLiteral("' OR 1=1; -- \" %_ \\"),
                          QString(200000, QLatin1Char('z')), QString()};
  for (const QString& t : texts) {
    const qint64 id = store.addMessage(chat, 0, QStringLiteral("user"), t);
    QVERIFY(id > 0);
    QCOMPARE(store.message(id).content, t);
  }
}

void TestSessionStore::fullTextSearch() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  const qint64 c1 = store.createChat(QStringLiteral("Cooking"));
  const qint64 c2 = store.createChat(QStringLiteral("Travel plans"));
  const qint64 m1 = store.addMessage(c1, 0, QStringLiteral("user"), QStringLiteral("How long to boil an egg?"));
  const qint64 m2 = store.addMessage(c1, m1, QStringLiteral("assistant"),
                                     QStringLiteral("About nine minutes for a hard-boiled egg."));
  const qint64 m3 = store.addMessage(c2, 0, QStringLiteral("user"), QStringLiteral("Trains from Zürich to Milano"));

  auto hitIds = [&](const QString& q) {
    QSet<qint64> ids;
    for (const SearchHit& h : store.search(q))
      if (h.messageId) ids.insert(h.messageId);
    return ids;
  };
  QCOMPARE(hitIds(QStringLiteral("egg")), (QSet<qint64>{m1, m2}));
  QCOMPARE(hitIds(QStringLiteral("boil")), (QSet<qint64>{m1, m2}));  // prefix: boil, boiled
  QCOMPARE(hitIds(QStringLiteral("zurich")), QSet<qint64>{m3});      // diacritics folded
  QCOMPARE(hitIds(QStringLiteral("MILANO trains")), QSet<qint64>{m3});
  QVERIFY(hitIds(QStringLiteral("egg trains")).isEmpty());  // every word must match
  const QList<SearchHit> hits = store.search(QStringLiteral("nine"));
  QCOMPARE(hits.size(), 1);
  QCOMPARE(hits.first().chatId, c1);
  QCOMPARE(hits.first().chatTitle, QStringLiteral("Cooking"));
  QVERIFY(hits.first().snippet.contains(QString(QChar(kSnippetMatchBegin)) + QStringLiteral("nine") + QChar(kSnippetMatchEnd)));
  // Titles match too.
  const QList<SearchHit> titleHits = store.search(QStringLiteral("travel"));
  QCOMPARE(titleHits.size(), 1);
  QCOMPARE(titleHits.first().chatId, c2);
  QCOMPARE(titleHits.first().messageId, 0);
  // FTS5 syntax in user text is just text: never an error.
  for (const QString& q : {QStringLiteral("\"unbalanced"), QStringLiteral("egg AND OR NOT ("), QStringLiteral("*"),
                           QStringLiteral("NEAR(egg"), QStringLiteral("100%_"), QString()}) {
    store.search(q);
    QVERIFY2(!db.lastError().startsWith(QStringLiteral("Search failed")), qPrintable(q + db.lastError()));
  }
  QCOMPARE(hitIds(QStringLiteral("egg AND OR NOT (")), (QSet<qint64>{}));  // "and", "or", "not" are words here
  // The index follows edits and deletes (triggers).
  QVERIFY(store.updateMessage(m2, QStringLiteral("Roughly ten minutes."), true));
  QCOMPARE(hitIds(QStringLiteral("egg")), QSet<qint64>{m1});
  QCOMPARE(hitIds(QStringLiteral("roughly")), QSet<qint64>{m2});
  QVERIFY(store.deleteMessage(m1));
  QVERIFY(hitIds(QStringLiteral("egg")).isEmpty());
  QVERIFY(hitIds(QStringLiteral("roughly")).isEmpty());
  RawDb raw(dbPath());
  QCOMPARE(raw.value(QStringLiteral("SELECT count(*) FROM message_search")).toInt(), 1);
  QVERIFY(raw.exec(QStringLiteral("INSERT INTO message_search(message_search, rank) VALUES ('integrity-check', 1)")));
}

void TestSessionStore::presetsAndModels() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  PresetStore presetStore(db);
  ModelHistoryStore models(db);
  QVERIFY(presetStore.savePreset(QStringLiteral("Creative"),
                                 {{QStringLiteral("temperature"), 1.2}, {QStringLiteral("topK"), 80}}));
  QVERIFY(presetStore.savePreset(QStringLiteral("exact"), {{QStringLiteral("temperature"), 0.0}}));
  QVERIFY(presetStore.savePreset(QStringLiteral("Creative"), {{QStringLiteral("temperature"), 1.1}}));  // replaces
  QVERIFY(!presetStore.savePreset(QStringLiteral("  "), {}));
  QList<StoredPreset> presets = presetStore.presets();
  QCOMPARE(presets.size(), 2);
  QCOMPARE(presets[0].name, QStringLiteral("Creative"));
  QCOMPARE(presets[0].settings.value(QStringLiteral("temperature")).toDouble(), 1.1);
  QVERIFY(!presets[0].settings.contains(QStringLiteral("topK")));
  QVERIFY(presetStore.deletePreset(QStringLiteral("exact")));
  QCOMPARE(presetStore.presets().size(), 1);

  RecentModel a{QStringLiteral("/models/a"),
                QStringLiteral("a"),
                QStringLiteral("GPT-2"),
                QStringLiteral("GGUF"),
                QStringLiteral("q8_0"),
                124000000,
                1024,
                0};
  RecentModel b = a;
  b.path = QStringLiteral("/models/b");
  b.name = QStringLiteral("b");
  QVERIFY(models.recordModel(a));
  QVERIFY(models.recordModel(b));
  QVERIFY(models.recordModel(a));  // opened again: first
  const QList<RecentModel> recent = models.recentModels();
  QCOMPARE(recent.size(), 2);
  QCOMPARE(recent[0].path, a.path);
  QCOMPARE(recent[0].weights, QStringLiteral("q8_0"));
  QCOMPARE(recent[0].parameterCount, 124000000);
  QCOMPARE(recent[0].contextLength, 1024);
  QVERIFY(recent[0].lastOpenedMs > 0);
  QVERIFY(models.forgetModel(b.path));
  QCOMPARE(models.recentModels().size(), 1);
}

void TestSessionStore::migratesFromVersion1() {
  // A database as schema 1 wrote it (written here by hand, not by the store), with a chat in it.
  {
    RawDb raw(dbPath());
    QVERIFY(raw.exec(QStringLiteral(
        "CREATE TABLE chats (id INTEGER PRIMARY KEY, title TEXT NOT NULL, system_prompt TEXT NOT NULL DEFAULT '',"
        " created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL, trashed_ms INTEGER,"
        " active_root_id INTEGER REFERENCES messages(id) ON DELETE SET NULL)")));
    QVERIFY(raw.exec(QStringLiteral(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE "
        "CASCADE,"
        " parent_id INTEGER REFERENCES messages(id), active_child_id INTEGER REFERENCES messages(id) ON DELETE SET "
        "NULL,"
        " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')), content TEXT NOT NULL,"
        " created_ms INTEGER NOT NULL, complete INTEGER NOT NULL DEFAULT 1, stats TEXT, settings TEXT)")));
    QVERIFY(raw.exec(QStringLiteral("INSERT INTO chats VALUES (7, 'Old chat', 'Be kind.', 1, 2, NULL, 70)")));
    QVERIFY(raw.exec(QStringLiteral(
        "INSERT INTO messages VALUES (70, 7, NULL, 71, 'user', 'what is a platypus', 1, 1, NULL, NULL)")));
    QVERIFY(
        raw.exec(QStringLiteral("INSERT INTO messages VALUES (71, 7, 70, NULL, 'assistant', 'A venomous monotreme.', "
                                "2, 1, '{\"generatedTokens\":5}', NULL)")));
    QVERIFY(raw.exec(QStringLiteral("PRAGMA user_version = 1")));
  }
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
  const StoredChat chat = store.chat(7);
  QCOMPARE(chat.title, QStringLiteral("Old chat"));
  QCOMPARE(chat.systemPrompt, QStringLiteral("Be kind."));
  const QList<StoredMessage> path = store.activePath(7);
  QCOMPARE(path.size(), 2);
  QCOMPARE(path[1].content, QStringLiteral("A venomous monotreme."));
  QCOMPARE(path[1].stats.value(QStringLiteral("generatedTokens")).toInt(), 5);
  // Old messages were indexed by the migration; new features work on old chats.
  QCOMPARE(store.search(QStringLiteral("monotreme")).size(), 1);
  QCOMPARE(store.search(QStringLiteral("platypus")).first().messageId, 70);
  QVERIFY(store.setChatFolder(7, QStringLiteral("Zoology")));
  QVERIFY(PresetStore(db).savePreset(QStringLiteral("p"), {}));
  // The pre-upgrade copy is there and still at version 1.
  const QString backup = dbPath() + QStringLiteral(".v1.bak");
  QVERIFY(QFile::exists(backup));
  RawDb old(backup);
  QCOMPARE(old.value(QStringLiteral("PRAGMA user_version")).toInt(), 1);
  QCOMPARE(old.value(QStringLiteral("SELECT content FROM messages WHERE id = 71")).toString(),
           QStringLiteral("A venomous monotreme."));
}

void TestSessionStore::refusesNewerSchema() {
  {
    RawDb raw(dbPath());
    QVERIFY(raw.exec(QStringLiteral("CREATE TABLE future (x)")));
    QVERIFY(raw.exec(QStringLiteral("PRAGMA user_version = 99")));
  }
  const QByteArray before = readAll(dbPath());
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::MemoryOnly);
  ChatStore store(db);
  QVERIFY2(db.problem().contains(QStringLiteral("newer version")), qPrintable(db.problem()));
  QVERIFY(db.problem().contains(QStringLiteral("will not be saved")));
  // The app still works, in memory; the file is untouched.
  const qint64 chat = store.createChat(QStringLiteral("scratch"));
  QVERIFY(chat > 0);
  QVERIFY(store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("hi")) > 0);
  db.close();
  QCOMPARE(readAll(dbPath()), before);
}

void TestSessionStore::corruptFileIsMovedAside_data() {
  QTest::addColumn<QString>("kind");
  QTest::newRow("not a database") << QStringLiteral("text");
  QTest::newRow("header damaged") << QStringLiteral("header");
  QTest::newRow("pages overwritten") << QStringLiteral("pages");
  QTest::newRow("truncated") << QStringLiteral("truncated");
}

void TestSessionStore::corruptFileIsMovedAside() {
  QFETCH(QString, kind);
  if (kind == QLatin1String("text")) {
    QVERIFY(writeFile(dbPath(), QByteArray("These are my notes, not a database.\n").repeated(200)));
  } else {
    {
      Database db;
      QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
      ChatStore store(db);
      const qint64 chat = store.createChat(QStringLiteral("soon damaged"));
      qint64 parent = 0;
      for (int i = 0; i < 60; ++i) parent = store.addMessage(chat, parent, QStringLiteral("user"), writerText(i));
    }
    {
      RawDb raw(dbPath());  // fold the WAL into the file, so the damage below is all there is
      QVERIFY(raw.exec(QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)")));
      QVERIFY(raw.exec(QStringLiteral("PRAGMA journal_mode=DELETE")));
    }
    QByteArray bytes = readAll(dbPath());
    QVERIFY(bytes.size() > 8 * 4096);
    if (kind == QLatin1String("header")) bytes.replace(0, 16, QByteArray(16, 'X'));
    else if (kind == QLatin1String("pages"))
      bytes.replace(4096, bytes.size() - 8192, QByteArray(bytes.size() - 8192, '\xff'));
    else bytes.truncate(bytes.size() / 2 + 100);
    QVERIFY(writeFile(dbPath(), bytes));
  }
  const QByteArray damaged = readAll(dbPath());
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Recovered);
  ChatStore store(db);
  QVERIFY2(db.problem().contains(QStringLiteral("damaged")) && db.problem().contains(db.movedAsidePath()),
           qPrintable(db.problem()));
  QCOMPARE(readAll(db.movedAsidePath()), damaged);  // kept, byte for byte, for recovery
  QVERIFY(db.isPersistent());
  QVERIFY(store.createChat(QStringLiteral("fresh")) > 0);
  QCOMPARE(store.chats().size(), 1);
  db.close();
  // The next start opens the fresh database normally.
  Database againDb;
  QCOMPARE(againDb.open(dbPath()), Database::OpenState::Ok);
  ChatStore again(againDb);
  QCOMPARE(again.chats().size(), 1);
}

void TestSessionStore::readOnlyFile() {
  {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ChatStore store(db);
    QVERIFY(store.createChat(QStringLiteral("existing")) > 0);
  }
  QVERIFY(QFile::setPermissions(dbPath(), QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther));
  const QByteArray before = readAll(dbPath());
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::MemoryOnly);
  ChatStore store(db);
  QVERIFY2(db.problem().contains(QStringLiteral("read-only")), qPrintable(db.problem()));
  QVERIFY(!db.isPersistent());
  QVERIFY(store.createChat(QStringLiteral("in memory")) > 0);  // the app keeps working
  db.close();
  QCOMPARE(readAll(dbPath()), before);
  QFile::setPermissions(dbPath(), QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

void TestSessionStore::lockedAtOpen() {
  {
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ChatStore store(db);
  }
  RawDb other(dbPath());  // another program holding the write lock
  QVERIFY(other.exec(QStringLiteral("BEGIN EXCLUSIVE")));
  QVERIFY(other.exec(QStringLiteral("INSERT INTO presets VALUES ('held', '{}', 0)")));
  Database db;
  ChatStore store(db);
  QElapsedTimer timer;
  timer.start();
  QCOMPARE(db.open(dbPath(), 300), Database::OpenState::MemoryOnly);
  QVERIFY(timer.elapsed() >= 250);  // it waited for the lock, then gave up
  QVERIFY2(db.problem().contains(QStringLiteral("locked")), qPrintable(db.problem()));
  QVERIFY(store.createChat(QStringLiteral("scratch")) > 0);
  QVERIFY(other.exec(QStringLiteral("ROLLBACK")));
}

void TestSessionStore::lockedDuringWrite() {
  Database db;
  QCOMPARE(db.open(dbPath(), 300), Database::OpenState::Ok);
  ChatStore store(db);
  const qint64 chat = store.createChat(QStringLiteral("busy"));
  QSignalSpy failed(&db, &Database::writeFailed);
  RawDb other(dbPath());
  QVERIFY(other.exec(QStringLiteral("BEGIN IMMEDIATE")));
  QVERIFY(other.exec(QStringLiteral("INSERT INTO presets VALUES ('held', '{}', 0)")));
  QCOMPARE(store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("while locked")), 0);
  QCOMPARE(failed.count(), 1);
  QVERIFY2(db.lastError().contains(QStringLiteral("locked")), qPrintable(db.lastError()));
  // Reads still work under WAL while another connection writes.
  QCOMPARE(store.chats().size(), 1);
  QVERIFY(other.exec(QStringLiteral("COMMIT")));
  const qint64 id = store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("after the lock"));
  QVERIFY(id > 0);
  QVERIFY(db.lastError().isEmpty());
  QCOMPARE(store.activePath(chat).size(), 1);
  QCOMPARE(PresetStore(db).presets().size(), 1);
}

void TestSessionStore::sigkillLosesNoCommittedMessage() {
  int lastAcked = -1;
  for (int round = 0; round < 6; ++round) {
    QProcess child;
    child.setProcessChannelMode(QProcess::SeparateChannels);
    child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--writer"), dbPath()});
    QVERIFY(child.waitForStarted());
    // Kill after a random number of acknowledged commits, mid-stream of the next ones.
    const int killAfter = 5 + int(QRandomGenerator::global()->bounded(60));
    int acked = 0;
    QByteArray buffer;
    QElapsedTimer timer;
    timer.start();
    while (acked < killAfter && timer.elapsed() < 30000) {
      child.waitForReadyRead(1000);
      buffer += child.readAllStandardOutput();
      int nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const QByteArray line = buffer.left(nl);
        buffer.remove(0, nl + 1);
        bool ok = false;
        const int n = line.toInt(&ok);
        if (ok) {
          QVERIFY2(n == lastAcked + 1, qPrintable(QStringLiteral("ack %1 after %2").arg(n).arg(lastAcked)));
          lastAcked = n;
          ++acked;
        }
      }
      QVERIFY2(child.state() == QProcess::Running, child.readAllStandardError().constData());
    }
    QVERIFY(acked >= killAfter);
    child.kill();  // SIGKILL
    QVERIFY(child.waitForFinished());
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);

    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ChatStore store(db);
    QVERIFY(db.quickCheck());
    const QList<StoredChat> chats = store.chats();
    QCOMPARE(chats.size(), 1);
    const QList<StoredMessage> path = store.activePath(chats.first().id);
    // Every acknowledged message is there, whole and in order; at most one more (committed, not yet
    // acknowledged when the kill came).
    QVERIFY2(path.size() == lastAcked + 1 || path.size() == lastAcked + 2,
             qPrintable(QStringLiteral("%1 messages, last ack %2").arg(path.size()).arg(lastAcked)));
    for (int i = 0; i < path.size(); ++i) QCOMPARE(path[i].content, writerText(i));
    lastAcked = int(path.size()) - 1;  // the next child continues after what is stored
  }
  RawDb raw(dbPath());
  QCOMPARE(raw.value(QStringLiteral("PRAGMA integrity_check")).toString(), QStringLiteral("ok"));
}

namespace {

// A small but complete inspection (1 layer, 1 head, 2 tokens), as a snapshot's bytes.
QByteArray snapshotBytes(int32_t first) {
  engine::Inspection in;
  in.n_layer = 1;
  in.n_head = 1;
  in.T = 2;
  in.top_k = 1;
  in.lens_rows = 1;
  in.ids = {first, 7};
  in.attention = {1.0f, 0.0f, 0.25f, 0.75f};
  in.lens_ids = {7, 9};
  in.lens_probs = {0.5f, 0.125f};
  in.token_logprob = {0.0f, -1.5f};
  in.pieces = {{first, "a"}, {7, "b"}, {9, "c"}};
  const std::string blob = engine::serialize_inspection(in);
  return QByteArray(blob.data(), static_cast<qsizetype>(blob.size()));
}

}  // namespace

void TestSessionStore::inspectionsRoundTripAndCascade() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  InspectionStore inspections(db);
  const qint64 chat = store.createChat(QStringLiteral("c"));
  const qint64 user = store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("hi"));
  const qint64 reply = store.addMessage(chat, user, QStringLiteral("assistant"), QStringLiteral("hello"));
  QCOMPARE(inspections.inspectionFor(reply).id, 0);  // none yet

  const QByteArray first = snapshotBytes(3), second = snapshotBytes(4);
  const qint64 a = inspections.saveInspection(reply, first, QStringLiteral("tiny"), 2);
  const qint64 b = inspections.saveInspection(reply, second, QStringLiteral("tiny-2"), 2);
  QVERIFY(a > 0 && b > a);
  QVERIFY(inspections.saveInspection(user, first) > 0);
  // The newest one, bytes exact (a BLOB, not text: the snapshot holds zero bytes).
  const StoredInspection got = inspections.inspectionFor(reply);
  QCOMPARE(got.id, b);
  QCOMPARE(got.messageId, reply);
  QCOMPARE(got.blob, second);
  QCOMPARE(got.model, QStringLiteral("tiny-2"));
  QCOMPARE(got.tokenCount, 2);
  QVERIFY(got.createdMs > 0);
  QVERIFY(second.contains('\0'));

  // A snapshot for a message that does not exist is refused (foreign key), with a reason.
  QSignalSpy failed(&db, &Database::writeFailed);
  QCOMPARE(inspections.saveInspection(reply + 1000, first), 0);
  QCOMPARE(failed.count(), 1);
  QVERIFY(db.lastError().startsWith(QStringLiteral("Could not save the inspection")));
  QCOMPARE(inspections.saveInspection(reply, QByteArray()), 0);

  // Deleting the reply deletes its snapshots; the user message keeps its own.
  QVERIFY(store.deleteMessage(reply));
  QCOMPARE(inspections.inspectionFor(reply).id, 0);
  QCOMPARE(inspections.inspectionFor(user).blob, first);
  {
    RawDb raw(dbPath());
    QCOMPARE(raw.value(QStringLiteral("SELECT count(*) FROM inspections")).toInt(), 1);
  }
  // Deleting the chat (trash, then purge) deletes the rest.
  QVERIFY(store.trashChat(chat));
  QVERIFY(store.purgeTrash());
  QCOMPARE(inspections.inspectionFor(user).id, 0);
  RawDb raw(dbPath());
  QCOMPARE(raw.value(QStringLiteral("SELECT count(*) FROM inspections")).toInt(), 0);
  QVERIFY(db.quickCheck());
}

void TestSessionStore::inspectionsMigrateFromVersion4() {
  qint64 chat = 0, user = 0;
  {
    // A real step-4 database: the current schema with steps 5 and later undone by hand.
    Database db;
    QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
    ChatStore store(db);
    chat = store.createChat(QStringLiteral("Kept"), QStringLiteral("sys"));
    user = store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("still here"));
    StoredRun run;
    run.name = QStringLiteral("r");
    run.recipe = QStringLiteral("pretrain");
    run.modelPath = QStringLiteral("/m");
    run.status = QStringLiteral("done");
    QVERIFY(RunStore(db).createRun(run) > 0);
  }
  {
    RawDb raw(dbPath());
    QVERIFY(raw.exec(QStringLiteral("DROP TABLE server_requests")));
    QVERIFY(raw.exec(QStringLiteral("DROP TABLE api_keys")));
    QVERIFY(raw.exec(QStringLiteral("DROP TABLE run_completions")));
    QVERIFY(raw.exec(QStringLiteral("DROP TABLE run_metric_values")));
    QVERIFY(raw.exec(QStringLiteral("DROP TABLE preference_pairs")));
    QVERIFY(raw.exec(QStringLiteral("DROP TABLE inspections")));
    QVERIFY(raw.exec(QStringLiteral("PRAGMA user_version = 4")));
  }
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  QCOMPARE(db.schemaVersion(), Database::latestSchemaVersion());
  QCOMPARE(store.chat(chat).title, QStringLiteral("Kept"));
  QCOMPARE(store.activePath(chat).size(), 1);
  QCOMPARE(store.activePath(chat).first().content, QStringLiteral("still here"));
  QCOMPARE(RunStore(db).runs().size(), 1);
  QVERIFY(InspectionStore(db).saveInspection(user, snapshotBytes(1)) > 0);
  QVERIFY(QFile::exists(dbPath() + QStringLiteral(".v4.bak")));
  RawDb old(dbPath() + QStringLiteral(".v4.bak"));
  QCOMPARE(old.value(QStringLiteral("PRAGMA user_version")).toInt(), 4);
}

void TestSessionStore::damagedInspectionIsRefusedWhenOpened() {
  Database db;
  QCOMPARE(db.open(dbPath()), Database::OpenState::Ok);
  ChatStore store(db);
  InspectionStore inspections(db);
  const qint64 chat = store.createChat(QStringLiteral("c"));
  const qint64 user = store.addMessage(chat, 0, QStringLiteral("user"), QStringLiteral("hi"));
  QByteArray blob = snapshotBytes(3);
  blob.chop(5);  // the store keeps bytes as given; the reader is what checks them
  QVERIFY(inspections.saveInspection(user, blob) > 0);
  const QByteArray back = inspections.inspectionFor(user).blob;
  QCOMPARE(back, blob);
  try {
    engine::deserialize_inspection(std::string_view(back.constData(), static_cast<size_t>(back.size())),
                                   "saved inspection");
    QFAIL("a cut snapshot was accepted");
  } catch (const engine::Error& e) {
    QVERIFY2(QString::fromUtf8(e.what()).startsWith(QStringLiteral("saved inspection: ")), e.what());
  }
  // The store is unharmed.
  QVERIFY(db.quickCheck());
  QCOMPARE(store.activePath(chat).size(), 1);
}

int main(int argc, char** argv) {
  if (argc == 3 && qstrcmp(argv[1], "--writer") == 0) {
    QCoreApplication app(argc, argv);
    return runWriter(QString::fromLocal8Bit(argv[2]));
  }
  QCoreApplication app(argc, argv);
  TestSessionStore test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_session_store.moc"
