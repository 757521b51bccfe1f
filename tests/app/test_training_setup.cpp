// The training settings as the app keeps them (app/services/trainingsetup.h) for the alignment recipes: each
// recipe's settings mapped into engine::TrainingRunSpec with the CLI's defaults and ranges, the settings that do
// not apply left out, PPO's combined checks, and the review step's command accepted by the real CLI's argument
// parsing (the CLI is run on it with a model path that does not exist: it then parses and checks every flag, and
// stops at loading the model -- exit 1 naming the model, where a refused flag is exit 2).
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "engine/error.h"
#include "services/trainingsetup.h"

namespace {

QString errorOf(const QVariantMap& settings) {
  try {
    trainingRunSpec(settings, QStringLiteral("/tmp/out"));
  } catch (const engine::Error& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

}  // namespace

class TestTrainingSetup : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_rewardModel;

  QVariantMap settings(const QString& recipe) const {
    return {{"recipe", recipe}, {"model", m_dir.filePath("no-such-model")}, {"data", "/data/x.jsonl"}};
  }

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    // What engine::is_reward_model looks for: the flag in workbench.json.
    m_rewardModel = m_dir.filePath("rm");
    QVERIFY(QDir().mkpath(m_rewardModel));
    QFile wb(m_rewardModel + "/workbench.json");
    QVERIFY(wb.open(QIODevice::WriteOnly));
    wb.write(R"({"reward_model": {"head": "score.weight", "chat_template": "chatml"}})");
  }

  void defaultsFollowTheRecipe() {
    QVERIFY(defaultAlignmentSettings("pretrain").isEmpty());
    QVERIFY(defaultAlignmentSettings("sft").isEmpty());
    QVERIFY(defaultAlignmentSettings("reward").isEmpty());
    QCOMPARE(defaultAlignmentSettings("dpo"), (QVariantMap{{"beta", 0.1}}));
    const QVariantMap grpo = defaultAlignmentSettings("grpo");
    QCOMPARE(grpo.value("beta").toDouble(), 0.04);
    QCOMPARE(grpo.value("group_size").toInt(), 4);
    QCOMPARE(grpo.value("max_new_tokens").toInt(), 24);
    QVERIFY(!grpo.contains("kl_coef"));
    const QVariantMap ppo = defaultAlignmentSettings("ppo");
    QVERIFY(!ppo.contains("beta"));
    QVERIFY(!ppo.contains("group_size"));
    QCOMPARE(ppo.value("kl_coef").toDouble(), 0.05);
    QCOMPARE(ppo.value("kl_estimator").toString(), QStringLiteral("k1"));
    QCOMPARE(ppo.value("reward_model").toString(), QString());
    QCOMPARE(ppo.size(), 15);  // sampling (3), KL (4), updates and GAE (7), reward_model
  }

  void eachRecipeMapsItsSettings() {
    engine::TrainingRunSpec reward = trainingRunSpec(settings("reward"), "/tmp/out");
    QCOMPARE(reward.recipe, engine::Recipe::Reward);

    QVariantMap dpo = settings("dpo");
    QCOMPARE(trainingRunSpec(dpo, "/tmp/out").dpo_beta, 0.1);
    dpo["beta"] = 0.3;
    const engine::TrainingRunSpec d = trainingRunSpec(dpo, "/tmp/out");
    QCOMPARE(d.recipe, engine::Recipe::Dpo);
    QCOMPARE(d.dpo_beta, 0.3);

    QVariantMap grpo = settings("grpo");
    QCOMPARE(trainingRunSpec(grpo, "/tmp/out").grpo.beta, 0.04);
    grpo["beta"] = 0;  // GRPO may drop the KL term
    grpo["group_size"] = 6;
    grpo["temperature"] = 0.7;
    grpo["max_new_tokens"] = 12;
    grpo["clip"] = 0.1;
    const engine::TrainingRunSpec g = trainingRunSpec(grpo, "/tmp/out");
    QCOMPARE(g.grpo.beta, 0.0);
    QCOMPARE(g.grpo.group_size, 6);
    QCOMPARE(g.grpo.temperature, 0.7f);
    QCOMPARE(g.grpo.max_new_tokens, 12);
    QCOMPARE(g.grpo.clip, 0.1);

    QVariantMap ppo = settings("ppo");
    ppo["batch"] = 6;
    ppo["num_minibatches"] = 3;
    ppo["ppo_epochs"] = 2;
    ppo["kl_coef"] = 0.2;
    ppo["target_kl"] = 6;
    ppo["kl_horizon"] = 500;
    ppo["kl_estimator"] = "k3";
    ppo["gae_gamma"] = 0.99;
    ppo["gae_lambda"] = 0.9;
    ppo["cliprange_value"] = 0.3;
    ppo["vf_coef"] = 0.5;
    ppo["entropy_coef"] = 0.01;
    ppo["temperature"] = 0.8;
    ppo["max_new_tokens"] = 16;
    ppo["clip"] = 0.15;
    ppo["reward_model"] = m_rewardModel;
    ppo["beta"] = 5;  // not PPO's: ignored
    const engine::TrainingRunSpec p = trainingRunSpec(ppo, "/tmp/out");
    QCOMPARE(p.recipe, engine::Recipe::Ppo);
    QCOMPARE(p.ppo.num_minibatches, 3);
    QCOMPARE(p.ppo.ppo_epochs, 2);
    QCOMPARE(p.ppo.kl_coef, 0.2);
    QCOMPARE(p.ppo.target_kl, 6.0);
    QCOMPARE(p.ppo.kl_horizon, 500.0);
    QCOMPARE(p.ppo.kl_estimator, engine::KlEstimator::K3);
    QCOMPARE(p.ppo.gamma, 0.99);
    QCOMPARE(p.ppo.lam, 0.9);
    QCOMPARE(p.ppo.cliprange_value, 0.3);
    QCOMPARE(p.ppo.vf_coef, 0.5);
    QCOMPARE(p.ppo.entropy_coef, 0.01);
    QCOMPARE(p.ppo.temperature, 0.8f);
    QCOMPARE(p.ppo.max_new_tokens, 16);
    QCOMPARE(p.ppo.cliprange, 0.15);
    QCOMPARE(p.reward_model_path, m_rewardModel.toStdString());
    QCOMPARE(p.dpo_beta, 0.1);  // untouched by the ignored beta
  }

