// ChatController against a fake engine: the fake records each generation request and answers with
// pieces of text and a result, as the EngineWorker does. Both item models run under
// QAbstractItemModelTester the whole time; the store underneath is a real SQLite file.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <memory>

#include "services/chatcontroller.h"
#include "support/fake_chat_engine.h"
#include "services/chatexport.h"
#include "services/longmessage.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"
#include "services/store/inspectionstore.h"

namespace {

QStringList contents(const ChatMessageModel& m) {
  QStringList out;
  for (const auto& r : m.rows()) out << r.message.content;
  return out;
}

QVariant roleValue(const QAbstractItemModel& m, int row, const char* name) {
  const QHash<int, QByteArray> names = m.roleNames();
  return m.data(m.index(row, 0), names.key(name));
}

// Ids of the messages on the active path.
QList<qint64> ids(const ChatMessageModel& m) {
  QList<qint64> out;
  for (const auto& r : m.rows()) out << r.message.id;
  return out;
}

}  // namespace

class TestChatController : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init();
  void cleanup();
  void sendStreamsAndPersists();
  void systemPromptLeadsTheTurns();
  void regenerateMakesSiblingsWithArrows();
  void editBranches();
  void continueAppendsToTheReply();
  void stopAndFailures();
  void busyWhileGenerating();
  void deleteWithUndo();
  void deleteMessageWithUndo();
  void messageUndoEndsWithTheNextMessage();
  void tagFilter();
  void searchHitOpensAndHighlightsTheMessage();
  void renameSearchAndFolders();
  void contextUseAndWarnings();
  void exportAndImport();
  void importRejectsBadFiles_data();
  void importRejectsBadFiles();
  void interruptedReplyShowsAfterRestart();
  void markdownBlocksSplitCode_data();
  void storageProblemIsShownAndChatStillWorks();
  void saveInFlightWritesAtOnce();
  void newestFirstFollowsTheMessages();
  void maxTokensFollowsTheModelUntilChosen();
  void changedSettingsRoundTrip();
  void turnsLeftOutAreNotedOnTheReply();
  void markdownBlocksSplitCode();
  void longMessageCutsAtABreak_data();
  void longMessageCutsAtABreak();
  void longMessageBlocksKeepTheirKind();
  void longMessagesShowCutUntilExpanded();

 private:
  Database::OpenState openStores(const QString& path);
  void makeController();
  std::unique_ptr<QTemporaryDir> m_dir;
  std::unique_ptr<Database> m_db;
  std::unique_ptr<ChatStore> m_store;
  std::unique_ptr<InspectionStore> m_inspections;
  std::unique_ptr<ChatController> m_chat;
  std::unique_ptr<FakeChatEngine> m_engine;
  std::unique_ptr<QAbstractItemModelTester> m_listTester, m_messageTester, m_newestFirstTester;
};

void TestChatController::init() {
  m_dir = std::make_unique<QTemporaryDir>();
  QCOMPARE(openStores(m_dir->filePath(QStringLiteral("chats.db"))), Database::OpenState::Ok);
  makeController();
}

Database::OpenState TestChatController::openStores(const QString& path) {
  m_db = std::make_unique<Database>();
  const Database::OpenState state = m_db->open(path);
  m_store = std::make_unique<ChatStore>(*m_db);
  m_inspections = std::make_unique<InspectionStore>(*m_db);
  return state;
}

