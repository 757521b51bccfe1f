// AlignmentHealth: every rule on synthetic series. Healthy PPO, GRPO, DPO and reward-model runs raise no
// warning; each unhealthy pattern raises its own rule's warning (and only the ones it implies); smoothing keeps
// one bad step from raising a warning; too few values raise none.
#include <QTest>

#include <cmath>
#include <functional>

#include "services/alignmenthealth.h"

using namespace alignment_health;

namespace {

// n values f(0), f(1), ... f(n-1).
QList<double> series(int n, const std::function<double(int)>& f) {
  QList<double> v;
  for (int i = 0; i < n; ++i) v << f(i);
  return v;
}
// From a to b in a straight line over n values.
QList<double> ramp(int n, double a, double b) {
  return series(n, [=](int i) { return a + (b - a) * i / double(std::max(1, n - 1)); });
}
// Around `level`, with a small deterministic wobble.
QList<double> flat(int n, double level, double wobble = 0.0) {
  return series(n, [=](int i) { return level + wobble * ((i % 3) - 1); });
}

SeriesByName healthyPpo(int n = 40) {
  return {{"val/ratio", flat(n, 1.0, 0.02)},
          {"objective/kl", ramp(n, 0.0, 3.0)},
          {"objective/scores", ramp(n, 0.1, 0.6)},
          {"objective/entropy", ramp(n, 30.0, 18.0)},
          {"policy/entropy_avg", ramp(n, 2.0, 1.2)},
          {"policy/clipfrac_avg", flat(n, 0.12, 0.03)},
          {"loss/value_avg", ramp(n, 1.0, 0.4)},
          {"completion_length", flat(n, 20.0, 2.0)}};
}
SeriesByName healthyGrpo(int n = 40) {
  return {{"reward", ramp(n, 0.2, 0.6)}, {"kl", ramp(n, 0.0, 0.05)}, {"clip_ratio", flat(n, 0.0)},
          {"reward_std", flat(n, 0.4, 0.05)}};
}
SeriesByName healthyDpo(int n = 40) {
  return {{"rewards/accuracies", ramp(n, 0.0, 0.85)},
          {"rewards/margins", ramp(n, 0.0, 2.0)},
          {"val_rewards/accuracies", {0.7, 0.8}}};
}
SeriesByName healthyRewardModel(int n = 40) {
  return {{"accuracy", ramp(n, 0.5, 0.88)}, {"margin", ramp(n, 0.0, 1.5)}, {"val_accuracy", {0.7, 0.84}}};
}

QStringList rules(const QList<Warning>& w) {
  QStringList out;
  for (const Warning& x : w) out << x.rule;
  return out;
}

}  // namespace

