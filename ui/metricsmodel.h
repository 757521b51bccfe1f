// MetricsModel: the per-step metrics of one training run, for the Train dashboard and the Runs page.
// Loads the run's rows from the RunStore and appends the live ones TrainingJobs reports (GUI
// thread only; one beginInsertRows per step). A resumed run reports steps again from its checkpoint:
// rows from that step on are replaced, so the curve is never doubled.
//
// Derived values, recomputed when their input changes:
// - smoothedLoss: TensorBoard's debiased exponential moving average, s_t = w s_{t-1} + (1-w) x_t, shown
//   as s_t / (1 - w^t) so the first steps are not pulled towards 0 (w = `smoothing`, 0 = off).
// - gradNormOutlier: the step's gradient norm is above 3x the median of the 25 steps before it (at
//   least 8 of them): a spike worth seeing, whatever the run's scale.
// - etaS: the remaining steps at the run's mean time per step so far.
// - healthWarnings: alignment_health::check over the run's named metrics (alignment runs), re-run per step.
//
// Named metrics (an alignment objective's own, "objective/kl", "rewards/margins", ...) are series like the
// fixed ones: fillSeries / range / lastValue take their names as keys.
#pragma once

#include <QAbstractListModel>
#include <QPointer>
#include <QtQml/qqml.h>

#include "services/store/runstore.h"
#include "services/trainingjobs.h"

class MetricsModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(TrainingJobs* jobs READ jobs WRITE setJobs NOTIFY jobsChanged)
  Q_PROPERTY(qint64 runId READ runId WRITE setRunId NOTIFY runIdChanged)
  Q_PROPERTY(double smoothing READ smoothing WRITE setSmoothing NOTIFY smoothingChanged)
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(qint64 totalSteps READ totalSteps NOTIFY countChanged)
  Q_PROPERTY(qint64 lastStep READ lastStep NOTIFY countChanged)
  Q_PROPERTY(double lastLoss READ lastLoss NOTIFY countChanged)
  Q_PROPERTY(double lastValLoss READ lastValLoss NOTIFY countChanged)
  Q_PROPERTY(double tokensPerS READ tokensPerS NOTIFY countChanged)
  Q_PROPERTY(double elapsedS READ elapsedS NOTIFY countChanged)
  Q_PROPERTY(double etaS READ etaS NOTIFY countChanged)
  Q_PROPERTY(int outlierCount READ outlierCount NOTIFY countChanged)
  // The run's sample generations, oldest first: [{step, prompt, text}].
  Q_PROPERTY(QVariantList samples READ samples NOTIFY samplesChanged)
  // The run's recipe (pretrain, sft, reward, dpo, grpo, ppo); alignment: one of the last four.
  Q_PROPERTY(QString recipe READ recipe NOTIFY runInfoChanged)
  Q_PROPERTY(bool alignment READ isAlignment NOTIFY runInfoChanged)
  // The names of the named metrics the run has reported, sorted.
  Q_PROPERTY(QStringList metricNames READ metricNames NOTIFY countChanged)
  // What alignment_health::check says about the run now: [{rule, metric, message}].
  Q_PROPERTY(QVariantList healthWarnings READ healthWarnings NOTIFY healthChanged)
  // The completions an online recipe sampled, newest step first (at most kMaxCompletions):
  // [{step, prompt, completion, score}] (score NaN when not known).
  Q_PROPERTY(QVariantList completions READ completions NOTIFY completionsChanged)

 public:
  enum Role {
    StepRole = Qt::UserRole + 1,
    LossRole,
    SmoothedLossRole,
    ValLossRole,  // NaN when not computed at that step
    LrRole,
    GradNormRole,
    GradNormOutlierRole,
    TokensPerSRole,
    ElapsedSRole,
    SkippedRole,
  };

  explicit MetricsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  TrainingJobs* jobs() const { return m_jobs; }
  void setJobs(TrainingJobs* jobs);
  qint64 runId() const { return m_runId; }
  void setRunId(qint64 id);
  double smoothing() const { return m_smoothing; }
  void setSmoothing(double w);  // clamped to [0, 0.999]
  int count() const { return int(m_rows.size()); }
  qint64 totalSteps() const { return m_totalSteps; }
  qint64 lastStep() const { return m_rows.isEmpty() ? 0 : m_rows.constLast().step; }
  double lastLoss() const;
  double lastValLoss() const;  // the newest computed one; NaN when none
  double tokensPerS() const { return m_rows.isEmpty() ? 0 : m_rows.constLast().tokensPerS; }
  double elapsedS() const { return m_rows.isEmpty() ? 0 : m_rows.constLast().elapsedS; }
  double etaS() const;
  int outlierCount() const;
  QVariantList samples() const { return m_samples; }
  QString recipe() const { return m_recipe; }
  bool isAlignment() const;
  QStringList metricNames() const { return m_names; }
  QVariantList healthWarnings() const { return m_health; }
  QVariantList completions() const { return m_completions; }
  static constexpr int kMaxCompletions = 200;

  // Appends (or, for a step already present, replaces from there on) one step.
  void addRow(const MetricRow& row);
  void setRows(const QList<MetricRow>& rows, qint64 totalSteps);
  // Adds a step's completions (a resumed run's steps replace what the list had from that step on).
  void addCompletions(const QList<CompletionRow>& rows);
  // Re-reads the run from the store.
  Q_INVOKABLE void reload();
  // Points (step, value) of one series into a Qt Charts XYSeries (QLineSeries / QScatterSeries), in
  // one replace() call. key: loss, smoothed, val, lr, gradNorm, outliers, tokensPerS, or a named metric's
  // name. logSafe drops values <= 0 (a log axis cannot show them). Returns the number of points.
  Q_INVOKABLE int fillSeries(QObject* series, const QString& key, bool logSafe = false) const;
  // Minimum and maximum over the points of fillSeries(key) as {min, max}; {0, 1} when there are none.
  Q_INVOKABLE QVariantMap range(const QString& key, bool logSafe = false) const;
  // The newest finite value of a series; NaN when none.
  Q_INVOKABLE double lastValue(const QString& key) const;
  // alignment_health::healthyBand of a named metric as {low, high} (an open side is +-Infinity); {} when no
  // rule watches it.
  Q_INVOKABLE QVariantMap healthyBand(const QString& key) const;
  // Writes every row as CSV (QSaveFile, atomic). Accepts a path or a file: URL. Returns "" on
  // success, else why not.
  Q_INVOKABLE QString exportCsv(const QString& pathOrUrl) const;

 Q_SIGNALS:
  void jobsChanged();
  void runIdChanged();
  void smoothingChanged();
  void countChanged();
  void samplesChanged();
  void runInfoChanged();
  void healthChanged();
  void completionsChanged();

 private:
  struct Row : MetricRow {
    double smoothed = 0;
    bool outlier = false;
  };
  void recomputeFrom(int first);  // smoothed and outlier values of rows first.. end
  QList<QPointF> points(const QString& key, bool logSafe) const;
  QList<double> namedValues(const QString& name) const;  // in step order, steps without it skipped
  void namesAndHealthFrom(int first);                      // m_names from rows first.., then m_health
  void loadCompletions();

  QPointer<TrainingJobs> m_jobs;
  qint64 m_runId = 0;
  qint64 m_totalSteps = 0;
  double m_smoothing = 0.6;
  QList<Row> m_rows;
  QVariantList m_samples;
  QString m_recipe;
  QStringList m_names;
  QVariantList m_health;
  QVariantList m_completions;
};
