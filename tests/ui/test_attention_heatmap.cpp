// AttentionHeatmap and AttentionLines rendered offscreen and read back pixel by pixel: a known matrix
// must come out in the expected colours at the expected cells (also zoomed and panned), hover must
// report the cell under the pointer, and the PNG / CSV exports must hold the same values.
// The colour scale itself is checked against matplotlib's published viridis stops. An overlay of picked
// heads shows their mean / max; a matrix from an inspection arrives from the thread pool.
#include <QFile>
#include <QGuiApplication>
#include <QHoverEvent>
#include <QImage>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <cmath>
#include <memory>

#include "attentionheatmap.h"
#include "attentionlines.h"
#include "engine/inspect/inspect.h"
#include "inspectmatrix.h"

namespace {

// 3 x 3, causal like real attention, with values spread over the scale.
const std::vector<float> kMatrix = {1.0f,  0.0f,   0.0f,  //
                                    0.25f, 0.75f,  0.0f,  //
                                    0.5f,  0.125f, 0.375f};

bool near(QRgb a, QRgb b, int tol = 2) {
  return std::abs(qRed(a) - qRed(b)) <= tol && std::abs(qGreen(a) - qGreen(b)) <= tol &&
         std::abs(qBlue(a) - qBlue(b)) <= tol;
}

QString rgb(QRgb c) { return QStringLiteral("#%1").arg(c & 0xFFFFFF, 6, 16, QLatin1Char('0')); }

// One layer of two heads over two tokens.
std::shared_ptr<engine::Inspection> twoByTwo() {
  auto in = std::make_shared<engine::Inspection>();
  in->n_layer = 1;
  in->n_head = 2;
  in->T = 2;
  in->top_k = 1;
  in->lens_rows = 1;
  in->ids = {1, 2};
  in->attention = {1, 0, 0.2f, 0.8f,   // head 0
                   1, 0, 0.6f, 0.4f};  // head 1
  return in;
}

}  // namespace

class TestAttentionHeatmap : public QObject {
  Q_OBJECT
  std::unique_ptr<QQuickWindow> m_window;
  AttentionHeatmap* m_map = nullptr;

  QImage grab() {
    m_window->update();
    return m_window->grabWindow();
  }

 private Q_SLOTS:
  void initTestCase() {
    if (QGuiApplication::platformName() == QLatin1String("offscreen"))
      QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    m_window = std::make_unique<QQuickWindow>();
    m_window->resize(300, 300);
    m_window->setColor(Qt::black);
    m_map = new AttentionHeatmap(m_window->contentItem());
    m_map->setSize(QSizeF(300, 300));
    m_map->setShowLabels(false);
    m_map->setMatrix(kMatrix, 3, {"a", "b", "c"});
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
  }

  void colour_scale_is_viridis() {
    // matplotlib's viridis at 0, 0.5 and 1 (its published hex values).
    QCOMPARE(rgb(inspectview::colourOf(0.0f)), QString("#440154"));
    QCOMPARE(rgb(inspectview::colourOf(0.5f)), QString("#21918c"));
    QCOMPARE(rgb(inspectview::colourOf(1.0f)), QString("#fde725"));
    QCOMPARE(rgb(inspectview::colourOf(-3.0f)), QString("#440154"));  // clamped
    QCOMPARE(rgb(inspectview::colourOf(NAN)), QString("#440154"));
    // Between stops the scale is monotone in green (viridis' luminance carrier).
    for (int i = 1; i <= 100; ++i)
      QVERIFY(qGreen(inspectview::colourOf(i / 100.0f)) >= qGreen(inspectview::colourOf((i - 1) / 100.0f)));
  }

  void cells_have_their_colours() {
    const QImage img = grab();
    QCOMPARE(img.width(), 300);
    for (int q = 0; q < 3; ++q)
      for (int k = 0; k < 3; ++k) {
        const QRgb want = inspectview::colourOf(kMatrix[q * 3 + k]);
        // The centre and a point near each corner of the 100 px cell.
        for (QPoint p : {QPoint(k * 100 + 50, q * 100 + 50), QPoint(k * 100 + 3, q * 100 + 3),
                         QPoint(k * 100 + 96, q * 100 + 96)}) {
          const QRgb got = img.pixel(p);
          QVERIFY2(near(got, want), qPrintable(QString("cell (%1,%2) at %3,%4: %5, want %6")
                                                   .arg(q)
                                                   .arg(k)
                                                   .arg(p.x())
                                                   .arg(p.y())
                                                   .arg(rgb(got), rgb(want))));
        }
      }
  }

