// The whole desktop app killed with SIGKILL while it writes a chat reply: "killing the app with
// SIGKILL during generation loses nothing but the partial reply in flight" (issue 4).
//
// The real executable runs on the offscreen platform with the starter model, a throwaway database
// (WB_SESSION_DB) and throwaway settings (XDG_CONFIG_HOME); its test hook WB_TEST_AUTOSEND keeps a
// reply always being written (app/testhooks.h). The test waits until the database holds part of a
// reply, kills the process, and checks that every earlier chat and message is exactly as it was,
// the file passes integrity_check, and the reply in flight is kept, marked incomplete. Then the app
// starts again on the same database and opens it without a problem. Nothing is timed: every wait is
// a generous poll, so a loaded machine only makes the test slower.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <memory>

#include "services/chatcontroller.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "services/store/inspectionstore.h"

namespace {

const QString kStarter = QStringLiteral(WB_BUILD_DATADIR "/models/starter");

// One read of the database through its own connection (the app may be writing it meanwhile: WAL
// lets a reader in). Each row's columns joined with " | ".
QStringList rows(const QString& path, const QString& sql) {
  static int connections = 0;
  const QString name = QStringLiteral("kill-test-%1").arg(++connections);
  QStringList out;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=10000"));
    if (db.open()) {
      QSqlQuery q(db);
      if (q.exec(sql)) {
        while (q.next()) {
          QStringList cols;
          for (int i = 0; i < q.record().count(); ++i) cols << q.value(i).toString();
          out << cols.join(QStringLiteral(" | "));
        }
      } else {
        qWarning("%s: %s", qPrintable(sql), qPrintable(q.lastError().text()));
      }
    }
  }
  QSqlDatabase::removeDatabase(name);
  return out;
}

// Everything a chat is made of, for exact before/after comparisons.
const QString kChatRows = QStringLiteral(
    "SELECT id, title, system_prompt, created_ms, updated_ms, trashed_ms, active_root_id, folder_id FROM chats ORDER "
    "BY id");
const QString kMessageRows = QStringLiteral(
    "SELECT id, chat_id, parent_id, active_child_id, role, content, created_ms, complete, stats, settings FROM messages"
    " ORDER BY id");
const QString kTagRows = QStringLiteral("SELECT chat_id, tag FROM chat_tags ORDER BY chat_id, tag");

}  // namespace

class TestAppKill : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void killDuringGenerationLosesOnlyTheReplyInFlight();

 private:
  std::unique_ptr<QProcess> startApp(const QProcessEnvironment& extra);
  QTemporaryDir m_dir;
  QString m_db;
};

void TestAppKill::initTestCase() {
  QVERIFY(m_dir.isValid());
  QVERIFY2(QFile::exists(QStringLiteral(WB_APP_PATH)), WB_APP_PATH);
  // The starter model is made by the build (resources/); a partial build may not have it.
  if (!QFile::exists(kStarter + QStringLiteral("/config.json"))) QSKIP("starter model not built");
  m_db = m_dir.filePath(QStringLiteral("sessions.db"));
}

std::unique_ptr<QProcess> TestAppKill::startApp(const QProcessEnvironment& extra) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.insert(QStringLiteral("QT_QUICK_BACKEND"), QStringLiteral("software"));  // no GPU context offscreen
  env.insert(QStringLiteral("WB_SESSION_DB"), m_db);
  // Settings (last model, window geometry, theme) of the test's own, never the user's.
  env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_dir.filePath(QStringLiteral("config")));
  env.insert(QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data")));
  env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
  env.remove(QStringLiteral("WB_TEST_AUTOSEND"));
  env.remove(QStringLiteral("WB_TEST_QUIT_WHEN_READY"));
  for (const QString& key : extra.keys()) env.insert(key, extra.value(key));
  auto app = std::make_unique<QProcess>();
  app->setProcessEnvironment(env);
  app->start(QStringLiteral(WB_APP_PATH), {QStringLiteral("--model"), kStarter});
  return app;
}

