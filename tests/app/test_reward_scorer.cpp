// RewardScorer on a tiny reward model: a score is the engine's own (engine::RewardModel::score) and the
// same each time, in the background as in place; a long conversation loses its oldest exchanges (said
// in the score) and a reply too long for the context is refused; a folder that is not a reward model,
// a tokenizer the weights do not match and a reply that answers no user turn give clear errors; the app's
// finished reward runs are listed.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "engine/align/reward_model.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "services/rewardscorer.h"
#include "services/store/database.h"
#include "services/store/runstore.h"
#include "support/tiny_reward_model.h"
#include "support/tiny_tokenizer.h"

namespace {

QString messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

QList<ChatTurn> oneQuestion() { return {{QStringLiteral("user"), QStringLiteral("what is a bird")}}; }

}  // namespace

class TestRewardScorer : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void scoreIsTheEnginesAndDeterministic();
  void scoresInTheBackground();
  void longConversationLosesItsOldestExchanges();
  void replyLongerThanTheContextIsRefused();
  void notARewardModel();
  void tokenizerThatDoesNotMatchTheWeights();
  void replyMustAnswerAUserTurn();
  void trainedRewardModelsAreTheFinishedRewardRuns();

 private:
  QTemporaryDir m_dir;
  QString m_reward;  // context 256
  QString m_short;   // context 128
};

void TestRewardScorer::initTestCase() {
  QVERIFY(m_dir.isValid());
  m_reward = m_dir.filePath(QStringLiteral("reward"));
  writeTinyRewardModel(m_reward, 11, 256);
  m_short = m_dir.filePath(QStringLiteral("short"));
  writeTinyRewardModel(m_short, 12, 128);
  QVERIFY(engine::is_reward_model(m_reward.toStdString()));
}

void TestRewardScorer::scoreIsTheEnginesAndDeterministic() {
  const auto model = RewardScorer::loadModel(m_reward, 1);
  const QList<ChatTurn> prompt{{QStringLiteral("system"), QStringLiteral("be kind")},
                               {QStringLiteral("user"), QStringLiteral("hello")},
                               {QStringLiteral("assistant"), QStringLiteral("hi there")},
                               {QStringLiteral("user"), QStringLiteral("what is a bird")}};
  const RewardScore first = RewardScorer::scoreWith(*model, prompt, QStringLiteral("a feathered animal"));
  const RewardScore again = RewardScorer::scoreWith(*model, prompt, QStringLiteral("a feathered animal"));
  QCOMPARE(again.score, first.score);
  QCOMPARE(first.turnsLeftOut, 0);
  QVERIFY(first.tokens > 20);

  // The engine's score of the same conversation, from a model loaded apart.
  engine::RewardModel direct(m_reward.toStdString(), 1);
  const float expected = direct.score({{"system", "be kind"},
                                       {"user", "hello"},
                                       {"assistant", "hi there"},
                                       {"user", "what is a bird"}},
                                      "a feathered animal");
  QCOMPARE(first.score, expected);
  // Another reply, another reward: the score reads the reply.
  QVERIFY(RewardScorer::scoreWith(*model, prompt, QStringLiteral("no idea")).score != first.score);
}

