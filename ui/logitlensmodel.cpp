// LogitLensModel (see logitlensmodel.h).
#include "logitlensmodel.h"

#include <QColor>

#include "inspectmatrix.h"
#include "services/localfile.h"

LogitLensModel::LogitLensModel(QObject* parent) : QAbstractTableModel(parent) {}

void LogitLensModel::setInspection(const QVariant& v) {
  beginResetModel();
  m_inspection = v;
  m_in = inspectionFrom(v);
  endResetModel();
  Q_EMIT inspectionChanged();
}

int LogitLensModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : layers(); }
int LogitLensModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : positions(); }

QString LogitLensModel::layerName(int row) const {
  if (row < 0 || row >= layers()) return {};
  const int lr = lensRow(row);
  if (m_in->lens_rows == 1) return tr("output");
  return lr == 0 ? tr("embed") : QString::number(lr);
}

QVariant LogitLensModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const engine::Inspection& in = *m_in;
  const int lr = lensRow(index.row()), t = index.column();
  const int32_t top = in.lens_id(lr, t, 0);
  const float p = in.lens_prob(lr, t, 0);
  switch (role) {
    case Qt::DisplayRole: return inspectionTokenLabel(in.piece(top));
    case ProbRole: return static_cast<double>(p);
    case ColourRole: return inspectview::qcolourOf(p);
    case TextColourRole:  // the bright end of the scale needs dark text
      return p > 0.6f ? QColor(0x1c, 0x20, 0x27) : QColor(Qt::white);
    case TokenIdRole: return top;
    case AlternativesRole: {
      QStringList lines;
      for (int j = 0; j < in.top_k; ++j)
        lines << QStringLiteral("%1  %2%")
                     .arg(inspectionTokenLabel(in.piece(in.lens_id(lr, t, j))))
                     .arg(100.0 * in.lens_prob(lr, t, j), 0, 'f', 1);
      return lines.join(QLatin1Char('\n'));
    }
    case CorrectRole: return t + 1 < in.T && top == in.ids[static_cast<size_t>(t) + 1];
    case LayerNameRole: return layerName(index.row());
    case PositionRole: return t;
    default: return {};
  }
}

QVariant LogitLensModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || !m_in || section < 0) return {};
  if (orientation == Qt::Vertical) return section < layers() ? QVariant(layerName(section)) : QVariant();
  if (section >= positions()) return {};
  return inspectionTokenLabel(m_in->piece(m_in->ids[static_cast<size_t>(section)]));
}

QHash<int, QByteArray> LogitLensModel::roleNames() const {
  return {{Qt::DisplayRole, "display"},   {ProbRole, "prob"},           {ColourRole, "colour"},
          {TextColourRole, "textColour"}, {TokenIdRole, "tokenId"},     {AlternativesRole, "alternatives"},
          {CorrectRole, "correct"},       {LayerNameRole, "layerName"}, {PositionRole, "position"}};
}

QString LogitLensModel::exportCsv(const QString& pathOrUrl) const {
  if (!m_in) return tr("Nothing to export yet.");
  auto field = [](QString s) {
    return QLatin1Char('"') + s.replace(QLatin1Char('"'), QLatin1String("\"\"")) + QLatin1Char('"');
  };
  QByteArray out = "layer,position,token,rank,id,text,prob\n";
  for (int row = 0; row < layers(); ++row)
    for (int t = 0; t < positions(); ++t)
      for (int j = 0; j < m_in->top_k; ++j) {
        const int lr = lensRow(row);
        const int32_t id = m_in->lens_id(lr, t, j);
        out += (field(layerName(row)) + ',' + QString::number(t) + ',' +
                field(inspectionTokenLabel(m_in->piece(m_in->ids[static_cast<size_t>(t)]))) + ',' +
                QString::number(j + 1) + ',' + QString::number(id) + ',' +
                field(inspectionTokenLabel(m_in->piece(id))) + ',' + QString::number(m_in->lens_prob(lr, t, j), 'g', 7))
                   .toUtf8() +
               '\n';
      }
  return writeFileAtomically(pathOrUrl, out);
}
