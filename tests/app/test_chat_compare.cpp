// Chat's Compare against a fake engine (as test_chat_controller does): the second reply's request,
// its streaming beside the chat, the pick (plain and edited) replacing the chat's reply and saving the
// pair, stop / dismiss / failure, and the refusals. The stores underneath are a real SQLite file.
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTest>

#include <memory>

#include "services/chatcontroller.h"
#include "support/chat_controller_rig.h"

class TestChatCompare : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init();
  void cleanup();
  void secondReplyStreamsBesideTheChatAndThePickIsKept();
  void editedPickOfTheOriginal();
  void commandsWaitForThePick();
  void dismissStopAndEmptyReplies();
  void failureClosesTheComparison();
  void refusals();

 private:
  // A chat with one exchange: "question" answered "first".
  qint64 chatWithOneReply();
  const StoredMessage& lastMessage() const { return m_chat->messages()->rows().constLast().message; }

  std::unique_ptr<ChatControllerRig> m_rig;
  // Into m_rig, for the tests' brevity.
  Database* m_db = nullptr;
  ChatStore* m_store = nullptr;
  PreferenceStore* m_preferences = nullptr;
  ChatController* m_chat = nullptr;
  FakeChatEngine* m_engine = nullptr;
};

void TestChatCompare::init() {
  m_rig = std::make_unique<ChatControllerRig>();
  QVERIFY(m_rig->opened);
  m_db = &m_rig->db;
  m_store = &m_rig->store;
  m_preferences = &m_rig->preferences;
  m_chat = &m_rig->chat;
  m_engine = &m_rig->engine;
  m_chat->setModelName(QStringLiteral("tiny-model"));
}

void TestChatCompare::cleanup() { m_rig.reset(); }

qint64 TestChatCompare::chatWithOneReply() {
  const qint64 chat = m_chat->newChat();
  if (!m_chat->send(QStringLiteral("question"))) return 0;
  m_engine->reply(QStringLiteral("first"));
  return chat;
}

