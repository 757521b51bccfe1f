// "Inspect" on a chat message, through the real AppController, EngineWorker thread and stores:
// the first Inspect runs the model on the chat up to and including the message, tokenized as the
// model reads it (checked against the engine's own template render + encode_chat, computed here
// outside the app) and saves the snapshot with the message; the second is served from the store
// without asking the worker; a damaged snapshot is refused with a clear error and the app carries on.
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "engine/chat_template.h"
#include "engine/inspect/snapshot.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "services/appcontroller.h"
#include "services/inspectiontypes.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "services/store/inspectionstore.h"
#include "support/tiny_text_model.h"

class TestChatInspect : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void cleanupTestCase();
  void firstInspectRunsTheModelAndSaves();
  void secondInspectComesFromTheStore();
  void userMessageReadsWithTheGenerationPrompt();
  void damagedSnapshotIsRefusedAndTheAppCarriesOn();
  void deletingTheMessageDeletesItsSnapshot();

 private:
  // The ids the model reads for `turns` (+ a reply's text), via the engine API directly.
  std::vector<int32_t> expectedIds(const QList<ChatTurn>& turns, const QString& continuation) const;
  // Inspects a message and waits for the newest inspection; returns it (null on failure).
  InspectionPtr inspect(qint64 messageId);

  QTemporaryDir m_dir;
  QString m_modelPath;
  std::unique_ptr<engine::Model> m_model;  // the same files, loaded outside the app
  std::unique_ptr<AppController> m_app;
  qint64 m_chatId = 0, m_userId = 0, m_replyId = 0;
};

void TestChatInspect::initTestCase() {
  QStandardPaths::setTestModeEnabled(true);
  QSettings().clear();
  QVERIFY(m_dir.isValid());
  qputenv("WB_DATA_DIR", m_dir.filePath(QStringLiteral("share")).toUtf8());
  const QString db = m_dir.filePath(QStringLiteral("session.db"));
  qputenv("WB_SESSION_DB", db.toUtf8());
  m_modelPath = m_dir.filePath(QStringLiteral("tiny"));
  writeTinyTextModel(m_modelPath, 11, 128);
  m_model = engine::load_model(m_modelPath.toStdString());

  // The chat is in the database before the app starts (the app opens the newest chat).
  {
    Database database;
    QCOMPARE(database.open(db), Database::OpenState::Ok);
    ChatStore store(database);
    m_chatId = store.createChat(QStringLiteral("Platypus"), QStringLiteral("Be brief."));
    m_userId = store.addMessage(m_chatId, 0, QStringLiteral("user"), QStringLiteral("what is a platypus"));
    m_replyId =
        store.addMessage(m_chatId, m_userId, QStringLiteral("assistant"), QStringLiteral("a venomous monotreme"));
    QVERIFY(m_replyId > 0);
  }
  m_app = std::make_unique<AppController>();
  QSignalSpy changed(m_app.get(), &AppController::modelChanged);
  m_app->start(m_modelPath);
  QTRY_VERIFY_WITH_TIMEOUT(m_app->hasModel(), 20000);
  QCOMPARE(m_app->chat()->currentChatId(), m_chatId);
  QCOMPARE(m_app->chat()->messages()->rows().size(), 2);
}

void TestChatInspect::cleanupTestCase() { m_app.reset(); }

std::vector<int32_t> TestChatInspect::expectedIds(const QList<ChatTurn>& turns, const QString& continuation) const {
  std::vector<engine::ChatMessage> messages;
  for (const ChatTurn& t : turns) messages.push_back({t.role.toStdString(), t.content.toStdString()});
  const engine::RenderedChat rendered = m_model->chat_template().render(messages, /*add_generation_prompt=*/true);
  std::vector<int32_t> ids = engine::encode_chat(*m_model->tokenizer(), rendered, messages);
  const std::vector<int32_t> more = m_model->tokenizer()->encode(continuation.toStdString(), false);
  ids.insert(ids.end(), more.begin(), more.end());
  return ids;
}

InspectionPtr TestChatInspect::inspect(qint64 messageId) {
  QSignalSpy changed(m_app.get(), &AppController::inspectionChanged);
  if (!m_app->chat()->inspectMessage(messageId)) return {};
  if (changed.isEmpty() && !changed.wait(20000)) return {};
  return inspectionFrom(m_app->inspection());
}