  void refusals_data() {
    QTest::addColumn<QVariantMap>("change");
    QTest::addColumn<QString>("needle");
    QTest::newRow("unknown recipe") << QVariantMap{{"recipe", "rlhf"}} << "'recipe' must be pretrain, sft, reward";
    QTest::newRow("dpo beta 0") << QVariantMap{{"recipe", "dpo"}, {"beta", 0}} << "'beta'";
    QTest::newRow("grpo group of 1") << QVariantMap{{"recipe", "grpo"}, {"group_size", 1}} << "'group_size'";
    QTest::newRow("grpo clip 1") << QVariantMap{{"recipe", "grpo"}, {"clip", 1}} << "'clip'";
    QTest::newRow("ppo half a token") << QVariantMap{{"recipe", "ppo"}, {"max_new_tokens", 2.5}} << "'max_new_tokens'";
    QTest::newRow("ppo lambda over 1") << QVariantMap{{"recipe", "ppo"}, {"gae_lambda", 1.5}} << "'gae_lambda'";
    QTest::newRow("ppo k2") << QVariantMap{{"recipe", "ppo"}, {"kl_estimator", "k2"}} << "'kl_estimator' must be k1 or k3";
    QTest::newRow("ppo grad accum")
        << QVariantMap{{"recipe", "ppo"}, {"grad_accum", 2}}
        << "--grad-accum applies to the other recipes: ppo makes --ppo-epochs x --num-minibatches updates";
    QTest::newRow("ppo minibatches")
        << QVariantMap{{"recipe", "ppo"}, {"batch", 4}, {"num_minibatches", 3}}
        << "--num-minibatches 3 does not divide --batch 4";
    QTest::newRow("ppo plain model as reward model")
        << QVariantMap{{"recipe", "ppo"}, {"reward_model", "/tmp"}} << "is not a reward model";
    QTest::newRow("zero for ppo")
        << QVariantMap{{"zero", 1}} << "'zero' (ZeRO stage 1) applies to the pretrain and sft recipes";
    QTest::newRow("zero stage 2") << QVariantMap{{"recipe", "sft"}, {"zero", 2}}
                                  << "'zero' must be a whole number in [0, 1]";
  }
  void refusals() {
    QFETCH(QVariantMap, change);
    QFETCH(QString, needle);
    QVariantMap s = settings("ppo");
    for (auto it = change.begin(); it != change.end(); ++it) s[it.key()] = it.value();
    const QString err = errorOf(s);
    QVERIFY2(err.contains(needle), qPrintable(err));
  }