void TestChatController::makeController() {
  m_newestFirstTester.reset();
  m_messageTester.reset();
  m_listTester.reset();
  m_engine.reset();
  m_chat = std::make_unique<ChatController>(m_store.get(), m_inspections.get());
  m_chat->setFlushInterval(40);
  m_engine = std::make_unique<FakeChatEngine>(m_chat.get());
  m_listTester = std::make_unique<QAbstractItemModelTester>(m_chat->chats(),
                                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
  m_messageTester = std::make_unique<QAbstractItemModelTester>(m_chat->messages(),
                                                               QAbstractItemModelTester::FailureReportingMode::QtTest);
  m_newestFirstTester = std::make_unique<QAbstractItemModelTester>(
      m_chat->messagesNewestFirst(), QAbstractItemModelTester::FailureReportingMode::QtTest);
}

void TestChatController::cleanup() {
  m_newestFirstTester.reset();
  m_messageTester.reset();
  m_listTester.reset();
  m_engine.reset();
  m_chat.reset();
  m_inspections.reset();
  m_store.reset();
  m_db.reset();
}

void TestChatController::sendStreamsAndPersists() {
  ChatMessageModel* messages = m_chat->messages();
  QSignalSpy generating(m_chat.get(), &ChatController::generatingChanged);
  QSignalSpy finished(m_chat.get(), &ChatController::replyFinished);
  QVERIFY(!m_chat->send(QStringLiteral("   ")));  // nothing to send
  QVERIFY(m_chat->send(QStringLiteral("Hello there, how are you today?")));
  QVERIFY(m_chat->generating());
  QCOMPARE(generating.count(), 1);
  QCOMPARE(m_chat->chats()->rowCount(), 1);
  QCOMPARE(m_chat->currentTitle(), QStringLiteral("Hello there, how are you today?"));
  QCOMPARE(messages->rowCount(), 2);
  QCOMPARE(roleValue(*messages, 0, "role").toString(), QStringLiteral("user"));
  QCOMPARE(roleValue(*messages, 1, "role").toString(), QStringLiteral("assistant"));
  QVERIFY(roleValue(*messages, 1, "streaming").toBool());
  QCOMPARE(m_engine->requests.size(), 1);
  QCOMPARE(turnTexts(m_engine->requests[0].turns), QStringList{QStringLiteral("user:Hello there, how are you today?")});
  QCOMPARE(m_engine->requests[0].settings.max_tokens, int64_t(256));  // no model yet: the default
  QCOMPARE(m_engine->requests[0].settings.top_logprobs, int64_t(0));  // a chat shows no alternatives

  // The reply's row exists in the store from the start, and its text reaches the store as it streams.
  const qint64 replyId = roleValue(*messages, 1, "messageId").toLongLong();
  QVERIFY(replyId > 0);
  QVERIFY(!m_store->message(replyId).complete);
  QSignalSpy changed(messages, &QAbstractItemModel::dataChanged);
  m_engine->piece(QStringLiteral("I am"));
  m_engine->piece(QStringLiteral(" fine"));
  QCOMPARE(changed.count(), 2);
  QCOMPARE(roleValue(*messages, 1, "content").toString(), QStringLiteral("I am fine"));
  QTRY_COMPARE(m_store->message(replyId).content, QStringLiteral("I am fine"));
  QVERIFY(!m_store->message(replyId).complete);
  m_engine->piece(QStringLiteral(", thanks."));
  m_engine->finish();
  QVERIFY(!m_chat->generating());
  QCOMPARE(finished.count(), 1);
  QCOMPARE(finished.first().at(0).toLongLong(), replyId);

  const StoredMessage stored = m_store->message(replyId);
  QVERIFY(stored.complete);
  QCOMPARE(stored.content, QStringLiteral("I am fine, thanks."));
  QCOMPARE(stored.stats.value(QStringLiteral("generatedTokens")).toInt(), 3);
  QCOMPARE(stored.settings.value(QStringLiteral("seed")).toString(), QStringLiteral("1234"));
  QCOMPARE(stored.settings.value(QStringLiteral("temperature")).toDouble(), 0.8);
  // The keys replies have always been stored with (settingsForReply), so older databases read alike.
  QCOMPARE(stored.settings.size(), 10);
  QVERIFY(stored.settings.contains(QStringLiteral("repeatLastN")) &&
          !stored.settings.contains(QStringLiteral("topLogprobs")));
  QVERIFY(!roleValue(*messages, 1, "streaming").toBool());
  const QString stats = roleValue(*messages, 1, "statsText").toString();
  QVERIFY2(stats.contains(QStringLiteral("3 tokens")) && stats.contains(QStringLiteral("21.5 tok/s")) &&
               stats.contains(QStringLiteral("first token 42 ms")),
           qPrintable(stats));
  const QString settings = roleValue(*messages, 1, "settingsText").toString();
  QVERIFY2(settings.contains(QStringLiteral("temperature 0.8")) && settings.contains(QStringLiteral("seed 1234")),
           qPrintable(settings));

  // The next message follows the reply.
  QVERIFY(m_chat->send(QStringLiteral("Great")));
  QCOMPARE(turnTexts(m_engine->requests[1].turns),
           (QStringList{QStringLiteral("user:Hello there, how are you today?"),
                        QStringLiteral("assistant:I am fine, thanks."), QStringLiteral("user:Great")}));
  m_engine->reply(QStringLiteral("Indeed."));
  QCOMPARE(contents(*messages).size(), 4);
}

void TestChatController::systemPromptLeadsTheTurns() {
  QVERIFY(m_chat->newChat() > 0);
  QCOMPARE(m_chat->newChat(), m_chat->currentChatId());  // an untouched new chat is reused
  m_chat->setSystemPrompt(QStringLiteral("You are a pirate."));
  QCOMPARE(m_store->chat(m_chat->currentChatId()).systemPrompt, QStringLiteral("You are a pirate."));
  QVERIFY(m_chat->send(QStringLiteral("Hi")));
  QCOMPARE(turnTexts(m_engine->requests[0].turns),
           (QStringList{QStringLiteral("system:You are a pirate."), QStringLiteral("user:Hi")}));
  m_engine->reply(QStringLiteral("Arr"));
}

void TestChatController::regenerateMakesSiblingsWithArrows() {
  ChatMessageModel* messages = m_chat->messages();
  QVERIFY(m_chat->send(QStringLiteral("Tell me a joke")));
  m_engine->reply(QStringLiteral("Joke one"));
  const qint64 first = roleValue(*messages, 1, "messageId").toLongLong();
  QVERIFY(m_chat->regenerate(first));
  // The request holds the conversation up to the question, not the reply being replaced.
  QCOMPARE(turnTexts(m_engine->requests[1].turns), QStringList{QStringLiteral("user:Tell me a joke")});
  m_engine->reply(QStringLiteral("Joke two"));
  QCOMPARE(contents(*messages), (QStringList{QStringLiteral("Tell me a joke"), QStringLiteral("Joke two")}));
  QCOMPARE(roleValue(*messages, 1, "siblingCount").toInt(), 2);
  QCOMPARE(roleValue(*messages, 1, "siblingIndex").toInt(), 1);
  QCOMPARE(roleValue(*messages, 0, "siblingCount").toInt(), 1);
  const qint64 second = roleValue(*messages, 1, "messageId").toLongLong();

  m_chat->switchSibling(second, -1);
  QCOMPARE(contents(*messages), (QStringList{QStringLiteral("Tell me a joke"), QStringLiteral("Joke one")}));
  QCOMPARE(roleValue(*messages, 1, "siblingIndex").toInt(), 0);
  m_chat->switchSibling(first, -1);  // already the first: nothing happens
  QCOMPARE(roleValue(*messages, 1, "messageId").toLongLong(), first);
  m_chat->switchSibling(first, +1);
  QCOMPARE(roleValue(*messages, 1, "messageId").toLongLong(), second);
  // Regenerating from the user message adds a third reply.
  QVERIFY(m_chat->regenerate(roleValue(*messages, 0, "messageId").toLongLong()));
  m_engine->reply(QStringLiteral("Joke three"));
  QCOMPARE(roleValue(*messages, 1, "siblingCount").toInt(), 3);
  QCOMPARE(roleValue(*messages, 1, "siblingIndex").toInt(), 2);
  // A restart shows the same branch.
  makeController();
  QCOMPARE(contents(*m_chat->messages()),
           (QStringList{QStringLiteral("Tell me a joke"), QStringLiteral("Joke three")}));
}

void TestChatController::editBranches() {
  ChatMessageModel* messages = m_chat->messages();
  QVERIFY(m_chat->send(QStringLiteral("Capital of France?")));
  m_engine->reply(QStringLiteral("Paris."));
  QVERIFY(m_chat->send(QStringLiteral("And Spain?")));
  m_engine->reply(QStringLiteral("Madrid."));
  const qint64 question2 = roleValue(*messages, 2, "messageId").toLongLong();

  // Editing a user message branches there and asks again.
  QVERIFY(m_chat->editMessage(question2, QStringLiteral("And Italy?")));
  QCOMPARE(turnTexts(m_engine->requests.last().turns),
           (QStringList{QStringLiteral("user:Capital of France?"), QStringLiteral("assistant:Paris."),
                        QStringLiteral("user:And Italy?")}));
  m_engine->reply(QStringLiteral("Rome."));
  QCOMPARE(contents(*messages), (QStringList{QStringLiteral("Capital of France?"), QStringLiteral("Paris."),
                                             QStringLiteral("And Italy?"), QStringLiteral("Rome.")}));
  QCOMPARE(roleValue(*messages, 2, "siblingCount").toInt(), 2);
  m_chat->switchSibling(roleValue(*messages, 2, "messageId").toLongLong(), -1);
  QCOMPARE(contents(*messages).mid(2), (QStringList{QStringLiteral("And Spain?"), QStringLiteral("Madrid.")}));

  // Editing an assistant message keeps the edit as a sibling and generates nothing.
  const int requestsBefore = int(m_engine->requests.size());
  const qint64 madrid = roleValue(*messages, 3, "messageId").toLongLong();
  QVERIFY(m_chat->editMessage(madrid, QStringLiteral("Madrid, since 1561.")));
  QCOMPARE(m_engine->requests.size(), requestsBefore);
  QVERIFY(!m_chat->generating());
  QCOMPARE(contents(*messages).last(), QStringLiteral("Madrid, since 1561."));
  QCOMPARE(roleValue(*messages, 3, "siblingCount").toInt(), 2);
  QVERIFY(!m_chat->editMessage(madrid, QStringLiteral("Madrid.")));  // unchanged text: no branch
}

void TestChatController::continueAppendsToTheReply() {
  ChatMessageModel* messages = m_chat->messages();
  QVERIFY(m_chat->send(QStringLiteral("Count to five")));
  m_engine->piece(QStringLiteral("one two"));
  m_engine->finish(QStringLiteral("length"));
  const qint64 reply = roleValue(*messages, 1, "messageId").toLongLong();
  QVERIFY(roleValue(*messages, 1, "statsText").toString().contains(QStringLiteral("token limit")));
  QVERIFY(m_chat->continueReply(reply));
  const FakeChatEngine::Request& r = m_engine->requests.last();
  QCOMPARE(r.continuation, QStringLiteral("one two"));
  QCOMPARE(turnTexts(r.turns), QStringList{QStringLiteral("user:Count to five")});
  m_engine->piece(QStringLiteral(" three four five"));
  m_engine->finish();
  QCOMPARE(messages->rowCount(), 2);
  QCOMPARE(roleValue(*messages, 1, "messageId").toLongLong(), reply);
  QCOMPARE(m_store->message(reply).content, QStringLiteral("one two three four five"));
  QVERIFY(m_store->message(reply).complete);
  QVERIFY(!m_chat->continueReply(roleValue(*messages, 0, "messageId").toLongLong()));  // not a reply
}

void TestChatController::stopAndFailures() {
  ChatMessageModel* messages = m_chat->messages();
  QVERIFY(m_chat->send(QStringLiteral("Write a long story")));
  m_engine->piece(QStringLiteral("Once upon"));
  m_chat->stop();
  QCOMPARE(m_engine->stops, 1);
  m_engine->finish(QStringLiteral("cancelled"), 2);
  QVERIFY(roleValue(*messages, 1, "statsText").toString().contains(QStringLiteral("stopped by you")));
  QCOMPARE(roleValue(*messages, 1, "content").toString(), QStringLiteral("Once upon"));
  m_chat->stop();
  QCOMPARE(m_engine->stops, 1);  // nothing running

  // A failure before any text: no empty reply stays, the error is shown.
  QVERIFY(m_chat->send(QStringLiteral("Again")));
  QCOMPARE(messages->rowCount(), 4);
  m_chat->handleFailed(QStringLiteral("The chat is 300 tokens; the model's context is 256."));
  QCOMPARE(messages->rowCount(), 3);
  QVERIFY(m_chat->lastError().contains(QStringLiteral("context")));
  QVERIFY(!m_chat->generating());
  // A failure after some text keeps the text.
  QVERIFY(m_chat->regenerate(roleValue(*messages, 2, "messageId").toLongLong()));
  m_engine->piece(QStringLiteral("Partial"));
  m_chat->handleFailed(QStringLiteral("Not enough memory"));
  QCOMPARE(contents(*messages).last(), QStringLiteral("Partial"));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("memory")));
  m_chat->clearError();
  QVERIFY(m_chat->lastError().isEmpty());
}

