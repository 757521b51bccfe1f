// The fine-tuning wizard's engine work (app/services/finetuneservice.h) called directly, with no UI
// and no event loop: a model's shape, a data file's problems with their line numbers and its token
// counts, a stop through the progress callback, a time estimate from real steps, and base-against-
// tuned evaluation on the run's validation split.
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

#include "engine/error.h"
#include "services/finetuneservice.h"
#include "support/tiny_text_model.h"

class TestFineTuneService : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model, m_chats, m_text;

  QVariantMap pretrainSettings() const {
    return {{"recipe", "pretrain"}, {"model", m_model}, {"data", m_text}, {"steps", 10}, {"batch", 2}, {"seq", 16},
            {"val_fraction", 0.2},  {"val_batches", 2}, {"threads", 1}};
  }

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath("tiny");
    writeTinyTextModel(m_model, 3, 64);
    m_chats = m_dir.filePath("chats.jsonl");
    {
      std::ofstream f(m_chats.toStdString(), std::ios::binary);
      for (int i = 0; i < 20; ++i)
        f << R"({"messages":[{"role":"user","content":"abba"},{"role":"assistant","content":"cddc effe"}]})"
             "\n";
      f << R"({"messages":[{"role":"user","content":"no answer"}]})"
           "\n";
      f << "not json\n";
    }
    m_text = m_dir.filePath("text.txt");
    std::ofstream t(m_text.toStdString(), std::ios::binary);
    for (int i = 0; i < 200; ++i) t << "abba cddc effe ghhg abba cddc\n";
  }

  void base_model_shape() {
    const ModelInfo info = finetune::inspectBaseModel(m_model);
    QCOMPARE(info.layers, 2);
    QCOMPARE(info.contextLength, 64);
    QCOMPARE(info.vocabSize, 512);
    QVERIFY(info.hasTokenizer);
    QVERIFY(info.parameterCount > 0);
  }

  void an_unreadable_model_is_an_error_naming_it() {
    try {
      finetune::inspectBaseModel(m_dir.filePath("nowhere"));
      QFAIL("no error");
    } catch (const engine::Error& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains("nowhere"), e.what());
    }
  }

  void data_problems_have_line_numbers_and_tokens_are_counted() {
    double lastProgress = -1;
    const engine::DatasetInspection d = finetune::inspectTrainingData(m_chats, m_model, 16, 0.1, [&](double f) {
      lastProgress = f;
      return true;
    });
    QCOMPARE(QString::fromStdString(d.format), QStringLiteral("messages"));
    QCOMPARE(d.recipe, engine::Recipe::Sft);
    QCOMPARE(d.rows, uint64_t(22));
    QCOMPARE(d.bad_rows, uint64_t(2));
    QCOMPARE(d.problems.size(), size_t(2));
    QCOMPARE(d.problems[0].line, uint64_t(21));
    QVERIFY2(QString::fromStdString(d.problems[0].message).contains("no assistant message"),
             d.problems[0].message.c_str());
    QCOMPARE(d.problems[1].line, uint64_t(22));
    QVERIFY(d.tokens_counted);
    QVERIFY(d.total_tokens > 0);
    QCOMPARE(d.train_rows + d.val_rows, uint64_t(20));
    QVERIFY(lastProgress > 0);

    // Without a model: the same checks, no counts.
    const engine::DatasetInspection bare = finetune::inspectTrainingData(m_chats, QString(), 16, 0.1);
    QCOMPARE(bare.bad_rows, uint64_t(2));
    QVERIFY(!bare.tokens_counted);
  }

  void a_stopped_data_check_counts_no_tokens() {
    const engine::DatasetInspection d =
        finetune::inspectTrainingData(m_text, m_model, 16, 0.1, [](double) { return false; });
    QVERIFY(!d.tokens_counted);
  }

  void time_estimate_times_real_steps() {
    int reports = 0;
    const finetune::TimeEstimate t = finetune::estimateTrainingTime(pretrainSettings(), [&](double) {
      ++reports;
      return true;
    });
    QVERIFY(t.secondsPerStep > 0);
    QCOMPARE(t.steps, 10);
    QCOMPARE(t.totalSeconds, t.secondsPerStep * 10);
    QVERIFY(!t.backend.isEmpty());
    QVERIFY(reports >= 2);
  }

  void bad_settings_are_an_error_naming_the_setting() {
    QVariantMap s = pretrainSettings();
    s["batch"] = -1;
    try {
      finetune::estimateTrainingTime(s);
      QFAIL("no error");
    } catch (const engine::Error& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains("batch"), e.what());
    }
  }

  void a_model_evaluated_against_itself_scores_the_same() {
    // The base model as its own "tuned" model: same loss on the same split, same greedy answers; the
    // blank prompt is skipped.
    const finetune::Evaluation e =
        finetune::evaluateFineTune(pretrainSettings(), m_model,
                                   {QStringLiteral("abba"), QStringLiteral("  "), QStringLiteral("cddc")});
    QVERIFY(std::isfinite(e.before.loss) && e.before.loss > 0);
    QCOMPARE(e.after.loss, e.before.loss);
    QVERIFY(e.before.positions > 0);
    QCOMPARE(e.after.positions, e.before.positions);
    QCOMPARE(e.answers.size(), size_t(2));
    QCOMPARE(e.answers[0].prompt, QStringLiteral("abba"));
    QCOMPARE(e.answers[1].prompt, QStringLiteral("cddc"));
    for (const finetune::AnswerPair& a : e.answers) QCOMPARE(a.tuned, a.base);
  }

  void suggested_hyper_parameters_follow_model_size() {
    const QVariantMap tiny = finetune::suggestedHyperParameters(1e6, false),
                      large = finetune::suggestedHyperParameters(7e9, false);
    QVERIFY(tiny.value("lr").toDouble() > large.value("lr").toDouble());
    QVERIFY(tiny.value("batch").toInt() > large.value("batch").toInt());
    QCOMPARE(tiny.value("warmup").toInt(), tiny.value("steps").toInt() / 10);
    QVERIFY(finetune::suggestedHyperParameters(7e9, true).value("lr").toDouble() > large.value("lr").toDouble());
    QVERIFY(finetune::suggestedHyperParameters(7e9, true).value("lora_rank").toInt() > tiny.value("lora_rank").toInt());
  }
};

QTEST_GUILESS_MAIN(TestFineTuneService)
#include "test_finetune_service.moc"
