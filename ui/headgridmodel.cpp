// HeadGridModel (see headgridmodel.h).
#include "headgridmodel.h"

#include <algorithm>
#include <cmath>

#include "inspectmatrix.h"

HeadGridModel::HeadGridModel(QObject* parent) : QAbstractTableModel(parent) {}

void HeadGridModel::setInspection(const QVariant& v) {
  m_inspection = v;
  rebuild();
}

void HeadGridModel::setThumbnailSize(int px) {
  px = std::clamp(px, 8, 512);
  if (px == m_thumbSize) return;
  m_thumbSize = px;
  rebuild();
}

void HeadGridModel::rebuild() {
  beginResetModel();
  m_thumbs.clear();
  m_entropy.clear();
  m_layers = m_heads = 0;
  const InspectionPtr in = inspectionFrom(m_inspection);
  if (in && !in->attention.empty()) {
    m_layers = in->n_layer;
    m_heads = in->n_head;
    const int T = in->T;
    for (int l = 0; l < m_layers; ++l)
      for (int h = 0; h < m_heads; ++h) {
        const auto span = in->head_matrix(l, h);
        const std::vector<float> m(span.begin(), span.end());
        m_thumbs.push_back(inspectview::matrixThumbnail(m, T, std::min(T, m_thumbSize)));
        double total = 0;
        for (int q = 0; q < T; ++q) {
          double e = 0;
          for (int k = 0; k <= q; ++k) {
            const double p = m[static_cast<size_t>(q) * T + k];
            if (p > 0) e -= p * std::log2(p);
          }
          total += e;
        }
        m_entropy.push_back(total / T);
      }
  }
  endResetModel();
  Q_EMIT inspectionChanged();
}

int HeadGridModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_layers; }
int HeadGridModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_heads; }

QVariant HeadGridModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const size_t i = static_cast<size_t>(index.row()) * m_heads + index.column();
  switch (role) {
    case Qt::DisplayRole:
      return tr("layer %1, head %2").arg(index.row()).arg(index.column());
    case LayerRole:
      return index.row();
    case HeadRole:
      return index.column();
    case ThumbnailRole:
    case Qt::DecorationRole:
      return m_thumbs[i];
    case EntropyRole:
      return m_entropy[i];
    default:
      return {};
  }
}

QVariant HeadGridModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || section < 0) return {};
  if (orientation == Qt::Vertical) return section < m_layers ? QVariant(tr("layer %1").arg(section)) : QVariant();
  return section < m_heads ? QVariant(tr("head %1").arg(section)) : QVariant();
}

QHash<int, QByteArray> HeadGridModel::roleNames() const {
  return {{Qt::DisplayRole, "display"}, {LayerRole, "layerIndex"}, {HeadRole, "headIndex"}, {ThumbnailRole, "thumbnail"},
          {EntropyRole, "entropy"}};
}