void TestChatCompare::secondReplyStreamsBesideTheChatAndThePickIsKept() {
  m_chat->newChat();
  m_chat->setSystemPrompt(QStringLiteral("Be brief."));
  m_chat->setGenerationSettings({{QStringLiteral("temperature"), 0.7}});
  QVERIFY(m_chat->send(QStringLiteral("question")));
  m_engine->reply(QStringLiteral("first"));
  const qint64 reply = lastMessage().id;
  const qint64 originalSeed = lastMessage().settings.value(QStringLiteral("seed")).toLongLong();
  QVERIFY(originalSeed > 0);
  // Settings changed after the reply: the comparison uses the reply's own.
  m_chat->setGenerationSettings({{QStringLiteral("temperature"), 1.3}});

  QSignalSpy changed(m_chat, &ChatController::comparisonChanged);
  QVERIFY(m_chat->compareLastReply());
  QVERIFY(m_chat->comparing());
  QVERIFY(m_chat->compareWriting());
  QVERIFY(m_chat->generating());
  QCOMPARE(m_chat->compareMessageId(), reply);
  QCOMPARE(m_chat->compareOriginal(), QStringLiteral("first"));
  QVERIFY(changed.count() >= 1);
  QCOMPARE(m_engine->requests.size(), 2);
  const FakeChatEngine::Request& request = m_engine->requests.constLast();
  QCOMPARE(turnTexts(request.turns),
           QStringList({QStringLiteral("system:Be brief."), QStringLiteral("user:question")}));
  QVERIFY(request.continuation.isEmpty());
  QCOMPARE(request.settings.temperature, 0.7);
  QVERIFY(request.settings.seed >= 0);
  QVERIFY(request.settings.seed != originalSeed);

  // B streams beside the chat; the chat itself does not change.
  m_engine->piece(QStringLiteral("sec"));
  m_engine->piece(QStringLiteral("ond"));
  QCOMPARE(m_chat->compareAlternative(), QStringLiteral("second"));
  QCOMPARE(m_chat->messages()->rowCount(), 2);
  QCOMPARE(lastMessage().content, QStringLiteral("first"));
  QCOMPARE(m_store->message(reply).content, QStringLiteral("first"));
  // Picking before B has finished is refused.
  QVERIFY(!m_chat->keepComparison(QStringLiteral("B")));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("still being written")));
  m_chat->handleTurnsLeftOut(2);  // the engine left the oldest turns out of B's prompt, and says so
  m_engine->finish(QStringLiteral("eos"), 3, 777);
  QVERIFY(!m_chat->compareWriting());
  QVERIFY(!m_chat->generating());
  QVERIFY(m_chat->compareAlternativeStats().contains(QStringLiteral("3 tokens")));
  QCOMPARE(m_preferences->count(), 0);  // nothing is saved before the pick

  QSignalSpy saved(m_chat, &ChatController::preferencePairSaved);
  QVERIFY2(m_chat->keepComparison(QStringLiteral("B")), qPrintable(m_chat->lastError()));
  QVERIFY(!m_chat->comparing());
  QCOMPARE(saved.count(), 1);
  // The chat's reply is now B (same message, no extra branch), with B's seed.
  QCOMPARE(m_chat->messages()->rowCount(), 2);
  QCOMPARE(lastMessage().id, reply);
  QCOMPARE(lastMessage().content, QStringLiteral("second"));
  QCOMPARE(m_store->message(reply).content, QStringLiteral("second"));
  QCOMPARE(m_store->message(reply).settings.value(QStringLiteral("seed")).toString(), QStringLiteral("777"));
  QCOMPARE(m_store->message(reply).stats.value(QStringLiteral("turnsLeftOut")).toInt(), 2);
  QCOMPARE(m_store->siblings(reply).size(), 1);

  const QList<StoredPreferencePair> pairs = m_preferences->pairs();
  QCOMPARE(pairs.size(), 1);
  QCOMPARE(pairs[0].id, saved.first().first().toLongLong());
  QCOMPARE(pairs[0].chosen, QStringLiteral("second"));
  QCOMPARE(pairs[0].rejected, QStringLiteral("first"));
  QVERIFY(!pairs[0].chosenEdited);
  QCOMPARE(pairs[0].chatId, m_chat->currentChatId());
  QCOMPARE(pairs[0].model, QStringLiteral("tiny-model"));
  QCOMPARE(turnTexts(pairs[0].prompt),
           QStringList({QStringLiteral("system:Be brief."), QStringLiteral("user:question")}));

  // The conversation goes on from the kept reply.
  QVERIFY(m_chat->send(QStringLiteral("next")));
  QCOMPARE(turnTexts(m_engine->requests.constLast().turns).mid(1),
           QStringList(
               {QStringLiteral("user:question"), QStringLiteral("assistant:second"), QStringLiteral("user:next")}));
  m_engine->reply(QStringLiteral("third"));
}

void TestChatCompare::editedPickOfTheOriginal() {
  QVERIFY(chatWithOneReply());
  const qint64 reply = lastMessage().id;
  QVERIFY(m_chat->compareReply(reply));
  m_engine->reply(QStringLiteral("other"));
  QVERIFY(m_chat->keepComparison(QStringLiteral("a"), QStringLiteral("first, improved")));
  QCOMPARE(lastMessage().content, QStringLiteral("first, improved"));
  QVERIFY(lastMessage().stats.value(QStringLiteral("edited")).toBool());
  const StoredPreferencePair pair = m_preferences->pairs().first();
  QCOMPARE(pair.chosen, QStringLiteral("first, improved"));
  QCOMPARE(pair.rejected, QStringLiteral("other"));
  QVERIFY(pair.chosenEdited);
  QCOMPARE(turnTexts(pair.prompt), QStringList({QStringLiteral("user:question")}));

  // The same text on both sides is nothing to prefer: refused, the comparison stays open.
  QVERIFY(m_chat->compareLastReply());
  m_engine->reply(QStringLiteral("first, improved"));
  QVERIFY(!m_chat->keepComparison(QStringLiteral("B")));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("the same")));
  QVERIFY(m_chat->comparing());
  // Unless the user edits one of them.
  QVERIFY(m_chat->keepComparison(QStringLiteral("B"), QStringLiteral("best")));
  QCOMPARE(m_preferences->count(), 2);
  QCOMPARE(lastMessage().content, QStringLiteral("best"));
}

