// Shared by the Inspect page's C++ items: which (T, T) attention matrix a (layer, head) choice means,
// token labels, and the colour scale as QColor/QRgb (engine/inspect/colormap.h, so the app, its PNG
// exports and the CLI's --png agree on what a colour means).
#pragma once

#include <QColor>
#include <QImage>
#include <QStringList>

#include <span>
#include <vector>

#include "services/inspectiontypes.h"

namespace inspectview {

// Head choices besides a head index.
constexpr int kMeanOfHeads = -1;
constexpr int kMaxOfHeads = -2;

// What a heatmap shows: one head of a layer, the mean / max over the layer's heads, or an overlay of
// heads picked from any layers (reduced by overlayReduce), which takes precedence when non-empty.
struct MatrixSpec {
  int layer = 0;
  int head = kMeanOfHeads;
  std::vector<engine::HeadRef> overlay;
  engine::HeadReduce overlayReduce = engine::HeadReduce::Mean;
};

// The (T, T) matrix `spec` means; empty when the inspection has no attention or the choice is out of
// range.
std::vector<float> selectedMatrix(const engine::Inspection& in, const MatrixSpec& spec);

// Everything a view of `in` shows for `spec`: the matrix, its size, the token labels and the
// one-pixel-per-cell image; T = 0 when there is nothing to show. Thread-safe (reads `in` only), so
// it runs on the thread pool.
struct MatrixChoice {
  std::vector<float> values;
  int T = 0;
  QStringList labels;
  QImage image;
};
MatrixChoice chooseMatrix(const InspectionPtr& in, const MatrixSpec& spec);

// The inspected tokens as labels (see inspectionTokenLabel).
QStringList tokenLabels(const engine::Inspection& in);

QRgb colourOf(float value);
inline QColor qcolourOf(float value) { return QColor::fromRgb(colourOf(value)); }

// One pixel per cell, (T, T) row-major values in [0, 1].
QImage matrixImage(std::span<const float> m, int T);
// A side x side thumbnail (side <= T): each pixel shows the largest weight in its block, so thin
// patterns (a diagonal, one column) stay visible when a long sequence is shrunk.
QImage matrixThumbnail(std::span<const float> m, int T, int side);

}  // namespace inspectview
