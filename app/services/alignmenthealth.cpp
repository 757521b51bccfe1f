// AlignmentHealth: see alignmenthealth.h. The thresholds below are deliberately wide: a warning should mean
// "this run is going wrong", not "this run is unusual", so each one sits well past where the PPO / DPO
// literature and TRL's documentation place healthy runs.
#include "alignmenthealth.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace alignment_health {

namespace {

// PPO's probability ratio pi/pi_old, averaged over the step's tokens (val/ratio). TRL's PPO docs: it "should
// float around 1.0"; the surrogate clips it to [1 - 0.2, 1 + 0.2], so a *mean* beyond that range means most
// tokens moved past the clip and got no gradient: the updates are too drastic. The band is symmetric in log
// space (1/1.25 = 0.8).
constexpr double kRatioLow = 0.8, kRatioHigh = 1.25;

// KL to the reference. PPO's objective/kl is per completion (the sum over its tokens, TRL's .sum(1).mean()):
// Ziegler et al. (2019) steer it to a target of 6 nats with their adaptive controller, so 15 nats is
// well past anything a controlled run reaches. GRPO's kl is the per-token k3 estimate: DeepSeekMath-style runs
// (beta 0.04) stay in the hundredths; 0.5 nats per token is about the same drift as 15 nats over a 30-token
// completion. Besides the bound, a KL that has more than tripled over the last kKlGrowthLag steps while
// already at a quarter of the bound is exploding, not drifting: the next steps will cross the bound.
constexpr double kPpoKlBound = 15.0, kGrpoKlBound = 0.5;
constexpr int kKlGrowthLag = 10;
constexpr double kKlGrowthFactor = 3.0;

// Entropy of the policy's samples. Entropy falls as a policy learns, but a fall to a tenth of where the run
// started means the samples of a prompt are nearly all the same: the advantages between them vanish, nothing
// is explored, and the run stops learning (mode collapse). Per token (policy/entropy_avg), 0.05 nats is a
// top token at ~99 % probability: effectively greedy, whatever the start.
constexpr double kEntropyCollapseFraction = 0.1;
constexpr double kTokenEntropyFloor = 0.05;

// Fraction of tokens whose ratio was clipped. With clip 0.2 healthy PPO runs clip 10-20 % of tokens
// (Huang et al., "The 37 implementation details of PPO"; OpenAI baselines' logs); above 30 % a large part of
// every batch gives no gradient, the sign of a learning rate or an epoch count that is too high.
constexpr double kClipHigh = 0.3;

// The value head regresses on returns bounded by the reward scale; its loss should fall or hold. Ten times its
// starting level is divergence, and GAE advantages built on a diverging value are noise.
constexpr double kValueLossGrowth = 10.0;

// The reward counts as rising (for reward hacking) when its latest level is 5 % of its scale above its start.
constexpr double kRewardRise = 0.05;

// DPO: rewards/accuracies is the fraction of pairs whose chosen answer gets the higher implicit reward; 0.5
// is chance. On learnable pairs it climbs within tens of steps (our CLI test reaches 0.75 in 40), so still
// below 0.6 after kDpoMinSteps steps means the pairs are not being learnt.
constexpr double kDpoAccuracyLow = 0.6;
constexpr int kDpoMinSteps = 20;
// rewards/margins is beta times the chosen-minus-rejected log-ratio gap. At a margin of 5 the DPO loss
// -log(sigmoid(5)) is 0.007: the pairs are learnt; a margin still growing past it is the policy pushing
// likelihoods away from the reference without bound, DPO's known overfitting (Azar et al. 2023, "A general
// theoretical paradigm to understand learning from human preferences").
constexpr double kDpoMarginHigh = 5.0;

// Held-out accuracy more than 10 points under training accuracy: the model has memorized its training pairs,
// and its scores on new text (what PPO would optimize) are not to be trusted.
constexpr double kOverfitGap = 0.10;

QList<double> finite(const QList<double>& values) {
  QList<double> out;
  out.reserve(values.size());
  for (double v : values)
    if (std::isfinite(v)) out << v;
  return out;
}

double mean(const QList<double>& v, qsizetype from, qsizetype to) {
  if (to <= from) return qQNaN();
  double sum = 0;
  for (qsizetype i = from; i < to; ++i) sum += v[i];
  return sum / double(to - from);
}

QString num(double v) { return QString::number(v, 'g', 3); }
QString tr(const char* text) { return QCoreApplication::translate("AlignmentHealth", text); }

bool isPerTokenKl(const QString& metric) { return metric == QLatin1String("kl"); }
double klBound(const QString& metric) { return isPerTokenKl(metric) ? kGrpoKlBound : kPpoKlBound; }

// Why the KL series is exploding, or "" when it is not.
QString klExplosion(const QString& metric, const QList<double>& all) {
  const QList<double> v = finite(all);
  if (v.size() < kMinPoints) return {};
  const double recent = recentLevel(v), bound = klBound(metric);
  if (recent > bound) return tr("%1, above the bound of %2").arg(num(recent), num(bound));
  if (v.size() >= kWindow + kKlGrowthLag) {
    const qsizetype end = v.size() - kKlGrowthLag;
    const double earlier = mean(v, std::max<qsizetype>(0, end - kWindow), end);
    if (recent > bound / 4 && recent > kKlGrowthFactor * earlier)
      return tr("%1, up from %2 %3 steps earlier").arg(num(recent), num(earlier)).arg(kKlGrowthLag);
  }
  return {};
}

}  // namespace

