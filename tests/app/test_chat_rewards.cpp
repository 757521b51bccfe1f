// Chat's reward scores: ChatController asks for a reply's score with the conversation above it, keeps it
// per message for the session and shows it only while the reply and its conversation are the ones scored;
// a comparison's two replies are scored side by side and the kept one keeps its score. Against a fake
// scorer (answers by hand), and once end to end with the real RewardScorer on a tiny reward model.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "engine/align/reward_model.h"
#include "services/chatcontroller.h"
#include "support/chat_controller_rig.h"
#include "services/rewardscorer.h"
#include "support/tiny_reward_model.h"

namespace {

// Records the score requests, as FakeChatEngine records the generation requests.
struct ScoreRequest {
  quint64 id;
  QList<ChatTurn> prompt;
  QString reply;
};

}  // namespace

class TestChatRewards : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init();
  void cleanup();
  void scoreIsKeptForTheReplyAndConversationScored();
  void failuresAndLateAnswers();
  void refusals();
  void comparisonScoresBothRepliesAndTheKeptOneKeepsItsScore();
  void realScorerScoresAMessage();

 private:
  qint64 chatWithOneReply();
  QVariantMap shownScore(qint64 messageId) const {
    return m_chat->rewardScores().value(QString::number(messageId)).toMap();
  }
  const StoredMessage& lastMessage() const { return m_chat->messages()->rows().constLast().message; }

  std::unique_ptr<ChatControllerRig> m_rig;
  // Into m_rig, for the tests' brevity.
  QTemporaryDir* m_dir = nullptr;
  ChatController* m_chat = nullptr;
  FakeChatEngine* m_engine = nullptr;
  QList<ScoreRequest> m_scores;
};

void TestChatRewards::init() {
  m_rig = std::make_unique<ChatControllerRig>();
  QVERIFY(m_rig->opened);
  m_dir = &m_rig->dir;
  m_chat = &m_rig->chat;
  m_engine = &m_rig->engine;
  m_scores.clear();
  connect(m_chat, &ChatController::scoreRequested, this,
          [this](quint64 id, const QList<ChatTurn>& prompt, const QString& reply) {
            m_scores << ScoreRequest{id, prompt, reply};
          });
}

void TestChatRewards::cleanup() { m_rig.reset(); }

qint64 TestChatRewards::chatWithOneReply() {
  m_chat->newChat();
  m_chat->setGenerationSettings({{QStringLiteral("temperature"), 0.7}});
  if (!m_chat->send(QStringLiteral("question"))) return 0;
  m_engine->reply(QStringLiteral("first"));
  return lastMessage().id;
}

void TestChatRewards::scoreIsKeptForTheReplyAndConversationScored() {
  const qint64 reply = chatWithOneReply();
  QVERIFY(reply);
  m_chat->setSystemPrompt(QStringLiteral("Be brief."));
  QSignalSpy modelChanged(m_chat, &ChatController::rewardModelChanged);
  m_chat->setRewardModel(QStringLiteral("rm"));
  QCOMPARE(modelChanged.size(), 1);
  QCOMPARE(m_chat->rewardModelName(), QStringLiteral("rm"));

  QVERIFY2(m_chat->scoreMessage(reply), qPrintable(m_chat->lastError()));
  QCOMPARE(m_scores.size(), 1);
  QCOMPARE(turnTexts(m_scores[0].prompt),
           QStringList({QStringLiteral("system:Be brief."), QStringLiteral("user:question")}));
  QCOMPARE(m_scores[0].reply, QStringLiteral("first"));
  QCOMPARE(shownScore(reply).value(QStringLiteral("pending")).toBool(), true);
  QCOMPARE(shownScore(reply).value(QStringLiteral("text")).toString(), QString());

  m_chat->handleScore(m_scores[0].id, 0.5, 0);
  QCOMPARE(shownScore(reply).value(QStringLiteral("pending")).toBool(), false);
  QCOMPARE(shownScore(reply).value(QStringLiteral("text")).toString(), QStringLiteral("+0.50"));
  QCOMPARE(shownScore(reply).value(QStringLiteral("score")).toDouble(), 0.5);
  // Scored already: asking again asks nothing.
  QVERIFY(m_chat->scoreLastReply());
  QCOMPARE(m_scores.size(), 1);

  // Another chat and back: the score is still there (in memory, for the session).
  const qint64 chat = m_chat->currentChatId();
  m_chat->newChat();
  QVERIFY(m_chat->rewardScores().isEmpty());
  m_chat->selectChat(chat);
  QCOMPARE(shownScore(reply).value(QStringLiteral("text")).toString(), QStringLiteral("+0.50"));

  // Another system prompt: the reply answers another conversation, so the score is not shown; scoring
  // again asks for a new one.
  m_chat->setSystemPrompt(QStringLiteral("Be long."));
  QVERIFY(shownScore(reply).isEmpty());
  QVERIFY(m_chat->scoreMessage(reply));
  QCOMPARE(m_scores.size(), 2);
  QCOMPARE(m_scores[1].prompt.first().content, QStringLiteral("Be long."));
  m_chat->handleScore(m_scores[1].id, -1.25, 3);
  QCOMPARE(shownScore(reply).value(QStringLiteral("text")).toString(), QStringLiteral("-1.25"));
  QCOMPARE(shownScore(reply).value(QStringLiteral("turnsLeftOut")).toInt(), 3);

  // A continued reply is another text: no score shown.
  QVERIFY(m_chat->continueReply(reply));
  m_engine->reply(QStringLiteral(" and more"));
  QVERIFY(shownScore(reply).isEmpty());

  // Another reward model forgets every score.
  m_chat->setSystemPrompt(QStringLiteral("Be brief."));
  QVERIFY(m_chat->scoreMessage(reply));
  m_chat->handleScore(m_scores.constLast().id, 0.25, 0);
  QVERIFY(!shownScore(reply).isEmpty());
  m_chat->setRewardModel(QStringLiteral("rm2"));
  QVERIFY(m_chat->rewardScores().isEmpty());
}

