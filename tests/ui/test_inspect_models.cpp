// The Inspect page's item models (HeadGridModel, LogitLensModel) on a real inspection of the tiny
// GPT-2 and Llama fixtures: QAbstractItemModelTester on every change, and the roles against the
// engine's Inspection they present (layer order, top tokens, probabilities, colours, "correct").
#include <QAbstractItemModelTester>
#include <QColor>
#include <QFile>
#include <QGuiApplication>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "engine/backend.h"
#include "engine/inspect/inspect.h"
#include "engine/model_loader.h"
#include "headgridmodel.h"
#include "inspectmatrix.h"
#include "logitlensmodel.h"

namespace {

InspectionPtr inspect(const QString& fixture, std::vector<int32_t> ids) {
  auto model = engine::load_model(std::string(WB_TEST_DATA_DIR) + "/" + fixture.toStdString());
  auto be = engine::make_cpu_backend(1);
  return std::make_shared<engine::Inspection>(engine::inspect_prompt(*model, *be, ids));
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
    m.setInspection(QVariant::fromValue(in));
    QCOMPARE(m.rowCount(), in->n_layer);
    QCOMPARE(m.columnCount(), in->n_head);  // query heads, although the model has 2 kv heads
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
        QCOMPARE(m.data(i, LogitLensModel::ColourRole).value<QColor>(), inspectview::qcolourOf(in->lens_prob(lr, t, 0)));
        QCOMPARE(m.data(i, LogitLensModel::CorrectRole).toBool(), t + 1 < int(ids.size()) && in->lens_id(lr, t, 0) == ids[t + 1]);
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