void TestAppKill::killDuringGenerationLosesOnlyTheReplyInFlight() {
  // Earlier work: chats with branches, a system prompt, a folder, tags, and a reply that stopped.
  qint64 lastSeeded = 0;
  {
    Database db;
    QCOMPARE(db.open(m_db), Database::OpenState::Ok);
    ChatStore store(db);
    const qint64 a = store.createChat(QStringLiteral("Sea stories"), QStringLiteral("You tell short stories."));
    const qint64 q1 = store.addMessage(a, 0, QStringLiteral("user"), QStringLiteral("A story about a boat"));
    store.addMessage(a, q1, QStringLiteral("assistant"), QStringLiteral("The boat sailed at dawn."), true,
                     {{QStringLiteral("generatedTokens"), 6}}, {{QStringLiteral("temperature"), 0.8}});
    store.addMessage(a, q1, QStringLiteral("assistant"), QStringLiteral("A small boat, a big sea."));
    const qint64 b = store.createChat(QStringLiteral("Plans"));
    const qint64 q2 = store.addMessage(b, 0, QStringLiteral("user"), QStringLiteral("Plan my week"));
    lastSeeded = store.addMessage(b, q2, QStringLiteral("assistant"), QStringLiteral("Monday: rest"), false);
    QVERIFY(store.setChatFolder(b, QStringLiteral("Work")));
    QVERIFY(store.setChatTags(a, {QStringLiteral("fiction"), QStringLiteral("sea")}));
    QVERIFY(lastSeeded > 0);
  }
  const QString seededOnly = QStringLiteral(" WHERE id <= %1").arg(lastSeeded);
  const QStringList chatsBefore = rows(m_db, kChatRows);
  const QStringList messagesBefore =
      rows(m_db, QString(kMessageRows).replace(QStringLiteral(" ORDER BY"), seededOnly + QStringLiteral(" ORDER BY")));
  const QStringList tagsBefore = rows(m_db, kTagRows);
  QCOMPARE(messagesBefore.size(), 5);

  QProcessEnvironment autosend;
  autosend.insert(QStringLiteral("WB_TEST_AUTOSEND"), QStringLiteral("Once upon a time"));
  std::unique_ptr<QProcess> app = startApp(autosend);
  QVERIFY2(app->waitForStarted(60000), qPrintable(app->errorString()));

  // Wait for part of a reply in the file: a reply row, incomplete, with text (flushed every 250 ms).
  const QString inFlightSql =
      QStringLiteral(
          "SELECT id, content FROM messages WHERE role = 'assistant' AND complete = 0 AND content <> '' AND id > %1")
          .arg(lastSeeded);
  QStringList inFlight;
  QElapsedTimer waited;
  waited.start();
  while (inFlight.isEmpty() && app->state() == QProcess::Running && waited.elapsed() < 300000) {
    QTest::qWait(25);
    if (QFile::exists(m_db)) inFlight = rows(m_db, inFlightSql);
  }
  QVERIFY2(app->state() == QProcess::Running,
           qPrintable(
               QStringLiteral("the app ended early: %1").arg(QString::fromLocal8Bit(app->readAllStandardError()))));
  QVERIFY2(!inFlight.isEmpty(), "no partial reply reached the database");
  // What the file held just before the kill: every complete message must survive it unchanged.
  const QStringList completeBeforeKill =
      rows(m_db, QStringLiteral("SELECT id, chat_id, content FROM messages WHERE complete = 1 ORDER BY id"));
  const qint64 seenId = inFlight.first().section(QStringLiteral(" | "), 0, 0).toLongLong();
  const QString seenText = inFlight.first().section(QStringLiteral(" | "), 1);

  QCOMPARE(::kill(static_cast<pid_t>(app->processId()), SIGKILL), 0);
  QVERIFY(app->waitForFinished(60000));
  QCOMPARE(app->exitStatus(), QProcess::CrashExit);
  app.reset();

  {
    Database db;
    QCOMPARE(db.open(m_db), Database::OpenState::Ok);  // not "recovered": the file was fine
    QVERIFY(db.problem().isEmpty());
    QVERIFY(db.quickCheck());
  }
  QCOMPARE(rows(m_db, QStringLiteral("PRAGMA integrity_check")), QStringList{QStringLiteral("ok")});
  QCOMPARE(rows(m_db, QStringLiteral("PRAGMA foreign_key_check")), QStringList{});

  // The earlier chats, messages and tags exactly as they were.
  const QStringList chatsAfter = rows(m_db, kChatRows);
  QCOMPARE(chatsAfter.mid(0, chatsBefore.size()), chatsBefore);
  QCOMPARE(rows(m_db,
                QString(kMessageRows).replace(QStringLiteral(" ORDER BY"), seededOnly + QStringLiteral(" ORDER BY"))),
           messagesBefore);
  QCOMPARE(rows(m_db, kTagRows), tagsBefore);
  // Every message that was complete before the kill still is, with the same text.
  const QStringList completeAfter =
      rows(m_db, QStringLiteral("SELECT id, chat_id, content FROM messages WHERE complete = 1 ORDER BY id"));
  for (const QString& row : completeBeforeKill) QVERIFY2(completeAfter.contains(row), qPrintable(row));
  QVERIFY(chatsAfter.size() > chatsBefore.size());  // the app's own chats are there too

  // The reply seen in flight is kept: as written up to the last flush, still marked incomplete
  // unless it had just finished (then the next one is the one in flight). Only the reply in flight
  // is incomplete, besides the one stopped in the seeded chat.
  const QStringList seen =
      rows(m_db, QStringLiteral("SELECT complete, content FROM messages WHERE id = %1").arg(seenId));
  QCOMPARE(seen.size(), 1);
  QVERIFY(seen.first().section(QStringLiteral(" | "), 1).startsWith(seenText));
  const QStringList incomplete =
      rows(m_db, QStringLiteral("SELECT id FROM messages WHERE complete = 0 AND id > %1").arg(lastSeeded));
  QVERIFY2(incomplete.size() <= 1, qPrintable(incomplete.join(QLatin1Char(','))));
  if (seen.first().startsWith(QLatin1Char('0'))) QCOMPARE(incomplete, QStringList{QString::number(seenId)});

  // The chat view shows the reply in flight as incomplete, at the end of its chat.
  if (!incomplete.isEmpty()) {
    Database db;
    QCOMPARE(db.open(m_db), Database::OpenState::Ok);
    ChatStore store(db);
    InspectionStore inspections(db);
    ChatController chat(&store, &inspections);
    const StoredMessage reply = store.message(incomplete.first().toLongLong());
    chat.selectChat(reply.chatId);
    const ChatMessageModel* messages = chat.messages();
    QCOMPARE(messages->rowCount(), 2);
    QCOMPARE(messages->rowAt(1).message.id, reply.id);
    QVERIFY(!messages->rowAt(1).message.complete);
    QCOMPARE(messages->rowAt(0).message.content, QStringLiteral("Once upon a time"));
  }
  qInfo("killed with %lld messages saved; reply %lld was in flight (%lld characters saved)",
        qlonglong(completeAfter.size()), incomplete.isEmpty() ? 0ll : incomplete.first().toLongLong(),
        incomplete.isEmpty()
            ? 0ll
            : qlonglong(
                  rows(m_db,
                       QStringLiteral("SELECT length(content) FROM messages WHERE id = %1").arg(incomplete.first()))
                      .value(0)
                      .toLongLong()));
  const QStringList afterKill = rows(m_db, kMessageRows);

  // The app starts again on this database and opens it without a problem; opening changes nothing.
  QProcessEnvironment quit;
  quit.insert(QStringLiteral("WB_TEST_QUIT_WHEN_READY"), QStringLiteral("1"));
  app = startApp(quit);
  QVERIFY2(app->waitForStarted(60000), qPrintable(app->errorString()));
  QVERIFY(app->waitForFinished(300000));
  const QString out = QString::fromLocal8Bit(app->readAllStandardOutput());
  QVERIFY2(app->exitStatus() == QProcess::NormalExit && app->exitCode() == 0,
           qPrintable(QString::fromLocal8Bit(app->readAllStandardError())));
  QVERIFY2(out.contains(QStringLiteral("ready model=starter chats=%1 problem=\n").arg(chatsAfter.size())),
           qPrintable(out));
  QCOMPARE(rows(m_db, kMessageRows), afterKill);
  QCOMPARE(rows(m_db, QStringLiteral("PRAGMA integrity_check")), QStringList{QStringLiteral("ok")});
}

QTEST_GUILESS_MAIN(TestAppKill)
#include "test_app_kill.moc"
