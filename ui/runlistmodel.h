// RunListModel: the training runs in the RunStore, newest first, for the Train page's run list
// and the Runs page (history, overlay selection, open / delete). Follows RunStore::runsChanged.
#pragma once

#include <QAbstractListModel>
#include <QHash>
#include <QPointer>
#include <QSet>
#include <QtQml/qqml.h>

#include "services/store/runstore.h"
#include "services/trainingjobs.h"

class RunListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(TrainingJobs* jobs READ jobs WRITE setJobs NOTIFY jobsChanged)
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  // Run ids checked for the overlay on the Runs page.
  Q_PROPERTY(QVariantList selectedIds READ selectedIds NOTIFY selectionChanged)
  // Bumped on every change of any run's data, so QML bindings over get() re-evaluate.
  Q_PROPERTY(int dataVersion READ dataVersion NOTIFY dataVersionChanged)

 public:
  enum Role {
    RunIdRole = Qt::UserRole + 1,
    NameRole,
    RecipeRole,
    StatusRole,
    ModelPathRole,
    OutputDirRole,
    TotalStepsRole,
    CreatedMsRole,
    ErrorRole,
    SelectedRole,
    CommandRole,        // the equivalent `llm-workbench-cli train ...`
    SettingsRole,       // the run's settings map (as the `train` CLI's config)
    BaseModelNameRole,  // the base model's file or folder name
    MethodRole,         // "Full" or "LoRA r8"
    FinalLossRole,      // the last step's training loss; undefined before the first step
  };

  explicit RunListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;  // SelectedRole
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QHash<int, QByteArray> roleNames() const override;

  TrainingJobs* jobs() const { return m_jobs; }
  void setJobs(TrainingJobs* jobs);
  int count() const { return int(m_runs.size()); }
  QVariantList selectedIds() const;
  int dataVersion() const { return m_version; }
  Q_INVOKABLE qint64 idAt(int row) const { return row >= 0 && row < m_runs.size() ? m_runs[row].id : 0; }

  Q_INVOKABLE void reload();
  Q_INVOKABLE int rowOf(qint64 runId) const;  // -1 when absent
  // The run's roles by name ({} for an unknown id), for QML.
  Q_INVOKABLE QVariantMap get(qint64 runId) const;
  Q_INVOKABLE void setSelected(qint64 runId, bool selected);
  // Removes a finished run (its record, metrics and samples, and its output folder when that lies
  // under the jobs' runs folder, where only the app writes). A queued, running or paused run is refused:
  // cancel it first. Returns "" on success, else why not.
  Q_INVOKABLE QString deleteRun(qint64 runId);

 Q_SIGNALS:
  void jobsChanged();
  void countChanged();
  void selectionChanged();
  void dataVersionChanged();

 private:
  QPointer<TrainingJobs> m_jobs;
  QList<StoredRun> m_runs;
  QSet<qint64> m_selected;
  QHash<qint64, double> m_finalLoss;  // read on reload(): a run's loss changes only while it trains
  int m_version = 0;
};