  void commandHoldsOnlyTheRecipesSettings() {
    QVariantMap ppo = settings("ppo");
    ppo["beta"] = 0.5;         // DPO's and GRPO's: the CLI refuses it with ppo
    ppo["group_size"] = 8;     // GRPO's
    ppo["kl_coef"] = 0.05;     // the default: left out
    ppo["kl_horizon"] = 2000;  // needs --target-kl beside it
    ppo["vf_coef"] = 0.25;
    const QString cmd = trainCliCommand(ppo, "/tmp/out");
    QVERIFY2(!cmd.contains("--beta") && !cmd.contains("--group-size") && !cmd.contains("--kl-coef"), qPrintable(cmd));
    QVERIFY2(cmd.contains(" --target-kl 0 --kl-horizon 2000"), qPrintable(cmd));
    QVERIFY2(cmd.contains(" --vf-coef 0.25"), qPrintable(cmd));

    QVariantMap dpo = settings("dpo");
    dpo["beta"] = 0.25;
    dpo["kl_coef"] = 0.3;  // PPO's
    const QString d = trainCliCommand(dpo, "/tmp/out");
    QVERIFY2(d.contains(" --beta 0.25") && !d.contains("--kl-coef"), qPrintable(d));
    // ZeRO: off by default and left out of the command; on, it maps to the spec and to --zero 1.
    QVariantMap pre = settings("pretrain");
    QCOMPARE(trainingRunSpec(pre, "/tmp/out").zero_stage, 0);
    QVERIFY(!trainCliCommand(pre, "/tmp/out").contains("--zero"));
    pre["zero"] = 1;
    QCOMPARE(trainingRunSpec(pre, "/tmp/out").zero_stage, 1);
    QVERIFY2(trainCliCommand(pre, "/tmp/out").contains(" --zero 1"), qPrintable(trainCliCommand(pre, "/tmp/out")));
    QVariantMap grpo = settings("grpo");
    grpo["beta"] = 0.04;  // GRPO's default, though not DPO's
    QVERIFY2(!trainCliCommand(grpo, "/tmp/out").contains("--beta"), qPrintable(trainCliCommand(grpo, "/tmp/out")));
  }

  void theCliAcceptsTheCommand_data() {
    QTest::addColumn<QVariantMap>("change");
    QTest::newRow("reward") << QVariantMap{{"recipe", "reward"}, {"lora_rank", 4}, {"steps", 30}};
    QTest::newRow("dpo") << QVariantMap{{"recipe", "dpo"}, {"beta", 0.2}, {"lr", 5e-5}, {"kl_coef", 0.3}};
    QTest::newRow("grpo") << QVariantMap{{"recipe", "grpo"}, {"beta", 0.0},         {"group_size", 6},
                                         {"temperature", 0.9}, {"max_new_tokens", 12}, {"clip", 0.3}};
    QTest::newRow("ppo") << QVariantMap{{"recipe", "ppo"},       {"beta", 0.2},           {"batch", 8},
                                        {"num_minibatches", 2}, {"ppo_epochs", 2},      {"kl_coef", 0.1},
                                        {"target_kl", 3},       {"kl_horizon", 100},    {"kl_estimator", "k3"},
                                        {"gae_gamma", 0.99},    {"gae_lambda", 0.9},    {"cliprange_value", 0.3},
                                        {"vf_coef", 0.2},       {"entropy_coef", 0.01}, {"temperature", 0.8},
                                        {"max_new_tokens", 16}, {"clip", 0.1},          {"reward_model", "RM"}};
    QTest::newRow("ppo horizon only") << QVariantMap{{"recipe", "ppo"}, {"kl_horizon", 100}};
    QTest::newRow("sft zero") << QVariantMap{{"recipe", "sft"}, {"zero", 1}};
  }
  void theCliAcceptsTheCommand() {
    QFETCH(QVariantMap, change);
    QVariantMap s = settings("pretrain");
    for (auto it = change.begin(); it != change.end(); ++it)
      s[it.key()] = it.value() == QVariant("RM") ? QVariant(m_rewardModel) : it.value();
    trainingRunSpec(s, "/tmp/out");  // the app accepts it too
    const QString out = m_dir.filePath(QStringLiteral("out-%1").arg(QTest::currentDataTag()).replace(' ', '-'));
    QString cmd = trainCliCommand(s, out);
    QVERIFY(cmd.startsWith("llm-workbench-cli train "));
    cmd.replace(0, int(strlen("llm-workbench-cli")), QStringLiteral(WB_CLI_PATH));
    QProcess cli;
    cli.start("/bin/sh", {"-c", cmd});
    QVERIFY(cli.waitForFinished(60000));
    const QString err = QString::fromUtf8(cli.readAllStandardError());
    QVERIFY2(cli.exitCode() == 1 && err.contains("no-such-model"), qPrintable(cmd + "\n" + err));
  }
};

QTEST_GUILESS_MAIN(TestTrainingSetup)
#include "test_training_setup.moc"
