// GGUF files quantized by llama.cpp's own llama-quantize (tests/data/gguf/llamacpp-quant, written by
// tests/tools/make_llamacpp_quant_fixture.py): a random 2-layer Llama (n_embd 256, MLP 96) as Q4_K_M
// (q4_K, q6_K, and q5_0 for the ffn_down whose 96-wide rows are not whole 256-weight blocks) and as
// Q5_K_M (q5_K, q6_K, q5_1 there), plus q8_0 for the other ffn_down in both.
//
// Each file must open with every linear weight kept in its file encoding, and:
//  - its logits (prefill and one-token decode, packed x8 copies or the file layout) agree with the
//    same file widened to f32 at load (the exact dequantized weights), to the int8 activation rounding
//    of the kernels: 2% of the logits' scale, where a wrong block layout is off by its whole scale;
//  - the widened model's logits equal an independent forward pass (reference.json: float64 numpy over
//    the weights as gguf-py dequantizes this file) to 1e-5 of their scale: our block layouts read the
//    same values as gguf-py's, and llama.cpp wrote what gguf-py reads;
//  - they are within the quantization error of the f32 original's (reference.json, numpy from the
//    unquantized weights): Q4_K_M 0.2, Q5_K_M 0.15 of the logits' scale, measured 0.130 and 0.091, the
//    same as numpy's forward over the dequantized weights gives (random Gaussian weights quantize badly).
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

#include "engine/backend.h"
#include "engine/kv_cache.h"
#include "engine/model_loader.h"
#include "support/model_helpers.h"

using namespace engine;

namespace {

const std::string kDir = std::string(WB_TEST_DATA_DIR) + "/gguf/llamacpp-quant/";

}  // namespace

class TestGgufLlamacppQuant : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);
  std::vector<int32_t> m_ids;
  std::vector<float> m_reference;  // f32 original's logits, position after position
  QJsonObject m_dequantized;       // per file type, the logits of its weights as gguf-py dequantizes them

 private slots:
  void initTestCase() {
    QFile f(QString::fromStdString(kDir + "reference.json"));
    QVERIFY2(f.open(QIODevice::ReadOnly), "fixture missing: run tests/tools/make_llamacpp_quant_fixture.py");
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    for (const auto& v : o["ids"].toArray()) m_ids.push_back(v.toInt());
    for (const auto& row : o["logits"].toArray())
      for (const auto& v : row.toArray()) m_reference.push_back(float(v.toDouble()));
    QCOMPARE(m_reference.size(), m_ids.size() * 64);
    m_dequantized = o["dequantized"].toObject();
  }

  void opens_and_matches_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("summary");
    QTest::addColumn<double>("tolerance");  // against the f32 original
    QTest::newRow("Q4_K_M") << "tiny-llama-Q4_K_M.gguf"
                            << "q4_K (mixed: q8_0 h.w_down.weight (1 of 2 layers); q6_K wte, h.wv.weight (1 of 2 "
                               "layers); q5_0 h.w_down.weight (1 of 2 layers))"
                            << 0.2;
    QTest::newRow("Q5_K_M") << "tiny-llama-Q5_K_M.gguf"
                            << "q5_K (mixed: q8_0 h.w_down.weight (1 of 2 layers); q6_K wte, h.wv.weight (1 of 2 "
                               "layers); q5_1 h.w_down.weight (1 of 2 layers))"
                            << 0.15;
  }
  void opens_and_matches() {
    QFETCH(QString, file);
    QFETCH(QString, summary);
    QFETCH(double, tolerance);
    const std::string path = kDir + file.toStdString();
    auto q = load_model(path);
    qInfo("%s", q->weight_summary().c_str());
    QVERIFY(q->has_external_weights());
    QCOMPARE(QString::fromStdString(q->weight_summary()), summary);
    LoadOptions widen;
    widen.dequantize = true;
    auto w = load_model(path, {}, widen);
    LoadOptions file_layout;
    file_layout.pack = false;
    auto u = load_model(path, {}, file_layout);
    QVERIFY(q->weight("h.w_down.weight", 0).packed != nullptr);
    QVERIFY(u->weight("h.w_down.weight", 0).packed == nullptr);

    const std::vector<float> exact = full_logits(*w, *m_be, m_ids);
    QVERIFY2(rel_diff(decode_logits(*w, *m_be, m_ids), exact) < 1e-5, "widened decode vs prefill");
    for (const auto* m : {q.get(), u.get()}) {
      const double prefill = rel_diff(full_logits(*m, *m_be, m_ids), exact);
      const double decode = rel_diff(decode_logits(*m, *m_be, m_ids), exact);
      qInfo("%s %s: prefill %.3g, decode %.3g of the widened model's", qPrintable(file),
            m == q.get() ? "packed" : "file layout", prefill, decode);
      QVERIFY2(prefill < 0.02, qPrintable(QString("prefill %1").arg(prefill)));
      QVERIFY2(decode < 0.02, qPrintable(QString("decode %1").arg(decode)));
    }
    std::vector<float> numpy;
    for (const auto& row : m_dequantized[QString(QTest::currentDataTag())].toArray())
      for (const auto& v : row.toArray()) numpy.push_back(float(v.toDouble()));
    const double independent = rel_diff(exact, numpy);
    qInfo("%s: widened %.3g of numpy's over gguf-py's dequantization", qPrintable(file), independent);
    QVERIFY2(independent < 1e-5, qPrintable(QString("%1 against numpy over the dequantized file").arg(independent)));
    const double quantization = rel_diff(exact, m_reference);
    qInfo("%s: %.3g of the f32 original's logits", qPrintable(file), quantization);
    QVERIFY2(quantization < tolerance, qPrintable(QString("%1 against the f32 original").arg(quantization)));
  }
};

QTEST_GUILESS_MAIN(TestGgufLlamacppQuant)
#include "test_gguf_llamacpp_quant.moc"
