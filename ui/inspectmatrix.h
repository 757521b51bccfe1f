// Shared by the Inspect page's C++ items: which (T, T) attention matrix a (layer, head) choice means,
// token labels, and the colour scale as QColor/QRgb (engine/inspect/colormap.h, so the app, its PNG
// exports and the CLI's --png agree on what a colour means).
#pragma once

#include <QColor>
#include <QImage>
#include <QStringList>

#include <vector>

#include "services/inspectiontypes.h"

namespace inspectview {

// Head choices besides a head index.
constexpr int kMeanOfHeads = -1;
constexpr int kMaxOfHeads = -2;

// The (T, T) matrix of `layer` for head >= 0, or the mean / max over its heads; empty when the
// inspection has no attention or the choice is out of range.
std::vector<float> selectedMatrix(const engine::Inspection& in, int layer, int head);

// What a view of `inspection` (an InspectionPtr in a QVariant) shows for (layer, head): the matrix,
// its size and the token labels; T = 0 when there is nothing to show.
struct MatrixChoice {
  std::vector<float> values;
  int T = 0;
  QStringList labels;
};
MatrixChoice chooseMatrix(const QVariant& inspection, int layer, int head);

// The inspected tokens as labels (see inspectionTokenLabel).
QStringList tokenLabels(const engine::Inspection& in);

QRgb colourOf(float value);
inline QColor qcolourOf(float value) { return QColor::fromRgb(colourOf(value)); }

// One pixel per cell, (T, T) row-major values in [0, 1].
QImage matrixImage(const std::vector<float>& m, int T);
// A side x side thumbnail (side <= T): each pixel shows the largest weight in its block, so thin
// patterns (a diagonal, one column) stay visible when a long sequence is shrunk.
QImage matrixThumbnail(const std::vector<float>& m, int T, int side);

}  // namespace inspectview
