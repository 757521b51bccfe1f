// TrainModel on GPT-2 against an independent implementation (llm.c's test_gpt2 pattern), and the
// training features whose reference is the model itself (checkpointing, accumulation, loss weights,
// dropout, label smoothing through finite differences).
//
// tests/data/tiny-gpt2/expected.safetensors (tests/tools/make_tiny_gpt2_fixture.py): PyTorch's float64
// loss for the batch input_ids (2,16) with HF's next-token shift, every parameter's gradient, and the
// loss before each of 10 AdamW steps (lr 1e-3, betas 0.9/0.95, eps 1e-8, no weight decay).
#include <QtTest>

#include <cmath>

#include "engine/error.h"
#include "engine/model_loader.h"
#include "support/model_helpers.h"
#include "support/train_fixture.h"

using namespace engine;

namespace {
const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";
}  // namespace

class TestTrainGpt2 : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void loss_and_gradients_match_pytorch() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*expected);
    TrainModel tm(*model, *m_be);
    const float loss = tm.forward_backward(batch.view(), {});
    const float want = expected->read_f32(*expected->find("loss"))[0];
    QVERIFY2(std::abs(loss - want) < 2e-5, qPrintable(QString("loss %1 vs %2").arg(loss).arg(want)));
    QVERIFY(std::abs(tm.loss(batch.view()) - loss) < 1e-6);

    QTemporaryDir tmp;
    auto grads = gradients_as_model(kTiny, *expected, tmp);
    QCOMPARE(tm.trainable().size(), model->params().size());
    const std::string failed = check_gradients(tm.trainable(), *grads, 2e-5);
    QVERIFY2(failed.empty(), failed.c_str());
  }

  // The training forward (batched, no KV cache) computes the inference forward's logits, and PyTorch's.
  void training_forward_equals_inference_forward() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*expected);
    TrainModel tm(*model, *m_be);
    const auto got = tm.logits(batch.inputs.data(), batch.B, batch.T);
    const auto want = expected->read_f32(*expected->find("logits"));
    QVERIFY(max_abs_diff(got, want) < 2e-4);
    const size_t row = got.size() / batch.B;
    for (int b = 0; b < batch.B; ++b) {
      std::vector<int32_t> ids(batch.inputs.begin() + b * batch.T, batch.inputs.begin() + (b + 1) * batch.T);
      const auto inf = full_logits(*model, *m_be, ids);
      QVERIFY(max_abs_diff(std::span<const float>(got).subspan(b * row, row), inf) < 1e-5);
    }
  }

  void ten_adamw_steps_follow_pytorch_curve() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*expected);
    const std::vector<float> curve = expected->read_f32(*expected->find("loss_curve"));
    TrainModel tm(*model, *m_be);
    AdamW opt(tm.trainable(), kFixtureAdamW);
    for (size_t step = 0; step < curve.size(); ++step) {
      tm.zero_grads();
      const float loss = tm.forward_backward(batch.view(), {});
      qInfo("step %zu: loss %.6f (PyTorch %.6f)", step, loss, curve[step]);
      QVERIFY2(std::abs(loss - curve[step]) < 2e-5,
               qPrintable(QString("step %1: %2 vs %3").arg(step).arg(loss).arg(curve[step])));
      opt.step(kFixtureLr);
    }
  }

  void trainable_lists_every_group_once() {
    auto model = load_model(kTiny);
    TrainModel tm(*model, *m_be);
    const auto params = tm.trainable();
    uint64_t total = 0;
    for (const auto& t : params) {
      total += t.numel;
      if (t.name == "h.qkv.weight") {
        QCOMPARE(t.shape, (std::vector<int64_t>{192, 64}));  // one layer's matrix
        QVERIFY(t.weight_decay);
      }
      if (t.name == "h.qkv.bias" || t.name == "lnf.weight") QVERIFY(!t.weight_decay);
    }
    QCOMPARE(total, uint64_t(model->all_params().size()));  // tied head: wte listed once
  }

  void checkpointing_gives_the_same_gradients() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*expected);
    for (float p : {0.0f, 0.2f}) {
      TrainModel tm(*model, *m_be);
      TrainStepOptions o;
      o.dropout = p;
      o.dropout_seed = 7;
      const float l1 = tm.forward_backward(batch.view(), o);
      const auto g1 = flat_grads(tm);
      tm.zero_grads();
      o.checkpoint_activations = true;
      const float l2 = tm.forward_backward(batch.view(), o);
      QCOMPARE(l2, l1);
      QVERIFY(flat_grads(tm) == g1);  // bit for bit: the recompute is the same computation
    }
  }

  void gradients_accumulate() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*expected);
    TrainModel tm(*model, *m_be);
    tm.forward_backward(batch.view(), {});
    const auto once = flat_grads(tm);
    tm.zero_grads();
    for (float g : flat_grads(tm)) QCOMPARE(g, 0.0f);
    tm.forward_backward(batch.view(), {}, 0.5f);
    tm.forward_backward(batch.view(), {}, 0.5f);
    const auto twice = flat_grads(tm);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < once.size(); ++i) {
      worst = std::max(worst, double(std::abs(once[i] - twice[i])));
      scale = std::max(scale, double(std::abs(once[i])));
    }
    QVERIFY2(worst < 1e-6 * scale, qPrintable(QString::number(worst / scale)));
  }

  void loss_weights_and_negative_targets() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    ShiftedBatch batch = shifted_batch(*expected);
    TrainModel tm(*model, *m_be);
    const int N = batch.B * batch.T;
    // Each position's own loss, from one-hot weights.
    std::vector<double> per(N, 0.0);
    for (int i = 0; i < N; ++i) {
      if (batch.targets[i] < 0) continue;
      std::vector<float> w(N, 0.f);
      w[i] = 1.f;
      per[i] = tm.loss(batch.view(w.data()));
    }
    // Uniform weights over the predicted positions give the plain mean (the fixture's loss).
    double mean = 0;
    int count = 0;
    for (int i = 0; i < N; ++i)
      if (batch.targets[i] >= 0) mean += per[i], ++count;
    mean /= count;
    QVERIFY(std::abs(tm.loss(batch.view()) - mean) < 1e-5);
    // Arbitrary weights: sum w l / sum w, positions with negative targets ignored whatever their weight.
    std::vector<float> w(N);
    double num = 0, den = 0;
    for (int i = 0; i < N; ++i) {
      w[i] = float((i * 7) % 5);
      if (batch.targets[i] >= 0) num += w[i] * per[i], den += w[i];
    }
    QVERIFY(std::abs(tm.loss(batch.view(w.data())) - num / den) < 1e-5);
    // Weight 0 equals target -1, gradients included (the SFT prompt mask).
    std::vector<float> mask(N, 1.f);
    for (int i = 0; i < 8; ++i) mask[i] = 0.f;
    const float lw = tm.forward_backward(batch.view(mask.data()), {});
    const auto gw = flat_grads(tm);
    tm.zero_grads();
    ShiftedBatch cut = batch;
    for (int i = 0; i < 8; ++i) cut.targets[i] = -1;
    QCOMPARE(tm.forward_backward(cut.view(), {}), lw);
    QVERIFY(flat_grads(tm) == gw);
    // No position with weight: loss 0 and no gradient.
    tm.zero_grads();
    std::vector<float> none(N, 0.f);
    QCOMPARE(tm.forward_backward(batch.view(none.data()), {}), 0.0f);
    for (float g : flat_grads(tm)) QCOMPARE(g, 0.0f);
  }

  void dropout_is_deterministic_in_its_seed() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*expected);
    TrainModel tm(*model, *m_be);
    TrainStepOptions o;
    const float plain = tm.forward_backward(batch.view(), o);
    o.dropout = 0.1f;
    o.dropout_seed = 1;
    const float a = tm.forward_backward(batch.view(), o);
    const float b = tm.forward_backward(batch.view(), o);
    o.dropout_seed = 2;
    const float c = tm.forward_backward(batch.view(), o);
    QCOMPARE(a, b);
    QVERIFY(a != c && a != plain);
    // loss() never drops.
    QCOMPARE(tm.loss(batch.view()), plain);
  }

  // With dropout and label smoothing on, the gradient is still the gradient of the loss the model
  // reports (masks are fixed by the seed): central differences of the float loss on the largest
  // gradient entries of several tensors.
  void dropout_and_label_smoothing_gradients_by_finite_differences() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*expected);
    TrainModel tm(*model, *m_be);
    TrainStepOptions o;
    o.dropout = 0.1f;
    o.dropout_seed = 5;
    o.label_smoothing = 0.1f;
    tm.forward_backward(batch.view(), o);
    for (const auto& t : tm.trainable()) {
      if (t.name != "wte" && t.name != "wpe" && t.name != "h.qkv.weight" && t.name != "h.ln2.bias" &&
          t.name != "h.fc.weight" && t.name != "lnf.weight")
        continue;
      // The three largest |gradient| entries.
      std::vector<uint64_t> idx(t.numel);
      for (uint64_t i = 0; i < t.numel; ++i) idx[i] = i;
      std::partial_sort(idx.begin(), idx.begin() + 3, idx.end(),
                        [&](uint64_t a, uint64_t b) { return std::abs(t.grad[a]) > std::abs(t.grad[b]); });
      for (int k = 0; k < 3; ++k) {
        const uint64_t i = idx[k];
        const double fd = central_difference(t.value[i], 1e-2f, [&] {
          return TrainModel(*model, *m_be).forward_backward(batch.view(), o);
        });
        QVERIFY2(std::abs(fd - t.grad[i]) < 2e-2 * std::abs(t.grad[i]) + 1e-4,
                 qPrintable(QString("%1[%2]: backward %3, finite differences %4")
                                .arg(QString::fromStdString(t.name))
                                .arg(i)
                                .arg(t.grad[i])
                                .arg(fd)));
      }
    }
  }

  void bad_batches_are_errors() {
    auto model = load_model(kTiny);
    TrainModel tm(*model, *m_be);
    std::vector<int32_t> in = {1, 2, 3, 4}, tg = {2, 3, 4, -1};
    BatchView b{in.data(), tg.data(), nullptr, 1, 4};
    QVERIFY(std::isfinite(tm.forward_backward(b, {})));
    in[2] = 512;
    QVERIFY_THROWS_EXCEPTION(Error, tm.forward_backward(b, {}));
    in[2] = -3;
    QVERIFY_THROWS_EXCEPTION(Error, tm.loss(b));
    in[2] = 3;
    tg[0] = 512;
    QVERIFY_THROWS_EXCEPTION(Error, tm.forward_backward(b, {}));
    tg[0] = 2;
    std::vector<float> w = {1, -1, 1, 1};
    QVERIFY_THROWS_EXCEPTION(Error, tm.forward_backward({in.data(), tg.data(), w.data(), 1, 4}, {}));
    std::vector<int32_t> long_in(65, 1), long_tg(65, 1);
    QVERIFY_THROWS_EXCEPTION(Error, tm.forward_backward({long_in.data(), long_tg.data(), nullptr, 1, 65}, {}));
    QVERIFY_THROWS_EXCEPTION(Error, tm.forward_backward({in.data(), tg.data(), nullptr, 0, 4}, {}));
    TrainStepOptions o;
    o.dropout = 1.0f;
    QVERIFY_THROWS_EXCEPTION(Error, tm.forward_backward(b, o));
  }
};

QTEST_APPLESS_MAIN(TestTrainGpt2)
#include "test_train_gpt2.moc"
