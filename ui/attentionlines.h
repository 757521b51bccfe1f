// AttentionLines: bertviz's head view. The tokens twice, in a left column (queries: who attends) and a
// right column (keys: what is attended to), joined by lines whose opacity is the attention weight.
// With a token selected (click or `selectedToken`), only its lines show: where it attends (left to
// right, attendsColour) and what attends to it (right to left, attendedColour). Without one, every
// weight above 2% is drawn faintly.
//
// Long sequences scroll inside the item (wheel or contentY), so it never becomes a texture taller
// than the screen.
#pragma once

#include <QColor>
#include <QQuickPaintedItem>
#include <QStringList>
#include <QVariant>
#include <QtQml/qqml.h>

#include <vector>

class AttentionLines : public QQuickPaintedItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QVariant inspection READ inspection WRITE setInspection NOTIFY inspectionChanged)
  Q_PROPERTY(int layerIndex READ layerIndex WRITE setLayerIndex NOTIFY selectionChanged)
  Q_PROPERTY(int head READ head WRITE setHead NOTIFY selectionChanged)
  Q_PROPERTY(int selectedToken READ selectedToken WRITE setSelectedToken NOTIFY selectedTokenChanged)
  Q_PROPERTY(double contentY READ contentY WRITE setContentY NOTIFY scrollChanged)
  Q_PROPERTY(double contentHeight READ contentHeight NOTIFY scrollChanged)
  Q_PROPERTY(QColor labelColour MEMBER m_labelColour NOTIFY coloursChanged)
  Q_PROPERTY(QColor attendsColour MEMBER m_attendsColour NOTIFY coloursChanged)
  Q_PROPERTY(QColor attendedColour MEMBER m_attendedColour NOTIFY coloursChanged)

 public:
  explicit AttentionLines(QQuickItem* parent = nullptr);

  QVariant inspection() const { return m_inspection; }
  void setInspection(const QVariant& v);
  int layerIndex() const { return m_layer; }
  void setLayerIndex(int l);
  int head() const { return m_head; }
  void setHead(int h);
  int selectedToken() const { return m_selected; }
  void setSelectedToken(int t);
  double contentY() const { return m_contentY; }
  void setContentY(double y);
  double contentHeight() const { return m_T * kRowHeight + 2 * kPad; }

  void paint(QPainter* painter) override;

  static constexpr double kRowHeight = 22;
  static constexpr double kPad = 8;

 Q_SIGNALS:
  void inspectionChanged();
  void selectionChanged();
  void selectedTokenChanged();
  void scrollChanged();
  void coloursChanged();

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void geometryChange(const QRectF& newGeometry, const QRectF& oldGeometry) override;

 private:
  void rebuild();
  double rowY(int t) const { return kPad + t * kRowHeight + kRowHeight / 2 - m_contentY; }

  QVariant m_inspection;
  int m_layer = 0, m_head = -1;
  std::vector<float> m_matrix;
  int m_T = 0;
  QStringList m_labels;
  int m_selected = -1;
  double m_contentY = 0;
  QColor m_labelColour = QColor(0x1c, 0x20, 0x27);
  QColor m_attendsColour = QColor(0x3f, 0x51, 0xb5);
  QColor m_attendedColour = QColor(0xe6, 0x7e, 0x22);
};
