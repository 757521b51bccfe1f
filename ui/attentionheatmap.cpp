// AttentionHeatmap (see attentionheatmap.h).
#include "attentionheatmap.h"

#include <QCursor>
#include <QFontMetrics>
#include <QPainter>
#include <QSaveFile>

#include <algorithm>
#include <cmath>

#include "inspectmatrix.h"
#include "services/localfile.h"

namespace {

constexpr double kLabelMargin = 88;   // pixels left of and above the matrix for token labels
constexpr double kMinLabelCell = 11;  // a label is drawn only when a cell is at least this tall
constexpr double kMaxZoom = 64;

QString csvField(const QString& s) {
  QString q = s;
  q.replace(QLatin1Char('"'), QLatin1String("\"\""));
  return QLatin1Char('"') + q + QLatin1Char('"');
}

}  // namespace

AttentionHeatmap::AttentionHeatmap(QQuickItem* parent) : QQuickPaintedItem(parent) {
  setAcceptHoverEvents(true);
  setAcceptedMouseButtons(Qt::LeftButton);
  setAntialiasing(false);
}

void AttentionHeatmap::setInspection(const QVariant& v) {
  m_inspectionVariant = v;
  Q_EMIT inspectionChanged();
  rebuild();
}

void AttentionHeatmap::setLayerIndex(int layer) {
  if (layer == m_spec.layer) return;
  m_spec.layer = layer;
  Q_EMIT selectionChanged();
  rebuild();
}

void AttentionHeatmap::setHead(int head) {
  if (head == m_spec.head) return;
  m_spec.head = head;
  Q_EMIT selectionChanged();
  rebuild();
}

QVariantList AttentionHeatmap::overlayHeads() const {
  QVariantList out;
  for (const engine::HeadRef& r : m_spec.overlay) out << QVariantMap{{"layer", r.layer}, {"head", r.head}};
  return out;
}

void AttentionHeatmap::setOverlayHeads(const QVariantList& heads) {
  std::vector<engine::HeadRef> refs;
  for (const QVariant& v : heads) {
    const QVariantMap m = v.toMap();
    if (m.contains(QStringLiteral("layer")) && m.contains(QStringLiteral("head")))
      refs.push_back({m.value(QStringLiteral("layer")).toInt(), m.value(QStringLiteral("head")).toInt()});
  }
  setOverlay(std::move(refs));
}

void AttentionHeatmap::setOverlay(std::vector<engine::HeadRef> heads) {
  if (heads == m_spec.overlay) return;
  m_spec.overlay = std::move(heads);
  Q_EMIT selectionChanged();
  rebuild();
}

void AttentionHeatmap::setOverlayMode(OverlayMode mode) {
  const auto reduce = mode == OverlayMax ? engine::HeadReduce::Max : engine::HeadReduce::Mean;
  if (reduce == m_spec.overlayReduce) return;
  m_spec.overlayReduce = reduce;
  Q_EMIT selectionChanged();
  if (!m_spec.overlay.empty()) rebuild();
}

void AttentionHeatmap::setShowLabels(bool on) {
  if (on == m_showLabels) return;
  m_showLabels = on;
  clampPan();
  Q_EMIT viewChanged();
  update();
}

void AttentionHeatmap::setZoom(double zoom) {
  zoom = std::clamp(zoom, 1.0, kMaxZoom);
  if (zoom == m_zoom) return;
  m_zoom = zoom;
  clampPan();
  Q_EMIT viewChanged();
  update();
}

void AttentionHeatmap::setLabelColor(const QColor& c) {
  if (c == m_labelColor) return;
  m_labelColor = c;
  Q_EMIT viewChanged();
  update();
}

void AttentionHeatmap::setSelectedToken(int t) {
  t = (t >= 0 && t < m_T) ? t : -1;
  if (t == m_selected) return;
  m_selected = t;
  Q_EMIT selectedTokenChanged();
  update();
}

void AttentionHeatmap::resetView() {
  m_zoom = 1.0;
  m_pan = {};
  Q_EMIT viewChanged();
  update();
}