void TestChatController::busyWhileGenerating() {
  QVERIFY(m_chat->send(QStringLiteral("First")));
  QVERIFY(!m_chat->send(QStringLiteral("Second")));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("still being written")));
  const qint64 user = roleValue(*m_chat->messages(), 0, "messageId").toLongLong();
  QVERIFY(!m_chat->editMessage(user, QStringLiteral("changed")));
  m_chat->switchSibling(user, 1);
  QCOMPARE(m_engine->requests.size(), 1);
  m_engine->reply(QStringLiteral("ok"));
  QCOMPARE(m_chat->messages()->rowCount(), 2);
}

void TestChatController::deleteWithUndo() {
  QVERIFY(m_chat->send(QStringLiteral("chat one")));
  m_engine->reply(QStringLiteral("reply one"));
  const qint64 one = m_chat->currentChatId();
  QTest::qWait(2);
  QVERIFY(m_chat->newChat() > 0);
  QVERIFY(m_chat->send(QStringLiteral("chat two")));
  m_engine->reply(QStringLiteral("reply two"));
  const qint64 two = m_chat->currentChatId();
  QCOMPARE(m_chat->chats()->rowCount(), 2);

  QSignalSpy deleted(m_chat.get(), &ChatController::deletedChanged);
  m_chat->deleteChat(two);
  QCOMPARE(m_chat->chats()->rowCount(), 1);
  QCOMPARE(m_chat->deletedTitle(), QStringLiteral("chat two"));
  QCOMPARE(m_chat->currentChatId(), one);  // the next chat opens
  m_chat->undoDelete();
  QCOMPARE(m_chat->chats()->rowCount(), 2);
  QCOMPARE(m_chat->currentChatId(), two);
  QCOMPARE(contents(*m_chat->messages()), (QStringList{QStringLiteral("chat two"), QStringLiteral("reply two")}));
  QVERIFY(m_chat->deletedTitle().isEmpty());

  m_chat->deleteChat(two);
  m_chat->deleteChat(one);  // the first delete is final now
  QCOMPARE(m_chat->chats()->rowCount(), 0);
  QCOMPARE(m_chat->currentChatId(), 0);
  QVERIFY(m_store->search(QStringLiteral("reply")).isEmpty());
  m_chat->undoDelete();
  QCOMPARE(m_chat->chats()->rowCount(), 1);
  QCOMPARE(m_chat->currentChatId(), one);
  QVERIFY(!m_store->restoreChat(two) || m_store->chat(two).id == 0);
  QCOMPARE(m_store->chats().size(), 1);
  QVERIFY(deleted.count() >= 4);
}

void TestChatController::deleteMessageWithUndo() {
  ChatMessageModel* messages = m_chat->messages();
  // A chat with branches: two replies to the first question (the second shown), then a follow-up
  // whose question was edited (its second version shown), each with a reply.
  QVERIFY(m_chat->send(QStringLiteral("Name a colour")));
  m_engine->reply(QStringLiteral("Red"));
  QVERIFY(m_chat->regenerate(roleValue(*messages, 1, "messageId").toLongLong()));
  m_engine->reply(QStringLiteral("Blue"));
  QVERIFY(m_chat->send(QStringLiteral("Another")));
  m_engine->reply(QStringLiteral("Green"));
  QVERIFY(m_chat->editMessage(roleValue(*messages, 2, "messageId").toLongLong(), QStringLiteral("One more")));
  m_engine->reply(QStringLiteral("Yellow"));
  const qint64 chat = m_chat->currentChatId();
  const qint64 blue = roleValue(*messages, 1, "messageId").toLongLong();
  QVERIFY(m_inspections->saveInspection(blue, QByteArray("snapshot bytes"), QStringLiteral("m"), 7) > 0);
  const QList<qint64> pathBefore = ids(*messages);
  QCOMPARE(contents(*messages), (QStringList{QStringLiteral("Name a colour"), QStringLiteral("Blue"),
                                             QStringLiteral("One more"), QStringLiteral("Yellow")}));
  const QList<qint64> blueSiblings = m_store->siblings(blue);
  const QList<qint64> questionSiblings = m_store->siblings(pathBefore[2]);
  QCOMPARE(questionSiblings.size(), 2);
  const StoredMessage yellowBefore = m_store->message(pathBefore[3]);

  // Deleting "Blue" takes the four messages below it too; "Red" is shown in its place.
  QSignalSpy deleted(m_chat.get(), &ChatController::deletedChanged);
  m_chat->deleteMessage(blue);
  QCOMPARE(deleted.count(), 1);
  QCOMPARE(m_chat->undoText(), QStringLiteral("Deleted a message and the 4 messages below it."));
  QVERIFY(m_chat->deletedTitle().isEmpty());  // not a chat
  QCOMPARE(contents(*messages), (QStringList{QStringLiteral("Name a colour"), QStringLiteral("Red")}));
  QCOMPARE(m_store->message(blue).id, 0);
  QVERIFY(m_store->search(QStringLiteral("Yellow")).isEmpty());

  // Undo brings back the same rows: ids, texts, stats, order, the chosen branches, the snapshot.
  m_chat->undoDelete();
  QVERIFY(m_chat->undoText().isEmpty());
  QCOMPARE(deleted.count(), 2);
  QCOMPARE(m_chat->currentChatId(), chat);
  QCOMPARE(ids(*messages), pathBefore);
  QCOMPARE(contents(*messages), (QStringList{QStringLiteral("Name a colour"), QStringLiteral("Blue"),
                                             QStringLiteral("One more"), QStringLiteral("Yellow")}));
  QCOMPARE(m_store->siblings(blue), blueSiblings);
  QCOMPARE(m_store->siblings(pathBefore[2]), questionSiblings);
  QCOMPARE(roleValue(*messages, 2, "siblingIndex").toInt(), 1);  // the edited question, as before
  const StoredMessage yellow = m_store->message(pathBefore[3]);
  QCOMPARE(yellow.content, yellowBefore.content);
  QCOMPARE(yellow.createdMs, yellowBefore.createdMs);
  QCOMPARE(yellow.stats, yellowBefore.stats);
  QCOMPARE(yellow.settings, yellowBefore.settings);
  QCOMPARE(m_inspections->inspectionFor(blue).blob, QByteArray("snapshot bytes"));
  QCOMPARE(m_store->search(QStringLiteral("Yellow")).size(), 1);  // searchable again
  m_chat->switchSibling(pathBefore[2], -1);                       // the other branch below Blue is back too
  QCOMPARE(contents(*messages).mid(2), (QStringList{QStringLiteral("Another"), QStringLiteral("Green")}));
  m_chat->switchSibling(pathBefore[2], +1);

  // Undoing a message that was not the shown branch restores it without switching to it.
  m_chat->switchSibling(blue, -1);  // Red shown
  const qint64 red = roleValue(*messages, 1, "messageId").toLongLong();
  m_chat->deleteMessage(blue);  // not on the path, as a store-level caller may do
  QCOMPARE(roleValue(*messages, 1, "messageId").toLongLong(), red);
  m_chat->undoDelete();
  QCOMPARE(roleValue(*messages, 1, "messageId").toLongLong(), red);
  QCOMPARE(roleValue(*messages, 1, "siblingCount").toInt(), 2);

  // One undo at a time: a second delete makes the first final; after a restart nothing is pending.
  m_chat->deleteMessage(pathBefore[3]);
  m_chat->deleteMessage(red);
  m_chat->undoDelete();
  QCOMPARE(m_store->message(red).content, QStringLiteral("Red"));
  QCOMPARE(m_store->message(pathBefore[3]).id, 0);
  m_chat->deleteMessage(red);
  makeController();
  QVERIFY(m_chat->undoText().isEmpty());
  m_chat->undoDelete();
  QCOMPARE(m_store->message(red).id, 0);
  QVERIFY(m_db->quickCheck());
}

