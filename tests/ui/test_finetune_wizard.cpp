// FineTuneWizard (ui/finetunewizard.h), the wizard's off-thread tasks, without QML: results arrive on
// the GUI thread as properties (with progress on the way), a failure is a readable message naming the
// file, a cancelled task leaves no result, a newer task replaces an older one, a wizard destroyed while
// its task runs neither waits for it nor hears from it, and suggested settings follow model size.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "finetunewizard.h"
#include "support/tiny_text_model.h"

class TestFineTuneWizard : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model, m_data, m_text;

  QVariantMap pretrainSettings() const {
    return {{"recipe", "pretrain"}, {"model", m_model}, {"data", m_text},      {"steps", 10},
            {"batch", 2},           {"seq", 16},        {"val_fraction", 0.2}, {"threads", 1}};
  }

 private slots:
  void initTestCase() {
    m_model = m_dir.filePath("tiny");
    writeTinyTextModel(m_model, 3, 64);
    m_data = m_dir.filePath("chats.jsonl");
    std::ofstream f(m_data.toStdString(), std::ios::binary);
    for (int i = 0; i < 20; ++i)
      f << R"({"messages":[{"role":"user","content":"abba"},{"role":"assistant","content":"cddc effe"}]})"
           "\n";
    f << R"({"messages":[{"role":"user","content":"no answer"}]})"
         "\n";
    m_text = m_dir.filePath("text.txt");
    std::ofstream t(m_text.toStdString(), std::ios::binary);
    for (int i = 0; i < 200; ++i) t << "abba cddc effe ghhg abba cddc\n";
  }

  void model_and_dataset_results_arrive() {
    FineTuneWizard w;
    QSignalSpy done(&w, &FineTuneWizard::finished);
    w.inspectModel(m_model);
    QVERIFY(w.busy());
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 30000);
    QCOMPARE(done.at(0).at(0).toString(), QStringLiteral("model"));
    QVERIFY(done.at(0).at(1).toBool());
    QVERIFY(!w.busy());
    QCOMPARE(w.model().value("layers").toInt(), 2);
    QCOMPARE(w.model().value("context").toInt(), 64);

    w.inspectDataset(m_data, m_model, 16, 0.1);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 30000);
    const QVariantMap d = w.dataset();
    QCOMPARE(d.value("format").toString(), QStringLiteral("messages"));
    QCOMPARE(d.value("recipe").toString(), QStringLiteral("sft"));
    QCOMPARE(d.value("rows").toInt(), 21);
    QCOMPARE(d.value("badRows").toInt(), 1);
    const QVariantMap problem = d.value("problems").toList().value(0).toMap();
    QCOMPARE(problem.value("line").toInt(), 21);
    QVERIFY(problem.value("message").toString().contains("no assistant message"));
    QVERIFY(d.value("tokensCounted").toBool());
    QVERIFY(d.value("totalTokens").toLongLong() > 0);
    QCOMPARE(d.value("trainRows").toInt() + d.value("valRows").toInt(), 20);
  }

  void failure_is_a_readable_message() {
    FineTuneWizard w;
    QSignalSpy done(&w, &FineTuneWizard::finished);
    w.inspectDataset(m_dir.filePath("missing.txt"), QString(), 16, 0.1);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 30000);
    QVERIFY(!done.at(0).at(1).toBool());
    QVERIFY2(w.error().contains("missing.txt"), qPrintable(w.error()));
    QVERIFY(w.dataset().isEmpty());
    w.clearError();
    QVERIFY(w.error().isEmpty());
  }

  void cancel_leaves_no_result_and_a_newer_task_wins() {
    FineTuneWizard w;
    QSignalSpy done(&w, &FineTuneWizard::finished);
    w.inspectModel(m_model);
    w.cancel();
    QCOMPARE(done.count(), 1);
    QVERIFY(!done.at(0).at(1).toBool());
    QVERIFY(!w.busy());
    QVERIFY(w.error().isEmpty());  // a cancel is not an error
    QTest::qWait(200);             // the cancelled work's late result must be dropped
    QVERIFY(w.model().isEmpty());

    w.inspectDataset(m_data, QString(), 16, 0.1);  // replaced at once by the next task
    w.inspectModel(m_model);
    QTRY_VERIFY_WITH_TIMEOUT(!w.model().isEmpty(), 30000);
    QVERIFY(w.dataset().isEmpty());
  }

  void time_estimate_reports_progress_then_its_result() {
    FineTuneWizard w;
    QSignalSpy done(&w, &FineTuneWizard::finished);
    QSignalSpy progressed(&w, &FineTuneWizard::progressChanged);
    w.estimateTime(pretrainSettings());
    QCOMPARE(w.task(), QStringLiteral("time"));
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    QVERIFY2(done.at(0).at(1).toBool(), qPrintable(w.error()));
    QVERIFY(progressed.count() >= 2);  // the reset to 0 at the start, then the task's own reports
    QVERIFY(w.progress() > 0);
    QVERIFY(w.timeEstimate().value("secondsPerStep").toDouble() > 0);
    QCOMPARE(w.timeEstimate().value("steps").toInt(), 10);
  }

  void destroyed_while_a_task_runs_without_waiting_or_hearing_back() {
    int heard = 0;
    auto* w = new FineTuneWizard;
    connect(w, &FineTuneWizard::timeEstimateChanged, this, [&] { ++heard; });
    connect(w, &FineTuneWizard::progressChanged, this, [&] { ++heard; });
    w->estimateTime(pretrainSettings());
    heard = 0;
    delete w;
    finetune::taskPool()->waitForDone();  // the task ends (stopped or not) with no owner left
    QTest::qWait(50);
    QCOMPARE(heard, 0);
  }

  void suggested_settings_follow_model_size() {
    FineTuneWizard w;
    const QVariantMap tiny = w.suggestedSettings(1e6, false), large = w.suggestedSettings(7e9, false);
    QVERIFY(tiny.value("lr").toDouble() > large.value("lr").toDouble());
    QVERIFY(tiny.value("batch").toInt() >= large.value("batch").toInt());
    QVERIFY(w.suggestedSettings(7e9, true).value("lr").toDouble() > large.value("lr").toDouble());  // LoRA: higher rate
    QCOMPARE(w.defaultPrompts("sft").size(), 3);
    QCOMPARE(w.defaultPrompts("pretrain").size(), 3);
    // Alignment nudges a model that already writes: a third of the rate, as one typed digit (1e-3 / 3).
    QCOMPARE(w.suggestedSettings(1e6, false, "dpo").value("lr").toDouble(), 3e-4);
    QCOMPARE(w.suggestedSettings(1e6, false, "sft").value("lr").toDouble(), tiny.value("lr").toDouble());
    // The recipe's own settings with the CLI's defaults.
    QCOMPARE(w.alignmentDefaults("grpo").value("beta").toDouble(), 0.04);
    QCOMPARE(w.alignmentDefaults("dpo").value("beta").toDouble(), 0.1);
    QVERIFY(w.alignmentDefaults("sft").isEmpty());
  }
};

QTEST_MAIN(TestFineTuneWizard)
#include "test_finetune_wizard.moc"