void AttentionHeatmap::rebuild() {
  const bool wasBusy = busy();
  const InspectionPtr in = inspectionFrom(m_inspectionVariant);
  if (!in) {
    m_job.cancel();
    setMatrixData({});
  } else {
    m_job.start([in, spec = m_spec](const TaskContext&) { return inspectview::chooseMatrix(in, spec); },
                [this](inspectview::MatrixChoice c) {
                  setMatrixData(std::move(c));
                  Q_EMIT busyChanged();
                },
                [this](const QString& message) {
                  qWarning("attention heatmap: %s", qPrintable(message));
                  setMatrixData({});
                  Q_EMIT busyChanged();
                });
  }
  if (busy() != wasBusy) Q_EMIT busyChanged();
}

void AttentionHeatmap::setMatrix(std::vector<float> m, int T, QStringList labels) {
  const bool wasBusy = busy();
  m_job.cancel();  // what is set here wins over a matrix still being computed
  if (T < 0 || m.size() != static_cast<size_t>(T) * static_cast<size_t>(T)) {
    m.clear();
    T = 0;
  }
  inspectview::MatrixChoice c;
  c.values = std::move(m);
  c.T = T;
  c.labels = std::move(labels);
  if (T > 0) c.image = inspectview::matrixImage(c.values, T);
  setMatrixData(std::move(c));
  if (wasBusy) Q_EMIT busyChanged();
}

void AttentionHeatmap::setMatrixData(inspectview::MatrixChoice c) {
  const bool sameSize = c.T == m_T;
  m_matrix = std::move(c.values);
  m_T = c.T;
  m_labels = std::move(c.labels);
  while (m_labels.size() < m_T) m_labels << QString::number(m_labels.size());
  m_image = m_T ? std::move(c.image) : QImage();
  m_shrunk = QImage();
  m_elided.assign(m_T, QString());
  m_elidedDone.assign(m_T, false);
  if (!sameSize) {  // a new sequence: start from the whole matrix; a new head keeps the view
    m_zoom = 1.0;
    m_pan = {};
    m_selected = -1;
    Q_EMIT viewChanged();
    Q_EMIT selectedTokenChanged();
  }
  setHover(-1, -1);
  Q_EMIT matrixChanged();
  update();
}

double AttentionHeatmap::valueAt(int q, int k) const {
  if (q < 0 || k < 0 || q >= m_T || k >= m_T) return 0.0;
  return m_matrix[static_cast<size_t>(q) * m_T + k];
}

QColor AttentionHeatmap::colourAt(double value) const { return inspectview::qcolourOf(static_cast<float>(value)); }

double AttentionHeatmap::hoverValue() const { return valueAt(m_hoverQ, m_hoverK); }

QString AttentionHeatmap::hoverText() const {
  if (m_hoverQ < 0) return {};
  return tr("“%1” (%2) → “%3” (%4): %5")
      .arg(m_labels.value(m_hoverQ))
      .arg(m_hoverQ)
      .arg(m_labels.value(m_hoverK))
      .arg(m_hoverK)
      .arg(hoverValue(), 0, 'f', 4);
}

// Room for labels only while they can be drawn: a long sequence shown whole gets every pixel.
double AttentionHeatmap::margin() const {
  if (!m_showLabels || m_T == 0) return 0.0;
  const double side = std::max(0.0, std::min(width(), height()) - kLabelMargin);
  return side / m_T * m_zoom >= kMinLabelCell ? kLabelMargin : 0.0;
}

double AttentionHeatmap::cellSize() const {
  if (m_T == 0) return 0;
  const double side = std::max(0.0, std::min(width(), height()) - margin());
  return side / m_T * m_zoom;
}

// Centred horizontally while it is narrower than the item; panned within it once zoomed past it.
QRectF AttentionHeatmap::matrixRect() const {
  const double s = cellSize() * m_T;
  const double centre = std::max(0.0, (width() - margin() - s) / 2);
  return QRectF(margin() + centre + m_pan.x(), margin() + m_pan.y(), s, s);
}