void TestChatController::messageUndoEndsWithTheNextMessage() {
  ChatMessageModel* messages = m_chat->messages();
  QVERIFY(m_chat->send(QStringLiteral("first")));
  m_engine->reply(QStringLiteral("reply"));
  const qint64 reply = roleValue(*messages, 1, "messageId").toLongLong();
  // Deleting the newest message frees its id (SQLite reuses the largest rowid); the next message
  // may take it, so the undo ends there rather than fail later.
  m_chat->deleteMessage(reply);
  QVERIFY(!m_chat->undoText().isEmpty());
  QVERIFY(m_chat->send(QStringLiteral("second")));
  QVERIFY(m_chat->undoText().isEmpty());
  m_engine->reply(QStringLiteral("new reply"));
  m_chat->undoDelete();  // nothing to undo: nothing changes
  QCOMPARE(contents(*messages),
           (QStringList{QStringLiteral("first"), QStringLiteral("second"), QStringLiteral("new reply")}));

  // The store refuses a restore whose ids are taken, changing nothing.
  DeletedMessages removed;
  const qint64 last = roleValue(*messages, 2, "messageId").toLongLong();
  QVERIFY(m_store->deleteMessage(last, &removed));
  QCOMPARE(removed.rootId, last);
  QVERIFY(removed.wasActive);
  const qint64 taken = m_store->addMessage(m_chat->currentChatId(), roleValue(*messages, 1, "messageId").toLongLong(),
                                           QStringLiteral("assistant"), QStringLiteral("taker"));
  QCOMPARE(taken, last);
  QVERIFY(!m_store->restoreMessages(removed));
  QCOMPARE(m_store->message(last).content, QStringLiteral("taker"));
  QVERIFY(!m_db->lastError().isEmpty());
}

void TestChatController::tagFilter() {
  auto titles = [&] {
    QStringList out;
    for (int i = 0; i < m_chat->chats()->rowCount(); ++i) out << roleValue(*m_chat->chats(), i, "title").toString();
    return out;
  };
  const QStringList names{QStringLiteral("Pasta recipe"), QStringLiteral("Rust lifetimes"),
                          QStringLiteral("Trip to Rome")};
  QList<qint64> chats;
  for (const QString& n : names) {
    QVERIFY(m_chat->newChat() > 0);
    QVERIFY(m_chat->send(n));
    m_engine->reply(QStringLiteral("ok"));
    chats << m_chat->currentChatId();
    QTest::qWait(2);  // distinct update times keep the order stable
  }
  QVERIFY(m_chat->tags().isEmpty());
  QSignalSpy tagsChanged(m_chat.get(), &ChatController::tagsChanged);
  m_chat->setChatTags(chats[0], QStringLiteral("food, italy"));
  m_chat->setChatTags(chats[2], QStringLiteral("travel, italy"));
  m_chat->setChatTags(chats[1], QStringLiteral("code"));
  QCOMPARE(m_chat->tags(), (QStringList{QStringLiteral("code"), QStringLiteral("food"), QStringLiteral("italy"),
                                        QStringLiteral("travel")}));
  QVERIFY(tagsChanged.count() >= 3);

  QSignalSpy filterChanged(m_chat.get(), &ChatController::tagFilterChanged);
  m_chat->setTagFilter(QStringLiteral("italy"));
  QCOMPARE(filterChanged.count(), 1);
  QCOMPARE(titles(), (QStringList{QStringLiteral("Trip to Rome"), QStringLiteral("Pasta recipe")}));
  m_chat->setTagFilter(QStringLiteral("travel"));
  QCOMPARE(titles(), QStringList{QStringLiteral("Trip to Rome")});
  // The filter combines with the folder filter, and a search looks through every chat.
  m_chat->setChatFolder(chats[2], QStringLiteral("Holidays"));
  m_chat->setFolderFilter(QStringLiteral("Holidays"));
  QCOMPARE(titles(), QStringList{QStringLiteral("Trip to Rome")});
  m_chat->setTagFilter(QStringLiteral("code"));
  QVERIFY(titles().isEmpty());
  m_chat->setFolderFilter({});
  QCOMPARE(titles(), QStringList{QStringLiteral("Rust lifetimes")});
  m_chat->setSearchText(QStringLiteral("Pasta"));
  QVERIFY(titles().contains(QStringLiteral("Pasta recipe")));
  m_chat->setSearchText({});
  QCOMPARE(titles(), QStringList{QStringLiteral("Rust lifetimes")});

  // When the last chat with the tag loses it, the filter clears itself rather than show nothing.
  m_chat->setChatTags(chats[1], QString());
  QVERIFY(m_chat->tagFilter().isEmpty());
  QVERIFY(!m_chat->tags().contains(QStringLiteral("code")));
  QCOMPARE(titles().size(), 3);
  // Clearing shows every chat; a deleted chat's tags leave the list.
  m_chat->setTagFilter(QStringLiteral("food"));
  QCOMPARE(titles().size(), 1);
  m_chat->setTagFilter({});
  QCOMPARE(titles().size(), 3);
  m_chat->deleteChat(chats[0]);
  QVERIFY(!m_chat->tags().contains(QStringLiteral("food")));
  m_chat->undoDelete();
  QVERIFY(m_chat->tags().contains(QStringLiteral("food")));
}

