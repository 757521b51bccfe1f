// HeadGridModel (see headgridmodel.h).
#include "headgridmodel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

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

namespace {

// Mean over queries of each attention row's entropy, in bits.
double meanRowEntropy(std::span<const float> m, int T) {
  double total = 0;
  for (int q = 0; q < T; ++q) {
    double e = 0;
    for (int k = 0; k <= q; ++k) {
      const double p = m[static_cast<size_t>(q) * T + k];
      if (p > 0) e -= p * std::log2(p);
    }
    total += e;
  }
  return total / T;
}

// Runs on the thread pool: reads the immutable inspection only, polls `cancelled` between heads.
HeadGridModel::Summaries summarise(const engine::Inspection& in, int thumbSize, const std::atomic<bool>& cancelled) {
  HeadGridModel::Summaries s;
  const int T = in.T;
  for (int l = 0; l < in.n_layer; ++l)
    for (int h = 0; h < in.n_head; ++h) {
      if (cancelled.load(std::memory_order_relaxed)) return {};
      const auto m = in.head_matrix(l, h);
      s.thumbnails.push_back(inspectview::matrixThumbnail(m, T, std::min(T, thumbSize)));
      s.entropy.push_back(meanRowEntropy(m, T));
    }
  return s;
}

}  // namespace

void HeadGridModel::rebuild() {
  const bool wasReady = ready();
  m_job.cancel();
  beginResetModel();
  m_layers = m_heads = 0;
  m_thumbs.clear();
  m_entropy.clear();
  const InspectionPtr in = inspectionFrom(m_inspection);
  if (in && !in->attention.empty()) {
    m_layers = in->n_layer;
    m_heads = in->n_head;
    const size_t cells = static_cast<size_t>(m_layers) * m_heads;
    m_thumbs.assign(cells, QImage());
    m_entropy.assign(cells, std::numeric_limits<double>::quiet_NaN());
    // The job holds its own reference: the inspection stays alive while it runs, whatever the page does.
    m_job.start([in, size = m_thumbSize](const TaskContext& c) { return summarise(*in, size, c.cancelFlag()); },
                [this](Summaries s) { takeSummaries(std::move(s)); },
                [this](const QString& message) {
                  qWarning("head grid: %s", qPrintable(message));
                  takeSummaries({});
                });
  }
  endResetModel();
  Q_EMIT inspectionChanged();
  if (wasReady != ready()) Q_EMIT readyChanged();
}

void HeadGridModel::takeSummaries(Summaries s) {
  if (s.thumbnails.size() == m_thumbs.size() && s.entropy.size() == m_entropy.size()) {
    m_thumbs = std::move(s.thumbnails);
    m_entropy = std::move(s.entropy);
    if (!m_thumbs.empty())
      Q_EMIT dataChanged(index(0, 0), index(m_layers - 1, m_heads - 1),
                         {ThumbnailRole, Qt::DecorationRole, EntropyRole});
  }
  Q_EMIT readyChanged();
}

int HeadGridModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_layers; }
int HeadGridModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_heads; }

QVariant HeadGridModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const size_t i = static_cast<size_t>(index.row()) * m_heads + index.column();
  switch (role) {
    case Qt::DisplayRole: return tr("layer %1, head %2").arg(index.row()).arg(index.column());
    case LayerRole: return index.row();
    case HeadRole: return index.column();
    case ThumbnailRole:
    case Qt::DecorationRole: return m_thumbs[i];
    case EntropyRole: return m_entropy[i];
    default: return {};
  }
}

QVariant HeadGridModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || section < 0) return {};
  if (orientation == Qt::Vertical) return section < m_layers ? QVariant(tr("layer %1").arg(section)) : QVariant();
  return section < m_heads ? QVariant(tr("head %1").arg(section)) : QVariant();
}

QHash<int, QByteArray> HeadGridModel::roleNames() const {
  return {{Qt::DisplayRole, "display"},
          {LayerRole, "layerIndex"},
          {HeadRole, "headIndex"},
          {ThumbnailRole, "thumbnail"},
          {EntropyRole, "entropy"}};
}