void AttentionHeatmap::clampPan() {
  const double s = cellSize() * m_T;
  const double roomX = width() - margin(), roomY = height() - margin();
  m_pan.setX(std::clamp(m_pan.x(), std::min(0.0, roomX - s), 0.0));
  m_pan.setY(std::clamp(m_pan.y(), std::min(0.0, roomY - s), 0.0));
}

bool AttentionHeatmap::cellAt(QPointF pos, int* q, int* k) const {
  const double m = margin();
  if (m_T == 0 || pos.x() < m || pos.y() < m) return false;
  const QRectF r = matrixRect();
  const double cs = cellSize();
  const int kk = static_cast<int>(std::floor((pos.x() - r.left()) / cs));
  const int qq = static_cast<int>(std::floor((pos.y() - r.top()) / cs));
  if (qq < 0 || kk < 0 || qq >= m_T || kk >= m_T) return false;
  *q = qq;
  *k = kk;
  return true;
}

void AttentionHeatmap::setHover(int q, int k) {
  if (q == m_hoverQ && k == m_hoverK) return;
  m_hoverQ = q;
  m_hoverK = k;
  Q_EMIT hoverChanged();
  update();
}

void AttentionHeatmap::paint(QPainter* p) {
  if (m_T == 0 || m_image.isNull()) return;
  const double m = margin(), cs = cellSize();
  const QRectF area(m, m, std::max(0.0, width() - m), std::max(0.0, height() - m));
  const QRectF r = matrixRect();
  // Only the visible cells are scaled: at high zoom the whole matrix would be a huge image.
  const int k0 = std::max(0, static_cast<int>(std::floor((area.left() - r.left()) / cs)));
  const int q0 = std::max(0, static_cast<int>(std::floor((area.top() - r.top()) / cs)));
  const int k1 = std::min(m_T, static_cast<int>(std::ceil((area.right() - r.left()) / cs)));
  const int q1 = std::min(m_T, static_cast<int>(std::ceil((area.bottom() - r.top()) / cs)));
  if (k1 <= k0 || q1 <= q0) return;
  p->save();
  p->setClipRect(area);
  const double deviceScale = p->deviceTransform().m11();
  const int shrunkSide = static_cast<int>(std::lround(cs * m_T * deviceScale));
  const bool wholeInView = r.width() <= area.width() + 0.5 && r.height() <= area.height() + 0.5;
  if (cs < 1.0 && wholeInView && shrunkSide > 0 && p->deviceTransform().type() <= QTransform::TxScale) {
    // A long sequence shown whole, below a pixel per cell: smooth the image once for this size, then
    // copy it 1:1 at a whole device pixel (re-smoothing 1-4 M cells on every hover cost 7-10 ms).
    // Zoomed in part way (still below a pixel, but cut by the view) only the visible cells are
    // smoothed, per frame: caching the whole, mostly unseen, matrix at every wheel step cost more.
    const QPointF at(std::round(r.left() * deviceScale) / deviceScale, std::round(r.top() * deviceScale) / deviceScale);
    p->setRenderHint(QPainter::SmoothPixmapTransform, false);
    p->drawImage(QRectF(at, QSizeF(shrunkSide, shrunkSide) / deviceScale), shrunkImage(shrunkSide));
  } else {
    // Crisp cells when magnified.
    p->setRenderHint(QPainter::SmoothPixmapTransform, cs < 1.0);
    const QRectF target(r.left() + k0 * cs, r.top() + q0 * cs, (k1 - k0) * cs, (q1 - q0) * cs);
    p->drawImage(target, m_image, QRectF(k0, q0, k1 - k0, q1 - q0));
  }
  p->setRenderHint(QPainter::Antialiasing, false);
  if (m_selected >= 0) {  // the token's row (where it attends) and column (what attends to it)
    p->setPen(QPen(QColor(255, 255, 255, 200), 1.5));
    p->setBrush(Qt::NoBrush);
    p->drawRect(QRectF(r.left(), r.top() + m_selected * cs, r.width(), cs));
    p->drawRect(QRectF(r.left() + m_selected * cs, r.top(), cs, r.height()));
  }
  if (m_hoverQ >= 0 && cs >= 4) {
    p->setPen(QPen(QColor(255, 255, 255), 2));
    p->setBrush(Qt::NoBrush);
    p->drawRect(QRectF(r.left() + m_hoverK * cs, r.top() + m_hoverQ * cs, cs, cs));
  }
  p->restore();

  if (m > 0 && cs >= kMinLabelCell) {
    QFont f = p->font();
    f.setPixelSize(static_cast<int>(std::clamp(cs * 0.7, 9.0, 13.0)));
    p->setFont(f);
    p->setPen(m_labelColor);
    p->save();
    const double lx = std::max(0.0, area.left() - m + std::max(0.0, r.left() - area.left()));  // labels hug the matrix
    p->setClipRect(QRectF(lx, m, m, height() - m));
    QFont bold = f;
    bold.setBold(true);
    const QFontMetrics boldMetrics(bold);
    const int labelWidth = static_cast<int>(m - 8);
    // Elided once per label and font size; only the one or two bold labels are elided per frame.
    const auto labelOf = [&](int t, bool isBold) -> QString {
      return isBold ? boldMetrics.elidedText(m_labels.value(t), Qt::ElideRight, labelWidth)
                    : elidedLabel(t, f, labelWidth);
    };
    for (int q = q0; q < q1; ++q) {
      const bool isBold = q == m_selected || q == m_hoverQ;
      p->setFont(isBold ? bold : f);
      p->drawText(QRectF(lx, r.top() + q * cs, m - 6, cs), Qt::AlignRight | Qt::AlignVCenter, labelOf(q, isBold));
    }
    p->restore();
    p->save();
    p->setClipRect(QRectF(std::max(m, r.left()), 0, width() - m, m));
    for (int k = k0; k < k1; ++k) {
      const bool isBold = k == m_selected || k == m_hoverK;
      p->setFont(isBold ? bold : f);
      p->save();
      p->translate(r.left() + k * cs, m - 6);
      p->rotate(-90);
      p->drawText(QRectF(0, 0, m - 8, cs), Qt::AlignLeft | Qt::AlignVCenter, labelOf(k, isBold));
      p->restore();
    }
    p->restore();
  }
}

