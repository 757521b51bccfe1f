// Exporting a finished run (app/services/trainingexport.h): a tiny LoRA run trained with the shared
// builder, then exported as an HF folder, as the adapter alone and as GGUF; every export loads back
// (load_model, or load_lora_adapters for the adapter) and the models give the run's own logits.
// Refusals: an adapter from a full fine-tuning run, a non-empty destination, an unknown kind.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "engine/backend.h"
#include "engine/model_loader.h"
#include "engine/train/lora_io.h"
#include "services/trainingexport.h"
#include "services/trainingsetup.h"
#include "support/error_of.h"
#include "support/tiny_text_model.h"

class TestTrainingExport : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_base, m_run, m_fullRun;

  QVariantMap settings(int loraRank) const {
    return {{"recipe", "pretrain"},
            {"model", m_base},
            {"data", m_dir.filePath("data.txt")},
            {"lora_rank", loraRank},
            {"batch", 2},
            {"seq", 16},
            {"steps", 3},
            {"lr", 0.01},
            {"val_every", 0},
            {"threads", 1},
            {"schedule", "constant"}};
  }
  void train(const QVariantMap& s, const QString& out) {
    std::unique_ptr<engine::TrainingRun> run = buildTrainingSession(s, out);
    run->trainer->run();
    engine::save_training_result(*run, "{}");
  }
  std::vector<float> logitsOf(const QString& path) {
    const auto m = engine::load_model(path.toStdString(), {}, engine::LoadOptions{.dequantize = true});
    auto backend = engine::make_cpu_backend(1);
    engine::TrainModel tm(*m, *backend);
    const int32_t ids[4] = {97, 98, 99, 100};
    return tm.logits(ids, 1, 4);
  }

 private slots:
  void initTestCase() {
    m_base = m_dir.filePath("base");
    writeTinyTextModel(m_base, 5, 64);
    std::ofstream f(m_dir.filePath("data.txt").toStdString(), std::ios::binary);
    for (int i = 0; i < 30; ++i) f << "abba cddc effe ghhg ijji klmm nop\n";
    f.close();
    m_run = m_dir.filePath("run-lora");
    m_fullRun = m_dir.filePath("run-full");
    train(settings(4), m_run);
    train(settings(0), m_fullRun);
  }

  void hf_folder_loads_back_with_the_same_logits() {
    const QString dest = m_dir.filePath("export-hf");
    const QString what = exportTrainedModel(m_run, "hf", dest);
    QVERIFY2(what.startsWith("HF directory"), qPrintable(what));
    QVERIFY(QFile::exists(dest + "/config.json"));
    QCOMPARE(logitsOf(dest), logitsOf(m_run));
  }

  void gguf_loads_back_with_the_same_logits() {
    const QString dest = m_dir.filePath("tuned.gguf");
    int calls = 0;
    const QString what = exportTrainedModel(m_run, "gguf", dest, "f32", [&](double) {
      ++calls;
      return true;
    });
    QVERIFY2(what.startsWith("GGUF f32"), qPrintable(what));
    QVERIFY(calls > 0);
    const std::vector<float> a = logitsOf(dest), b = logitsOf(m_run);
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) QVERIFY(std::abs(a[i] - b[i]) < 1e-4f);
    // Quantized: loads, and is close.
    QVERIFY(exportTrainedModel(m_run, "gguf", m_dir.filePath("tuned-q8.gguf"), "q8_0").startsWith("GGUF q8_0"));
    QVERIFY(engine::load_model(m_dir.filePath("tuned-q8.gguf").toStdString()));
  }

  void adapter_only_loads_into_the_base() {
    const QString dest = m_dir.filePath("export-adapter");
    QVERIFY(exportTrainedModel(m_run, "adapter", dest).startsWith("LoRA adapter"));
    QVERIFY(QFile::exists(dest + "/adapter_config.json"));
    // The adapter on the base model gives the merged model's logits.
    const auto m = engine::load_model(m_base.toStdString(), {}, engine::LoadOptions{.dequantize = true});
    auto backend = engine::make_cpu_backend(1);
    engine::LoraConfig lora;
    lora.rank = 4;
    engine::TrainModel tm(*m, *backend, lora);
    engine::load_lora_adapters(tm, dest.toStdString());
    const int32_t ids[4] = {97, 98, 99, 100};
    const std::vector<float> a = tm.logits(ids, 1, 4), b = logitsOf(m_run);
    for (size_t i = 0; i < a.size(); ++i) QVERIFY(std::abs(a[i] - b[i]) < 1e-4f);
  }

  void refusals_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<bool>("full");
    QTest::addColumn<QString>("dest");
    QTest::addColumn<QString>("needle");
    QTest::newRow("adapter of a full run") << "adapter" << true << "adapter-full"
                                           << "no LoRA adapter";
    QTest::newRow("unknown kind") << "onnx" << false << "x"
                                  << "unknown export kind";
    QTest::newRow("non-empty folder") << "hf" << false << "busy"
                                      << "";
    QTest::newRow("no destination") << "hf" << false << ""
                                    << "choose where";
  }
  void refusals() {
    QFETCH(QString, kind);
    QFETCH(bool, full);
    QFETCH(QString, dest);
    QFETCH(QString, needle);
    const QString busy = m_dir.filePath("busy");
    QDir().mkpath(busy);
    QFile f(busy + "/keep.txt");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    const QString err = error_of(
        [&] { exportTrainedModel(full ? m_fullRun : m_run, kind, dest.isEmpty() ? QString() : m_dir.filePath(dest)); });
    QVERIFY2(!err.isEmpty() && err.contains(needle), qPrintable(err));
    QVERIFY(QFile::exists(busy + "/keep.txt"));  // a user's folder is never touched
  }
};

QTEST_GUILESS_MAIN(TestTrainingExport)
#include "test_training_export.moc"