  void zoom_and_pan_move_the_cells() {
    m_map->setZoom(2.0);  // cells of 200 px: cell (0,0) fills the top-left 200 px
    QImage img = grab();
    QVERIFY(near(img.pixel(150, 150), inspectview::colourOf(kMatrix[0])));
    QVERIFY(near(img.pixel(250, 150), inspectview::colourOf(kMatrix[1])));
    QVERIFY(near(img.pixel(150, 250), inspectview::colourOf(kMatrix[3])));
    // Drag the view up-left by 250 px: the matrix (600 px) starts at -250, so cell (1,1) covers
    // -50..150 and cell (2,2) 150..350.
    QTest::mousePress(m_window.get(), Qt::LeftButton, {}, QPoint(280, 280));
    QTest::mouseMove(m_window.get(), QPoint(200, 200));
    QTest::mouseMove(m_window.get(), QPoint(30, 30));
    QTest::mouseRelease(m_window.get(), Qt::LeftButton, {}, QPoint(30, 30));
    img = grab();
    QVERIFY2(near(img.pixel(290, 290), inspectview::colourOf(kMatrix[8])), qPrintable(rgb(img.pixel(290, 290))));
    QVERIFY(near(img.pixel(90, 90), inspectview::colourOf(kMatrix[4])));
    QCOMPARE(m_map->selectedToken(), -1);  // a drag is not a click
    m_map->resetView();
    QCOMPARE(m_map->zoom(), 1.0);
    QVERIFY(near(grab().pixel(50, 50), inspectview::colourOf(kMatrix[0])));
  }

