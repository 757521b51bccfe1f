// MetricsModel: see metricsmodel.h.
#include "metricsmodel.h"

#include <QSaveFile>
#include <QUrl>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <limits>

#include "services/alignmenthealth.h"

namespace {

constexpr int kOutlierWindow = 25;
constexpr int kOutlierMinHistory = 8;
constexpr double kOutlierFactor = 3.0;

QString csvNumber(double v) { return std::isfinite(v) ? QString::number(v, 'g', 9) : QString(); }

QVariantMap completionMap(const CompletionRow& c) {
  return {{QStringLiteral("step"), c.step},
          {QStringLiteral("prompt"), c.prompt},
          {QStringLiteral("completion"), c.completion},
          {QStringLiteral("score"), c.score}};
}

}  // namespace

MetricsModel::MetricsModel(QObject* parent) : QAbstractListModel(parent) {}

int MetricsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QHash<int, QByteArray> MetricsModel::roleNames() const {
  return {{StepRole, "step"},
          {LossRole, "loss"},
          {SmoothedLossRole, "smoothedLoss"},
          {ValLossRole, "valLoss"},
          {LrRole, "lr"},
          {GradNormRole, "gradNorm"},
          {GradNormOutlierRole, "gradNormOutlier"},
          {TokensPerSRole, "tokensPerS"},
          {ElapsedSRole, "elapsedS"},
          {SkippedRole, "skipped"}};
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = m_rows[index.row()];
  switch (role) {
    case Qt::DisplayRole:
    case StepRole: return r.step;
    case LossRole: return r.loss;
    case SmoothedLossRole: return r.smoothed;
    case ValLossRole: return r.valLoss;
    case LrRole: return r.lr;
    case GradNormRole: return r.gradNorm;
    case GradNormOutlierRole: return r.outlier;
    case TokensPerSRole: return r.tokensPerS;
    case ElapsedSRole: return r.elapsedS;
    case SkippedRole: return r.skipped;
    default: return {};
  }
}

void MetricsModel::setJobs(TrainingJobs* jobs) {
  if (m_jobs == jobs) return;
  if (m_jobs) disconnect(m_jobs, nullptr, this, nullptr);
  m_jobs = jobs;
  if (m_jobs) {
    connect(m_jobs, &TrainingJobs::metricsArrived, this, [this](qint64 runId, const MetricRow& row) {
      if (runId == m_runId) addRow(row);
    });
    connect(m_jobs, &TrainingJobs::sampleArrived, this, [this](qint64 runId, const SampleRow& s) {
      if (runId != m_runId) return;
      m_samples << QVariantMap{{QStringLiteral("step"), s.step},
                               {QStringLiteral("prompt"), s.prompt},
                               {QStringLiteral("text"), s.text}};
      Q_EMIT samplesChanged();
    });
    connect(m_jobs, &TrainingJobs::completionsArrived, this, [this](qint64 runId, const QList<CompletionRow>& rows) {
      if (runId == m_runId) addCompletions(rows);
    });
    connect(m_jobs, &TrainingJobs::runStarted, this, [this](qint64 runId, qint64, qint64 total) {
      if (runId == m_runId && total != m_totalSteps) {
        m_totalSteps = total;
        Q_EMIT countChanged();
      }
    });
  }
  Q_EMIT jobsChanged();
  reload();
}

void MetricsModel::setRunId(qint64 id) {
  if (m_runId == id) return;
  m_runId = id;
  Q_EMIT runIdChanged();
  reload();
}

void MetricsModel::reload() {
  m_samples.clear();
  if (m_jobs && m_runId)
    for (const SampleRow& s : m_jobs->store()->samples(m_runId))
      m_samples << QVariantMap{{QStringLiteral("step"), s.step},
                               {QStringLiteral("prompt"), s.prompt},
                               {QStringLiteral("text"), s.text}};
  Q_EMIT samplesChanged();
  loadCompletions();
  const QString recipe = m_jobs && m_runId ? m_jobs->store()->run(m_runId).recipe : QString();
  if (recipe != m_recipe) {
    m_recipe = recipe;
    Q_EMIT runInfoChanged();
  }
  if (!m_jobs || !m_runId) return setRows({}, 0);
  const StoredRun run = m_jobs->store()->run(m_runId);
  // Rows still waiting for the store's next flush are not lost: addRow() replaces by step, and the
  // store has them within ~250 ms. A reload while a run trains is rare (switching runs).
  setRows(m_jobs->store()->metrics(m_runId), run.totalSteps);
}

void MetricsModel::setSmoothing(double w) {
  w = std::clamp(std::isfinite(w) ? w : 0.0, 0.0, 0.999);
  if (w == m_smoothing) return;
  m_smoothing = w;
  recomputeFrom(0);
  if (!m_rows.isEmpty()) Q_EMIT dataChanged(index(0), index(int(m_rows.size()) - 1), {SmoothedLossRole});
  Q_EMIT smoothingChanged();
}