class TestAlignmentHealth : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void levelsAreWindowMeans() {
    QCOMPARE(recentLevel({1, 2, 3, 4, 5, 6, 7}), 5.0);  // mean of 3..7
    QCOMPARE(startLevel({1, 2, 3, 4, 5, 6, 7}), 3.0);   // mean of 1..5
    QCOMPARE(recentLevel({2, qQNaN(), 4}), 3.0);        // not-finite values skipped
    QVERIFY(std::isnan(recentLevel({})));
  }

  void healthyRunsRaiseNothing() {
    for (const SeriesByName& s : {healthyPpo(), healthyGrpo(), healthyDpo(), healthyRewardModel()}) {
      const QList<Warning> w = check(s);
      QVERIFY2(w.isEmpty(), qPrintable(rules(w).join(QLatin1Char(','))));
    }
    QVERIFY(check({}).isEmpty());
  }

  void ratioFarFromOne() {
    SeriesByName s = healthyPpo();
    s["val/ratio"] = flat(40, 1.6, 0.05);
    QCOMPARE(rules(check(s)), QStringList{"ratio"});
    QVERIFY(check(s)[0].message.contains("val/ratio"));
    s["val/ratio"] = flat(40, 0.5);
    QCOMPARE(rules(check(s)), QStringList{"ratio"});
    // One wild step among healthy ones is smoothed away...
    s["val/ratio"] = flat(40, 1.0);
    s["val/ratio"][37] = 2.0;
    QVERIFY(check(s).isEmpty());
    // ...and two values are too few to speak.
    s["val/ratio"] = {3.0, 3.0};
    QVERIFY(check(s).isEmpty());
  }

  void klAboveItsBound() {
    SeriesByName s = healthyPpo();
    s["objective/kl"] = ramp(40, 0.0, 25.0);  // the last five average 23.4 nats per completion
    s["objective/scores"] = flat(40, 0.3);    // reward flat: no hacking
    QCOMPARE(rules(check(s)), QStringList{"kl"});
    QVERIFY(check(s)[0].message.contains("objective/kl"));
    // The same per-completion level is healthy for PPO's sequence KL but not for GRPO's per-token one.
    SeriesByName g = healthyGrpo();
    g["kl"] = flat(40, 3.0);
    g["reward"] = flat(40, 0.3);
    QCOMPARE(rules(check(g)), QStringList{"kl"});
  }

  void klGrowingFastBeforeItsBound() {
    // 0.2 per token and tripling every 10 steps: not yet over 0.5, but exploding.
    SeriesByName g = healthyGrpo();
    g["reward"] = flat(40, 0.3);
    g["kl"] = series(40, [](int i) { return 0.2 * std::pow(3.5, (i - 39) / 10.0); });
    QVERIFY(recentLevel(g["kl"]) < 0.5);
    QCOMPARE(rules(check(g)), QStringList{"kl"});
    QVERIFY(check(g)[0].message.contains("steps earlier"));
    // The same growth at a level far below the bound is a run leaving its start, not an explosion.
    g["kl"] = series(40, [](int i) { return 0.02 * std::pow(3.5, (i - 39) / 10.0); });
    QVERIFY(check(g).isEmpty());
  }

  void rewardRisingWhileKlExplodes() {
    SeriesByName s = healthyPpo();
    s["objective/kl"] = ramp(40, 0.0, 30.0);
    QCOMPARE(rules(check(s)), (QStringList{"kl", "reward_hacking"}));
    QVERIFY(check(s)[1].message.contains("objective/scores"));
    SeriesByName g = healthyGrpo();
    g["kl"] = ramp(40, 0.0, 1.0);
    QCOMPARE(rules(check(g)), (QStringList{"kl", "reward_hacking"}));
    // Reward rising with a tame KL is the goal, not hacking (the healthy series do that).
    QVERIFY(check(healthyGrpo()).isEmpty());
  }

  void entropyCollapsing() {
    SeriesByName s = healthyPpo();
    s["objective/entropy"] = ramp(40, 30.0, 1.0);  // the last five average ~2.5, a tenth of the start is ~2.85
    QCOMPARE(rules(check(s)), QStringList{"entropy"});
    QVERIFY(check(s)[0].message.contains("objective/entropy"));
    s = healthyPpo();
    s["policy/entropy_avg"] = ramp(40, 0.4, 0.02);  // under the per-token floor of 0.05 nats
    QCOMPARE(rules(check(s)), QStringList{"entropy"});
    // Too few steps to tell a start from a latest level.
    s = healthyPpo(8);
    s["objective/entropy"] = ramp(8, 30.0, 0.5);
    QVERIFY(check(s).isEmpty());
  }

  void clipFractionHigh() {
    SeriesByName s = healthyPpo();
    s["policy/clipfrac_avg"] = flat(40, 0.45, 0.05);
    QCOMPARE(rules(check(s)), QStringList{"clipfrac"});
    QVERIFY(check(s)[0].message.contains("45"));
    SeriesByName g = healthyGrpo();
    g["clip_ratio"] = ramp(40, 0.1, 0.5);
    QCOMPARE(rules(check(g)), QStringList{"clipfrac"});
    g["clip_ratio"] = flat(40, 0.25, 0.04);  // high-ish but inside what healthy runs show
    QVERIFY(check(g).isEmpty());
  }

  void valueLossBlowingUp() {
    SeriesByName s = healthyPpo();
    s["loss/value_avg"] = series(40, [](int i) { return 0.5 * std::exp(i / 10.0); });  // 0.5 → ~25
    QCOMPARE(rules(check(s)), QStringList{"value_loss"});
    s["loss/value_avg"] = ramp(40, 0.5, 2.0);  // rising, but within 10x of its start
    QVERIFY(check(s).isEmpty());
  }

  void dpoAccuracyStuckAtChance() {
    SeriesByName s = healthyDpo();
    s["rewards/accuracies"] = flat(40, 0.5, 0.05);
    s["val_rewards/accuracies"] = {0.5};
    QCOMPARE(rules(check(s)), QStringList{"dpo_accuracy"});
    // Early in a run chance level is expected.
    s["rewards/accuracies"] = flat(12, 0.5, 0.05);
    QVERIFY(check(s).isEmpty());
  }

  void dpoMarginsWithoutBound() {
    SeriesByName s = healthyDpo();
    s["rewards/margins"] = ramp(40, 0.0, 12.0);
    QCOMPARE(rules(check(s)), QStringList{"dpo_margins"});
    QVERIFY(check(s)[0].message.contains("rewards/margins"));
  }

  void heldOutAccuracyFarBelowTraining() {
    SeriesByName s = healthyRewardModel();
    s["accuracy"] = ramp(40, 0.5, 0.99);
    s["val_accuracy"] = {0.7, 0.72};  // 26 points below
    QCOMPARE(rules(check(s)), QStringList{"overfitting"});
    QVERIFY(check(s)[0].message.contains("val_accuracy"));
    SeriesByName d = healthyDpo();
    d["val_rewards/accuracies"] = {0.6};
    QCOMPARE(rules(check(d)), QStringList{"overfitting"});
    // GRPO and PPO report only a held-out accuracy: nothing to compare it with.
    SeriesByName g = healthyGrpo();
    g["val_accuracy"] = {0.1};
    QVERIFY(check(g).isEmpty());
  }

  void bandsForTheCharts() {
    QCOMPARE(healthyBand("val/ratio", {})->low, 0.8);
    QCOMPARE(healthyBand("val/ratio", {})->high, 1.25);
    QCOMPARE(healthyBand("objective/kl", {})->high, 15.0);
    QCOMPARE(healthyBand("kl", {})->high, 0.5);
    QVERIFY(std::isinf(healthyBand("kl", {})->low));
    QCOMPARE(healthyBand("clip_ratio", {})->high, 0.3);
    QCOMPARE(healthyBand("rewards/accuracies", {})->low, 0.6);
    // Relative to the start: a tenth of the first five values' mean (20), ten times for the value loss.
    QCOMPARE(healthyBand("objective/entropy", flat(10, 20.0))->low, 2.0);
    QCOMPARE(healthyBand("loss/value_avg", flat(10, 0.5))->high, 5.0);
    QCOMPARE(healthyBand("policy/entropy_avg", flat(10, 0.3))->low, 0.05);  // the absolute floor wins
    QVERIFY(!healthyBand("objective/entropy", {}).has_value());
    QVERIFY(!healthyBand("completion_length", flat(10, 20.0)).has_value());
  }
};

QTEST_GUILESS_MAIN(TestAlignmentHealth)
#include "test_alignment_health.moc"