  void hover_and_click_report_the_cell() {
    QSignalSpy clicked(m_map, &AttentionHeatmap::cellClicked);
    QTest::mouseMove(m_window.get(), QPoint(150, 250));
    QTRY_COMPARE(m_map->hoverQuery(), 2);
    QCOMPARE(m_map->hoverKey(), 1);
    QCOMPARE(m_map->hoverValue(), double(kMatrix[7]));
    QVERIFY(m_map->hoverText().contains("0.1250"));
    QTest::mouseClick(m_window.get(), Qt::LeftButton, {}, QPoint(150, 250));
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.first().at(0).toInt(), 2);
    QCOMPARE(m_map->selectedToken(), 2);
  }

  void exports_hold_the_matrix() {
    QTemporaryDir dir;
    const QString png = dir.filePath("m.png"), csv = dir.filePath("m.csv");
    QCOMPARE(m_map->exportPng(QUrl::fromLocalFile(png).toString()), QString());
    QImage img(png);
    QVERIFY(!img.isNull());
    // 3 tokens: 24 px cells after a 120 px label margin.
    QCOMPARE(img.width(), 120 + 3 * 24);
    for (int q = 0; q < 3; ++q)
      for (int k = 0; k < 3; ++k)
        QVERIFY(near(img.pixel(120 + k * 24 + 12, 120 + q * 24 + 12), inspectview::colourOf(kMatrix[q * 3 + k])));
    QCOMPARE(m_map->exportCsv(csv), QString());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    QCOMPARE(lines[0], QByteArray("\"query \\ key\",\"a\",\"b\",\"c\""));
    QCOMPARE(lines[2], QByteArray("\"b\",0.25,0.75,0"));
    QVERIFY(!m_map->exportCsv(dir.filePath("no/such/dir/x.csv")).isEmpty());
  }

  // The matrix from an inspection is computed on the thread pool: wait for it.
  void showInspection(int layer, int head) {
    m_map->setLayerIndex(layer);
    m_map->setHead(head);
    QTRY_VERIFY_WITH_TIMEOUT(!m_map->busy(), 60000);
  }

  void matrix_from_an_inspection_follows_layer_and_head() {
    m_map->setInspection(QVariant::fromValue(InspectionPtr(twoByTwo())));
    QVERIFY(m_map->busy());
    showInspection(0, 1);
    QCOMPARE(m_map->tokenCount(), 2);
    QCOMPARE(m_map->valueAt(1, 0), double(0.6f));
    showInspection(0, AttentionHeatmap::MeanOfHeads);
    QVERIFY(std::abs(m_map->valueAt(1, 0) - 0.4) < 1e-6);
    showInspection(0, AttentionHeatmap::MaxOfHeads);
    QCOMPARE(m_map->valueAt(1, 1), double(0.8f));
    QVERIFY(near(grab().pixel(225, 225), inspectview::colourOf(0.8f)));
    showInspection(0, 7);  // no such head: nothing shown, no crash
    QCOMPARE(m_map->tokenCount(), 0);
  }

  void overlay_shows_the_mean_or_max_of_the_picked_heads() {
    // Two layers of two heads; the overlay picks heads from both layers.
    auto in = twoByTwo();
    in->n_layer = 2;
    in->attention.insert(in->attention.end(), {1, 0, 0.9f, 0.1f,      // layer 1 head 0
                                               1, 0, 0.05f, 0.95f});  // layer 1 head 1
    m_map->setInspection(QVariant::fromValue(InspectionPtr(in)));
    showInspection(0, 0);
    m_map->setOverlayHeads({QVariantMap{{"layer", 0}, {"head", 1}}, QVariantMap{{"layer", 1}, {"head", 0}},
                            QVariantMap{{"layer", 1}, {"head", 1}}});
    QCOMPARE(m_map->overlayMode(), AttentionHeatmap::OverlayMean);
    QTRY_VERIFY_WITH_TIMEOUT(!m_map->busy(), 60000);
    QCOMPARE(m_map->overlayHeads().size(), 3);
    // Row 1 of the three heads: (0.6, 0.4), (0.9, 0.1), (0.05, 0.95).
    QVERIFY(std::abs(m_map->valueAt(1, 0) - (0.6 + 0.9 + 0.05) / 3) < 1e-6);
    QVERIFY(std::abs(m_map->valueAt(1, 1) - (0.4 + 0.1 + 0.95) / 3) < 1e-6);
    QCOMPARE(m_map->valueAt(0, 0), 1.0);
    QCOMPARE(m_map->valueAt(0, 1), 0.0);
    QVERIFY(near(grab().pixel(75, 225), inspectview::colourOf((0.6f + 0.9f + 0.05f) / 3)));
    m_map->setOverlayMode(AttentionHeatmap::OverlayMax);
    QTRY_VERIFY_WITH_TIMEOUT(!m_map->busy(), 60000);
    QCOMPARE(m_map->valueAt(1, 0), double(0.9f));
    QCOMPARE(m_map->valueAt(1, 1), double(0.95f));
    QVERIFY(near(grab().pixel(225, 225), inspectview::colourOf(0.95f)));
    // A head out of range shows nothing rather than a partial overlay.
    m_map->setOverlayHeads({QVariantMap{{"layer", 0}, {"head", 0}}, QVariantMap{{"layer", 2}, {"head", 0}}});
    QTRY_VERIFY_WITH_TIMEOUT(!m_map->busy(), 60000);
    QCOMPARE(m_map->tokenCount(), 0);
    // No overlay: back to layer 0 head 0.
    m_map->setOverlayHeads({});
    QTRY_VERIFY_WITH_TIMEOUT(!m_map->busy(), 60000);
    QCOMPARE(m_map->valueAt(1, 0), double(0.2f));
    // A matrix set directly wins over one still being computed.
    m_map->setOverlayHeads({QVariantMap{{"layer", 1}, {"head", 1}}});
    m_map->setMatrix(kMatrix, 3, {"a", "b", "c"});
    QVERIFY(!m_map->busy());
    QThreadPool::globalInstance()->waitForDone();
    QCoreApplication::processEvents();
    QCOMPARE(m_map->tokenCount(), 3);
    QCOMPARE(m_map->valueAt(1, 1), double(kMatrix[4]));
  }

  void lines_view_draws_the_selected_tokens_links() {
    QQuickWindow w;
    w.resize(400, 200);
    w.setColor(Qt::white);
    auto* lines = new AttentionLines(w.contentItem());
    lines->setSize(QSizeF(400, 200));
    // The lines show their source heatmap's matrix (the heatmap need not be visible).
    AttentionHeatmap source;
    lines->setSource(&source);
    // Token 1 attends mostly to token 0; token 2 attends mostly to token 1.
    source.setMatrix({1.0f, 0.0f, 0.0f, 0.9f, 0.1f, 0.0f, 0.05f, 0.9f, 0.05f}, 3, {"x", "y", "z"});
    lines->setProperty("attendsColour", QColor(255, 0, 0));
    lines->setProperty("attendedColour", QColor(0, 0, 255));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    lines->setSelectedToken(1);  // red: 1 -> 0 (where it attends), blue: 2 -> 1 (what attends to it)
    const QImage img = w.grabWindow();
    int red = 0, blue = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 130; x < 270; ++x) {
        const QRgb c = img.pixel(x, y);
        red += qRed(c) > 150 && qGreen(c) < 120 && qBlue(c) < 120;
        blue += qBlue(c) > 150 && qRed(c) < 120 && qGreen(c) < 120;
      }
    QVERIFY2(red > 50 && blue > 50, qPrintable(QString("red %1 blue %2").arg(red).arg(blue)));
    // A click on the third row selects token 2.
    QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(60, int(AttentionLines::kPad + 2.5 * AttentionLines::kRowHeight)));
    QCOMPARE(lines->selectedToken(), 2);
    // A new matrix of another size in the source clears the selection; no source, nothing shown.
    source.setMatrix({1.0f}, 1);
    QCOMPARE(lines->selectedToken(), -1);
    QCOMPARE(lines->contentHeight(), AttentionLines::kRowHeight + 2 * AttentionLines::kPad);
    lines->setSource(nullptr);
    QCOMPARE(lines->contentHeight(), 2 * AttentionLines::kPad);
  }

  void a_matrix_shrunk_below_a_pixel_per_cell_keeps_its_colours() {
    // 600 tokens in 300 px: half a pixel per cell, drawn from the cached smoothed image. Keys in the
    // left third weigh 1, the rest 0, so away from the edge every pixel has one colour.
    const int T = 600;
    std::vector<float> m(size_t(T) * T, 0.0f);
    for (int q = 0; q < T; ++q)
      for (int k = 0; k < T / 3; ++k) m[size_t(q) * T + k] = 1.0f;
    m_map->setMatrix(m, T);
    QImage img = grab();
    QVERIFY2(near(img.pixel(40, 150), inspectview::colourOf(1.0f)), qPrintable(rgb(img.pixel(40, 150))));
    QVERIFY2(near(img.pixel(250, 150), inspectview::colourOf(0.0f)), qPrintable(rgb(img.pixel(250, 150))));
    // Hover repaints from the cache; the picture stays, the readout follows the pointer.
    QHoverEvent hover(QEvent::HoverMove, QPointF(40, 150), m_window->mapToGlobal(QPointF(40, 150)), QPointF(41, 150));
    QCoreApplication::sendEvent(m_map, &hover);
    QCOMPARE(m_map->hoverQuery(), 300);
    QCOMPARE(m_map->hoverKey(), 80);
    QCOMPARE(m_map->hoverValue(), 1.0);
    img = grab();
    QVERIFY(near(img.pixel(40, 150), inspectview::colourOf(1.0f)));
    QVERIFY(near(img.pixel(250, 150), inspectview::colourOf(0.0f)));
    // Zoomed 1.5x (0.75 px a cell, a new cached size): the boundary moves to 200 * 0.75 = 150 px.
    m_map->setZoom(1.5);
    img = grab();
    QVERIFY2(near(img.pixel(140, 100), inspectview::colourOf(1.0f)), qPrintable(rgb(img.pixel(140, 100))));
    QVERIFY2(near(img.pixel(160, 100), inspectview::colourOf(0.0f)), qPrintable(rgb(img.pixel(160, 100))));
    m_map->resetView();
    m_map->setMatrix(kMatrix, 3, {"a", "b", "c"});
  }
};

QTEST_MAIN(TestAttentionHeatmap)
#include "test_attention_heatmap.moc"
