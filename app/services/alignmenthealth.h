// AlignmentHealth: whether an alignment run's metrics look healthy, in plain words. Each rule reads the
// series an objective reports under TRL's names (engine/src/align/*_objective.cpp) and says what is wrong
// when the latest values leave the range healthy runs stay in; each rule's thresholds and why they are what
// they are sit beside it in alignmenthealth.cpp.
//
// "Latest" is always smoothed: the mean of the last kWindow finite values, so one noisy step (a batch of
// hard prompts) does not raise a warning and one good step does not clear it. A rule needs at least
// kMinPoints values before it speaks. Rules key on which metrics a run has, not on its recipe name, so a
// PPO run and a GRPO run are checked by the same KL rule under their own metric names.
#pragma once

#include <QHash>
#include <QList>
#include <QString>

#include <limits>
#include <optional>

namespace alignment_health {

constexpr int kWindow = 5;     // values averaged into "the latest" and "the start" level
constexpr int kMinPoints = 3;  // a rule stays silent on fewer values

// A metric's healthy range; an open side is +-infinity.
struct Band {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
};

struct Warning {
  QString rule;     // stable id: ratio, kl, entropy, clipfrac, value_loss, reward_hacking, dpo_accuracy,
                    // dpo_margins, overfitting
  QString metric;   // the series it is about
  QString message;  // one or two sentences for the user: what is happening and what to try
};

// Each named metric's values in step order (steps that did not report it absent; NaN values are skipped).
using SeriesByName = QHash<QString, QList<double>>;

// The mean of the last kWindow finite values; NaN when there are none.
double recentLevel(const QList<double>& values);
// The mean of the first kWindow finite values; NaN when there are none.
double startLevel(const QList<double>& values);

// The range `metric` stays in on a healthy run, given its values so far (some ranges are relative to where
// the run started: entropy, value loss). nullopt: no rule watches this metric.
std::optional<Band> healthyBand(const QString& metric, const QList<double>& values);

// Every rule over the run's series; the warnings in a fixed order (the rules' order above).
QList<Warning> check(const SeriesByName& series);

}  // namespace alignment_health
