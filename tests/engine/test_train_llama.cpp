// TrainModel on the Llama family against PyTorch: RMSNorm, rotary positions, SwiGLU, grouped-query
// attention, an untied head (tiny-llama) and a tied head with q/k/v biases (tiny-qwen2).
//
// tests/data/tiny-{llama,qwen2}/expected_train.safetensors (tests/tools/make_tiny_llama_train_fixture.py):
// PyTorch's float64 loss on the fixture's input_ids with HF's next-token shift, every parameter's
// gradient, the loss with label smoothing 0.1, and the loss before each of 10 AdamW steps.
#include <QtTest>

#include <cmath>

#include "engine/model_loader.h"
#include "support/model_helpers.h"
#include "support/train_fixture.h"

using namespace engine;

class TestTrainLlama : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

  static std::string dir(const QString& name) { return std::string(WB_TEST_DATA_DIR) + "/" + name.toStdString(); }

 private slots:
  void matches_pytorch_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("tiny-llama (untied head, GQA)") << "tiny-llama";
    QTest::newRow("tiny-qwen2 (tied head, qkv biases)") << "tiny-qwen2";
  }
  void matches_pytorch() {
    QFETCH(QString, name);
    const std::string d = dir(name);
    auto model = load_model(d);
    QVERIFY(model->config().n_kv_head < model->config().n_head);
    auto ids = io::SafetensorsFile::open(d + "/expected.safetensors");
    auto expected = io::SafetensorsFile::open(d + "/expected_train.safetensors");
    const ShiftedBatch batch = shifted_batch(*ids);
    TrainModel tm(*model, *m_be);

    // The training forward gives the inference forward's logits (rotary positions restart per row).
    const auto logits = tm.logits(batch.inputs.data(), batch.B, batch.T);
    const size_t row = logits.size() / batch.B;
    for (int b = 0; b < batch.B; ++b) {
      std::vector<int32_t> seq(batch.inputs.begin() + b * batch.T, batch.inputs.begin() + (b + 1) * batch.T);
      const double dl =
          max_abs_diff(std::span<const float>(logits).subspan(b * row, row), full_logits(*model, *m_be, seq));
      QVERIFY2(dl < 1e-5, qPrintable(QString::number(dl)));
    }

    const float want = expected->read_f32(*expected->find("loss"))[0];
    const float loss = tm.forward_backward(batch.view(), {});
    QVERIFY2(std::abs(loss - want) < 2e-5, qPrintable(QString("loss %1 vs %2").arg(loss).arg(want)));
    const float smooth = expected->read_f32(*expected->find("loss_smooth"))[0];
    QVERIFY2(std::abs(tm.loss(batch.view(), 0.1f) - smooth) < 2e-5, qPrintable(QString::number(smooth)));

    QTemporaryDir tmp;
    auto grads = gradients_as_model(d, *expected, tmp);
    QCOMPARE(tm.trainable().size(), model->params().size());
    const std::string failed = check_gradients(tm.trainable(), *grads, 2e-5);
    QVERIFY2(failed.empty(), failed.c_str());

    // Checkpointing recomputes the same activations.
    const auto g1 = flat_grads(tm);
    tm.zero_grads();
    TrainStepOptions ck;
    ck.checkpoint_activations = true;
    QCOMPARE(tm.forward_backward(batch.view(), ck), loss);
    QVERIFY(flat_grads(tm) == g1);

    // Ten AdamW steps.
    const std::vector<float> curve = expected->read_f32(*expected->find("loss_curve"));
    AdamW opt(tm.trainable(), kFixtureAdamW);
    for (size_t step = 0; step < curve.size(); ++step) {
      tm.zero_grads();
      const float l = tm.forward_backward(batch.view(), {});
      QVERIFY2(std::abs(l - curve[step]) < 2e-5,
               qPrintable(QString("step %1: %2 vs %3").arg(step).arg(l).arg(curve[step])));
      opt.step(kFixtureLr);
    }
  }
};

QTEST_APPLESS_MAIN(TestTrainLlama)
#include "test_train_llama.moc"
