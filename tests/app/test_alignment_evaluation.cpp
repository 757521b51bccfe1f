// The alignment recipes' Evaluate step (app/services/alignmentevaluation.h) on a tiny model: short real runs
// of each kind, whose trained model is then measured against the starting one on the held-out data. The
// numbers must be the ones the run's own last validation logged (the same held-out pairs or prompts, the same
// computation), and a model measured against itself must show no change.
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>

#include "engine/error.h"
#include "services/alignmentevaluation.h"
#include "services/trainingsetup.h"
#include "support/tiny_text_model.h"

namespace {

// Trains the run and returns its last validation metrics.
std::map<std::string, double> train(const QVariantMap& settings, const QString& out) {
  std::unique_ptr<engine::TrainingRun> run = buildTrainingSession(settings, out);
  std::map<std::string, double> last;
  run->trainer->run([&](const engine::StepMetrics& m) {
    if (m.val_loss)
      for (const auto& [name, v] : m.val_metrics) last[name] = v;
    return true;
  });
  engine::save_training_result(*run, "{}");
  return last;
}

}  // namespace

class TestAlignmentEvaluation : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model, m_pairs, m_prompts;

  QVariantMap pairSettings(const QString& recipe) const {
    // 20 pairs, the last 4 held out: one validation batch of 4 pairs covers them all.
    return {{"recipe", recipe}, {"model", m_model}, {"data", m_pairs},  {"steps", 6},        {"batch", 4},
            {"seq", 48},        {"lr", 3e-3},       {"val_fraction", 0.2}, {"val_every", 6}, {"val_batches", 1},
            {"threads", 1}};
  }
  QVariantMap promptSettings(const QString& recipe) const {
    QVariantMap s{{"recipe", recipe},    {"model", m_model},  {"data", m_prompts}, {"steps", 2},
                  {"batch", 2},          {"seq", 64},         {"lr", 1e-3},       {"val_fraction", 0.25},
                  {"val_every", 2},      {"val_batches", 1},  {"threads", 1},     {"max_new_tokens", 8}};
    if (recipe == "grpo") s["group_size"] = 2;
    return s;
  }

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath("tiny");
    writeTinyTextModel(m_model, 5, 64);
    m_pairs = m_dir.filePath("pairs.jsonl");
    {
      std::ofstream f(m_pairs.toStdString(), std::ios::binary);
      const std::string words[] = {"abba", "cddc", "effe", "ghhg", "ijji"};
      for (int i = 0; i < 20; ++i)
        f << "{\"prompt\":\"" + words[i % 5] + "\",\"chosen\":\"cddc effe " + words[(i + 1) % 5] +
                 "\",\"rejected\":\"ponm lkji " + words[(i + 2) % 5] + "\"}\n";
    }
    m_prompts = m_dir.filePath("prompts.jsonl");
    std::ofstream p(m_prompts.toStdString(), std::ios::binary);
    for (int i = 0; i < 8; ++i)
      p << "{\"prompt\":\"What is " + std::to_string(i) + " + " + std::to_string(i + 1) + "?\",\"answer\":\"" +
               std::to_string(2 * i + 1) + "\",\"kind\":\"arith\"}\n";
  }

  void rewardModelAgainstTheStartingModel() {
    const QVariantMap s = pairSettings("reward");
    const QString out = m_dir.filePath("reward-run");
    const std::map<std::string, double> val = train(s, out);
    const finetune::AlignmentEvaluation e = finetune::evaluateAlignment(s, out);
    QCOMPARE(e.recipe, QStringLiteral("reward"));
    QCOMPARE(e.heldOut, int64_t(4));
    QCOMPARE(e.measures.size(), size_t(2));
    QVERIFY(e.measures[0].before >= 0 && e.measures[0].before <= 1);
    QCOMPARE(e.measures[0].after, val.at("accuracy"));
    QVERIFY(std::isnan(e.measures[1].before));  // the starting model has no score
    QVERIFY2(std::abs(e.measures[1].after - val.at("margin")) < 1e-4 * (1 + std::abs(val.at("margin"))),
             qPrintable(QString("%1 vs %2").arg(e.measures[1].after).arg(val.at("margin"))));
  }

  void dpoAgainstTheStartingModel() {
    const QVariantMap s = pairSettings("dpo");
    const QString out = m_dir.filePath("dpo-run");
    const std::map<std::string, double> val = train(s, out);
    const finetune::AlignmentEvaluation e = finetune::evaluateAlignment(s, out);
    QCOMPARE(e.heldOut, int64_t(4));
    QCOMPARE(e.measures.size(), size_t(3));
    QCOMPARE(e.measures[0].after, val.at("rewards/accuracies"));
    QVERIFY2(std::abs(e.measures[2].after - val.at("rewards/margins")) < 1e-4 + 1e-3 * std::abs(val.at("rewards/margins")),
             qPrintable(QString("%1 vs %2").arg(e.measures[2].after).arg(val.at("rewards/margins"))));
    QVERIFY(e.measures[2].after > 0);  // six steps on these pairs move the policy towards the chosen replies

    // The starting model against itself: no implicit reward, the same likelihood preference.
    const finetune::AlignmentEvaluation same = finetune::evaluateAlignment(s, m_model);
    QCOMPARE(same.measures[0].after, 0.0);
    QCOMPARE(same.measures[1].after, same.measures[1].before);
    QCOMPARE(same.measures[1].before, e.measures[1].before);
    QCOMPARE(same.measures[2].after, 0.0);
  }

  void grpoAndPpoAgainstTheStartingModel_data() {
    QTest::addColumn<QString>("recipe");
    QTest::newRow("grpo") << "grpo";
    QTest::newRow("ppo") << "ppo";
  }
  void grpoAndPpoAgainstTheStartingModel() {
    QFETCH(QString, recipe);
    const QVariantMap s = promptSettings(recipe);
    const QString out = m_dir.filePath(recipe + "-run");
    const std::map<std::string, double> val = train(s, out);
    const finetune::AlignmentEvaluation e = finetune::evaluateAlignment(s, out, 1);
    QCOMPARE(e.recipe, recipe);
    QCOMPARE(e.heldOut, int64_t(2));  // floor(8 * 0.25)
    QCOMPARE(e.measures.size(), size_t(1));
    QCOMPARE(e.measures[0].after, val.at("accuracy"));
    QCOMPARE(e.answers.size(), size_t(1));
    QCOMPARE(e.answers[0].prompt, QStringLiteral("What is 6 + 7?"));  // the first held-out prompt
    QCOMPARE(e.answers[0].expected, QStringLiteral("13"));

    const finetune::AlignmentEvaluation same = finetune::evaluateAlignment(s, m_model, 2);
    QCOMPARE(same.measures[0].after, same.measures[0].before);
    QCOMPARE(same.measures[0].before, e.measures[0].before);
    QCOMPARE(same.answers.size(), size_t(2));
    for (const finetune::TaskAnswer& a : same.answers) {
      QCOMPARE(a.tuned, a.base);
      QCOMPARE(a.tunedCorrect, a.baseCorrect);
    }
  }

  void noHeldOutDataIsAnError() {
    QVariantMap s = pairSettings("dpo");
    s["val_fraction"] = 0;
    try {
      finetune::evaluateAlignment(s, m_model);
      QFAIL("no error");
    } catch (const engine::Error& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains("held out no data"), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestAlignmentEvaluation)
#include "test_alignment_evaluation.moc"