double recentLevel(const QList<double>& values) {
  const QList<double> v = finite(values);
  return mean(v, std::max<qsizetype>(0, v.size() - kWindow), v.size());
}

double startLevel(const QList<double>& values) {
  const QList<double> v = finite(values);
  return mean(v, 0, std::min<qsizetype>(kWindow, v.size()));
}

std::optional<Band> healthyBand(const QString& metric, const QList<double>& values) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (metric == QLatin1String("val/ratio")) return Band{kRatioLow, kRatioHigh};
  if (metric == QLatin1String("objective/kl") || metric == QLatin1String("kl")) return Band{-inf, klBound(metric)};
  if (metric == QLatin1String("policy/clipfrac_avg") || metric == QLatin1String("clip_ratio"))
    return Band{0.0, kClipHigh};
  if (metric == QLatin1String("rewards/accuracies")) return Band{kDpoAccuracyLow, 1.0};
  if (metric == QLatin1String("rewards/margins")) return Band{-inf, kDpoMarginHigh};
  const double start = startLevel(values);
  if (metric == QLatin1String("objective/entropy") || metric == QLatin1String("policy/entropy_avg")) {
    const bool perToken = metric == QLatin1String("policy/entropy_avg");
    if (!(start > 0)) return perToken ? std::optional<Band>(Band{kTokenEntropyFloor, inf}) : std::nullopt;
    return Band{std::max(kEntropyCollapseFraction * start, perToken ? kTokenEntropyFloor : 0.0), inf};
  }
  if (metric == QLatin1String("loss/value_avg")) {
    if (!(start > 0)) return std::nullopt;
    return Band{0.0, kValueLossGrowth * start};
  }
  return std::nullopt;
}