const QImage& AttentionHeatmap::shrunkImage(int side) {
  if (m_shrunk.width() != side) {
    // Drawn with the same smoothing as a scaled drawImage, so the cached frame looks as before.
    m_shrunk = QImage(side, side, QImage::Format_RGB32);
    QPainter sp(&m_shrunk);
    sp.setRenderHint(QPainter::SmoothPixmapTransform, true);
    sp.drawImage(QRectF(0, 0, side, side), m_image);
  }
  return m_shrunk;
}

const QString& AttentionHeatmap::elidedLabel(int t, const QFont& font, int width) {
  const int key = font.pixelSize() * 100000 + width;  // a new font size or margin makes every label stale
  if (key != m_elidedKey) {
    m_elidedKey = key;
    m_elidedDone.assign(m_T, false);
  }
  if (!m_elidedDone[t]) {
    m_elided[t] = QFontMetrics(font).elidedText(m_labels.value(t), Qt::ElideRight, width);
    m_elidedDone[t] = true;
  }
  return m_elided[t];
}

void AttentionHeatmap::hoverMoveEvent(QHoverEvent* event) {
  int q = -1, k = -1;
  if (!cellAt(event->position(), &q, &k)) q = k = -1;
  setHover(q, k);
}

void AttentionHeatmap::hoverLeaveEvent(QHoverEvent*) { setHover(-1, -1); }

void AttentionHeatmap::mousePressEvent(QMouseEvent* event) {
  m_dragFrom = event->position();
  m_dragging = true;
  m_dragMoved = false;
  event->accept();
}