void TestRewardScorer::scoresInTheBackground() {
  RewardScorer scorer;
  QSignalSpy state(&scorer, &RewardScorer::stateChanged);
  QSignalSpy scored(&scorer, &RewardScorer::scored);
  QSignalSpy failed(&scorer, &RewardScorer::scoreFailed);
  scorer.load(QUrl::fromLocalFile(m_reward).toString());
  QVERIFY(scorer.loading());
  QCOMPARE(scorer.modelPath(), m_reward);
  QCOMPARE(scorer.modelName(), QStringLiteral("reward"));
  // Asked before the model is ready: answered once it is.
  scorer.score(7, oneQuestion(), QStringLiteral("a feathered animal"));
  QTRY_COMPARE(scored.size(), 1);
  QVERIFY(scorer.ready());
  QCOMPARE(scorer.contextLength(), 256);
  QCOMPARE(scored.at(0).at(0).toULongLong(), quint64(7));
  engine::RewardModel direct(m_reward.toStdString(), 1);
  QCOMPARE(scored.at(0).at(1).value<RewardScore>().score, direct.score("what is a bird", "a feathered animal"));

  // Scores asked of a model since replaced are dropped, not answered with the old model's.
  scorer.score(8, oneQuestion(), QStringLiteral("a feathered animal"));
  scorer.load(m_short);
  scorer.score(9, oneQuestion(), QStringLiteral("a feathered animal"));
  QTRY_COMPARE(scored.size(), 2);
  QTest::qWait(50);
  QCOMPARE(scored.size(), 2);
  QCOMPARE(scored.at(1).at(0).toULongLong(), quint64(9));
  QCOMPARE(scorer.contextLength(), 128);

  // Unloaded: a score is refused at once.
  scorer.unload();
  QVERIFY(!scorer.ready());
  scorer.score(10, oneQuestion(), QStringLiteral("x"));
  QCOMPARE(failed.size(), 1);
  QCOMPARE(failed.at(0).at(0).toULongLong(), quint64(10));
  QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("Choose a reward model")));
}

void TestRewardScorer::longConversationLosesItsOldestExchanges() {
  const auto model = RewardScorer::loadModel(m_short, 1);
  const QList<ChatTurn> prompt{{QStringLiteral("system"), QStringLiteral("be brief")},
                               {QStringLiteral("user"), QStringLiteral("first question here")},
                               {QStringLiteral("assistant"), QStringLiteral("first answer here")},
                               {QStringLiteral("user"), QStringLiteral("why")}};
  const RewardScore s = RewardScorer::scoreWith(*model, prompt, QStringLiteral("because"));
  QVERIFY2(s.turnsLeftOut >= 2, qPrintable(QString::number(s.turnsLeftOut)));
  QVERIFY(s.tokens <= 128);
  // What it read: the newest exchange (with the system prompt when it fits), scored by the engine.
  engine::RewardModel direct(m_short.toStdString(), 1);
  const float withSystem = direct.score({{"system", "be brief"}, {"user", "why"}}, "because");
  const float alone = direct.score({{"user", "why"}}, "because");
  QCOMPARE(s.score, s.turnsLeftOut == 2 ? withSystem : alone);
}

void TestRewardScorer::replyLongerThanTheContextIsRefused() {
  const auto model = RewardScorer::loadModel(m_short, 1);
  const QString error = messageOf(
      [&] { RewardScorer::scoreWith(*model, oneQuestion(), QStringLiteral("a very long reply ").repeated(10)); });
  QVERIFY2(error.contains(QStringLiteral("longer than the reward model's context (128 tokens)")), qPrintable(error));
}

void TestRewardScorer::notARewardModel() {
  const QString plain = m_dir.filePath(QStringLiteral("plain"));
  writeTinyTextModel(plain, 3, 64);
  QString error = messageOf([&] { RewardScorer::loadModel(plain, 1); });
  QVERIFY2(error.contains(QStringLiteral("plain is not a reward model")), qPrintable(error));
  QVERIFY(error.contains(QStringLiteral("--recipe reward")));
  error = messageOf([&] { RewardScorer::loadModel(m_dir.filePath(QStringLiteral("nowhere")), 1); });
  QVERIFY2(error.contains(QStringLiteral("does not exist")), qPrintable(error));

  // In the background: the state says why, and nothing can be scored.
  RewardScorer scorer;
  scorer.load(plain);
  QTRY_VERIFY(!scorer.loading());
  QVERIFY(!scorer.ready());
  QVERIFY(scorer.error().contains(QStringLiteral("not a reward model")));
  QSignalSpy failed(&scorer, &RewardScorer::scoreFailed);
  scorer.score(1, oneQuestion(), QStringLiteral("x"));
  QCOMPARE(failed.size(), 1);
  QCOMPARE(failed.at(0).at(1).toString(), scorer.error());
}