void TestChatController::searchHitOpensAndHighlightsTheMessage() {
  ChatMessageModel* messages = m_chat->messages();
  QVERIFY(m_chat->send(QStringLiteral("Tell me about volcanoes")));
  m_engine->reply(QStringLiteral("Magma rises through the crust."));
  QVERIFY(m_chat->send(QStringLiteral("And glaciers?")));
  m_engine->reply(QStringLiteral("Ice flows slowly downhill."));
  QVERIFY(m_chat->send(QStringLiteral("Thanks")));
  m_engine->reply(QStringLiteral("You are welcome."));
  const qint64 geology = m_chat->currentChatId();
  const qint64 glaciers = roleValue(*messages, 3, "messageId").toLongLong();
  // A second version of the glacier answer, so the first one is on a branch not shown.
  QVERIFY(m_chat->regenerate(glaciers));
  m_engine->reply(QStringLiteral("Rivers of ice."));
  QVERIFY(m_chat->newChat() > 0);
  QVERIFY(m_chat->send(QStringLiteral("Unrelated")));
  m_engine->reply(QStringLiteral("Sure."));
  const qint64 other = m_chat->currentChatId();
  QVERIFY(other != geology);
  QCOMPARE(m_chat->highlightedRow(), -1);

  // A hit in a message of another chat: that chat opens with the message highlighted.
  m_chat->setSearchText(QStringLiteral("magma"));
  QCOMPARE(m_chat->chats()->rowCount(), 1);
  const qint64 magma = roleValue(*m_chat->chats(), 0, "messageId").toLongLong();
  QVERIFY(magma != 0);
  QSignalSpy highlight(m_chat.get(), &ChatController::highlightChanged);
  m_chat->openSearchHit(roleValue(*m_chat->chats(), 0, "chatId").toLongLong(), magma);
  QCOMPARE(m_chat->currentChatId(), geology);
  QCOMPARE(m_chat->highlightedMessageId(), magma);
  QCOMPARE(m_chat->highlightedRow(), 1);
  QVERIFY(highlight.count() >= 1);

  // A hit on the branch not shown: the chat switches to that branch so the message is there.
  m_chat->setSearchText(QStringLiteral("downhill"));
  QCOMPARE(m_chat->chats()->rowCount(), 1);
  QCOMPARE(roleValue(*m_chat->chats(), 0, "messageId").toLongLong(), glaciers);
  QVERIFY(messages->rowOf(glaciers) < 0);
  m_chat->openSearchHit(geology, glaciers);
  QCOMPARE(m_chat->highlightedMessageId(), glaciers);
  QCOMPARE(m_chat->highlightedRow(), 3);
  QCOMPARE(roleValue(*messages, 3, "content").toString(), QStringLiteral("Ice flows slowly downhill."));
  QCOMPARE(roleValue(*messages, 3, "siblingIndex").toInt(), 0);
  // Below it, the path goes on as that branch last went on.
  QCOMPARE(contents(*messages).mid(4), (QStringList{QStringLiteral("Thanks"), QStringLiteral("You are welcome.")}));
  makeController();  // the switch is saved like one made with the arrows
  m_chat->selectChat(geology);
  QCOMPARE(contents(*m_chat->messages()).value(3), QStringLiteral("Ice flows slowly downhill."));
  QCOMPARE(m_chat->highlightedMessageId(), 0);
  messages = m_chat->messages();

  // Sending moves on from a highlight, as does opening another chat; a title hit just opens its chat.
  m_chat->openSearchHit(geology, glaciers);
  QCOMPARE(m_chat->highlightedRow(), 3);
  QVERIFY(m_chat->send(QStringLiteral("More")));
  QCOMPARE(m_chat->highlightedMessageId(), 0);
  m_engine->reply(QStringLiteral("Fine."));
  m_chat->openSearchHit(geology, magma);
  QCOMPARE(m_chat->highlightedRow(), 1);
  m_chat->selectChat(other);
  QCOMPARE(m_chat->highlightedMessageId(), 0);
  QCOMPARE(m_chat->highlightedRow(), -1);
  m_chat->openSearchHit(geology, 0);
  QCOMPARE(m_chat->currentChatId(), geology);
  QCOMPARE(m_chat->highlightedRow(), -1);
}

void TestChatController::renameSearchAndFolders() {
  QVERIFY(m_chat->send(QStringLiteral("The mitochondria question")));
  m_engine->reply(QStringLiteral("It is the powerhouse of the cell."));
  const qint64 bio = m_chat->currentChatId();
  QVERIFY(m_chat->newChat() > 0);
  QVERIFY(m_chat->send(QStringLiteral("Rust borrow checker")));
  m_engine->reply(QStringLiteral("Ownership rules."));
  const qint64 rust = m_chat->currentChatId();

  m_chat->renameChat(bio, QStringLiteral("  Biology \n homework "));
  QCOMPARE(m_store->chat(bio).title, QStringLiteral("Biology homework"));
  m_chat->renameChat(bio, QStringLiteral("   "));  // refused: a chat keeps a name
  QCOMPARE(m_store->chat(bio).title, QStringLiteral("Biology homework"));

  m_chat->setSearchText(QStringLiteral("powerhouse"));
  QCOMPARE(m_chat->chats()->rowCount(), 1);
  QCOMPARE(roleValue(*m_chat->chats(), 0, "chatId").toLongLong(), bio);
  QVERIFY(roleValue(*m_chat->chats(), 0, "snippet").toString().contains(QString(QChar(kSnippetMatchBegin)) + QStringLiteral("powerhouse") + QChar(kSnippetMatchEnd)));
  m_chat->setSearchText({});
  QCOMPARE(m_chat->chats()->rowCount(), 2);

  QSignalSpy folders(m_chat.get(), &ChatController::foldersChanged);
  m_chat->setChatFolder(rust, QStringLiteral("Code"));
  QCOMPARE(m_chat->folders(), QStringList{QStringLiteral("Code")});
  QCOMPARE(folders.count(), 1);
  QCOMPARE(m_chat->currentFolder(), QStringLiteral("Code"));
  m_chat->setFolderFilter(QStringLiteral("Code"));
  QCOMPARE(m_chat->chats()->rowCount(), 1);
  QCOMPARE(roleValue(*m_chat->chats(), 0, "folder").toString(), QStringLiteral("Code"));
  m_chat->setFolderFilter({});
  m_chat->setChatTags(rust, QStringLiteral("lang, systems"));
  QCOMPARE(m_chat->currentTags(), (QStringList{QStringLiteral("lang"), QStringLiteral("systems")}));
}

void TestChatController::contextUseAndWarnings() {
  QSignalSpy counts(m_chat.get(), &ChatController::countTokensRequested);
  QVERIFY(m_chat->send(QStringLiteral("hello")));
  m_engine->reply(QStringLiteral("hi"));
  QCOMPARE(counts.count(), 0);  // no model, nothing to count against
  m_chat->handleModelChanged(1000);
  QTRY_COMPARE(counts.count(), 1);
  const QList<ChatTurn> turns = counts.first().at(0).value<QList<ChatTurn>>();
  QCOMPARE(turnTexts(turns), (QStringList{QStringLiteral("user:hello"), QStringLiteral("assistant:hi")}));
  const quint64 id = counts.first().at(1).toULongLong();
  m_chat->handleTokenCount(id, 40);
  QCOMPARE(m_chat->contextUsed(), 40);
  QCOMPARE(m_chat->contextLength(), 1000);
  QVERIFY(m_chat->contextWarning().isEmpty());
  QVERIFY(!m_chat->contextExceeded());

  // Room for a reply is still more than a quarter of the context: no warning yet.
  m_chat->handleTokenCount(id, 700);
  QVERIFY(m_chat->contextWarning().isEmpty());
  // Less room than the reply may take: a warning that says how long it can be.
  m_chat->handleTokenCount(id, 800);
  // (The reply may take a quarter of the context at most, 250 tokens: the engine leaves the oldest
  // messages out to make that room, and the warning says so with the same numbers.)
  QVERIFY2(m_chat->contextWarning().contains(QStringLiteral("800 of 1000")) &&
               m_chat->contextWarning().contains(QStringLiteral("up to 250 tokens")) &&
               m_chat->contextWarning().contains(QStringLiteral("oldest messages are left out")),
           qPrintable(m_chat->contextWarning()));
  m_chat->setGenerationSettings({{QStringLiteral("maxTokens"), 100}});
  QVERIFY(m_chat->contextWarning().isEmpty());
  // Exactly the context: full, and not called "more than" it.
  m_chat->handleTokenCount(id, 1000);
  QVERIFY(m_chat->contextExceeded());
  QVERIFY2(!m_chat->contextWarning().contains(QStringLiteral("more than")) &&
               m_chat->contextWarning().contains(QStringLiteral("1000 of 1000")),
           qPrintable(m_chat->contextWarning()));
  // Past the context: exceeded, and said plainly.
  m_chat->handleTokenCount(id, 1200);
  QVERIFY(m_chat->contextExceeded());
  QVERIFY(m_chat->contextWarning().contains(QStringLiteral("more than the model's context of 1000")));
  // A late answer to an older request is ignored.
  m_chat->setSystemPrompt(QStringLiteral("Be brief."));
  QTRY_COMPARE(counts.count(), 2);
  QCOMPARE(turnTexts(counts.last().at(0).value<QList<ChatTurn>>()).first(), QStringLiteral("system:Be brief."));
  m_chat->handleTokenCount(id, 5);
  QCOMPARE(m_chat->contextUsed(), 1200);
  m_chat->handleTokenCount(counts.last().at(1).toULongLong(), 45);
  QCOMPARE(m_chat->contextUsed(), 45);
  // A finished reply is counted again.
  QVERIFY(m_chat->send(QStringLiteral("more")));
  m_engine->reply(QStringLiteral("sure"));
  QTRY_COMPARE(counts.count(), 3);
  // A sent message is counted at once, before its reply ends (the meter never lags a turn behind).
  QVERIFY(m_chat->send(QStringLiteral("and more")));
  QTRY_COMPARE(counts.count(), 4);
  m_engine->reply(QStringLiteral("fine"));
  // A new model: its own count, and an error from the old one is gone.
  QVERIFY(m_chat->send(QStringLiteral("x")));
  m_chat->handleFailed(QStringLiteral("This chat is 1200 tokens, but the model reads at most 1000."));
  QVERIFY(!m_chat->lastError().isEmpty());
  m_chat->handleModelChanged(2000);
  QVERIFY(m_chat->lastError().isEmpty());
  QCOMPARE(m_chat->contextUsed(), 0);
}

