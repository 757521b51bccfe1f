// HeadGridModel: the model view, every layer x head of an inspection as a table (rows = layers,
// columns = heads) of thumbnails, for a grid of small heatmaps to click into.
//
// Roles: layerIndex, headIndex, thumbnail (a QImage of at most thumbnailSize pixels a side, block maxima so thin
// patterns survive shrinking), entropy (mean over queries of the row's entropy in bits: low = the head
// looks at few tokens, high = it spreads out), display ("layer L, head H").
// Thumbnails are computed once per inspection, on the GUI thread (L*NH*T^2 reads; ~40 ms for GPT-2
// 124M at T=512).
#pragma once

#include <QAbstractTableModel>
#include <QImage>
#include <QVariant>
#include <QtQml/qqml.h>

#include <vector>

class HeadGridModel : public QAbstractTableModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QVariant inspection READ inspection WRITE setInspection NOTIFY inspectionChanged)
  Q_PROPERTY(int layers READ layers NOTIFY inspectionChanged)
  Q_PROPERTY(int heads READ heads NOTIFY inspectionChanged)
  Q_PROPERTY(int thumbnailSize READ thumbnailSize WRITE setThumbnailSize NOTIFY inspectionChanged)

 public:
  enum Role { LayerRole = Qt::UserRole + 1, HeadRole, ThumbnailRole, EntropyRole };

  explicit HeadGridModel(QObject* parent = nullptr);

  QVariant inspection() const { return m_inspection; }
  void setInspection(const QVariant& v);
  int layers() const { return m_layers; }
  int heads() const { return m_heads; }
  int thumbnailSize() const { return m_thumbSize; }
  void setThumbnailSize(int px);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

 Q_SIGNALS:
  void inspectionChanged();

 private:
  void rebuild();

  QVariant m_inspection;
  int m_layers = 0, m_heads = 0, m_thumbSize = 56;
  std::vector<QImage> m_thumbs;     // (L, NH)
  std::vector<double> m_entropy;    // (L, NH)
};