QList<Warning> check(const SeriesByName& series) {
  QList<Warning> out;
  const auto values = [&](const char* name) { return finite(series.value(QLatin1String(name))); };

  // Ratio far from 1.
  if (const QList<double> v = values("val/ratio"); v.size() >= kMinPoints) {
    const double r = recentLevel(v);
    if (r < kRatioLow || r > kRatioHigh)
      out << Warning{QStringLiteral("ratio"), QStringLiteral("val/ratio"),
                     tr("The policy ratio (val/ratio) averages %1, outside %2–%3: each update moves the policy further "
                        "than PPO's clipping can learn from. Lower the learning rate or the PPO epochs per step.")
                         .arg(num(r), num(kRatioLow), num(kRatioHigh))};
  }

  // KL exploding, and reward rising while it does (reward hacking).
  struct KlPair {
    const char* kl;
    const char* reward;
  };
  for (const KlPair& p : {KlPair{"objective/kl", "objective/scores"}, KlPair{"kl", "reward"}}) {
    const QString kl = QLatin1String(p.kl);
    const QString why = klExplosion(kl, series.value(kl));
    if (why.isEmpty()) continue;
    out << Warning{QStringLiteral("kl"), kl,
                   tr("KL to the reference (%1) is %2: the policy is drifting far from the model it started from. "
                      "Raise the KL coefficient (beta) or lower the learning rate.")
                       .arg(kl, why)};
    const QList<double> reward = values(p.reward);
    if (reward.size() < kMinPoints) continue;
    const double start = startLevel(reward), recent = recentLevel(reward);
    if (recent - start > kRewardRise * std::max(1.0, std::abs(start)))
      out << Warning{QStringLiteral("reward_hacking"), QLatin1String(p.reward),
                     tr("The reward (%1) keeps rising (%2 → %3) while KL explodes: the policy may be exploiting the "
                        "reward rather than getting better (reward hacking). Read the sampled completions before "
                        "trusting the reward.")
                         .arg(QLatin1String(p.reward), num(start), num(recent))};
  }

  // Entropy collapsing: the start and the latest windows must not overlap.
  for (const char* name : {"objective/entropy", "policy/entropy_avg"}) {
    const QList<double> v = values(name);
    if (v.size() < 2 * kWindow) continue;
    const std::optional<Band> band = healthyBand(QLatin1String(name), v);
    const double recent = recentLevel(v);
    if (band && recent < band->low)
      out << Warning{QStringLiteral("entropy"), QLatin1String(name),
                     tr("Entropy (%1) fell to %2 from %3 at the start: the policy is collapsing onto a few answers, "
                        "so its samples stop exploring and the updates stop teaching it. Lower the learning rate or "
                        "raise the KL coefficient.")
                         .arg(QLatin1String(name), num(recent), num(startLevel(v)))};
  }

  // Clip fraction high.
  for (const char* name : {"policy/clipfrac_avg", "clip_ratio"}) {
    const QList<double> v = values(name);
    if (v.size() < kMinPoints) continue;
    const double recent = recentLevel(v);
    if (recent > kClipHigh)
      out << Warning{QStringLiteral("clipfrac"), QLatin1String(name),
                     tr("%1 % of the tokens are clipped (%2), above %3 %: the steps are too large for the clip range "
                        "to keep the policy near its samples. Lower the learning rate or the PPO epochs.")
                         .arg(num(100 * recent), QLatin1String(name), num(100 * kClipHigh))};
  }

  // Value loss blowing up.
  if (const QList<double> v = values("loss/value_avg"); v.size() >= 2 * kWindow) {
    const std::optional<Band> band = healthyBand(QStringLiteral("loss/value_avg"), v);
    const double recent = recentLevel(v);
    if (band && recent > band->high)
      out << Warning{QStringLiteral("value_loss"), QStringLiteral("loss/value_avg"),
                     tr("The value loss (loss/value_avg) is %1, more than %2× its start (%3): the value head is "
                        "diverging, so the advantages PPO learns from are noise. Lower the learning rate or the value "
                        "loss coefficient.")
                         .arg(num(recent), num(kValueLossGrowth), num(startLevel(v)))};
  }

  // DPO: accuracy stuck at chance; margins without bound.
  if (const QList<double> v = values("rewards/accuracies"); v.size() >= kDpoMinSteps) {
    const double recent = recentLevel(v);
    if (recent < kDpoAccuracyLow)
      out << Warning{QStringLiteral("dpo_accuracy"), QStringLiteral("rewards/accuracies"),
                     tr("Reward accuracy (rewards/accuracies) is %1 after %2 steps, near chance (0.5): the policy "
                        "does not tell the chosen answers from the rejected ones. Check that the pairs differ and are "
                        "consistently ordered, or raise the learning rate.")
                         .arg(num(recent))
                         .arg(v.size())};
  }
  if (const QList<double> v = values("rewards/margins"); v.size() >= kMinPoints) {
    const double recent = recentLevel(v);
    if (recent > kDpoMarginHigh)
      out << Warning{QStringLiteral("dpo_margins"), QStringLiteral("rewards/margins"),
                     tr("The reward margin (rewards/margins) has grown to %1: the pairs are learnt, and a margin that "
                        "keeps growing is the policy moving ever further from the reference (overfitting to the "
                        "pairs). Stop earlier, lower the learning rate or raise beta.")
                         .arg(num(recent))};
  }

  // Overfitting: held-out accuracy well below training accuracy. Validation is already a mean over fixed
  // held-out batches (no sampling noise), so its latest value is compared with the smoothed training level.
  struct Pair {
    const char* train;
    const char* val;
  };
  for (const Pair& p : {Pair{"accuracy", "val_accuracy"}, Pair{"rewards/accuracies", "val_rewards/accuracies"}}) {
    const QList<double> train = values(p.train), val = values(p.val);
    if (train.size() < kMinPoints || val.isEmpty()) continue;
    const double trainLevel = recentLevel(train), heldOut = val.constLast();
    if (trainLevel - heldOut > kOverfitGap)
      out << Warning{QStringLiteral("overfitting"), QLatin1String(p.val),
                     tr("Held-out accuracy (%1) is %2, %3 points below the training accuracy (%4): the model is "
                        "memorizing its training pairs. Use more pairs, fewer steps or a lower learning rate.")
                         .arg(QLatin1String(p.val), num(heldOut), num(100 * (trainLevel - heldOut)), num(trainLevel))};
  }
  return out;
}

}  // namespace alignment_health
