// LoRA on TrainModel against Hugging Face PEFT, and the properties PEFT's users rely on.
//
// tests/data/tiny-{gpt2,llama}-lora (tests/tools/make_tiny_lora_fixture.py): PEFT adapters (r 4, alpha 8)
// on every linear layer of the tiny GPT-2 / Llama fixtures, with PyTorch's float64 logits, loss,
// adapter gradients and merged logits.
#include <QtTest>

#include <cmath>
#include <fstream>

#include "engine/error.h"
#include "engine/model_loader.h"
#include "engine/train/lora_io.h"
#include "io/json_util.h"
#include "support/lora_fixture.h"
#include "support/model_helpers.h"
#include "support/train_fixture.h"

using namespace engine;

namespace {

std::string data(const std::string& name) { return std::string(WB_TEST_DATA_DIR) + "/" + name; }

double max_diff(const std::vector<float>& a, const float* b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::abs(a[i] - b[i])));
  return m;
}

}  // namespace

class TestTrainLora : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void matches_peft_data() {
    QTest::addColumn<QString>("base");
    QTest::newRow("gpt2") << "tiny-gpt2";
    QTest::newRow("llama") << "tiny-llama";
  }
  void matches_peft() {
    QFETCH(QString, base);
    const std::string dir = data(base.toStdString()), lora_dir = dir + "-lora";
    auto model = load_model(dir);
    auto ids = io::SafetensorsFile::open(dir + "/expected.safetensors");
    auto expected = io::SafetensorsFile::open(lora_dir + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*ids);
    TrainModel tm(*model, *m_be, all_linear_lora(*model));
    load_lora_adapters(tm, lora_dir);

    const auto logits = tm.logits(batch.inputs.data(), batch.B, batch.T);
    const auto want_logits = expected->read_f32(*expected->find("logits"));
    QVERIFY2(max_diff(logits, want_logits.data()) < 2e-4,
             qPrintable(QString::number(max_diff(logits, want_logits.data()))));

    const float loss = tm.forward_backward(batch.view(), {});
    const float want = expected->read_f32(*expected->find("loss"))[0];
    QVERIFY2(std::abs(loss - want) < 2e-5, qPrintable(QString("loss %1 vs %2").arg(loss).arg(want)));

    // PEFT's gradients, in our layout: written as an adapter file and read by load_lora_adapters.
    QTemporaryDir tmp;
    std::vector<io::StTensorToWrite> grads;
    for (const auto& t : expected->tensors())
      if (t.name.rfind("grad.", 0) == 0) grads.push_back({t.name.substr(5), t.dtype, t.shape, t.data});
    io::write_safetensors(tmp.path().toStdString() + "/adapter_model.safetensors", grads);
    auto model2 = load_model(dir);
    TrainModel ref(*model2, *m_be, all_linear_lora(*model2));
    load_lora_adapters(ref, tmp.path().toStdString());
    const auto got = tm.trainable(), want_g = ref.trainable();
    QCOMPARE(got.size(), want_g.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const double e = grad_rel_err(got[i].grad, want_g[i].value, got[i].numel);
      qInfo("%-18s max |diff| / scale = %.2e", got[i].name.c_str(), e);
      QVERIFY2(e < 2e-5, qPrintable(QString::fromStdString(got[i].name) + ": " + QString::number(e)));
    }

    // Merged: the same logits as PEFT's merge_and_unload, with no adapters left, through the inference path.
    tm.merge_lora();
    const auto merged_want = expected->read_f32(*expected->find("merged_logits"));
    for (int b = 0; b < batch.B; ++b) {
      std::vector<int32_t> row(batch.inputs.begin() + b * batch.T, batch.inputs.begin() + (b + 1) * batch.T);
      const auto merged = full_logits(*model, *m_be, row);
      const double d = max_diff(merged, merged_want.data() + size_t(b) * merged.size());
      QVERIFY2(d < 2e-4, qPrintable(QString::number(d)));
    }
  }

  void only_adapters_train_and_base_stays_frozen() {
    auto model = load_model(data("tiny-gpt2"));
    const std::vector<float> base(model->all_params().begin(), model->all_params().end());
    auto ids = io::SafetensorsFile::open(data("tiny-gpt2") + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*ids);
    LoraConfig lc;
    lc.rank = 8;
    lc.alpha = 16;
    lc.targets = {"h.qkv.weight", "h.fc.weight"};
    TrainModel tm(*model, *m_be, lc);
    const auto params = tm.trainable();
    QCOMPARE(params.size(), size_t(4));
    QCOMPARE(params[0].name, std::string("lora.h.qkv.A"));
    QCOMPARE(params[0].shape, (std::vector<int64_t>{8, 64}));
    QCOMPARE(params[1].name, std::string("lora.h.qkv.B"));
    QCOMPARE(params[1].shape, (std::vector<int64_t>{192, 8}));
    QCOMPARE(params[3].shape, (std::vector<int64_t>{256, 8}));
    // B starts at zero: a fresh adapter does not change the model.
    for (uint64_t i = 0; i < params[1].numel; ++i) QCOMPARE(params[1].value[i], 0.0f);
    TrainModel plain(*model, *m_be);
    QCOMPARE(tm.loss(batch.view()), plain.loss(batch.view()));
    // A is PEFT's Kaiming-uniform: |A| <= 1/sqrt(C), not all zero; same seed, same A.
    float amax = 0;
    for (uint64_t i = 0; i < params[0].numel; ++i) amax = std::max(amax, std::abs(params[0].value[i]));
    QVERIFY(amax > 0.05f && amax <= 1.0f / 8.0f);
    TrainModel again(*model, *m_be, lc);
    QVERIFY(std::equal(params[0].value, params[0].value + params[0].numel, again.trainable()[0].value));

    AdamW opt(tm.trainable(), kFixtureAdamW);
    float first = 0, last = 0;
    for (int step = 0; step < 5; ++step) {
      tm.zero_grads();
      last = tm.forward_backward(batch.view(), {});
      if (step == 0) first = last;
      opt.step(1e-2f);
    }
    QVERIFY2(last < first - 0.1f, qPrintable(QString("%1 -> %2").arg(first).arg(last)));
    QVERIFY(std::equal(base.begin(), base.end(), model->all_params().begin()));  // base untouched
  }

  // Adapter dropout on: gradients of the loss the model reports, by central differences.
  void adapter_gradients_with_dropout_by_finite_differences() {
    auto model = load_model(data("tiny-llama"));
    auto ids = io::SafetensorsFile::open(data("tiny-llama") + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*ids);
    LoraConfig lc = all_linear_lora(*model);
    lc.dropout = 0.2f;
    TrainModel tm(*model, *m_be, lc);
    load_lora_adapters(tm, data("tiny-llama-lora"));
    TrainStepOptions o;
    o.dropout_seed = 11;
    o.label_smoothing = 0.05f;
    const float l0 = tm.forward_backward(batch.view(), o);
    QVERIFY(l0 != tm.loss(batch.view(), 0.05f));  // the adapters' dropout acted
    for (const auto& t : tm.trainable()) {
      tm.zero_grads();  // the differences below add into the gradients: start each tensor afresh
      tm.forward_backward(batch.view(), o);
      uint64_t best = 0;
      for (uint64_t i = 0; i < t.numel; ++i)
        if (std::abs(t.grad[i]) > std::abs(t.grad[best])) best = i;
      const float g = t.grad[best];
      const double fd = central_difference(t.value[best], 1e-2f, [&] { return tm.forward_backward(batch.view(), o); });
      QVERIFY2(std::abs(fd - g) < 2e-2 * std::abs(g) + 1e-4,
               qPrintable(QString("%1: backward %2, finite differences %3")
                              .arg(QString::fromStdString(t.name))
                              .arg(g)
                              .arg(fd)));
    }
  }

  void checkpointing_with_adapters() {
    auto model = load_model(data("tiny-gpt2"));
    auto ids = io::SafetensorsFile::open(data("tiny-gpt2") + "/expected.safetensors");
    const ShiftedBatch batch = shifted_batch(*ids);
    LoraConfig lc = all_linear_lora(*model);
    lc.dropout = 0.1f;
    TrainModel tm(*model, *m_be, lc);
    load_lora_adapters(tm, data("tiny-gpt2-lora"));
    TrainStepOptions o;
    o.dropout = 0.1f;
    o.dropout_seed = 3;
    tm.forward_backward(batch.view(), o);
    const auto g1 = flat_grads(tm);
    tm.zero_grads();
    o.checkpoint_activations = true;
    tm.forward_backward(batch.view(), o);
    QVERIFY(flat_grads(tm) == g1);
  }

  void save_uses_peft_names_and_round_trips() {
    for (const std::string base : {"tiny-gpt2", "tiny-llama"}) {
      auto model = load_model(data(base));
      LoraConfig lc = all_linear_lora(*model);
      lc.dropout = 0.05f;
      TrainModel tm(*model, *m_be, lc);
      load_lora_adapters(tm, data(base + "-lora"));
      QTemporaryDir tmp;
      const std::string out = tmp.path().toStdString() + "/adapter";
      save_lora_adapters(tm, out, base);
      // Same tensor names, shapes and values as the file PEFT wrote.
      auto ours = io::SafetensorsFile::open(out + "/adapter_model.safetensors");
      auto peft = io::SafetensorsFile::open(data(base + "-lora") + "/adapter_model.safetensors");
      QCOMPARE(ours->tensors().size(), peft->tensors().size());
      for (const auto& t : peft->tensors()) {
        const io::StTensor* o = ours->find(t.name);
        QVERIFY2(o, t.name.c_str());
        QCOMPARE(o->shape, t.shape);
        QVERIFY(ours->read_f32(*o) == peft->read_f32(t));
      }
      // adapter_config.json as PEFT reads it.
      const io::json cfg = io::parse_json_file(out + "/adapter_config.json", 1 << 20);
      const io::json want = io::parse_json_file(data(base + "-lora") + "/adapter_config.json", 1 << 20);
      for (const char* key : {"peft_type", "task_type", "r", "lora_alpha", "fan_in_fan_out", "bias"})
        QVERIFY2(cfg.at(key) == want.at(key), key);
      QCOMPARE(cfg.at("lora_dropout").get<double>(), double(0.05f));
      auto sorted = [](io::json a) {
        std::vector<std::string> v = a.get<std::vector<std::string>>();
        std::sort(v.begin(), v.end());
        return v;
      };
      QCOMPARE(sorted(cfg.at("target_modules")), sorted(want.at("target_modules")));
    }
  }

  void bad_configs_are_errors() {
    auto model = load_model(data("tiny-gpt2"));
    LoraConfig lc;
    lc.rank = 4;
    lc.targets = {"h.wq.weight"};  // a Llama name on GPT-2
    QVERIFY_THROWS_EXCEPTION(Error, TrainModel(*model, *m_be, lc));
    lc.targets = {"h.qkv.weight", "h.qkv.weight"};
    QVERIFY_THROWS_EXCEPTION(Error, TrainModel(*model, *m_be, lc));
    lc.targets = {};
    lc.rank = -1;
    QVERIFY_THROWS_EXCEPTION(Error, TrainModel(*model, *m_be, lc));
    lc.rank = 4;
    lc.dropout = 1.0f;
    QVERIFY_THROWS_EXCEPTION(Error, TrainModel(*model, *m_be, lc));
    lc.dropout = 0.0f;
    TrainModel tm(*model, *m_be, lc);  // empty targets: PEFT's default for GPT-2, c_attn
    QCOMPARE(tm.trainable()[0].name, std::string("lora.h.qkv.A"));
    // An adapter file for other targets does not load silently.
    QVERIFY_THROWS_EXCEPTION(Error, load_lora_adapters(tm, data("tiny-gpt2-lora")));
    TrainModel full(*model, *m_be);
    QVERIFY_THROWS_EXCEPTION(Error, full.merge_lora());
    QTemporaryDir tmp;
    QVERIFY_THROWS_EXCEPTION(Error, save_lora_adapters(full, tmp.path().toStdString(), "x"));
  }
};

QTEST_APPLESS_MAIN(TestTrainLora)
#include "test_train_lora.moc"