void TestChatController::exportAndImport() {
  m_chat->newChat();
  m_chat->setSystemPrompt(QStringLiteral("Answer with code."));
  QVERIFY(m_chat->send(QStringLiteral("Print hello in C")));
  m_engine->reply(QStringLiteral("```c\nputs(\"hello\");\n```"));
  const QString md = m_dir->filePath(QStringLiteral("chat.md"));
  const QString json = m_dir->filePath(QStringLiteral("chat.json"));
  QCOMPARE(m_chat->exportMarkdown(QUrl::fromLocalFile(md).toString()), QString());
  QCOMPARE(m_chat->exportJson(json), QString());
  QFile mdFile(md);
  QVERIFY(mdFile.open(QIODevice::ReadOnly));
  const QString markdown = QString::fromUtf8(mdFile.readAll());
  QVERIFY(markdown.startsWith(QStringLiteral("# Print hello in C\n")));
  QVERIFY(markdown.contains(QStringLiteral("### System\n\nAnswer with code.")));
  QVERIFY(markdown.contains(QStringLiteral("### Assistant\n\n```c\nputs(\"hello\");\n```")));

  QFile jsonFile(json);
  QVERIFY(jsonFile.open(QIODevice::ReadOnly));
  const QJsonObject root = QJsonDocument::fromJson(jsonFile.readAll()).object();
  const QJsonArray array = root.value(QStringLiteral("messages")).toArray();
  QCOMPARE(array.size(), 3);
  QCOMPARE(array[0].toObject().value(QStringLiteral("role")).toString(), QStringLiteral("system"));
  QCOMPARE(array[2].toObject().value(QStringLiteral("content")).toString(),
           QStringLiteral("```c\nputs(\"hello\");\n```"));

  // Import makes a new chat with the same conversation and system prompt.
  const qint64 original = m_chat->currentChatId();
  QCOMPARE(m_chat->importJson(json), QString());
  QVERIFY(m_chat->currentChatId() != original);
  QCOMPARE(m_chat->currentTitle(), QStringLiteral("Print hello in C"));
  QCOMPARE(m_chat->systemPrompt(), QStringLiteral("Answer with code."));
  QCOMPARE(contents(*m_chat->messages()),
           (QStringList{QStringLiteral("Print hello in C"), QStringLiteral("```c\nputs(\"hello\");\n```")}));
  QCOMPARE(m_chat->chats()->rowCount(), 2);
  // Export of nothing and into a missing folder fail with a message.
  QVERIFY(!m_chat->exportJson(m_dir->filePath(QStringLiteral("no/such/dir/x.json"))).isEmpty());
}

void TestChatController::importRejectsBadFiles_data() {
  QTest::addColumn<QByteArray>("json");
  QTest::addColumn<QString>("expected");
  QTest::newRow("not json") << QByteArray("{\"messages\": [") << QStringLiteral("not valid JSON");
  QTest::newRow("number") << QByteArray("42")
                          << QStringLiteral("not valid JSON");  // Qt 6.4 reads only objects and arrays
  QTest::newRow("no messages") << QByteArray("{\"title\":\"x\"}") << QStringLiteral("\"messages\" array");
  QTest::newRow("empty") << QByteArray("{\"messages\":[]}") << QStringLiteral("is empty");
  QTest::newRow("not object") << QByteArray("[{\"role\":\"user\",\"content\":\"a\"}, 7]")
                              << QStringLiteral("messages[1] is not an object");
  QTest::newRow("bad role") << QByteArray("[{\"role\":\"tool\",\"content\":\"a\"}]")
                            << QStringLiteral("messages[0].role is \"tool\"");
  QTest::newRow("no role") << QByteArray("[{\"content\":\"a\"}]") << QStringLiteral("messages[0].role is missing");
  QTest::newRow("bad content") << QByteArray("[{\"role\":\"user\",\"content\":5}]")
                               << QStringLiteral("messages[0].content");
  QTest::newRow("image part") << QByteArray("[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]")
                              << QStringLiteral("messages[0].content[0] is not a text part");
}

void TestChatController::importRejectsBadFiles() {
  QFETCH(QByteArray, json);
  QFETCH(QString, expected);
  const QString path = m_dir->filePath(QStringLiteral("bad.json"));
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(json);
  f.close();
  const QString error = m_chat->importJson(path);
  QVERIFY2(error.contains(expected) && error.contains(QStringLiteral("bad.json")), qPrintable(error));
  QCOMPARE(m_store->chats().size(), 0);  // nothing half-imported
  QVERIFY(m_chat->importJson(m_dir->filePath(QStringLiteral("missing.json"))).contains(QStringLiteral("missing.json")));
}

void TestChatController::interruptedReplyShowsAfterRestart() {
  // As a crash leaves it: a reply row, incomplete, with the text of the last flush.
  QVERIFY(m_chat->send(QStringLiteral("Explain WAL")));
  m_engine->piece(QStringLiteral("Write-ahead logging keeps"));
  QTRY_COMPARE(m_store->message(roleValue(*m_chat->messages(), 1, "messageId").toLongLong()).content,
               QStringLiteral("Write-ahead logging keeps"));
  m_engine.reset();  // the engine and the controller die without finishing
  m_chat.reset();
  makeController();
  ChatMessageModel* messages = m_chat->messages();
  QCOMPARE(messages->rowCount(), 2);
  QCOMPARE(roleValue(*messages, 1, "content").toString(), QStringLiteral("Write-ahead logging keeps"));
  QVERIFY(!roleValue(*messages, 1, "complete").toBool());
  QVERIFY(!roleValue(*messages, 1, "streaming").toBool());
  // It can be continued.
  QVERIFY(m_chat->continueReply(roleValue(*messages, 1, "messageId").toLongLong()));
  QCOMPARE(m_engine->requests.last().continuation, QStringLiteral("Write-ahead logging keeps"));
  m_engine->reply(QStringLiteral(" changes in a separate file."));
  QVERIFY(roleValue(*messages, 1, "complete").toBool());
}