void TestChatCompare::commandsWaitForThePick() {
  QVERIFY(chatWithOneReply());
  const qint64 reply = lastMessage().id;
  QVERIFY(m_chat->compareReply(reply));
  m_engine->reply(QStringLiteral("other"));
  const int requests = int(m_engine->requests.size());
  QVERIFY(!m_chat->send(QStringLiteral("more")));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("dismiss")));
  QVERIFY(!m_chat->regenerate(reply));
  QVERIFY(!m_chat->continueReply(reply));
  QVERIFY(!m_chat->editMessage(reply, QStringLiteral("changed")));
  m_chat->deleteMessage(reply);
  QVERIFY(!m_chat->compareReply(reply));  // one comparison at a time
  QCOMPARE(m_engine->requests.size(), requests);
  QCOMPARE(m_chat->messages()->rowCount(), 2);
  QCOMPARE(m_store->siblings(reply).size(), 1);

  // Another chat: the comparison (of the first chat) is dismissed, nothing saved.
  const qint64 first = m_chat->currentChatId();
  m_chat->newChat();
  QVERIFY(!m_chat->comparing());
  QCOMPARE(m_preferences->count(), 0);
  m_chat->selectChat(first);
  QCOMPARE(lastMessage().content, QStringLiteral("first"));
}

void TestChatCompare::dismissStopAndEmptyReplies() {
  QVERIFY(chatWithOneReply());
  // Dismissed while B is written: the engine is told to stop; its late pieces and end change nothing.
  QVERIFY(m_chat->compareLastReply());
  m_engine->piece(QStringLiteral("half"));
  m_chat->dismissComparison();
  QCOMPARE(m_engine->stops, 1);
  QVERIFY(!m_chat->comparing());
  QVERIFY(m_chat->generating());  // until the engine confirms
  m_engine->piece(QStringLiteral(" more"));
  QVERIFY(m_chat->compareAlternative().isEmpty());
  m_engine->finish(QStringLiteral("cancelled"));
  QVERIFY(!m_chat->generating());
  QCOMPARE(m_chat->messages()->rowCount(), 2);
  QCOMPARE(lastMessage().content, QStringLiteral("first"));
  QCOMPARE(m_preferences->count(), 0);

  // Stopped part-way (the chat's stop, Esc): what B has is compared.
  QVERIFY(m_chat->compareLastReply());
  m_engine->piece(QStringLiteral("part"));
  m_chat->stop();
  QCOMPARE(m_engine->stops, 2);
  m_engine->finish(QStringLiteral("cancelled"));
  QVERIFY(m_chat->comparing());
  QCOMPARE(m_chat->compareAlternative(), QStringLiteral("part"));
  QVERIFY(m_chat->keepComparison(QStringLiteral("A")));
  QCOMPARE(m_preferences->pairs().first().rejected, QStringLiteral("part"));

  // Stopped before B wrote anything: nothing to prefer A to.
  QVERIFY(m_chat->compareLastReply());
  m_chat->stop();
  m_engine->finish(QStringLiteral("cancelled"));
  QVERIFY(!m_chat->keepComparison(QStringLiteral("A")));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("empty")));
  QVERIFY(m_chat->comparing());
  m_chat->dismissComparison();
  QVERIFY(!m_chat->comparing());
  QCOMPARE(m_engine->stops, 3);  // nothing was being written at the dismiss
  QCOMPARE(m_preferences->count(), 1);
}

