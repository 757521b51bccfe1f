// inspectmatrix.h helpers.
#include "inspectmatrix.h"

#include <algorithm>

#include "engine/inspect/colormap.h"

namespace inspectview {

std::vector<float> selectedMatrix(const engine::Inspection& in, const MatrixSpec& spec) {
  if (in.attention.empty()) return {};
  const auto inRange = [&](const engine::HeadRef& r) {
    return r.layer >= 0 && r.layer < in.n_layer && r.head >= 0 && r.head < in.n_head;
  };
  if (!spec.overlay.empty()) {
    if (!std::all_of(spec.overlay.begin(), spec.overlay.end(), inRange)) return {};
    return engine::reduce_heads(in, spec.overlay, spec.overlayReduce);
  }
  if (spec.layer < 0 || spec.layer >= in.n_layer) return {};
  if (spec.head == kMeanOfHeads) return engine::reduce_heads(in, spec.layer, engine::HeadReduce::Mean);
  if (spec.head == kMaxOfHeads) return engine::reduce_heads(in, spec.layer, engine::HeadReduce::Max);
  if (!inRange({spec.layer, spec.head})) return {};
  const auto m = in.head_matrix(spec.layer, spec.head);
  return {m.begin(), m.end()};
}

MatrixChoice chooseMatrix(const InspectionPtr& in, const MatrixSpec& spec) {
  MatrixChoice c;
  if (!in) return c;
  c.values = selectedMatrix(*in, spec);
  if (c.values.empty()) return c;
  c.T = in->T;
  c.labels = tokenLabels(*in);
  c.image = matrixImage(c.values, c.T);
  return c;
}

QStringList tokenLabels(const engine::Inspection& in) {
  QStringList labels;
  labels.reserve(in.T);
  for (int32_t id : in.ids) labels << inspectionTokenLabel(in.piece(id));
  return labels;
}

QRgb colourOf(float value) {
  const engine::Rgb c = engine::viridis(value);
  return qRgb(c.r, c.g, c.b);
}

QImage matrixImage(std::span<const float> m, int T) {
  QImage img(T, T, QImage::Format_RGB32);
  if (img.isNull()) return img;
  for (int q = 0; q < T; ++q) {
    auto* line = reinterpret_cast<QRgb*>(img.scanLine(q));
    for (int k = 0; k < T; ++k) line[k] = colourOf(m[static_cast<size_t>(q) * T + k]);
  }
  return img;
}

QImage matrixThumbnail(std::span<const float> m, int T, int side) {
  side = std::clamp(side, 1, std::max(1, T));
  QImage img(side, side, QImage::Format_RGB32);
  for (int y = 0; y < side; ++y) {
    const int q0 = y * T / side, q1 = std::max(q0 + 1, (y + 1) * T / side);
    auto* line = reinterpret_cast<QRgb*>(img.scanLine(y));
    for (int x = 0; x < side; ++x) {
      const int k0 = x * T / side, k1 = std::max(k0 + 1, (x + 1) * T / side);
      float v = 0.0f;
      for (int q = q0; q < q1; ++q)
        for (int k = k0; k < k1; ++k) v = std::max(v, m[static_cast<size_t>(q) * T + k]);
      line[x] = colourOf(v);
    }
  }
  return img;
}

}  // namespace inspectview
