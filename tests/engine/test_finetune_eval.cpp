// Before/after evaluation of a fine-tuning run (engine/train/finetune_eval.h), on the tiny GPT-2:
//   - validation_loss_of on the base model equals the Trainer's own validation loss before training,
//     and on the saved tuned model equals the last val_loss the run reported (the same val set);
//   - training lowers it;
//   - greedy answers are deterministic, and two different models give different answers.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "engine/model_loader.h"
#include "engine/train/finetune_eval.h"
#include "engine/train/training_run.h"
#include "support/tiny_text_model.h"

namespace {

engine::TrainingRunSpec tinySpec(const QTemporaryDir& dir) {
  const std::string data = dir.filePath(QStringLiteral("data.txt")).toStdString();
  std::ofstream f(data, std::ios::binary);
  for (int i = 0; i < 60; ++i) f << "abba cddc effe ghhg ijji klmm nop aabb ccdd\n";
  f.close();
  engine::TrainingRunSpec s;
  s.recipe = engine::Recipe::Pretrain;
  s.data_path = data;
  s.out_dir = dir.filePath(QStringLiteral("out")).toStdString();
  s.batch = 2;
  s.seq = 16;
  s.steps = 8;
  s.lr = 1e-2f;
  s.schedule = engine::LrScheduleKind::Constant;
  s.val_fraction = 0.2;
  s.val_every = 8;
  s.val_batches = 3;
  s.threads = 1;
  return s;
}

}  // namespace

class TestFinetuneEval : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_base, m_other;

 private slots:
  void initTestCase() {
    m_base = m_dir.filePath(QStringLiteral("base"));
    m_other = m_dir.filePath(QStringLiteral("other"));
    writeTinyTextModel(m_base, 11, 64);
    writeTinyTextModel(m_other, 12, 64);
  }

  void val_loss_before_and_after_use_the_runs_val_set() {
    const engine::TrainingRunSpec spec = tinySpec(m_dir);
    auto backend = engine::make_cpu_backend(1);
    const engine::LoadOptions f32{.dequantize = true};
    const engine::ChatTemplate plain;

    const auto base = engine::load_model(m_base.toStdString(), {}, f32);
    const engine::ValidationLoss before = engine::validation_loss_of(*base, *backend, spec, plain);
    QVERIFY(before.positions > 0);
    QVERIFY(std::isfinite(before.loss) && before.loss > 0);
    QCOMPARE(before.perplexity, std::exp(before.loss));

    std::unique_ptr<engine::TrainingRun> run =
        engine::build_training_run(engine::load_training_base(m_base.toStdString(), spec.seed), spec);
    QVERIFY(std::abs(double(run->trainer->validation_loss()) - before.loss) < 1e-5);
    float lastVal = 0;
    run->trainer->run([&](const engine::StepMetrics& m) {
      if (m.val_loss) lastVal = *m.val_loss;
      return true;
    });
    engine::save_training_result(*run, "{}");

    const auto tuned = engine::load_model(spec.out_dir, {}, f32);
    const engine::ValidationLoss after = engine::validation_loss_of(*tuned, *backend, spec, plain);
    QCOMPARE(after.positions, before.positions);
    QVERIFY2(std::abs(after.loss - double(lastVal)) < 1e-4,
             qPrintable(QString("%1 vs %2").arg(after.loss).arg(lastVal)));
    QVERIFY(after.loss < before.loss);  // 8 steps at 1e-2 on repetitive text learn something
  }

  void no_validation_split_is_an_error() {
    engine::TrainingRunSpec spec = tinySpec(m_dir);
    spec.val_fraction = 0;
    auto backend = engine::make_cpu_backend(1);
    const auto base = engine::load_model(m_base.toStdString(), {}, engine::LoadOptions{.dequantize = true});
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::validation_loss_of(*base, *backend, spec, engine::ChatTemplate()));
  }

  void greedy_answers_are_fixed_and_differ_between_models() {
    auto backend = engine::make_cpu_backend(1);
    const auto a = engine::load_model(m_base.toStdString());
    const auto b = engine::load_model(m_other.toStdString());
    const std::vector<std::string> prompts = {"abba", "ghhg ijji", "nop"};
    const engine::ChatTemplate plain;
    const auto a1 = engine::greedy_answers(*a, *backend, prompts, engine::Recipe::Pretrain, plain, 12);
    const auto a2 = engine::greedy_answers(*a, *backend, prompts, engine::Recipe::Pretrain, plain, 12);
    const auto b1 = engine::greedy_answers(*b, *backend, prompts, engine::Recipe::Pretrain, plain, 12);
    QCOMPARE(a1.size(), size_t(3));
    QCOMPARE(b1.size(), size_t(3));
    QVERIFY(a1 == a2);
    QVERIFY(a1 != b1);
    for (const std::string& s : a1) QVERIFY(!s.empty());
    // Asked through a chat template (sft), answers come too.
    const auto chat = engine::greedy_answers(*a, *backend, {"hi"}, engine::Recipe::Sft,
                                             *engine::ChatTemplate::from_name("chatml"), 4);
    QCOMPARE(chat.size(), size_t(1));
    // A stop request ends the list early.
    int asked = 0;
    const auto stopped =
        engine::greedy_answers(*a, *backend, prompts, engine::Recipe::Pretrain, plain, 4, [&] { return asked++ < 1; });
    QCOMPARE(stopped.size(), size_t(1));
  }
};

QTEST_GUILESS_MAIN(TestFinetuneEval)
#include "test_finetune_eval.moc"
