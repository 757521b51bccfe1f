// RunListModel: see runlistmodel.h.
#include "runlistmodel.h"

#include <QDir>
#include <QFileInfo>

#include "services/trainingsetup.h"

RunListModel::RunListModel(QObject* parent) : QAbstractListModel(parent) {}

int RunListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_runs.size()); }

QHash<int, QByteArray> RunListModel::roleNames() const {
  return {{RunIdRole, "runId"},           {NameRole, "name"},           {RecipeRole, "recipe"},
          {StatusRole, "status"},         {ModelPathRole, "modelPath"}, {OutputDirRole, "outputDir"},
          {TotalStepsRole, "totalSteps"}, {CreatedMsRole, "createdMs"}, {ErrorRole, "error"},
          {SelectedRole, "selected"},     {CommandRole, "command"},     {SettingsRole, "settings"},
          {BaseModelNameRole, "baseModelName"}, {MethodRole, "method"}, {FinalLossRole, "finalLoss"}};
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const StoredRun& r = m_runs[index.row()];
  switch (role) {
    case Qt::DisplayRole:
    case NameRole: return r.name;
    case RunIdRole: return r.id;
    case RecipeRole: return r.recipe;
    case StatusRole: return r.status;
    case ModelPathRole: return r.modelPath;
    case OutputDirRole: return r.outputDir;
    case TotalStepsRole: return r.totalSteps;
    case CreatedMsRole: return r.createdMs;
    case ErrorRole: return r.error;
    case SelectedRole: return m_selected.contains(r.id);
    case CommandRole: return trainCliCommand(r.settings, r.outputDir);
    case SettingsRole: return r.settings;
    case BaseModelNameRole: return QFileInfo(QDir::cleanPath(r.modelPath)).fileName();
    case MethodRole: {
      const int rank = r.settings.value(QStringLiteral("lora_rank")).toInt();
      return rank > 0 ? tr("LoRA r%1").arg(rank) : tr("Full");
    }
    case FinalLossRole: {
      const auto it = m_finalLoss.constFind(r.id);
      return it == m_finalLoss.constEnd() ? QVariant() : QVariant(*it);
    }
    default: return {};
  }
}

Qt::ItemFlags RunListModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable | Qt::ItemNeverHasChildren;
}

bool RunListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != SelectedRole || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return false;
  setSelected(m_runs[index.row()].id, value.toBool());
  return true;
}

void RunListModel::setJobs(TrainingJobs* jobs) {
  if (m_jobs == jobs) return;
  if (m_jobs) disconnect(m_jobs->store(), nullptr, this, nullptr);
  m_jobs = jobs;
  if (m_jobs) connect(m_jobs->store(), &RunStore::runsChanged, this, &RunListModel::reload);
  Q_EMIT jobsChanged();
  reload();
}

void RunListModel::reload() {
  beginResetModel();
  m_runs = m_jobs ? m_jobs->store()->runs() : QList<StoredRun>{};
  m_finalLoss.clear();
  QSet<qint64> alive;
  for (const StoredRun& r : m_runs) {
    alive.insert(r.id);
    const QList<MetricRow> rows = m_jobs->store()->metrics(r.id);
    if (!rows.isEmpty() && qIsFinite(rows.last().loss)) m_finalLoss.insert(r.id, rows.last().loss);
  }
  const bool dropped = !(m_selected - alive).isEmpty();
  m_selected &= alive;
  endResetModel();
  ++m_version;
  Q_EMIT dataVersionChanged();
  Q_EMIT countChanged();
  if (dropped) Q_EMIT selectionChanged();
}

int RunListModel::rowOf(qint64 runId) const {
  for (int i = 0; i < m_runs.size(); ++i)
    if (m_runs[i].id == runId) return i;
  return -1;
}

void RunListModel::setSelected(qint64 runId, bool selected) {
  const int row = rowOf(runId);
  if (row < 0 || m_selected.contains(runId) == selected) return;
  if (selected) m_selected.insert(runId);
  else m_selected.remove(runId);
  Q_EMIT dataChanged(index(row), index(row), {SelectedRole});
  ++m_version;
  Q_EMIT dataVersionChanged();
  Q_EMIT selectionChanged();
}

QVariantList RunListModel::selectedIds() const {
  QVariantList out;
  for (const StoredRun& r : m_runs)
    if (m_selected.contains(r.id)) out << r.id;
  return out;
}

QVariantMap RunListModel::get(qint64 runId) const {
  const int row = rowOf(runId);
  QVariantMap out;
  if (row < 0) return out;
  const QHash<int, QByteArray> names = roleNames();
  for (auto it = names.begin(); it != names.end(); ++it)
    out.insert(QString::fromLatin1(it.value()), data(index(row), it.key()));
  return out;
}

QString RunListModel::deleteRun(qint64 runId) {
  const int row = rowOf(runId);
  if (row < 0 || !m_jobs) return tr("There is no such run.");
  const StoredRun run = m_runs[row];
  if (run.status == QLatin1String("queued") || run.status == QLatin1String("running") ||
      run.status == QLatin1String("paused"))
    return tr("Cancel the run before deleting it.");
  if (!m_jobs->store()->deleteRun(runId)) return tr("Could not delete the run from the database.");
  // Only a folder the jobs made for the run: a run written elsewhere may share its folder with other files.
  const QString root = QDir::cleanPath(m_jobs->runsRoot());
  const QString dir = QDir::cleanPath(run.outputDir);
  if (!run.outputDir.isEmpty() && !root.isEmpty() && dir.startsWith(root + QLatin1Char('/')) && QDir(dir).exists() &&
      !QDir(dir).removeRecursively())
    return tr("The run is deleted, but its folder %1 could not be removed.").arg(dir);
  return {};
}