void TestChatInspect::firstInspectRunsTheModelAndSaves() {
  QSignalSpy asked(m_app.get(), &AppController::inspectChatRequested);
  const InspectionPtr in = inspect(m_replyId);
  QVERIFY2(in, qPrintable(m_app->inspectError()));
  QCOMPARE(asked.count(), 1);
  // A reply is read as the model produced it: the chat before it with the generation prompt, then its text.
  const std::vector<int32_t> want = expectedIds({{QStringLiteral("system"), QStringLiteral("Be brief.")},
                                                 {QStringLiteral("user"), QStringLiteral("what is a platypus")}},
                                                QStringLiteral("a venomous monotreme"));
  QCOMPARE(in->ids, want);
  QCOMPARE(in->T, static_cast<int>(want.size()));
  QVERIFY(!in->attention.empty());
  QVERIFY2(m_app->inspectSource().contains(QStringLiteral("a venomous monotreme")), qPrintable(m_app->inspectSource()));

  // Saved with the message, in a second connection's view of the file.
  Database otherDb;
  otherDb.open(qEnvironmentVariable("WB_SESSION_DB"));
  InspectionStore other(otherDb);
  const StoredInspection saved = other.inspectionFor(m_replyId);
  QVERIFY(saved.id > 0);
  QCOMPARE(saved.tokenCount, in->T);
  QCOMPARE(saved.model, m_app->modelName());
  const engine::Inspection back =
      engine::deserialize_inspection(std::string_view(saved.blob.constData(), static_cast<size_t>(saved.blob.size())));
  QCOMPARE(back.ids, in->ids);
  // Attention is stored as u16 fixed point (snapshot.h): within 7.7e-6 of what was computed.
  QCOMPARE(back.attention.size(), in->attention.size());
  for (size_t i = 0; i < back.attention.size(); ++i) QVERIFY(std::fabs(back.attention[i] - in->attention[i]) <= 8e-6f);
  QCOMPARE(back.token_logprob, in->token_logprob);
}

void TestChatInspect::secondInspectComesFromTheStore() {
  QSignalSpy asked(m_app.get(), &AppController::inspectChatRequested);
  QSignalSpy changed(m_app.get(), &AppController::inspectionChanged);
  QVERIFY(m_app->chat()->inspectMessage(m_replyId));
  // At once: no worker request, nothing running, the inspection already replaced.
  QCOMPARE(changed.count(), 1);
  QCOMPARE(asked.count(), 0);
  QVERIFY(!m_app->inspecting());
  QVERIFY2(m_app->inspectSource().contains(QStringLiteral("saved")), qPrintable(m_app->inspectSource()));
  const InspectionPtr in = inspectionFrom(m_app->inspection());
  QVERIFY(in);
  QCOMPARE(in->ids, expectedIds({{QStringLiteral("system"), QStringLiteral("Be brief.")},
                                 {QStringLiteral("user"), QStringLiteral("what is a platypus")}},
                                QStringLiteral("a venomous monotreme")));
}

void TestChatInspect::userMessageReadsWithTheGenerationPrompt() {
  const InspectionPtr in = inspect(m_userId);
  QVERIFY2(in, qPrintable(m_app->inspectError()));
  QCOMPARE(in->ids, expectedIds({{QStringLiteral("system"), QStringLiteral("Be brief.")},
                                 {QStringLiteral("user"), QStringLiteral("what is a platypus")}},
                                {}));
  // Each message keeps its own snapshot.
  Database otherDb;
  otherDb.open(qEnvironmentVariable("WB_SESSION_DB"));
  InspectionStore other(otherDb);
  QVERIFY(other.inspectionFor(m_userId).id > 0);
  QVERIFY(other.inspectionFor(m_userId).id != other.inspectionFor(m_replyId).id);
}

void TestChatInspect::damagedSnapshotIsRefusedAndTheAppCarriesOn() {
  const InspectionPtr before = inspectionFrom(m_app->inspection());
  {
    Database otherDb;
    otherDb.open(qEnvironmentVariable("WB_SESSION_DB"));
    InspectionStore other(otherDb);
    const StoredInspection good = other.inspectionFor(m_replyId);
    QByteArray bad = good.blob.left(good.blob.size() / 2);  // cut in half
    QVERIFY(other.saveInspection(m_replyId, bad) > 0);      // the newest is the damaged one
  }
  QSignalSpy asked(m_app.get(), &AppController::inspectChatRequested);
  QVERIFY(m_app->chat()->inspectMessage(m_replyId));
  QCOMPARE(asked.count(), 0);
  QVERIFY2(m_app->inspectError().contains(QStringLiteral("message %1").arg(m_replyId)),
           qPrintable(m_app->inspectError()));
  QCOMPARE(inspectionFrom(m_app->inspection()), before);  // what was shown stays
  // The app still works: another message inspects from its own snapshot.
  QVERIFY(inspect(m_userId));
  QVERIFY(m_app->inspectError().isEmpty());
}

void TestChatInspect::deletingTheMessageDeletesItsSnapshot() {
  m_app->chat()->deleteMessage(m_replyId);
  Database otherDb;
  otherDb.open(qEnvironmentVariable("WB_SESSION_DB"));
  InspectionStore other(otherDb);
  QCOMPARE(other.inspectionFor(m_replyId).id, 0);
  QVERIFY(other.inspectionFor(m_userId).id > 0);
  // Not in the chat any more: refused with a reason, nothing runs.
  QVERIFY(!m_app->chat()->inspectMessage(m_replyId));
  QVERIFY(!m_app->chat()->lastError().isEmpty());
}

QTEST_MAIN(TestChatInspect)
#include "test_chat_inspect.moc"