void TestChatRewards::failuresAndLateAnswers() {
  const qint64 reply = chatWithOneReply();
  m_chat->setRewardModel(QStringLiteral("rm"));
  QVERIFY(m_chat->scoreMessage(reply));
  m_chat->handleScoreFailed(m_scores[0].id, QStringLiteral("too long"));
  QCOMPARE(shownScore(reply).value(QStringLiteral("error")).toString(), QStringLiteral("too long"));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("could not be scored: too long")));
  // A failed score is asked for again.
  QVERIFY(m_chat->scoreMessage(reply));
  QCOMPARE(m_scores.size(), 2);
  // The answer to a request of an older conversation is dropped.
  m_chat->setSystemPrompt(QStringLiteral("Other."));
  QVERIFY(m_chat->scoreMessage(reply));
  QCOMPARE(m_scores.size(), 3);
  m_chat->handleScore(m_scores[1].id, 9.0, 0);
  QVERIFY(shownScore(reply).value(QStringLiteral("pending")).toBool());
  m_chat->handleScore(m_scores[2].id, 1.0, 0);
  QCOMPARE(shownScore(reply).value(QStringLiteral("text")).toString(), QStringLiteral("+1.00"));
  // Answers of the reward model before the current one are dropped.
  QVERIFY(m_chat->continueReply(reply));
  m_engine->reply(QStringLiteral("!"));
  QVERIFY(m_chat->scoreMessage(reply));
  const quint64 old = m_scores.constLast().id;
  m_chat->setRewardModel(QStringLiteral("rm2"));
  m_chat->handleScore(old, 5.0, 0);
  QVERIFY(m_chat->rewardScores().isEmpty());
}

void TestChatRewards::refusals() {
  const qint64 reply = chatWithOneReply();
  QVERIFY(!m_chat->scoreMessage(reply));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("Choose a reward model first")));
  m_chat->setRewardModel(QStringLiteral("rm"));
  const qint64 question = m_chat->messages()->rows().constFirst().message.id;
  QVERIFY(!m_chat->scoreMessage(question));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("Only the model's replies")));
  QVERIFY(!m_chat->scoreMessage(reply + 1000));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("not in the open chat")));
  // The reply being written.
  QVERIFY(m_chat->send(QStringLiteral("again")));
  m_engine->piece(QStringLiteral("par"));
  QVERIFY(!m_chat->scoreMessage(lastMessage().id));
  QVERIFY(m_chat->lastError().contains(QStringLiteral("still being written")));
  QVERIFY(m_scores.isEmpty());
  m_engine->finish();
  // An empty chat has no reply to score.
  m_chat->newChat();
  QVERIFY(!m_chat->scoreLastReply());
  QVERIFY(m_chat->lastError().contains(QStringLiteral("no reply to score")));
}

