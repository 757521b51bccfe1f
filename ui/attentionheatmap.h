// AttentionHeatmap: one (T, T) attention matrix as a heatmap, query tokens down, key tokens across,
// in the shared colour scale (inspectmatrix.h). Painted from a cached one-pixel-per-cell QImage, so a
// 512+ token matrix costs one scaled drawImage per frame however many cells it has; shrunk below a
// pixel per cell, the smoothed image is cached too (per cell size), so hovering and panning a long
// sequence shown whole is a plain copy (tests/tools/bench_heatmap.cpp measures it).
//
// Zoom with the wheel (around the pointer) or `zoom`; drag to pan. Token labels appear on both axes
// once a cell is tall enough to read one. Hover sets hoverQuery/hoverKey/hoverValue; a click emits
// cellClicked (the page uses it to pick a token for the lines view).
// The matrix comes from `inspection` + `layerIndex` + `head` (a head index, or MeanOfHeads / MaxOfHeads),
// or from `inspection` + `overlayHeads` (heads of any layers, [{layer, head}], combined by `overlayMode`:
// the mean or the max of their weights), which wins when non-empty; or directly from setMatrix() (tests,
// the benchmark). A matrix from the inspection is computed on the thread pool (a mean over many
// 1024-token heads is ~100 ms of work): the old one stays on screen, `busy` is true, and only the
// newest choice is shown.
#pragma once

#include <QColor>
#include <QFont>
#include <QImage>
#include <QQuickPaintedItem>
#include <QStringList>
#include <QVariant>
#include <QtQml/qqml.h>

#include <vector>

#include "inspectmatrix.h"
#include "services/latesttask.h"

