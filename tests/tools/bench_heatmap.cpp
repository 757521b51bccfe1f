// Hand-run benchmark (an optional target, not a test): how long the Inspect page's heatmap takes per
// repaint while zooming, panning and hovering over 512-2048 tokens, and how long the per-head images
// take to build for a GPT-2-124M-shaped inspection (12 layers x 12 heads, random causal attention rows
// that sum to 1). Figures are medians and maxima of many repaints; nothing is asserted.
//
//   cmake --build build --target bench_heatmap && QT_QPA_PLATFORM=offscreen build/tests/bench_heatmap
//
// A repaint is AttentionHeatmap::paint() into an image of the item's size, which is what Qt Quick does
// for a QQuickPaintedItem (then uploads it as a texture). "frame" adds the rest of a software-rendered
// Qt Quick frame and reading it back (QQuickWindow::grabWindow), so it is an upper bound.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QHoverEvent>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QQuickWindow>
#include <QThreadPool>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "attentionheatmap.h"
#include "headgridmodel.h"
#include "inspectmatrix.h"

namespace {

constexpr int kRepaints = 60;
const QSize kItemSize(1000, 760);  // the heatmap's share of a 1440 x 900 window

struct Stats {
  double median_ms = 0, p90_ms = 0, max_ms = 0;
};

// The maximum is mostly the scheduler on a loaded machine; the 90th percentile says more.
Stats statsOf(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10], ms.back()};
}

double msOf(const std::function<void()>& f) {
  QElapsedTimer t;
  t.start();
  f();
  return static_cast<double>(t.nsecsElapsed()) / 1e6;
}

// Causal rows that sum to 1, peaked like real attention (softmax of scaled Gaussian scores).
void fillRows(float* m, int T, std::mt19937& rng) {
  std::normal_distribution<float> score(0.0f, 2.0f);
  for (int q = 0; q < T; ++q) {
    float* row = m + static_cast<size_t>(q) * T;
    double sum = 0;
    for (int k = 0; k <= q; ++k) sum += row[k] = std::exp(score(rng));
    for (int k = 0; k <= q; ++k) row[k] = static_cast<float>(row[k] / sum);
  }
}

std::shared_ptr<engine::Inspection> randomInspection(int L, int NH, int T, unsigned seed) {
  auto in = std::make_shared<engine::Inspection>();
  in->n_layer = L;
  in->n_head = NH;
  in->T = T;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> id(0, 999);
  for (int t = 0; t < T; ++t) in->ids.push_back(id(rng));
  for (int i = 0; i < 1000; ++i) in->pieces.emplace_back(i, " tok" + std::to_string(i));
  in->attention.assign(static_cast<size_t>(L) * NH * T * T, 0.0f);
  for (int lh = 0; lh < L * NH; ++lh) fillRows(in->attention.data() + static_cast<size_t>(lh) * T * T, T, rng);
  return in;
}

class Bench {
 public:
  Bench() {
    m_window.resize(kItemSize);
    m_map = new AttentionHeatmap(m_window.contentItem());
    m_map->setSize(kItemSize);
    m_window.show();
  }

  void renders(int T) {
    std::mt19937 rng(T);
    std::vector<float> m(static_cast<size_t>(T) * T, 0.0f);
    fillRows(m.data(), T, rng);
    QStringList labels;
    for (int t = 0; t < T; ++t) labels << QStringLiteral(" tok%1").arg(t);
    const double setMs = msOf([&] { m_map->setMatrix(m, T, labels); });
    std::printf("\nT = %d: setMatrix (one-pixel-per-cell image) %.1f ms\n", T, setMs);
    const QPointF centre(kItemSize.width() / 2.0, kItemSize.height() / 2.0);

    // Zoom: wheel notches around the centre, from the whole matrix to the 64x limit.
    m_map->resetView();
    report(
        "zoom (wheel, 1x to 64x)", [&](int) { wheel(centre, 120); }, 24);
    // Pan: a drag across the matrix at 8x.
    m_map->resetView();
    m_map->setZoom(8);
    press(centre);
    report("pan at 8x (drag)", [&](int i) { move(centre + QPointF(-(i + 1) * 6.0, -(i + 1) * 4.0)); });
    release(centre + QPointF(-kRepaints * 6.0, -kRepaints * 4.0));
    // Hover over the whole matrix (no labels), then zoomed until token labels show.
    m_map->resetView();
    report("hover at 1x", [&](int i) { hover(QPointF(20 + i * 12.0, 20 + i * 11.0)); });
    m_map->setZoom(24.0 * T / 1024.0);  // ~16 px cells whatever T: token labels on both axes
    report(qPrintable(QStringLiteral("hover at %1x (labels)").arg(m_map->zoom())),
           [&](int i) { hover(QPointF(120 + i * 13.0, 120 + i * 10.0)); });
    m_map->resetView();
  }