void AttentionHeatmap::mouseMoveEvent(QMouseEvent* event) {
  if (!m_dragging) return;
  const QPointF d = event->position() - m_dragFrom;
  if (!m_dragMoved && d.manhattanLength() < 4) return;  // a click that wobbled is still a click
  m_dragMoved = true;
  m_pan += d;
  m_dragFrom = event->position();
  clampPan();
  update();
}

void AttentionHeatmap::mouseReleaseEvent(QMouseEvent* event) {
  const bool click = m_dragging && !m_dragMoved;
  m_dragging = false;
  int q = -1, k = -1;
  if (click && cellAt(event->position(), &q, &k)) {
    setSelectedToken(q == m_selected ? -1 : q);
    Q_EMIT cellClicked(q, k);
  }
}

void AttentionHeatmap::wheelEvent(QWheelEvent* event) {
  if (m_T == 0) return;
  const double oldCell = cellSize();
  const double factor = std::pow(1.0015, event->angleDelta().y());
  const double zoom = std::clamp(m_zoom * factor, 1.0, kMaxZoom);
  if (zoom == m_zoom) return;
  // Keep the point under the pointer where it is.
  const QPointF at = event->position(), origin = matrixRect().topLeft();
  m_zoom = zoom;
  const double ratio = cellSize() / oldCell;
  const QPointF newOrigin = at - (at - origin) * ratio;
  m_pan = newOrigin - QPointF(margin(), margin());
  clampPan();
  Q_EMIT viewChanged();
  update();
  event->accept();
}

void AttentionHeatmap::geometryChange(const QRectF& newGeometry, const QRectF& oldGeometry) {
  QQuickPaintedItem::geometryChange(newGeometry, oldGeometry);
  clampPan();
}

QString AttentionHeatmap::exportPng(const QString& pathOrUrl) const {
  if (m_T == 0) return tr("Nothing to export yet.");
  const int cell = std::clamp(1024 / m_T, 2, 24);
  const int margin = cell >= 10 ? 120 : 0;
  const int side = margin + cell * m_T;
  QImage img(side, side, QImage::Format_RGB32);
  if (img.isNull()) return tr("The image would be too large.");
  img.fill(Qt::white);
  {
    QPainter p(&img);
    p.drawImage(QRect(margin, margin, cell * m_T, cell * m_T), m_image);
    if (margin > 0) {
      QFont f = p.font();
      f.setPixelSize(std::min(13, cell - 2));
      p.setFont(f);
      p.setPen(Qt::black);
      for (int t = 0; t < m_T; ++t) {
        const QString label = p.fontMetrics().elidedText(m_labels.value(t), Qt::ElideRight, margin - 8);
        p.drawText(QRect(0, margin + t * cell, margin - 4, cell), Qt::AlignRight | Qt::AlignVCenter, label);
        p.save();
        p.translate(margin + t * cell, margin - 4);
        p.rotate(-90);
        p.drawText(QRect(0, 0, margin - 8, cell), Qt::AlignLeft | Qt::AlignVCenter, label);
        p.restore();
      }
    }
  }
  QSaveFile f(localPathOf(pathOrUrl));
  if (!f.open(QIODevice::WriteOnly) || !img.save(&f, "PNG") || !f.commit())
    return tr("Could not write %1: %2").arg(localPathOf(pathOrUrl), f.errorString());
  return {};
}

QString AttentionHeatmap::exportCsv(const QString& pathOrUrl) const {
  if (m_T == 0) return tr("Nothing to export yet.");
  QByteArray out = csvField(QStringLiteral("query \\ key")).toUtf8();
  for (int k = 0; k < m_T; ++k) out += ',' + csvField(m_labels.value(k)).toUtf8();
  out += '\n';
  for (int q = 0; q < m_T; ++q) {
    out += csvField(m_labels.value(q)).toUtf8();
    for (int k = 0; k < m_T; ++k) out += ',' + QByteArray::number(m_matrix[static_cast<size_t>(q) * m_T + k], 'g', 7);
    out += '\n';
  }
  return writeFileAtomically(pathOrUrl, out);
}