void TestChatController::markdownBlocksSplitCode_data() {
  QTest::addColumn<QString>("content");
  QTest::addColumn<QStringList>("expected");  // "kind|language|text" per block
  QTest::newRow("plain") << QStringLiteral("Just **text**.\n\nTwo paragraphs.")
                         << QStringList{QStringLiteral("text||Just **text**.\n\nTwo paragraphs.")};
  QTest::newRow("code between text") << QStringLiteral(
                                            "Try this:\n\n```python\nprint('hi')\n\nx = 1\n```\n\nThen run it.")
                                     << QStringList{QStringLiteral("text||Try this:"),
                                                    QStringLiteral("code|python|print('hi')\n\nx = 1"),
                                                    QStringLiteral("text||Then run it.")};
  QTest::newRow("tilde fence, info string")
      << QStringLiteral("~~~c++ linenums\nint x;\n~~~") << QStringList{QStringLiteral("code|c++|int x;")};
  QTest::newRow("streaming: fence still open")
      << QStringLiteral("Here:\n```js\nlet a")
      << QStringList{QStringLiteral("text||Here:"), QStringLiteral("code|js|let a")};
  QTest::newRow("backticks inside code") << QStringLiteral("```\nuse ``` to fence\n```")
                                         << QStringList{QStringLiteral("code||use ``` to fence")};
  QTest::newRow("indented four spaces is not a fence")
      << QStringLiteral("    ```\n    x") << QStringList{QStringLiteral("text||    ```\n    x")};
  QTest::newRow("empty") << QString() << QStringList{};
}

void TestChatController::markdownBlocksSplitCode() {
  QFETCH(QString, content);
  QFETCH(QStringList, expected);
  QStringList got;
  for (const QVariant& v : ChatMessageModel::markdownBlocks(content)) {
    const QVariantMap b = v.toMap();
    got << b.value(QStringLiteral("kind")).toString() + QLatin1Char('|') +
               b.value(QStringLiteral("language")).toString() + QLatin1Char('|') +
               b.value(QStringLiteral("text")).toString();
  }
  QCOMPARE(got, expected);
}

