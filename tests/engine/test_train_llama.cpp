// TrainModel on the Llama family against PyTorch: RMSNorm, rotary positions, SwiGLU, grouped-query
// attention, an untied head (tiny-llama) and a tied head with q/k/v biases (tiny-qwen2).
//
// tests/data/tiny-{llama,qwen2}/expected_train.safetensors (tests/tools/make_tiny_llama_train_fixture.py):
// PyTorch's float64 loss on the fixture's input_ids with HF's next-token shift, every parameter's
// gradient, the loss with label smoothing 0.1, and the loss before each of 10 AdamW steps.
#include <QtTest>

#include <cmath>

#include "engine/model_loader.h"
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

    const float want = expected->read_f32(*expected->find("loss"))[0];
    const float loss = tm.forward_backward(batch.view(), {});
    QVERIFY2(std::abs(loss - want) < 2e-5, qPrintable(QString("loss %1 vs %2").arg(loss).arg(want)));
    const float smooth = expected->read_f32(*expected->find("loss_smooth"))[0];
    QVERIFY2(std::abs(tm.loss(batch.view(), 0.1f) - smooth) < 2e-5, qPrintable(QString::number(smooth)));

    QTemporaryDir tmp;
    auto grads = gradients_as_model(d, *expected, tmp);
    const auto params = tm.trainable();
    QCOMPARE(params.size(), model->params().size());
    for (const auto& t : params) {
      const double e = grad_rel_err(t.grad, grads->param_data(t.name), t.numel);
      qInfo("%-18s max |diff| / scale = %.2e", t.name.c_str(), e);
      QVERIFY2(e < 2e-5, qPrintable(QString::fromStdString(t.name) + ": " + QString::number(e)));
    }

    // Checkpointing recomputes the same activations.
    const auto before = [&] {
      std::vector<float> g;
      for (const auto& t : tm.trainable()) g.insert(g.end(), t.grad, t.grad + t.numel);
      return g;
    };
    const auto g1 = before();
    tm.zero_grads();
    TrainStepOptions ck;
    ck.checkpoint_activations = true;
    QCOMPARE(tm.forward_backward(batch.view(), ck), loss);
    QVERIFY(before() == g1);

    // Ten AdamW steps.
    const std::vector<float> curve = expected->read_f32(*expected->find("loss_curve"));
    TestAdamW opt;
    for (size_t step = 0; step < curve.size(); ++step) {
      tm.zero_grads();
      const float l = tm.forward_backward(batch.view(), {});
      QVERIFY2(std::abs(l - curve[step]) < 2e-5, qPrintable(QString("step %1: %2 vs %3").arg(step).arg(l).arg(curve[step])));
      opt.step(tm.trainable());
    }
  }
};

QTEST_APPLESS_MAIN(TestTrainLlama)
#include "test_train_llama.moc"
