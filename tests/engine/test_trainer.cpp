// The training loop (engine/train/trainer.h) on the tiny GPT-2 fixture with the real TrainModel:
//   - ten steps through Trainer + our AdamW follow PyTorch's loss curve for the fixture batch
//     (tests/data/tiny-gpt2, written by tests/tools/make_tiny_gpt2_fixture.py);
//   - resume equality: 10 steps straight vs 5 + checkpoint + a fresh process-like restart + 5 more give
//     the same losses and weights, bit for bit (shuffle, dropout, accumulation, clipping, decay, cosine on);
//   - the NaN guard: a NaN weight or loss weight stops the run with a clear message and leaves weights
//     and optimizer state untouched; with max_skipped_steps the bad step is skipped and training goes on;
//   - the deterministic data order as the trainer consumes it, accumulation = a bigger batch, val loss,
//     the stop callback.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

#include "engine/backend.h"
#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "engine/train/text_dataset.h"
#include "engine/train/trainer.h"
#include "support/error_of.h"
#include "support/train_fixture.h"

using namespace engine;

namespace {

const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";

// Always the same batch (the fixture's), as PyTorch's curve was made.
class FixedLoader : public BatchLoader {
 public:
  explicit FixedLoader(const ShiftedBatch& b) : m_b(b) {}
  void next(Batch& batch) override {
    batch.B = m_b.B;
    batch.T = m_b.T;
    batch.inputs = m_b.inputs;
    batch.targets = m_b.targets;
    batch.weights.clear();
    ++m_n;
  }
  DataPosition position() const override { return {0, m_n}; }
  void seek(const DataPosition& p) override { m_n = p.cursor; }
  int batch_size() const override { return m_b.B; }
  int seq_len() const override { return m_b.T; }

 private:
  ShiftedBatch m_b;
  uint64_t m_n = 0;
};

std::vector<int32_t> random_tokens(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> v(n);
  // A learnable stream: mostly a repeating pattern, some noise.
  for (size_t i = 0; i < n; ++i) v[i] = (rng() % 5 == 0) ? int32_t(rng() % 512) : int32_t((i * 7) % 61);
  return v;
}

std::vector<float> params_of(Model& m) { return {m.all_params().begin(), m.all_params().end()}; }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TrainerOptions rich_options(const std::string& ckpt_dir) {
  TrainerOptions o;
  o.steps = 10;
  o.grad_accum = 2;
  o.grad_clip = 0.5f;
  o.schedule.kind = LrScheduleKind::Cosine;
  o.schedule.base_lr = 3e-3f;
  o.schedule.warmup_steps = 2;
  o.schedule.total_steps = 10;
  o.schedule.min_lr_ratio = 0.1f;
  o.adam.weight_decay = 0.1;
  o.dropout = 0.1f;
  o.seed = 1234;
  o.checkpoint_dir = ckpt_dir;
  o.config_json = "{}";
  return o;
}

// The language-model loss made three times per step on one batch (the shape of PPO's epochs over a rollout),
// reporting the update index, a metric only the first update has, and carrying a step counter across checkpoints.
class ThreeUpdates : public TrainObjective {
 public:
  int updates_per_step() const override { return 3; }
  ObjectiveResult forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                   float grad_scale) override {
    return forward_backward_update(model, batch, options, grad_scale, 0);
  }
  ObjectiveResult forward_backward_update(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                          float grad_scale, int update) override {
    ObjectiveResult r;
    r.loss = model.forward_backward(batch.view(), options, grad_scale);
    r.metrics["update"] = update;
    if (update == 0) {
      r.metrics["steps_seen"] = double(++steps_seen);
      r.samples.push_back({"p", "c", double(steps_seen)});
    }
    return r;
  }
  ObjectiveResult evaluate(TrainModel& model, const Batch& batch) override {
    ObjectiveResult r;
    r.loss = model.loss(batch.view());
    return r;
  }
  std::string checkpoint_state() const override { return "seen " + std::to_string(steps_seen); }
  void restore_state(const std::string& state) override { steps_seen = std::stoi(state.substr(5)); }
  int steps_seen = 0;
};

}  // namespace

