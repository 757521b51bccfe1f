// The Inspect page's item models (HeadGridModel, LogitLensModel) on a real inspection of the tiny
// GPT-2 and Llama fixtures: QAbstractItemModelTester on every change, and the roles against the
// engine's Inspection they present (layer order, top tokens, probabilities, colours, "correct").
// The head grid fills in from the thread pool: its shape at once, thumbnails later, and a result for
// an inspection that was replaced meanwhile never lands (LatestTask). HeadSelection's click rules.
#include <QAbstractItemModelTester>
#include <QColor>
#include <QFile>
#include <QGuiApplication>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <cmath>

#include "engine/backend.h"
#include "engine/inspect/inspect.h"
#include "engine/model_loader.h"
#include "headgridmodel.h"
#include "headselection.h"
#include "inspectmatrix.h"
#include "logitlensmodel.h"

namespace {

InspectionPtr inspect(const QString& fixture, std::vector<int32_t> ids) {
  auto model = engine::load_model(std::string(WB_TEST_DATA_DIR) + "/" + fixture.toStdString());
  auto be = engine::make_cpu_backend(1);
  return std::make_shared<engine::Inspection>(engine::inspect_prompt(*model, *be, ids));
}

// L x NH heads over T tokens where query q of every head puts all its weight on key keyOf(q) <= q.
InspectionPtr synthetic(int L, int NH, int T, const std::function<int(int q)>& keyOf) {
  auto in = std::make_shared<engine::Inspection>();
  in->n_layer = L;
  in->n_head = NH;
  in->T = T;
  in->ids.assign(T, 1);
  in->attention.assign(static_cast<size_t>(L) * NH * T * T, 0.0f);
  for (int lh = 0; lh < L * NH; ++lh)
    for (int q = 0; q < T; ++q) in->attention[(static_cast<size_t>(lh) * T + q) * T + keyOf(q)] = 1.0f;
  return in;
}

}  // namespace

