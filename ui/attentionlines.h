// AttentionLines: bertviz's head view. The tokens twice, in a left column (queries: who attends) and a
// right column (keys: what is attended to), joined by lines whose opacity is the attention weight.
// With a token selected (click or `selectedToken`), only its lines show: where it attends (left to
// right, attendsColour) and what attends to it (right to left, attendedColour). Without one, every
// weight above 2% is drawn faintly.
//
// Long sequences scroll inside the item (wheel or contentY), so it never becomes a texture taller
// than the screen.
//
// It shows the matrix its `source` heatmap shows (a head, an aggregate or an overlay), so the two
// views never disagree and the matrix is computed once.
#pragma once

#include <QColor>
#include <QPointer>
#include <QQuickPaintedItem>
#include <QStringList>
#include <QVariant>
#include <QtQml/qqml.h>

#include <vector>

#include "attentionheatmap.h"

class AttentionLines : public QQuickPaintedItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(AttentionHeatmap* source READ source WRITE setSource NOTIFY sourceChanged)
  Q_PROPERTY(int selectedToken READ selectedToken WRITE setSelectedToken NOTIFY selectedTokenChanged)
  Q_PROPERTY(double contentY READ contentY WRITE setContentY NOTIFY scrollChanged)
  Q_PROPERTY(double contentHeight READ contentHeight NOTIFY scrollChanged)
  Q_PROPERTY(QColor labelColour MEMBER m_labelColour NOTIFY coloursChanged)
  Q_PROPERTY(QColor attendsColour MEMBER m_attendsColour NOTIFY coloursChanged)
  Q_PROPERTY(QColor attendedColour MEMBER m_attendedColour NOTIFY coloursChanged)

 public:
  explicit AttentionLines(QQuickItem* parent = nullptr);

  AttentionHeatmap* source() const { return m_source; }
  void setSource(AttentionHeatmap* heatmap);
  int selectedToken() const { return m_selected; }
  void setSelectedToken(int t);
  double contentY() const { return m_contentY; }
  void setContentY(double y);
  double contentHeight() const { return m_T * kRowHeight + 2 * kPad; }

  void paint(QPainter* painter) override;

  static constexpr double kRowHeight = 22;
  static constexpr double kPad = 8;

 Q_SIGNALS:
  void sourceChanged();
  void selectedTokenChanged();
  void scrollChanged();
  void coloursChanged();

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void geometryChange(const QRectF& newGeometry, const QRectF& oldGeometry) override;

 private:
  void rebuild();  // takes the source's matrix
  double rowY(int t) const { return kPad + t * kRowHeight + kRowHeight / 2 - m_contentY; }

  QPointer<AttentionHeatmap> m_source;
  std::vector<float> m_matrix;
  int m_T = 0;
  QStringList m_labels;
  int m_selected = -1;
  double m_contentY = 0;
  QColor m_labelColour = QColor(0x1c, 0x20, 0x27);
  QColor m_attendsColour = QColor(0x3f, 0x51, 0xb5);
  QColor m_attendedColour = QColor(0xe6, 0x7e, 0x22);
};