class AttentionHeatmap : public QQuickPaintedItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QVariant inspection READ inspection WRITE setInspection NOTIFY inspectionChanged)
  Q_PROPERTY(int layerIndex READ layerIndex WRITE setLayerIndex NOTIFY selectionChanged)
  Q_PROPERTY(int head READ head WRITE setHead NOTIFY selectionChanged)
  Q_PROPERTY(QVariantList overlayHeads READ overlayHeads WRITE setOverlayHeads NOTIFY selectionChanged)
  Q_PROPERTY(OverlayMode overlayMode READ overlayMode WRITE setOverlayMode NOTIFY selectionChanged)
  Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
  Q_PROPERTY(int tokenCount READ tokenCount NOTIFY matrixChanged)
  Q_PROPERTY(bool showLabels READ showLabels WRITE setShowLabels NOTIFY viewChanged)
  Q_PROPERTY(double zoom READ zoom WRITE setZoom NOTIFY viewChanged)
  Q_PROPERTY(int hoverQuery READ hoverQuery NOTIFY hoverChanged)
  Q_PROPERTY(int hoverKey READ hoverKey NOTIFY hoverChanged)
  Q_PROPERTY(double hoverValue READ hoverValue NOTIFY hoverChanged)
  Q_PROPERTY(QString hoverText READ hoverText NOTIFY hoverChanged)
  Q_PROPERTY(int selectedToken READ selectedToken WRITE setSelectedToken NOTIFY selectedTokenChanged)
  Q_PROPERTY(QColor labelColor READ labelColor WRITE setLabelColor NOTIFY viewChanged)

 public:
  enum HeadChoice { MeanOfHeads = -1, MaxOfHeads = -2 };
  Q_ENUM(HeadChoice)
  enum OverlayMode { OverlayMean, OverlayMax };
  Q_ENUM(OverlayMode)

  explicit AttentionHeatmap(QQuickItem* parent = nullptr);

  QVariant inspection() const { return m_inspectionVariant; }
  void setInspection(const QVariant& v);
  int layerIndex() const { return m_spec.layer; }
  void setLayerIndex(int layer);
  int head() const { return m_spec.head; }
  void setHead(int head);
  QVariantList overlayHeads() const;
  void setOverlayHeads(const QVariantList& heads);  // [{layer, head}, ...]; entries without both are skipped
  void setOverlay(std::vector<engine::HeadRef> heads);
  OverlayMode overlayMode() const { return m_spec.overlayReduce == engine::HeadReduce::Max ? OverlayMax : OverlayMean; }
  void setOverlayMode(OverlayMode mode);
  bool busy() const { return m_job.busy(); }
  int tokenCount() const { return m_T; }
  bool showLabels() const { return m_showLabels; }
  void setShowLabels(bool on);
  double zoom() const { return m_zoom; }
  void setZoom(double zoom);
  int hoverQuery() const { return m_hoverQ; }
  int hoverKey() const { return m_hoverK; }
  double hoverValue() const;
  QString hoverText() const;
  int selectedToken() const { return m_selected; }
  void setSelectedToken(int t);
  QColor labelColor() const { return m_labelColor; }
  void setLabelColor(const QColor& c);

  // Shows `m` (T, T) row-major with `labels` (T entries, or empty), instead of an inspection's matrix.
  void setMatrix(std::vector<float> m, int T, QStringList labels = {});
  // What is shown ((T, T) row-major, T labels), for views that show the same matrix another way.
  const std::vector<float>& matrix() const { return m_matrix; }
  const QStringList& labels() const { return m_labels; }
  // The value at (query, key), 0 outside.
  Q_INVOKABLE double valueAt(int query, int key) const;
  // The colour of `value` in the shared scale (for legends).
  Q_INVOKABLE QColor colourAt(double value) const;
  // Back to zoom 1 (the whole matrix fits) and no pan.
  Q_INVOKABLE void resetView();
  // The matrix at a readable resolution with token labels (PNG) / as numbers with token headers
  // (CSV). Accept a path or a file: URL; write atomically. Return "" or the reason it failed.
  Q_INVOKABLE QString exportPng(const QString& pathOrUrl) const;
  Q_INVOKABLE QString exportCsv(const QString& pathOrUrl) const;

  void paint(QPainter* painter) override;

 Q_SIGNALS:
  void inspectionChanged();
  void selectionChanged();
  void matrixChanged();
  void viewChanged();
  void hoverChanged();
  void selectedTokenChanged();
  void busyChanged();
  void cellClicked(int query, int key);

 protected:
  void hoverMoveEvent(QHoverEvent* event) override;
  void hoverLeaveEvent(QHoverEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void geometryChange(const QRectF& newGeometry, const QRectF& oldGeometry) override;

 private:
  void rebuild();  // starts computing the matrix + image from the inspection and m_spec
  void setMatrixData(inspectview::MatrixChoice c);
  double margin() const;      // room for labels on the left and top (0 without labels)
  double cellSize() const;    // pixels per cell at the current zoom
  QRectF matrixRect() const;  // where the whole matrix is drawn (may extend past the item)
  bool cellAt(QPointF pos, int* q, int* k) const;
  const QImage& shrunkImage(int side);  // m_image smoothed to side x side device pixels
  const QString& elidedLabel(int t, const QFont& font, int width);
  void clampPan();
  void setHover(int q, int k);

  QVariant m_inspectionVariant;
  inspectview::MatrixSpec m_spec;  // layer, head, overlay
  std::vector<float> m_matrix;
  int m_T = 0;
  QStringList m_labels;
  QImage m_image;
  QImage m_shrunk;                 // m_image at the last cell size below a pixel (null when stale)
  std::vector<QString> m_elided;   // labels elided to the label margin in the font of m_elidedKey
  std::vector<bool> m_elidedDone;  // which of m_elided are computed
  int m_elidedKey = 0;
  bool m_showLabels = true;
  double m_zoom = 1.0;
  QPointF m_pan;  // offset of the matrix from its fitted position, in pixels
  QPointF m_dragFrom;
  bool m_dragging = false, m_dragMoved = false;
  int m_hoverQ = -1, m_hoverK = -1;
  int m_selected = -1;
  QColor m_labelColor = QColor(0x1c, 0x20, 0x27);
  LatestTask<inspectview::MatrixChoice> m_job{this};
};