void TestChatController::storageProblemIsShownAndChatStillWorks() {
  QVERIFY(m_chat->storageProblem().isEmpty());
  cleanup();
  // A database file nobody may write: the controller says so and chats run in memory.
  const QString path = m_dir->filePath(QStringLiteral("readonly.db"));
  {
    Database first;
    QCOMPARE(first.open(path), Database::OpenState::Ok);
  }
  QVERIFY(QFile::setPermissions(path, QFileDevice::ReadOwner));
  QCOMPARE(openStores(path), Database::OpenState::MemoryOnly);
  makeController();
  QVERIFY2(m_chat->storageProblem().contains(QStringLiteral("will not be saved")),
           qPrintable(m_chat->storageProblem()));
  QVERIFY(m_chat->send(QStringLiteral("still works")));
  m_engine->reply(QStringLiteral("yes"));
  QCOMPARE(contents(*m_chat->messages()), (QStringList{QStringLiteral("still works"), QStringLiteral("yes")}));
  QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

void TestChatController::saveInFlightWritesAtOnce() {
  m_chat->setFlushInterval(60000);  // only an explicit save writes
  QVERIFY(m_chat->send(QStringLiteral("quit soon")));
  const qint64 reply = roleValue(*m_chat->messages(), 1, "messageId").toLongLong();
  m_engine->piece(QStringLiteral("first"));  // the first piece after a flush waits for the interval
  m_engine->piece(QStringLiteral(" second"));
  QCOMPARE(m_store->message(reply).content, QString());
  m_chat->saveInFlight();
  QCOMPARE(m_store->message(reply).content, QStringLiteral("first second"));
  QVERIFY(!m_store->message(reply).complete);
}

void TestChatController::longMessageCutsAtABreak_data() {
  QTest::addColumn<QString>("text");
  QTest::addColumn<int>("chars");
  QTest::addColumn<int>("lines");
  QTest::addColumn<QString>("head");
  QTest::addColumn<QString>("tail");
  QTest::newRow("fits") << QStringLiteral("short text") << 20 << 5 << QStringLiteral("short text")
                        << QStringLiteral("short text");
  QTest::newRow("at a space") << QStringLiteral("alpha beta gamma delta") << 13 << 5 << QStringLiteral("alpha beta")
                              << QStringLiteral("gamma delta");
  QTest::newRow("a line end before a space") << QStringLiteral("one two\nthree four five") << 10 << 5
                                             << QStringLiteral("one two") << QStringLiteral("four five");
  QTest::newRow("by lines") << QStringLiteral("a\nb\nc\nd\ne") << 100 << 2 << QStringLiteral("a\nb")
                            << QStringLiteral("d\ne");
  // No break near: cut where it must be, but a surrogate pair (🙂 is two UTF-16 units) stays whole.
  QTest::newRow("no break, surrogate pairs") << QStringLiteral("ab🙂cd🙂ef") << 3 << 5 << QStringLiteral("ab")
                                             << QStringLiteral("ef");
}

void TestChatController::longMessageCutsAtABreak() {
  QFETCH(QString, text);
  QFETCH(int, chars);
  QFETCH(int, lines);
  QFETCH(QString, head);
  QFETCH(QString, tail);
  QCOMPARE(longmessage::head(text, chars, lines), head);
  QCOMPARE(longmessage::tail(text, chars, lines), tail);
}

void TestChatController::longMessageBlocksKeepTheirKind() {
  // Prose, a long code block, prose: the head keeps the first text block whole and cuts the code block
  // (still code); the tail keeps the last text block and cuts the code block from its end.
  QString code;
  for (int i = 0; i < 200; ++i) code += QStringLiteral("line %1\n").arg(i);
  const QString content = QStringLiteral("Intro.\n\n```cpp\n") + code + QStringLiteral("```\n\nOutro.");
  const QVariantList blocks = ChatMessageModel::markdownBlocks(content);
  QCOMPARE(blocks.size(), 3);
  const QVariantList head = longmessage::headBlocks(blocks, 200, 30);
  QCOMPARE(head.size(), 2);
  QCOMPARE(head[0].toMap().value(QStringLiteral("text")).toString(), QStringLiteral("Intro."));
  const QVariantMap headCode = head[1].toMap();
  QCOMPARE(headCode.value(QStringLiteral("kind")).toString(), QStringLiteral("code"));
  QCOMPARE(headCode.value(QStringLiteral("language")).toString(), QStringLiteral("cpp"));
  QVERIFY(headCode.value(QStringLiteral("text")).toString().startsWith(QStringLiteral("line 0\nline 1\n")));
  QVERIFY(headCode.value(QStringLiteral("text")).toString().size() <= 200 - 6);
  QCOMPARE(headCode.value(QStringLiteral("whole")).toString(), blocks[1].toMap().value(QStringLiteral("text")).toString());
  const QVariantList tail = longmessage::tailBlocks(blocks, 200, 30);
  QCOMPARE(tail.size(), 2);
  QCOMPARE(tail[0].toMap().value(QStringLiteral("kind")).toString(), QStringLiteral("code"));
  QVERIFY(tail[0].toMap().value(QStringLiteral("text")).toString().endsWith(QStringLiteral("line 199")));
  QCOMPARE(tail[1].toMap().value(QStringLiteral("text")).toString(), QStringLiteral("Outro."));
}

// A long reply shows its end while it is written, its beginning once finished, all of it once expanded
// (also after the chat reloads for the next message); the content role is always the whole text.
void TestChatController::longMessagesShowCutUntilExpanded() {
  ChatMessageModel* messages = m_chat->messages();
  QString longText;
  for (int i = 0; i < 800; ++i) longText += QStringLiteral("word%1 ").arg(i);
  QVERIFY(longmessage::isLong(longText));
  QVERIFY(m_chat->send(QStringLiteral("Tell me everything")));
  QCOMPARE(roleValue(*messages, 0, "cut").toString(), QString());
  QVERIFY(!roleValue(*messages, 0, "collapsible").toBool());
  m_engine->piece(longText);
  QCOMPARE(roleValue(*messages, 1, "cut").toString(), QStringLiteral("tail"));
  QVERIFY(roleValue(*messages, 1, "shownText").toString().size() <= longmessage::kShownChars);
  QVERIFY(longText.trimmed().endsWith(roleValue(*messages, 1, "shownText").toString().trimmed()));
  m_engine->finish();
  QCOMPARE(roleValue(*messages, 1, "cut").toString(), QStringLiteral("head"));
  const QString shown = roleValue(*messages, 1, "shownText").toString();
  QVERIFY(shown.size() <= longmessage::kShownChars && shown.size() > longmessage::kShownChars / 2);
  QVERIFY(longText.startsWith(shown));
  QCOMPARE(roleValue(*messages, 1, "content").toString(), longText);
  QCOMPARE(roleValue(*messages, 1, "length").toInt(), longText.size());
  const QVariantList blocks = roleValue(*messages, 1, "blocks").toList();
  QCOMPARE(blocks.size(), 1);
  QCOMPARE(blocks[0].toMap().value(QStringLiteral("text")).toString(), shown);

  const qint64 reply = messages->rowAt(1).message.id;
  m_chat->setMessageExpanded(reply, true);
  QCOMPARE(roleValue(*messages, 1, "cut").toString(), QString());
  QCOMPARE(roleValue(*messages, 1, "shownText").toString(), longText);
  QVERIFY(roleValue(*messages, 1, "collapsible").toBool());  // so the view offers "Show less"
  // The next message reloads the chat: the reply stays expanded; the long question is cut.
  QVERIFY(m_chat->send(longText));
  QCOMPARE(messages->rowAt(1).message.id, reply);
  QCOMPARE(roleValue(*messages, 1, "cut").toString(), QString());
  QCOMPARE(roleValue(*messages, 2, "cut").toString(), QStringLiteral("head"));
  m_engine->reply(QStringLiteral("ok"));
  m_chat->setMessageExpanded(reply, false);
  QCOMPARE(roleValue(*messages, 1, "cut").toString(), QStringLiteral("head"));
  // A search hit inside a long message shows it whole: the words found may be past the cut.
  const qint64 chatId = m_store->message(reply).chatId;
  m_chat->newChat();
  m_chat->openSearchHit(chatId, reply);
  QCOMPARE(roleValue(*messages, messages->rowOf(reply), "cut").toString(), QString());
}

QTEST_GUILESS_MAIN(TestChatController)
void TestChatController::newestFirstFollowsTheMessages() {
  QAbstractItemModel* view = m_chat->messagesNewestFirst();
  QVERIFY(m_chat->send(QStringLiteral("first")));
  m_engine->piece(QStringLiteral("partial"));
  QCOMPARE(view->rowCount(), 2);
  QCOMPARE(roleValue(*view, 0, "content").toString(), QStringLiteral("partial"));  // streaming: the newest row
  QCOMPARE(roleValue(*view, 1, "content").toString(), QStringLiteral("first"));
  m_engine->piece(QStringLiteral(" reply"));
  QCOMPARE(roleValue(*view, 0, "content").toString(), QStringLiteral("partial reply"));
  QCOMPARE(roleValue(*view, 0, "blocks").toList().size(), 1);  // the blocks follow the text as it streams
  m_engine->finish();
  QVERIFY(m_chat->send(QStringLiteral("second")));
  m_engine->reply(QStringLiteral("done"));
  QCOMPARE(view->rowCount(), 4);
  QCOMPARE(roleValue(*view, 0, "content").toString(), QStringLiteral("done"));
  QCOMPARE(roleValue(*view, 3, "content").toString(), QStringLiteral("first"));
}

void TestChatController::maxTokensFollowsTheModelUntilChosen() {
  const QString key = QStringLiteral("maxTokens");
  QCOMPARE(m_chat->generationSettings().value(key).toInt(), 256);
  m_chat->handleModelChanged(512);  // a quarter of a small context
  QCOMPARE(m_chat->generationSettings().value(key).toInt(), 128);
  m_chat->handleModelChanged(8192);
  QCOMPARE(m_chat->generationSettings().value(key).toInt(), 256);
  // Other settings changed: maxTokens still follows the model.
  m_chat->setGenerationSettings({{QStringLiteral("temperature"), 0.5}});
  m_chat->handleModelChanged(400);
  QCOMPARE(m_chat->generationSettings().value(key).toInt(), 100);
  // Picked by the user: kept, whatever the model.
  m_chat->setGenerationSettings({{key, 300}});
  m_chat->handleModelChanged(512);
  QCOMPARE(m_chat->generationSettings().value(key).toInt(), 300);
  // The request carries it.
  QVERIFY(m_chat->send(QStringLiteral("hello")));
  QCOMPARE(m_engine->requests.last().settings.max_tokens, int64_t(300));
}

void TestChatController::changedSettingsRoundTrip() {
  QVERIFY(m_chat->changedGenerationSettings().isEmpty());
  m_chat->setGenerationSettings({{QStringLiteral("temperature"), 0.25}, {QStringLiteral("topK"), 7}});
  QVariantMap changed = m_chat->changedGenerationSettings();
  QCOMPARE(changed.keys(), (QStringList{QStringLiteral("temperature"), QStringLiteral("topK")}));
  // Another session: the same settings; maxTokens, never picked, follows that session's model.
  makeController();
  m_chat->handleModelChanged(512);
  m_chat->restoreGenerationSettings(changed);
  QCOMPARE(m_chat->generationSettings().value(QStringLiteral("temperature")).toDouble(), 0.25);
  QCOMPARE(m_chat->generationSettings().value(QStringLiteral("topK")).toInt(), 7);
  QCOMPARE(m_chat->generationSettings().value(QStringLiteral("maxTokens")).toInt(), 128);
  // A picked maxTokens is kept too.
  m_chat->setGenerationSettings({{QStringLiteral("maxTokens"), 64}});
  changed = m_chat->changedGenerationSettings();
  QCOMPARE(changed.value(QStringLiteral("maxTokens")).toInt(), 64);
  makeController();
  m_chat->restoreGenerationSettings(changed);
  m_chat->handleModelChanged(4096);
  QCOMPARE(m_chat->generationSettings().value(QStringLiteral("maxTokens")).toInt(), 64);
  QCOMPARE(m_chat->generationSettings().value(QStringLiteral("temperature")).toDouble(), 0.25);
}

void TestChatController::turnsLeftOutAreNotedOnTheReply() {
  QVERIFY(m_chat->send(QStringLiteral("hello")));
  m_chat->handleTurnsLeftOut(2);
  m_engine->piece(QStringLiteral("hi"));
  m_engine->finish(QStringLiteral("context_full"));
  const StoredMessage reply = m_store->message(m_chat->messages()->rowAt(1).message.id);
  QCOMPARE(reply.stats.value(QStringLiteral("turnsLeftOut")).toInt(), 2);
  const QString stats = roleValue(*m_chat->messages(), 1, "statsText").toString();
  QVERIFY2(stats.contains(QStringLiteral("the oldest 2 messages were not read")) &&
               stats.contains(QStringLiteral("stopped: context full")),
           qPrintable(stats));
  // The next reply starts without the note.
  QVERIFY(m_chat->send(QStringLiteral("again")));
  m_engine->reply(QStringLiteral("ok"));
  QVERIFY(!m_store->message(m_chat->messages()->rowAt(3).message.id).stats.contains(QStringLiteral("turnsLeftOut")));
}

#include "test_chat_controller.moc"
