// HeatmapImage: draws a QImage (a HeadGridModel thumbnail) scaled to the item with crisp pixels. QML's
// Image takes URLs only; this takes the image a model role hands out.
#pragma once

#include <QImage>
#include <QQuickPaintedItem>
#include <QtQml/qqml.h>

class HeatmapImage : public QQuickPaintedItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QImage image READ image WRITE setImage NOTIFY imageChanged)

 public:
  explicit HeatmapImage(QQuickItem* parent = nullptr) : QQuickPaintedItem(parent) {}
  QImage image() const { return m_image; }
  void setImage(const QImage& image);
  void paint(QPainter* painter) override;

 Q_SIGNALS:
  void imageChanged();

 private:
  QImage m_image;
};