void TestRewardScorer::tokenizerThatDoesNotMatchTheWeights() {
  // The 512-token tokenizer beside weights with 400 embeddings: merges up to "ip" (id 399) fit, "op" (id 495)
  // does not.
  const QString dir = m_dir.filePath(QStringLiteral("mismatch"));
  engine::ModelConfig c;
  c.arch = engine::Arch::GPT2;
  c.n_layer = 1;
  c.n_embd = 32;
  c.n_head = 2;
  c.n_kv_head = 2;
  c.vocab_size = 400;
  c.max_seq_len = 128;
  c.ffn_dim = 64;
  engine::Model weights(c);
  weights.init_random(5);
  const QString tokenizerDir = dir + QStringLiteral("-tokenizer");
  QVERIFY(QDir().mkpath(tokenizerDir));
  writeTinyTokenizer(tokenizerDir);
  engine::save_hf_directory(weights, dir.toStdString(), tokenizerDir.toStdString(), "{}");
  engine::save_reward_head(dir.toStdString(), std::vector<float>(32, 0.1f), "chatml");

  // The folder loads (its weights and tokenizer are each well formed); what reads past the weights is refused.
  const auto model = RewardScorer::loadModel(dir, 1);
  QVERIFY(RewardScorer::scoreWith(*model, oneQuestion(), QStringLiteral("ab")).tokens > 0);
  const QString error = messageOf([&] { RewardScorer::scoreWith(*model, oneQuestion(), QStringLiteral("hop op")); });
  QVERIFY2(error.contains(QStringLiteral("weights have only 400 tokens")), qPrintable(error));
  QVERIFY(error.contains(QStringLiteral("not the one it was trained with")));
}

void TestRewardScorer::replyMustAnswerAUserTurn() {
  const auto model = RewardScorer::loadModel(m_reward, 1);
  QString error = messageOf([&] {
    RewardScorer::scoreWith(*model, {{QStringLiteral("system"), QStringLiteral("be kind")}}, QStringLiteral("hi"));
  });
  QVERIFY2(error.contains(QStringLiteral("reply to a message of yours")), qPrintable(error));
  error = messageOf([&] { RewardScorer::scoreWith(*model, oneQuestion(), QStringLiteral("  ")); });
  QVERIFY2(error.contains(QStringLiteral("empty reply")), qPrintable(error));
}

void TestRewardScorer::trainedRewardModelsAreTheFinishedRewardRuns() {
  Database db;
  QCOMPARE(db.open(m_dir.filePath(QStringLiteral("runs.db"))), Database::OpenState::Ok);
  RunStore runs(db);
  auto add = [&](const QString& name, const QString& recipe, const QString& status, const QString& dir) {
    StoredRun run;
    run.name = name;
    run.recipe = recipe;
    run.status = status;
    run.outputDir = dir;
    return runs.createRun(run);
  };
  QVERIFY(add(QStringLiteral("rm"), QStringLiteral("reward"), QStringLiteral("done"), m_reward));
  QVERIFY(add(QStringLiteral("running"), QStringLiteral("reward"), QStringLiteral("running"), m_short));
  QVERIFY(add(QStringLiteral("sft"), QStringLiteral("sft"), QStringLiteral("done"), m_short));
  QVERIFY(add(QStringLiteral("gone"), QStringLiteral("reward"), QStringLiteral("done"), m_dir.filePath("gone")));
  RewardScorer scorer;
  QVERIFY(scorer.trainedRewardModels().isEmpty());  // no store: nothing listed
  scorer.setRunStore(&runs);
  const QVariantList listed = scorer.trainedRewardModels();
  QCOMPARE(listed.size(), 1);
  QCOMPARE(listed.at(0).toMap().value(QStringLiteral("name")).toString(), QStringLiteral("rm"));
  QCOMPARE(listed.at(0).toMap().value(QStringLiteral("path")).toString(), m_reward);
}

QTEST_GUILESS_MAIN(TestRewardScorer)

#include "test_reward_scorer.moc"
