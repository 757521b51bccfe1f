// AttentionLines (see attentionlines.h).
#include "attentionlines.h"

#include <QPainter>

#include <algorithm>

namespace {
constexpr float kFaintThreshold = 0.02f;
}

AttentionLines::AttentionLines(QQuickItem* parent) : QQuickPaintedItem(parent) {
  setAcceptedMouseButtons(Qt::LeftButton);
  setAntialiasing(true);
  connect(this, &AttentionLines::coloursChanged, this, [this] { update(); });
}

void AttentionLines::setSource(AttentionHeatmap* heatmap) {
  if (heatmap == m_source) return;
  if (m_source) disconnect(m_source, nullptr, this, nullptr);
  m_source = heatmap;
  if (m_source) connect(m_source, &AttentionHeatmap::matrixChanged, this, &AttentionLines::rebuild);
  Q_EMIT sourceChanged();
  rebuild();
}

void AttentionLines::setSelectedToken(int t) {
  t = (t >= 0 && t < m_T) ? t : -1;
  if (t == m_selected) return;
  m_selected = t;
  Q_EMIT selectedTokenChanged();
  // Bring the token into view.
  if (t >= 0 && (rowY(t) < 0 || rowY(t) > height())) setContentY(kPad + t * kRowHeight - height() / 2);
  update();
}

void AttentionLines::setContentY(double y) {
  y = std::clamp(y, 0.0, std::max(0.0, contentHeight() - height()));
  if (y == m_contentY) return;
  m_contentY = y;
  Q_EMIT scrollChanged();
  update();
}

void AttentionLines::rebuild() {
  const int oldT = m_T;
  if (m_source) {
    m_matrix = m_source->matrix();
    m_T = m_source->tokenCount();
    m_labels = m_source->labels();
  } else {
    m_matrix.clear();
    m_T = 0;
    m_labels.clear();
  }
  if (m_T != oldT) {
    m_selected = -1;
    m_contentY = 0;
    Q_EMIT selectedTokenChanged();
  }
  Q_EMIT scrollChanged();
  update();
}

void AttentionLines::paint(QPainter* p) {
  if (m_T == 0) return;
  const double colW = std::min(160.0, width() * 0.3);
  const double x0 = colW + 6, x1 = width() - colW - 6;
  const int first = std::max(0, static_cast<int>((m_contentY - kPad) / kRowHeight) - 1);
  const int last = std::min(m_T, static_cast<int>((m_contentY + height()) / kRowHeight) + 2);

  p->setRenderHint(QPainter::Antialiasing, true);
  auto line = [&](int from, int to, float w, const QColor& c) {
    QColor col = c;
    col.setAlphaF(std::clamp(w, 0.0f, 1.0f));
    p->setPen(QPen(col, 1.0 + 2.5 * w));
    p->drawLine(QPointF(x0, rowY(from)), QPointF(x1, rowY(to)));
  };
  if (m_selected >= 0) {
    const int s = m_selected;
    for (int k = 0; k <= s; ++k) line(s, k, m_matrix[static_cast<size_t>(s) * m_T + k], m_attendsColour);
    for (int q = s; q < m_T; ++q) line(q, s, m_matrix[static_cast<size_t>(q) * m_T + s], m_attendedColour);
  } else {
    // A line runs from query q (left) up to key k <= q (right): it crosses the view only when q is
    // below its top and k above its bottom.
    for (int q = first; q < m_T; ++q) {
      for (int k = 0; k <= std::min(q, last); ++k) {
        const float w = m_matrix[static_cast<size_t>(q) * m_T + k];
        if (w >= kFaintThreshold) line(q, k, w * 0.6f, m_attendsColour);
      }
    }
  }

  QFont f = p->font();
  f.setPixelSize(13);
  for (int t = first; t < last; ++t) {
    const bool sel = t == m_selected;
    QFont g = f;
    g.setBold(sel);
    p->setFont(g);
    p->setPen(m_labelColour);
    const QRectF left(0, rowY(t) - kRowHeight / 2, colW, kRowHeight),
        right(width() - colW, rowY(t) - kRowHeight / 2, colW, kRowHeight);
    if (sel) {
      QColor bg = m_attendsColour;
      bg.setAlphaF(0.18);
      p->fillRect(left, bg);
      p->fillRect(right, bg);
    }
    const QString label = p->fontMetrics().elidedText(m_labels.value(t), Qt::ElideRight, static_cast<int>(colW - 8));
    p->drawText(left.adjusted(0, 0, -4, 0), Qt::AlignRight | Qt::AlignVCenter, label);
    p->drawText(right.adjusted(4, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, label);
  }
}

void AttentionLines::mousePressEvent(QMouseEvent* event) {
  const int t = static_cast<int>((event->position().y() + m_contentY - kPad) / kRowHeight);
  setSelectedToken(t == m_selected ? -1 : t);
  event->accept();
}

void AttentionLines::wheelEvent(QWheelEvent* event) {
  setContentY(m_contentY - event->angleDelta().y() / 120.0 * 3 * kRowHeight);
  event->accept();
}

void AttentionLines::geometryChange(const QRectF& newGeometry, const QRectF& oldGeometry) {
  QQuickPaintedItem::geometryChange(newGeometry, oldGeometry);
  setContentY(m_contentY);
  Q_EMIT scrollChanged();
}