void TestChatCompare::failureClosesTheComparison() {
  QVERIFY(chatWithOneReply());
  QVERIFY(m_chat->compareLastReply());
  m_chat->handleFailed(QStringLiteral("No model is loaded. Open one on the Models page."));
  QVERIFY(!m_chat->comparing());
  QVERIFY(!m_chat->generating());
  QVERIFY(m_chat->lastError().contains(QStringLiteral("second reply could not be written")));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("No model is loaded")));
  QCOMPARE(m_chat->messages()->rowCount(), 2);
  QCOMPARE(lastMessage().content, QStringLiteral("first"));

  // A refusal that arrives at once (the engine busy with the Playground) leaves no comparison either.
  connect(
      m_chat, &ChatController::generateRequested, this,
      [this] { m_chat->handleFailed(QStringLiteral("The engine is busy")); }, Qt::SingleShotConnection);
  QVERIFY(m_chat->compareLastReply());
  QVERIFY(!m_chat->comparing());
  QVERIFY(!m_chat->generating());
  QVERIFY(m_chat->lastError().contains(QStringLiteral("The engine is busy")));

  // The pair's write failing after the reply's update in the same transaction (the table is gone
  // behind the app's back): rolled back whole, said, and the comparison stays open.
  QVERIFY(m_chat->compareLastReply());
  m_engine->reply(QStringLiteral("other"));
  {
    QSqlDatabase raw = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
    raw.setDatabaseName(m_db->path());
    QVERIFY(raw.open());
    QVERIFY(QSqlQuery(raw).exec(QStringLiteral("DROP TABLE preference_pairs")));
    raw.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("raw"));
  QSignalSpy failed(m_db, &Database::writeFailed);
  QVERIFY(!m_chat->keepComparison(QStringLiteral("B")));
  QCOMPARE(failed.count(), 1);
  QVERIFY2(m_chat->lastError().startsWith(QStringLiteral("Could not save the preference pair")),
           qPrintable(m_chat->lastError()));
  QVERIFY(m_chat->comparing());
  QCOMPARE(m_store->message(lastMessage().id).content, QStringLiteral("first"));
  QCOMPARE(lastMessage().content, QStringLiteral("first"));
}

void TestChatCompare::refusals() {
  m_chat->newChat();
  QVERIFY(!m_chat->compareLastReply());
  QVERIFY(m_chat->lastError().contains(QStringLiteral("no reply")));

  QVERIFY(m_chat->send(QStringLiteral("one")));
  m_engine->reply(QStringLiteral("reply one"));
  const qint64 firstReply = lastMessage().id;
  QVERIFY(m_chat->send(QStringLiteral("two")));
  // While a reply is written.
  QVERIFY(!m_chat->compareReply(firstReply));
  m_engine->reply(QStringLiteral("reply two"));
  // Not the last reply; not a user message.
  QVERIFY(!m_chat->compareReply(firstReply));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("last reply")));
  QVERIFY(!m_chat->compareReply(m_chat->messages()->rows().at(2).message.id));

  // Greedy everywhere: every seed writes the same reply.
  m_chat->setGenerationSettings({{QStringLiteral("temperature"), 0.0}});
  QVERIFY(m_chat->regenerate(lastMessage().id));
  m_engine->reply(QStringLiteral("greedy"));
  QVERIFY(!m_chat->compareLastReply());
  QVERIFY(m_chat->lastError().contains(QStringLiteral("temperature 0")));
  // A greedy reply compared once the chat samples again: the chat's temperature is used.
  m_chat->setGenerationSettings({{QStringLiteral("temperature"), 0.9}});
  QVERIFY(m_chat->compareLastReply());
  QCOMPARE(m_engine->requests.constLast().settings.temperature, 0.9);
  m_chat->dismissComparison();
  m_engine->finish(QStringLiteral("cancelled"));

  // Without a place to save pairs.
  ChatController bare(m_store, &m_rig->inspections);
  bare.selectChat(m_chat->currentChatId());
  QVERIFY(!bare.compareLastReply());
  QVERIFY(bare.lastError().contains(QStringLiteral("cannot be saved")));
  QVERIFY(!bare.comparing());
}

QTEST_GUILESS_MAIN(TestChatCompare)
#include "test_chat_compare.moc"