  void inspection(int L, int NH, int T) {
    std::printf("\n%d layers x %d heads, T = %d (%.0f MB of attention)\n", L, NH, T,
                static_cast<double>(L) * NH * T * T * 4 / 1e6);
    const auto in = randomInspection(L, NH, T, 7);
    const InspectionPtr ptr = in;
    const int l1 = std::min(3, L - 1), l2 = std::min(7, L - 1), l3 = L - 1;
    auto time = [&](const char* what, inspectview::MatrixSpec spec) {
      std::vector<double> ms;
      for (int i = 0; i < 5; ++i) ms.push_back(msOf([&] { (void)inspectview::chooseMatrix(ptr, spec); }));
      std::printf("  %-44s median %7.1f ms  max %7.1f ms\n", what, statsOf(ms).median_ms, statsOf(ms).max_ms);
    };
    time("one head: matrix + labels + image", {.layer = l1, .head = 5});
    time("mean of a layer's heads + image", {.layer = l1, .head = inspectview::kMeanOfHeads});
    time("overlay (max) of 4 heads + image",
         {.overlay = {{0, 1}, {l1, 5}, {l2, 2}, {l3, 0}}, .overlayReduce = engine::HeadReduce::Max});
    if (L * NH < 144) return;
    // The head grid: every head's thumbnail and entropy, on the thread pool.
    HeadGridModel grid;
    grid.setThumbnailSize(64);
    QElapsedTimer wall;
    wall.start();
    const double guiMs = msOf([&] { grid.setInspection(QVariant::fromValue(ptr)); });
    while (!grid.ready()) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    std::printf("  %-44s %7.1f ms on the pool; the GUI thread spent %.2f ms\n", "144 thumbnails (64 px) + entropies",
                static_cast<double>(wall.nsecsElapsed()) / 1e6, guiMs);
  }

 private:
  // Runs `step` kRepaints times (or `steps`), timing the repaint after each, and prints the figures.
  void report(const char* what, const std::function<void(int)>& step, int steps = kRepaints) {
    std::vector<double> paint, frame;
    QImage target(kItemSize, QImage::Format_ARGB32_Premultiplied);
    for (int i = 0; i < steps; ++i) {
      step(i);
      paint.push_back(msOf([&] {
        target.fill(Qt::transparent);
        QPainter p(&target);
        m_map->paint(&p);
      }));
      frame.push_back(msOf([&] { (void)m_window.grabWindow(); }));
    }
    const Stats p = statsOf(paint), f = statsOf(frame);
    std::printf("  %-28s repaint median %5.2f  p90 %5.2f  max %5.2f ms | frame median %5.2f  p90 %5.2f  max %5.2f ms\n",
                what, p.median_ms, p.p90_ms, p.max_ms, f.median_ms, f.p90_ms, f.max_ms);
  }

  void wheel(QPointF at, int delta) {
    QWheelEvent e(at, m_window.mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, Qt::NoModifier,
                  Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(m_map, &e);
  }
  void press(QPointF at) { mouse(QEvent::MouseButtonPress, at, Qt::LeftButton); }
  void move(QPointF at) { mouse(QEvent::MouseMove, at, Qt::LeftButton); }
  void release(QPointF at) { mouse(QEvent::MouseButtonRelease, at, Qt::NoButton); }
  void mouse(QEvent::Type type, QPointF at, Qt::MouseButtons buttons) {
    QMouseEvent e(type, at, m_window.mapToGlobal(at), Qt::LeftButton, buttons, Qt::NoModifier);
    QCoreApplication::sendEvent(m_map, &e);
  }
  void hover(QPointF at) {
    QHoverEvent e(QEvent::HoverMove, at, m_window.mapToGlobal(at), at);
    QCoreApplication::sendEvent(m_map, &e);
  }

  QQuickWindow m_window;
  AttentionHeatmap* m_map;
};

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QGuiApplication app(argc, argv);
  std::printf("bench_heatmap: item %dx%d, %d repaints a row, %d pool threads\n", kItemSize.width(), kItemSize.height(),
              kRepaints, QThreadPool::globalInstance()->maxThreadCount());
  Bench bench;
  for (int T : {512, 1024, 2048}) bench.renders(T);
  bench.inspection(12, 12, 512);
  bench.inspection(12, 12, 1024);
  bench.inspection(1, 12, 2048);  // the per-head figures at 2048 (a 12 x 12 one would be 2.4 GB)
  return 0;
}