void MetricsModel::setRows(const QList<MetricRow>& rows, qint64 totalSteps) {
  beginResetModel();
  m_rows.clear();
  for (const MetricRow& r : rows) m_rows.append(Row{r});
  m_totalSteps = totalSteps;
  recomputeFrom(0);
  m_names.clear();
  namesAndHealthFrom(0);
  endResetModel();
  Q_EMIT countChanged();
}

bool MetricsModel::isAlignment() const {
  return m_recipe == QLatin1String("reward") || m_recipe == QLatin1String("dpo") || m_recipe == QLatin1String("grpo") ||
         m_recipe == QLatin1String("ppo");
}

void MetricsModel::loadCompletions() {
  m_completions.clear();
  if (m_jobs && m_runId) {
    const QList<CompletionRow> rows = m_jobs->store()->completions(m_runId);
    // Stored by step, index: newest step first, each step's completions in their order.
    for (qsizetype end = rows.size(); end > 0 && m_completions.size() < kMaxCompletions;) {
      qsizetype begin = end - 1;
      while (begin > 0 && rows[begin - 1].step == rows[end - 1].step) --begin;
      for (qsizetype i = begin; i < end && m_completions.size() < kMaxCompletions; ++i)
        m_completions << completionMap(rows[i]);
      end = begin;
    }
  }
  Q_EMIT completionsChanged();
}

void MetricsModel::addCompletions(const QList<CompletionRow>& rows) {
  if (rows.isEmpty()) return;
  const qint64 step = rows.first().step;
  // A resumed run reports its steps after the checkpoint again.
  while (!m_completions.isEmpty() && m_completions.first().toMap().value(QStringLiteral("step")).toLongLong() >= step)
    m_completions.removeFirst();
  QVariantList fresh;
  for (const CompletionRow& c : rows) fresh << completionMap(c);
  m_completions = fresh + m_completions;
  if (m_completions.size() > kMaxCompletions) m_completions.resize(kMaxCompletions);
  Q_EMIT completionsChanged();
}

QList<double> MetricsModel::namedValues(const QString& name) const {
  QList<double> v;
  for (const Row& r : m_rows)
    if (const auto it = r.named.constFind(name); it != r.named.cend()) v << *it;
  return v;
}

void MetricsModel::namesAndHealthFrom(int first) {
  for (int i = first; i < m_rows.size(); ++i)
    for (auto it = m_rows[i].named.cbegin(); it != m_rows[i].named.cend(); ++it)
      if (!m_names.contains(it.key())) {
        const auto at = std::lower_bound(m_names.begin(), m_names.end(), it.key());
        m_names.insert(at, it.key());
      }
  QVariantList health;
  if (!m_names.isEmpty()) {
    alignment_health::SeriesByName series;
    for (const QString& name : std::as_const(m_names)) series.insert(name, namedValues(name));
    for (const alignment_health::Warning& w : alignment_health::check(series))
      health << QVariantMap{{QStringLiteral("rule"), w.rule},
                            {QStringLiteral("metric"), w.metric},
                            {QStringLiteral("message"), w.message}};
  }
  if (health != m_health) {
    m_health = health;
    Q_EMIT healthChanged();
  }
}

void MetricsModel::addRow(const MetricRow& row) {
  // A resumed run starts again after its checkpoint: drop what it will report anew.
  const auto it =
      std::lower_bound(m_rows.begin(), m_rows.end(), row.step, [](const Row& r, qint64 step) { return r.step < step; });
  const int at = int(it - m_rows.begin());
  if (at < m_rows.size()) {
    beginRemoveRows({}, at, int(m_rows.size()) - 1);
    m_rows.erase(it, m_rows.end());
    endRemoveRows();
  }
  beginInsertRows({}, at, at);
  m_rows.append(Row{row});
  recomputeFrom(at);
  namesAndHealthFrom(at);
  endInsertRows();
  Q_EMIT countChanged();
}

void MetricsModel::recomputeFrom(int first) {
  const double w = m_smoothing;
  for (int i = first; i < m_rows.size(); ++i) {
    Row& r = m_rows[i];
    // Debiased EMA: the raw average of the first i+1 values is prev_raw = smoothed_prev * (1 - w^i).
    const double prevRaw = i > 0 ? m_rows[i - 1].smoothed * (1.0 - std::pow(w, i)) : 0.0;
    const double x = std::isfinite(r.loss) ? r.loss : (i > 0 ? m_rows[i - 1].smoothed : 0.0);
    const double raw = w * prevRaw + (1.0 - w) * x;
    r.smoothed = w > 0 ? raw / (1.0 - std::pow(w, i + 1)) : x;

    const int from = std::max(0, i - kOutlierWindow);
    std::vector<double> prev;
    for (int j = from; j < i; ++j)
      if (std::isfinite(m_rows[j].gradNorm)) prev.push_back(m_rows[j].gradNorm);
    r.outlier = false;
    if (int(prev.size()) >= kOutlierMinHistory && std::isfinite(r.gradNorm)) {
      std::nth_element(prev.begin(), prev.begin() + ptrdiff_t(prev.size() / 2), prev.end());
      r.outlier = r.gradNorm > kOutlierFactor * prev[prev.size() / 2];
    }
  }
}

