// ModelEvaluator, the Models page's view model, with its real background task: the card follows the
// model path, Evaluate delivers results with progress, Cancel ends a run at once and drops its
// outcome, and a new model drops the old results.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "modelevaluator.h"
#include "support/tiny_text_model.h"

class TestModelEvaluator : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_carded, m_plain;

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_carded = m_dir.filePath("carded");
    m_plain = m_dir.filePath("plain");
    writeTinyTextModel(m_carded, 1, 128);
    writeTinyTextModel(m_plain, 2, 128);
    QFile f(m_carded + "/workbench.json");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"card":{"title":"Tiny","limitations":"A toy."}})");
  }

  void card_follows_the_model() {
    ModelEvaluator e;
    QSignalSpy cardChanged(&e, &ModelEvaluator::cardChanged);
    e.setModelPath(QUrl::fromLocalFile(m_carded).toString());  // as QML may pass it
    QCOMPARE(e.modelPath(), m_carded);
    QCOMPARE(e.card().value("title").toString(), QStringLiteral("Tiny"));
    QCOMPARE(cardChanged.count(), 1);
    e.setModelPath(m_plain);
    QVERIFY(e.card().isEmpty());
    QCOMPARE(cardChanged.count(), 2);
  }

  void evaluate_then_switch_model() {
    ModelEvaluator e;
    e.setModelPath(m_plain);
    e.setItems(3);
    QSignalSpy finished(&e, &ModelEvaluator::finished);
    QSignalSpy progress(&e, &ModelEvaluator::progressChanged);
    e.evaluate();
    QVERIFY(e.busy());
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().first().toBool(), true);
    QVERIFY(!e.busy());
    QCOMPARE(e.error(), QString());
    QVERIFY(progress.count() >= 2);
    const QVariantList rows = e.results();
    QCOMPARE(rows.size(), 3);
    for (const QVariant& r : rows) QCOMPARE(r.toMap().value("n").toInt(), 3);
    e.setModelPath(m_carded);
    QVERIFY(e.results().isEmpty());
  }

  void cancel_ends_now_and_drops_the_outcome() {
    ModelEvaluator e;
    e.setModelPath(m_plain);
    e.setItems(100000);  // far more than can finish before the cancel
    QSignalSpy finished(&e, &ModelEvaluator::finished);
    e.evaluate();
    QTRY_VERIFY(e.progress() > 0);
    e.cancel();
    QVERIFY(!e.busy());
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.first().first().toBool(), false);
    QTest::qWait(200);  // nothing of the cancelled run arrives later
    QVERIFY(e.results().isEmpty());
    QCOMPARE(finished.count(), 1);
  }

  void error_for_a_model_that_cannot_be_read() {
    ModelEvaluator e;
    e.setModelPath(m_dir.filePath("missing"));
    QSignalSpy finished(&e, &ModelEvaluator::finished);
    e.evaluate();
    QVERIFY(finished.wait(20000));
    QCOMPARE(finished.first().first().toBool(), false);
    QVERIFY(!e.error().isEmpty());
    e.clearError();
    QVERIFY(e.error().isEmpty());
  }
};

QTEST_MAIN(TestModelEvaluator)
#include "test_model_evaluator.moc"