class TestTrainer : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void follows_pytorch_adamw_curve() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    const std::vector<float> curve = expected->read_f32(*expected->find("loss_curve"));
    FixedLoader loader(shifted_batch(*expected));
    TrainModel tm(*model, *m_be);
    TrainerOptions o;  // the fixture's AdamW: lr 1e-3, betas 0.9/0.95, eps 1e-8, no decay, no clipping
    o.steps = int64_t(curve.size());
    o.grad_clip = 0;
    o.schedule.base_lr = 1e-3f;
    Trainer trainer(tm, loader, nullptr, nullptr, o);
    std::vector<float> losses;
    trainer.run([&](const StepMetrics& m) {
      losses.push_back(m.loss);
      return true;
    });
    QCOMPARE(losses.size(), curve.size());
    for (size_t i = 0; i < curve.size(); ++i)
      QVERIFY2(std::abs(losses[i] - curve[i]) < 5e-5,
               qPrintable(QString("step %1: ours %2, PyTorch %3").arg(i + 1).arg(losses[i]).arg(curve[i])));
  }

  void resume_equals_uninterrupted() {
    const std::vector<int32_t> tokens = random_tokens(4000, 3);
    QTemporaryDir dir_a, dir_b;
    // A: 10 steps straight.
    auto model_a = load_model(kTiny);
    std::vector<float> losses_a;
    {
      TrainModel tm(*model_a, *m_be);
      TokenStreamLoader loader(tokens, 2, 16, /*shuffle=*/true, 99, "a");
      Trainer t(tm, loader, nullptr, nullptr, rich_options(dir_a.path().toStdString()));
      t.run([&](const StepMetrics& m) {
        losses_a.push_back(m.loss);
        return true;
      });
    }
    // B: stopped after 5 (the stop writes a checkpoint), then a fresh model, loader and trainer resume.
    std::vector<float> losses_b;
    {
      auto model = load_model(kTiny);
      TrainModel tm(*model, *m_be);
      TokenStreamLoader loader(tokens, 2, 16, true, 99, "b");
      Trainer t(tm, loader, nullptr, nullptr, rich_options(dir_b.path().toStdString()));
      const TrainResult r = t.run([&](const StepMetrics& m) {
        losses_b.push_back(m.loss);
        return m.step < 5;
      });
      QVERIFY(r.stopped);
      QCOMPARE(r.steps_done, int64_t(5));
      QVERIFY(QString::fromStdString(r.last_checkpoint).endsWith("ckpt_00000005.safetensors"));
    }
    auto model_b = load_model(kTiny);
    {
      TrainModel tm(*model_b, *m_be);
      TokenStreamLoader loader(tokens, 2, 16, true, 99, "b");
      Trainer t(tm, loader, nullptr, nullptr, rich_options(dir_b.path().toStdString()));
      const TrainState st = t.resume();
      QCOMPARE(st.step, int64_t(5));
      t.run([&](const StepMetrics& m) {
        losses_b.push_back(m.loss);
        return true;
      });
    }
    QCOMPARE(losses_b.size(), size_t(10));
    for (size_t i = 0; i < 10; ++i)
      QVERIFY2(std::memcmp(&losses_a[i], &losses_b[i], sizeof(float)) == 0,
               qPrintable(
                   QString("step %1: %2 vs %3").arg(i + 1).arg(losses_a[i], 0, 'g', 9).arg(losses_b[i], 0, 'g', 9)));
    QVERIFY(same_bits(params_of(*model_a), params_of(*model_b)));
    QVERIFY(losses_a[9] < losses_a[0]);  // and it did learn something
  }

  void nan_weight_stops_with_clear_message_and_changes_nothing() {
    auto model = load_model(kTiny);
    model->param_data("h.fc.weight")[17] = NAN;
    const std::vector<float> before = params_of(*model);
    TrainModel tm(*model, *m_be);
    TokenStreamLoader loader(random_tokens(2000, 1), 2, 16, false, 0, "t");
    TrainerOptions o;
    o.steps = 3;
    Trainer t(tm, loader, nullptr, nullptr, o);
    int calls = 0;
    const QString e = error_of([&] { t.run([&](const StepMetrics&) { return ++calls > 0; }); });
    QVERIFY2(e.contains("step 1: the loss is NaN") && e.contains("weights are unchanged"), qPrintable(e));
    QCOMPARE(calls, 0);
    QVERIFY(same_bits(params_of(*model), before));
    QCOMPARE(t.optimizer().step_count(), int64_t(0));
    for (size_t i = 0; i < t.optimizer().tensors().size(); ++i)
      for (float m : t.optimizer().first_moment(i)) QCOMPARE(m, 0.0f);
  }

  void nonfinite_step_is_skipped_when_allowed() {
    auto model = load_model(kTiny);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
    FixedLoader loader(shifted_batch(*expected));
    TrainModel tm(*model, *m_be);
    TrainerOptions o;
    o.steps = 4;
    o.max_skipped_steps = 1;
    Trainer t(tm, loader, nullptr, nullptr, o);
    std::vector<float> after_step2;
    std::vector<StepMetrics> seen;
    bool step3_unchanged = false;
    float kept = 0;
    const TrainResult r = t.run([&](const StepMetrics& m) {
      seen.push_back(m);
      float& w = model->param_data("h.fc.weight")[17];
      if (m.step == 2) {
        kept = w;
        w = NAN;  // step 3's loss is not finite
        after_step2 = params_of(*model);
      }
      if (m.step == 3) {
        step3_unchanged = same_bits(params_of(*model), after_step2);
        w = kept;
      }
      return true;
    });
    QVERIFY(step3_unchanged);
    QCOMPARE(r.skipped_steps, int64_t(1));
    QCOMPARE(seen.size(), size_t(4));
    QVERIFY(seen[2].skipped && !seen[1].skipped && !seen[3].skipped);
    QVERIFY(std::isfinite(seen[3].loss));
    QCOMPARE(t.optimizer().step_count(), int64_t(3));  // the skipped step made no AdamW update
  }

  void reads_the_stream_in_order_and_accumulation_matches_a_bigger_batch() {
    const std::vector<int32_t> tokens = random_tokens(3000, 5);
    const int B = 2, T = 16;
    // lr 0: the weights never change, so each step's loss is the model's loss on exactly the tokens
    // [k*B*T, k*B*T + B*T] of the stream (k = step - 1).
    {
      auto model = load_model(kTiny);
      TrainModel tm(*model, *m_be);
      TokenStreamLoader loader(tokens, B, T, false, 0, "t");
      TrainerOptions o;
      o.steps = 4;
      o.schedule.base_lr = 0.0f;
      Trainer t(tm, loader, nullptr, nullptr, o);
      std::vector<float> losses;
      t.run([&](const StepMetrics& m) {
        losses.push_back(m.loss);
        return true;
      });
      for (int k = 0; k < 4; ++k) {
        std::vector<int32_t> in(B * T), tg(B * T);
        for (int i = 0; i < B * T; ++i) {
          in[size_t(i)] = tokens[size_t(k * B * T + i)];
          tg[size_t(i)] = tokens[size_t(k * B * T + i + 1)];
        }
        QCOMPARE(losses[size_t(k)], tm.loss(BatchView{in.data(), tg.data(), nullptr, B, T}));
      }
    }
    // Two micro-batches of B rows = one batch of 2B rows (same tokens, in order): same gradient. A large
    // eps makes AdamW's first step lr * g / (|g| + eps), linear in g, so the weights show the gradient
    // (with the default eps the step is lr * sign(g) and tiny gradients could flip it).
    std::vector<float> w_accum, w_big;
    for (int accum : {2, 1}) {
      auto model = load_model(kTiny);
      TrainModel tm(*model, *m_be);
      TokenStreamLoader loader(tokens, accum == 2 ? B : 2 * B, T, false, 0, "t");
      TrainerOptions o;
      o.steps = 1;
      o.grad_accum = accum;
      o.grad_clip = 0;
      o.schedule.base_lr = 1.0f;
      o.adam.eps = 10.0;
      Trainer t(tm, loader, nullptr, nullptr, o);
      t.run();
      (accum == 2 ? w_accum : w_big) = params_of(*model);
    }
    double worst = 0;
    for (size_t i = 0; i < w_big.size(); ++i) worst = std::max(worst, double(std::abs(w_accum[i] - w_big[i])));
    QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
  }

  void several_updates_per_step_share_one_batch() {
    // Each step: one batch, three AdamW updates, means over the updates that report a metric; the objective's
    // state comes back on resume.
    const std::vector<int32_t> tokens = random_tokens(3000, 9);
    QTemporaryDir dir;
    auto model = load_model(kTiny);
    TrainModel tm(*model, *m_be);
    TokenStreamLoader train(tokens, 2, 16, false, 0, "train");
    TrainerOptions o;
    o.steps = 2;
    o.schedule.base_lr = 1e-3f;
    o.checkpoint_dir = dir.path().toStdString();
    ThreeUpdates objective;
    Trainer t(tm, train, nullptr, nullptr, o, &objective);
    std::vector<StepMetrics> steps;
    t.run([&](const StepMetrics& m) {
      steps.push_back(m);
      return true;
    });
    QCOMPARE(t.optimizer().step_count(), int64_t(6));
    QCOMPARE(train.position().cursor, uint64_t(2 * 2 * 16));  // two batches read, not six
    QCOMPARE(steps.size(), size_t(2));
    QCOMPARE(steps[1].metrics.at("update"), 1.0f);      // (0 + 1 + 2) / 3
    QCOMPARE(steps[1].metrics.at("steps_seen"), 2.0f);  // reported by update 0 only
    QCOMPARE(steps[1].samples.size(), size_t(1));
    QVERIFY(std::isfinite(steps[1].grad_norm) && steps[1].grad_norm > 0);

    auto model_b = load_model(kTiny);
    TrainModel tm_b(*model_b, *m_be);
    TokenStreamLoader train_b(tokens, 2, 16, false, 0, "train");
    ThreeUpdates resumed;
    Trainer tb(tm_b, train_b, nullptr, nullptr, o, &resumed);
    tb.resume();
    QCOMPARE(resumed.steps_seen, 2);

    TrainerOptions accum = o;
    accum.grad_accum = 2;
    QVERIFY(error_of([&] { Trainer(tm, train, nullptr, nullptr, accum, &objective); }).contains("accumulation 1"));
  }

  void validation_loss_and_stop_callback() {
    const std::vector<int32_t> tokens = random_tokens(3000, 8);
    auto model = load_model(kTiny);
    TrainModel tm(*model, *m_be);
    TokenStreamLoader train(std::vector<int32_t>(tokens.begin(), tokens.begin() + 2000), 2, 16, true, 1, "train");
    TokenStreamLoader val(std::vector<int32_t>(tokens.begin() + 2000, tokens.end()), 2, 16, false, 0, "val");
    TrainerOptions o;
    o.steps = 20;
    o.val_every = 3;
    o.val_batches = 2;
    o.schedule.base_lr = 1e-3f;
    Trainer t(tm, train, &val, nullptr, o);
    std::vector<int64_t> val_steps;
    const TrainResult r = t.run([&](const StepMetrics& m) {
      if (m.val_loss) {
        val_steps.push_back(m.step);
        // The reported value is the loss on the first val_batches batches of the validation stream.
        double sum = 0;
        TokenStreamLoader check(std::vector<int32_t>(tokens.begin() + 2000, tokens.end()), 2, 16, false, 0, "v");
        Batch b;
        for (int i = 0; i < 2; ++i) {
          check.next(b);
          sum += tm.loss(b.view());
        }
        if (std::abs(*m.val_loss - sum / 2) > 1e-5) return false;
      }
      return m.step < 7;
    });
    QVERIFY(r.stopped);
    QCOMPARE(r.steps_done, int64_t(7));
    QCOMPARE(val_steps, (std::vector<int64_t>{3, 6}));
  }
};

QTEST_APPLESS_MAIN(TestTrainer)
#include "test_trainer.moc"