void TestChatRewards::comparisonScoresBothRepliesAndTheKeptOneKeepsItsScore() {
  const qint64 reply = chatWithOneReply();
  m_chat->setModelName(QStringLiteral("tiny"));
  // Without a reward model a comparison asks for no score.
  QVERIFY(m_chat->compareLastReply());
  QVERIFY(m_scores.isEmpty());
  QVERIFY(m_chat->compareOriginalScore().isEmpty());
  // A reward model chosen with the comparison open: A is scored at once, B once written.
  m_chat->setRewardModel(QStringLiteral("rm"));
  QCOMPARE(m_scores.size(), 1);
  QCOMPARE(m_scores[0].reply, QStringLiteral("first"));
  QCOMPARE(turnTexts(m_scores[0].prompt), QStringList({QStringLiteral("user:question")}));
  m_engine->piece(QStringLiteral("second"));
  QVERIFY(m_chat->compareAlternativeScore().isEmpty());
  m_engine->finish();
  QCOMPARE(m_scores.size(), 2);
  QCOMPARE(m_scores[1].reply, QStringLiteral("second"));
  QCOMPARE(m_scores[1].prompt.size(), 1);
  QVERIFY(m_chat->compareAlternativeScore().value(QStringLiteral("pending")).toBool());
  m_chat->handleScore(m_scores[0].id, 0.1, 0);
  m_chat->handleScore(m_scores[1].id, 0.9, 0);
  QCOMPARE(m_chat->compareOriginalScore().value(QStringLiteral("text")).toString(), QStringLiteral("+0.10"));
  QCOMPARE(m_chat->compareAlternativeScore().value(QStringLiteral("text")).toString(), QStringLiteral("+0.90"));
  // A is the chat's reply: its badge in the chat shows the same score.
  QCOMPARE(shownScore(reply).value(QStringLiteral("text")).toString(), QStringLiteral("+0.10"));

  QVERIFY2(m_chat->keepComparison(QStringLiteral("B")), qPrintable(m_chat->lastError()));
  QVERIFY(m_chat->compareAlternativeScore().isEmpty());
  QCOMPARE(lastMessage().content, QStringLiteral("second"));
  QCOMPARE(shownScore(reply).value(QStringLiteral("text")).toString(), QStringLiteral("+0.90"));
  QCOMPARE(m_scores.size(), 2);

  // A comparison dismissed: B's score goes with it; an edited pick is not the text scored.
  QVERIFY(m_chat->compareLastReply());
  m_engine->reply(QStringLiteral("third"));
  QCOMPARE(m_scores.size(), 3);
  m_chat->handleScore(m_scores[2].id, 2.0, 0);
  QVERIFY2(m_chat->keepComparison(QStringLiteral("B"), QStringLiteral("third, edited")),
           qPrintable(m_chat->lastError()));
  QVERIFY(shownScore(reply).isEmpty());
}

void TestChatRewards::realScorerScoresAMessage() {
  const QString dir = m_dir->filePath(QStringLiteral("rm"));
  writeTinyRewardModel(dir, 21, 256);
  RewardScorer scorer;
  // As AppController wires them.
  connect(&scorer, &RewardScorer::stateChanged, m_chat,
          [&] { m_chat->setRewardModel(scorer.ready() ? scorer.modelName() : QString()); });
  connect(m_chat, &ChatController::scoreRequested, &scorer, &RewardScorer::score);
  connect(&scorer, &RewardScorer::scored, m_chat,
          [&](quint64 id, const RewardScore& s) { m_chat->handleScore(id, s.score, s.turnsLeftOut); });
  connect(&scorer, &RewardScorer::scoreFailed, m_chat, &ChatController::handleScoreFailed);

  const qint64 reply = chatWithOneReply();
  scorer.load(dir);
  QTRY_COMPARE(m_chat->rewardModelName(), QStringLiteral("rm"));
  QVERIFY(m_chat->scoreMessage(reply));
  QTRY_VERIFY(!shownScore(reply).value(QStringLiteral("pending")).toBool());
  engine::RewardModel direct(dir.toStdString(), 1);
  QCOMPARE(float(shownScore(reply).value(QStringLiteral("score")).toDouble()), direct.score("question", "first"));
  QVERIFY(shownScore(reply).value(QStringLiteral("text")).toString().length() >= 5);
}

QTEST_GUILESS_MAIN(TestChatRewards)

#include "test_chat_rewards.moc"
