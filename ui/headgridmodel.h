// HeadGridModel: the model view, every layer x head of an inspection as a table (rows = layers,
// columns = heads) of thumbnails, for a grid of small heatmaps to click into.
//
// Roles: layerIndex, headIndex, thumbnail (a QImage of at most thumbnailSize pixels a side, block maxima so thin
// patterns survive shrinking), entropy (mean over queries of the row's entropy in bits: low = the head
// looks at few tokens, high = it spreads out), display ("layer L, head H").
// The table's shape is there at once (the page's layer and head pickers read it); thumbnails and
// entropies are computed on the thread pool (L*NH*T^2 reads: GPT-2 124M at T=1024 is 151 M) and fill
// in with one dataChanged when they arrive (`ready`); until then thumbnail is a null image and entropy
// NaN. A newer inspection or thumbnail size cancels the running computation and drops its result.
#pragma once

#include <QAbstractTableModel>
#include <QImage>
#include <QVariant>
#include <QtQml/qqml.h>

#include <vector>

#include "services/latesttask.h"

class HeadGridModel : public QAbstractTableModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QVariant inspection READ inspection WRITE setInspection NOTIFY inspectionChanged)
  Q_PROPERTY(int layers READ layers NOTIFY inspectionChanged)
  Q_PROPERTY(int heads READ heads NOTIFY inspectionChanged)
  Q_PROPERTY(int thumbnailSize READ thumbnailSize WRITE setThumbnailSize NOTIFY inspectionChanged)
  Q_PROPERTY(bool ready READ ready NOTIFY readyChanged)

 public:
  enum Role { LayerRole = Qt::UserRole + 1, HeadRole, ThumbnailRole, EntropyRole };

  explicit HeadGridModel(QObject* parent = nullptr);

  QVariant inspection() const { return m_inspection; }
  void setInspection(const QVariant& v);
  int layers() const { return m_layers; }
  int heads() const { return m_heads; }
  int thumbnailSize() const { return m_thumbSize; }
  void setThumbnailSize(int px);
  // Thumbnails and entropies are there (also true for an empty model).
  bool ready() const { return !m_job.busy(); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

 Q_SIGNALS:
  void inspectionChanged();
  void readyChanged();

 public:
  // What the thread pool computes for every head, (L, NH) row-major.
  struct Summaries {
    std::vector<QImage> thumbnails;
    std::vector<double> entropy;
  };

 private:
  void rebuild();
  void takeSummaries(Summaries s);

  QVariant m_inspection;
  int m_layers = 0, m_heads = 0, m_thumbSize = 56;
  std::vector<QImage> m_thumbs;   // (L, NH)
  std::vector<double> m_entropy;  // (L, NH)
  LatestTask<Summaries> m_job{this};
};
