// HeatmapImage (see heatmapimage.h).
#include "heatmapimage.h"

#include <QPainter>

void HeatmapImage::setImage(const QImage& image) {
  m_image = image;
  Q_EMIT imageChanged();
  update();
}

void HeatmapImage::paint(QPainter* painter) {
  if (m_image.isNull()) return;
  painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
  painter->drawImage(QRectF(0, 0, width(), height()), m_image);
}