double MetricsModel::lastLoss() const { return m_rows.isEmpty() ? qQNaN() : m_rows.constLast().loss; }

double MetricsModel::lastValLoss() const {
  for (auto it = m_rows.crbegin(); it != m_rows.crend(); ++it)
    if (std::isfinite(it->valLoss)) return it->valLoss;
  return qQNaN();
}

double MetricsModel::etaS() const {
  if (m_rows.isEmpty() || m_totalSteps <= lastStep() || lastStep() <= 0) return 0;
  return elapsedS() / double(lastStep()) * double(m_totalSteps - lastStep());
}

int MetricsModel::outlierCount() const {
  return int(std::count_if(m_rows.begin(), m_rows.end(), [](const Row& r) { return r.outlier; }));
}

QList<QPointF> MetricsModel::points(const QString& key, bool logSafe) const {
  QList<QPointF> out;
  out.reserve(m_rows.size());
  for (const Row& r : m_rows) {
    double y = qQNaN();
    if (key == QLatin1String("loss")) y = r.loss;
    else if (key == QLatin1String("smoothed")) y = r.smoothed;
    else if (key == QLatin1String("val")) y = r.valLoss;
    else if (key == QLatin1String("lr")) y = r.lr;
    else if (key == QLatin1String("gradNorm")) y = r.gradNorm;
    else if (key == QLatin1String("outliers")) y = r.outlier ? r.gradNorm : qQNaN();
    else if (key == QLatin1String("tokensPerS")) y = r.tokensPerS;
    else if (const auto it = r.named.constFind(key); it != r.named.cend()) y = *it;
    if (!std::isfinite(y) || (logSafe && y <= 0)) continue;
    out.append(QPointF(double(r.step), y));
  }
  return out;
}

int MetricsModel::fillSeries(QObject* series, const QString& key, bool logSafe) const {
  auto* xy = qobject_cast<QXYSeries*>(series);
  if (!xy) return 0;
  const QList<QPointF> p = points(key, logSafe);
  xy->replace(p);
  return int(p.size());
}

QVariantMap MetricsModel::range(const QString& key, bool logSafe) const {
  const QList<QPointF> p = points(key, logSafe);
  if (p.isEmpty()) return {{QStringLiteral("min"), 0.0}, {QStringLiteral("max"), 1.0}};
  double lo = p.first().y(), hi = lo;
  for (const QPointF& q : p) lo = std::min(lo, q.y()), hi = std::max(hi, q.y());
  return {{QStringLiteral("min"), lo}, {QStringLiteral("max"), hi}};
}

double MetricsModel::lastValue(const QString& key) const {
  const QList<QPointF> p = points(key, false);
  return p.isEmpty() ? qQNaN() : p.constLast().y();
}

QVariantMap MetricsModel::healthyBand(const QString& key) const {
  const std::optional<alignment_health::Band> band = alignment_health::healthyBand(key, namedValues(key));
  if (!band) return {};
  return {{QStringLiteral("low"), band->low}, {QStringLiteral("high"), band->high}};
}

QString MetricsModel::exportCsv(const QString& pathOrUrl) const {
  const QUrl url(pathOrUrl);
  const QString path = url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return tr("Could not write %1: %2").arg(path, f.errorString());
  // The named metrics follow the fixed columns, under their own names (an empty cell: not reported that step).
  QByteArray out = "step,loss,smoothed_loss,val_loss,lr,grad_norm,grad_norm_outlier,tokens_per_s,elapsed_s,skipped";
  for (const QString& name : m_names) out += ',' + name.toUtf8();
  out += '\n';
  for (const Row& r : m_rows) {
    QStringList named;
    for (const QString& name : m_names) named << csvNumber(r.named.value(name, qQNaN()));
    out += (QStringList{QString::number(r.step),
                       csvNumber(r.loss),
                       csvNumber(r.smoothed),
                       csvNumber(r.valLoss),
                       csvNumber(r.lr),
                       csvNumber(r.gradNorm),
                       r.outlier ? QStringLiteral("1") : QStringLiteral("0"),
                       csvNumber(r.tokensPerS),
                       csvNumber(r.elapsedS),
                        r.skipped ? QStringLiteral("1") : QStringLiteral("0")} +
            named)
               .join(QLatin1Char(','))
               .toUtf8() +
           '\n';
  }
  f.write(out);
  if (!f.commit()) return tr("Could not write %1: %2").arg(path, f.errorString());
  return {};
}