class TestInspectModels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void head_grid() {
    HeadGridModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m.rowCount(), 0);
    const InspectionPtr in = inspect("tiny-llama", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
    m.setThumbnailSize(8);
    QVERIFY(m.ready());
    QSignalSpy filled(&m, &QAbstractItemModel::dataChanged);
    m.setInspection(QVariant::fromValue(in));
    // The shape is there at once; thumbnails and entropies come from the thread pool.
    QCOMPARE(m.rowCount(), in->n_layer);
    QCOMPARE(m.columnCount(), in->n_head);  // query heads, although the model has 2 kv heads
    QVERIFY(!m.ready());
    QVERIFY(m.data(m.index(0, 0), HeadGridModel::ThumbnailRole).value<QImage>().isNull());
    QVERIFY(std::isnan(m.data(m.index(0, 0), HeadGridModel::EntropyRole).toDouble()));
    QTRY_VERIFY_WITH_TIMEOUT(m.ready(), 60000);
    QCOMPARE(filled.count(), 1);  // one dataChanged for the whole table
    for (int l = 0; l < in->n_layer; ++l)
      for (int h = 0; h < in->n_head; ++h) {
        const QModelIndex i = m.index(l, h);
        QCOMPARE(m.data(i, HeadGridModel::LayerRole).toInt(), l);
        QCOMPARE(m.data(i, HeadGridModel::HeadRole).toInt(), h);
        const QImage thumb = m.data(i, HeadGridModel::ThumbnailRole).value<QImage>();
        QCOMPARE(thumb.size(), QSize(8, 8));
        // Block maxima: the top-left pixel covers queries and keys 0-1 (16 tokens into 8 px).
        float mx = 0;
        for (int q = 0; q < 2; ++q)
          for (int k = 0; k < 2; ++k) mx = std::max(mx, in->att(l, h, q, k));
        QCOMPARE(thumb.pixel(0, 0), inspectview::colourOf(mx));
        // Entropy in bits, by definition.
        double e = 0;
        for (int q = 0; q < in->T; ++q)
          for (int k = 0; k <= q; ++k) {
            const double p = in->att(l, h, q, k);
            if (p > 0) e -= p * std::log2(p);
          }
        QVERIFY(std::abs(m.data(i, HeadGridModel::EntropyRole).toDouble() - e / in->T) < 1e-9);
      }
    QCOMPARE(m.headerData(1, Qt::Vertical).toString(), QString("layer 1"));
    m.setInspection(QVariant());
    QCOMPARE(m.rowCount(), 0);
    QVERIFY(m.ready());
  }

  void head_grid_drops_a_replaced_inspections_thumbnails() {
    HeadGridModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setThumbnailSize(8);
    // The same shape, so only the pixels tell them apart: every query of `old` looks at token 0, every
    // query of `current` at itself.
    const InspectionPtr old = synthetic(2, 3, 16, [](int) { return 0; });
    const InspectionPtr current = synthetic(2, 3, 16, [](int q) { return q; });
    QSignalSpy filled(&m, &QAbstractItemModel::dataChanged);
    m.setInspection(QVariant::fromValue(old));
    // Let the old job finish: its result is now queued for the GUI thread, which has not run yet...
    QThreadPool::globalInstance()->waitForDone();
    // ...and a newer inspection comes first.
    m.setInspection(QVariant::fromValue(current));
    QVERIFY(!m.ready());
    QTRY_VERIFY_WITH_TIMEOUT(m.ready(), 60000);
    QCOMPARE(filled.count(), 1);  // the old result was dropped, not applied and then overwritten
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 3; ++h) {
        const QImage thumb = m.data(m.index(l, h), HeadGridModel::ThumbnailRole).value<QImage>();
        QCOMPARE(thumb.size(), QSize(8, 8));
        QCOMPARE(thumb.pixel(0, 0), inspectview::colourOf(1.0f));  // the diagonal
        QCOMPARE(thumb.pixel(7, 7), inspectview::colourOf(1.0f));
        QCOMPARE(thumb.pixel(0, 7), inspectview::colourOf(0.0f));  // old's column 0 would be bright here
        QCOMPARE(m.data(m.index(l, h), HeadGridModel::EntropyRole).toDouble(), 0.0);  // one key per row
      }
    // A new thumbnail size recomputes too; the shape stays.
    m.setThumbnailSize(16);
    QVERIFY(!m.ready());
    QTRY_VERIFY_WITH_TIMEOUT(m.ready(), 60000);
    QCOMPARE(m.data(m.index(1, 2), HeadGridModel::ThumbnailRole).value<QImage>().size(), QSize(16, 16));
  }

  void head_selection_follows_ctrl_and_shift_clicks() {
    HeadSelection s;
    QSignalSpy changed(&s, &HeadSelection::changed);
    s.click(2, 1);
    QCOMPARE(s.count(), 1);
    QVERIFY(s.isSelected(2, 1));
    s.click(0, 3, Qt::ControlModifier);  // adds
    s.click(5, 0, Qt::ControlModifier);
    QCOMPARE(s.count(), 3);
    QCOMPARE(s.summary(), QString("L0 H3, L2 H1, L5 H0"));  // sorted by layer, then head
    QCOMPARE(s.heads().first().toMap().value("layer").toInt(), 0);
    QCOMPARE(s.heads().first().toMap().value("head").toInt(), 3);
    s.click(0, 3, Qt::ControlModifier);  // toggles off
    QCOMPARE(s.count(), 2);
    QVERIFY(!s.isSelected(0, 3));
    s.click(1, 1);  // a plain click picks one
    QCOMPARE(s.summary(), QString("L1 H1"));
    s.click(2, 3, Qt::ShiftModifier);  // the rectangle layers 1-2 x heads 1-3 from the anchor
    QCOMPARE(s.count(), 6);
    QVERIFY(s.isSelected(1, 1) && s.isSelected(2, 3) && s.isSelected(1, 2) && !s.isSelected(0, 1));
    s.click(0, 0, Qt::ShiftModifier);  // the same anchor, a new rectangle replaces the old
    QCOMPARE(s.summary(), QString("L0 H0, L0 H1, L1 H0, L1 H1"));
    s.click(4, 4, Qt::ControlModifier);                      // a new anchor...
    s.click(4, 5, Qt::ControlModifier | Qt::ShiftModifier);  // ...and Ctrl+Shift adds its range
    QCOMPARE(s.count(), 6);
    QVERIFY(s.isSelected(0, 0) && s.isSelected(4, 4) && s.isSelected(4, 5));
    const int before = changed.count();
    s.click(4, 5, Qt::ControlModifier | Qt::ShiftModifier);  // nothing new: no signal
    QCOMPARE(changed.count(), before);
    s.clear();
    QCOMPARE(s.count(), 0);
    QCOMPARE(s.summary(), QString());
    s.click(3, 3, Qt::ShiftModifier);  // Shift without an anchor is a plain click
    QCOMPARE(s.summary(), QString("L3 H3"));
  }

  void logit_lens() {
    LogitLensModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const std::vector<int32_t> ids = {5, 9, 200, 31, 31, 7};
    const InspectionPtr in = inspect("tiny-gpt2", ids);
    m.setInspection(QVariant::fromValue(in));
    QCOMPARE(m.rowCount(), in->n_layer + 1);
    QCOMPARE(m.columnCount(), int(ids.size()));
    // Row 0 is the model's output (lens row L), the last row the embeddings.
    QCOMPARE(m.layerName(0), QString::number(in->n_layer));
    QCOMPARE(m.layerName(m.rowCount() - 1), QString("embed"));
    QCOMPARE(m.headerData(0, Qt::Vertical).toString(), QString::number(in->n_layer));
    for (int row = 0; row < m.rowCount(); ++row)
      for (int t = 0; t < m.columnCount(); ++t) {
        const QModelIndex i = m.index(row, t);
        const int lr = in->lens_rows - 1 - row;
        QCOMPARE(m.data(i, LogitLensModel::TokenIdRole).toInt(), in->lens_id(lr, t, 0));
        QCOMPARE(m.data(i, LogitLensModel::ProbRole).toDouble(), double(in->lens_prob(lr, t, 0)));
        QCOMPARE(m.data(i, LogitLensModel::ColourRole).value<QColor>(),
                 inspectview::qcolourOf(in->lens_prob(lr, t, 0)));
        QCOMPARE(m.data(i, LogitLensModel::CorrectRole).toBool(),
                 t + 1 < int(ids.size()) && in->lens_id(lr, t, 0) == ids[t + 1]);
        QCOMPARE(m.data(i, LogitLensModel::AlternativesRole).toString().count('\n'), in->top_k - 1);
      }
    // The output row equals the next-token distribution.
    QCOMPARE(m.data(m.index(0, 2), LogitLensModel::TokenIdRole).toInt(), in->next_id(2, 0));
    QTemporaryDir dir;
    QCOMPARE(m.exportCsv(dir.filePath("lens.csv")), QString());
    QFile f(dir.filePath("lens.csv"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll().count('\n'), 1 + (in->n_layer + 1) * int(ids.size()) * in->top_k);
    m.setInspection(QVariant());
    QCOMPARE(m.rowCount(), 0);
  }
};

QTEST_MAIN(TestInspectModels)
#include "test_inspect_models.moc"
