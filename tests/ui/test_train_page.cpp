// The Train and Runs pages in the real Main.qml with the real AppController: a walk through the
// new-run form (model, data, method, steps, the CLI command it shows, start) runs a real tiny
// training job; the dashboard then shows its curves (series filled from the stored rows), its
// status, samples and stat tiles; the log-scale toggle keeps the curve; the Runs page overlays it.
// A run started from the wizard keeps the wizard open on its Run step (Evaluate and Save follow); the
// tuned model opens under the run's name; a chat fine-tune's samples answer a chat prompt; the Runs
// page lists base model, method and final loss, and deletes a run with its folder.
// Set WB_SCREENSHOT_DIR to keep PNGs of the pages.
#include <QAbstractAxis>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLegend>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>
#include <QXYSeries>
#include <QtQml/qqmlextensionplugin.h>

#include <cmath>
#include <functional>
#include <memory>

#include "appsingleton.h"
#include "engine/model_loader.h"
#include "metricsmodel.h"
#include "services/appcontroller.h"
#include "services/trainingjobs.h"
#include "support/quick_items.h"
#include "support/training_job_fixture.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

class TestTrainPage : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QStringList m_warnings;
  std::unique_ptr<AppController> m_controller;
  std::unique_ptr<QQmlApplicationEngine> m_engine;
  QQuickWindow* m_window = nullptr;
  QString m_model, m_data, m_chats;

  // A run small enough for a few seconds of training.
  QVariantMap smallRun() const {
    return {{QStringLiteral("recipe"), QStringLiteral("pretrain")},
            {QStringLiteral("model"), m_model},
            {QStringLiteral("data"), m_data},
            {QStringLiteral("steps"), 4},
            {QStringLiteral("lr"), 0.003},
            {QStringLiteral("seq"), 24},
            {QStringLiteral("batch"), 2},
            {QStringLiteral("val_every"), 0},
            {QStringLiteral("save_every"), 0}};
  }

  void grab(const QString& name) {
    QTest::qWait(300);
    const QImage image = m_window->grabWindow();
    QVERIFY(!image.isNull());
    const QString dir = qEnvironmentVariable("WB_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
      QDir().mkpath(dir);
      image.save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
    }
  }
  void showPage(int index) {
    QVERIFY(m_window->setProperty("currentPage", index));
    QTest::qWait(50);
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(m_dir.isValid());
    qputenv("WB_DATA_DIR", m_dir.filePath(QStringLiteral("share")).toUtf8());
    qputenv("WB_SESSION_DB", m_dir.filePath(QStringLiteral("session.db")).toUtf8());
    if (QGuiApplication::platformName() == QLatin1String("offscreen"))
      QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    QQuickStyle::setStyle(QStringLiteral("Material"));

    m_model = m_dir.filePath(QStringLiteral("model"));
    writeTinyGpt2WithTokenizer(m_model);
    m_data = m_dir.filePath(QStringLiteral("stories.txt"));
    QVERIFY(writeStories(m_data, 200));
    m_chats = m_dir.filePath(QStringLiteral("chats.jsonl"));
    {
      QFile f(m_chats);
      QVERIFY(f.open(QIODevice::WriteOnly));
      for (int i = 0; i < 40; ++i)
        f.write(QStringLiteral("{\"messages\":[{\"role\":\"user\",\"content\":\"Who saw the %1?\"},"
                               "{\"role\":\"assistant\",\"content\":\"Tom saw the %1.\"}]}\n")
                    .arg(i % 2 ? QStringLiteral("ball") : QStringLiteral("cat"))
                    .toUtf8());
    }

    m_controller = std::make_unique<AppController>();
    AppControllerForeign::setInstance(m_controller.get());
    m_controller->training()->setRunsRoot(m_dir.filePath(QStringLiteral("runs")));
    m_engine = std::make_unique<QQmlApplicationEngine>();
    m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    connect(m_engine.get(), &QQmlEngine::warnings, this, [this](const QList<QQmlError>& list) {
      for (const auto& w : list) m_warnings << w.toString();
    });
    m_engine->load(QUrl(QStringLiteral("qrc:/qt/qml/Workbench/Ui/Main.qml")));
    QVERIFY2(!m_engine->rootObjects().isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
    m_window = qobject_cast<QQuickWindow*>(m_engine->rootObjects().constFirst());
    QVERIFY(m_window);
    m_window->resize(1280, 900);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    m_controller->start();
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }

  // The dashboard's MetricChart cards (loss, learning rate, gradient norm, throughput).
  QList<QQuickItem*> chartCards(QQuickItem* page) {
    QList<QQuickItem*> out;
    std::function<void(QQuickItem*)> walk = [&](QQuickItem* item) {
      if (item->property("specs").isValid() && item->property("chart").isValid()) out << item;
      for (QQuickItem* child : item->childItems()) walk(child);
    };
    walk(page);
    return out;
  }

  void cleanupTestCase() {
    m_engine.reset();
    m_controller.reset();
  }

  void emptyTrainPageRenders() {
    showPage(3);
    QQuickItem* page = m_window->findChild<QQuickItem*>(QStringLiteral("page_train"));
    QVERIFY(page);
    QTRY_VERIFY(page->isVisible());
    QVERIFY(findItem(page, QStringLiteral("trainSetup")));
    // No run yet: the new-run wizard is open, and the empty charts say so instead of showing axes.
    QVERIFY(findItem(page, QStringLiteral("trainWizard"))->isVisible());
    QQuickItem* loss = findItem(page, QStringLiteral("lossChart"));
    QVERIFY(loss && loss->property("empty").toBool());
    QQuickItem* emptyText = findItem(loss, QStringLiteral("chartEmptyText"));
    QVERIFY(emptyText && emptyText->isVisible());
    grab(QStringLiteral("train-empty"));
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }

  void walkThroughStartsARunAndTheDashboardFollowsIt() {
    QQuickItem* page = m_window->findChild<QQuickItem*>(QStringLiteral("page_train"));
    QQuickItem* setup = findItem(page, QStringLiteral("trainSetup"));
    QVERIFY(setup);
    // Model → data → method → hyper-parameters.
    QVERIFY(findItem(setup, QStringLiteral("setupModel"))->setProperty("text", m_model));
    QVERIFY(findItem(setup, QStringLiteral("setupData"))->setProperty("text", m_data));
    QVERIFY(findItem(setup, QStringLiteral("setupSteps"))->setProperty("value", 12));
    QVERIFY(findItem(setup, QStringLiteral("setupLr"))->setProperty("text", QStringLiteral("0.003")));
    QVariantMap s = setup->property("settings").toMap();
    s[QStringLiteral("seq")] = 32;
    s[QStringLiteral("batch")] = 2;
    s[QStringLiteral("val_every")] = 4;
    s[QStringLiteral("sample_every")] = 6;
    s[QStringLiteral("save_every")] = 0;
    s[QStringLiteral("val_fraction")] = 0.1;
    s[QStringLiteral("sample_prompt")] = QStringLiteral("Tom saw");
    s[QStringLiteral("sample_tokens")] = 6;
    // Review: the command shown names the same run.
    const QString cli = findItem(setup, QStringLiteral("setupCli"))->property("text").toString();
    QVERIFY2(cli.contains(QStringLiteral("--recipe pretrain --model ") + m_model + QStringLiteral(" --data ") + m_data),
             qPrintable(cli));
    QVERIFY2(cli.contains(QStringLiteral("--steps 12")) && cli.contains(QStringLiteral("--lr 0.003")), qPrintable(cli));
    QVERIFY(findItem(setup, QStringLiteral("startButton"))->property("enabled").toBool());

    // Start (with the smaller shapes of this test; the form's own start() is the same call).
    QSignalSpy finished(m_controller->training(), &TrainingJobs::runFinished);
    QVERIFY(QMetaObject::invokeMethod(setup, "startRequested", Q_ARG(QString, QStringLiteral("walk-through")),
                                      Q_ARG(QVariant, s)));
    QVERIFY(m_controller->training()->busy());
    const qint64 id = m_controller->training()->activeRunId();
    QTRY_COMPARE(findItem(page, QStringLiteral("runStatus"))->property("text").toString(), QStringLiteral("running"));
    QVERIFY(finished.wait(240000));
    QCOMPARE(finished.first()[1].toString(), QStringLiteral("done"));
    QTRY_COMPARE(findItem(page, QStringLiteral("runStatus"))->property("text").toString(), QStringLiteral("done"));

    // The dashboard's charts hold the run's points.
    QQuickItem* loss = findItem(page, QStringLiteral("lossChart"));
    QVERIFY(loss);
    auto* metrics = qvariant_cast<MetricsModel*>(loss->property("metrics"));
    QVERIFY(metrics);
    QCOMPARE(metrics->runId(), id);
    QCOMPARE(metrics->count(), 12);
    QObject* chart = qvariant_cast<QObject*>(loss->property("chart"));
    QVERIFY(chart);
    QTRY_COMPARE(chart->property("count").toInt(), 3);
    const auto firstSeries = [chart]() -> QXYSeries* {
      QAbstractSeries* s = nullptr;
      if (!QMetaObject::invokeMethod(chart, "series", Q_RETURN_ARG(QAbstractSeries*, s), Q_ARG(int, 0))) return nullptr;
      return qobject_cast<QXYSeries*>(s);
    };
    QXYSeries* train = firstSeries();
    QVERIFY(train);
    QTRY_COMPARE(train->count(), 12);
    QCOMPARE(train->at(0).y(), m_controller->training()->store()->metrics(id).first().loss);
    QVERIFY(metrics->samples().size() == 2);
    grab(QStringLiteral("train-dashboard"));

    // The charts follow the theme: axis labels and titles, axis lines, grid and legend take Style's
    // chart colours (Qt Charts' own theme would keep light-theme text on the dark background).
    // (A theme change recolours the specs, and the chart makes its series anew: ask for them each time.)
    const auto axisOf = [chart, &firstSeries](const char* which) {
      QAbstractAxis* a = nullptr;
      QAbstractSeries* series = firstSeries();
      if (series)
        QMetaObject::invokeMethod(chart, which, Q_RETURN_ARG(QAbstractAxis*, a), Q_ARG(QAbstractSeries*, series));
      return a;
    };
    const auto chartColoursAre = [&](const QColor& label, const QColor& line, const QColor& grid) {
      for (const char* which : {"axisX", "axisY"}) {
        QAbstractAxis* a = axisOf(which);
        if (!a || a->labelsColor() != label || a->titleBrush().color() != label || a->linePenColor() != line ||
            a->gridLineColor() != grid || a->shadesVisible())
          return false;
      }
      auto* legend = qvariant_cast<QLegend*>(chart->property("legend"));
      return legend && legend->labelColor() == label;
    };
    QVERIFY(axisOf("axisX") && axisOf("axisX")->titleText() == QStringLiteral("step"));
    QVERIFY(chartColoursAre(QColor("#5e6573"), QColor("#c3c8d2"), QColor("#dfe2e8")));  // light
    m_controller->settings()->setTheme(QStringLiteral("dark"));
    QTRY_VERIFY(chartColoursAre(QColor("#9aa1ad"), QColor("#4a505b"), QColor("#30343c")));
    grab(QStringLiteral("train-dashboard-dark"));
    m_controller->settings()->setTheme(QStringLiteral("light"));
    QTRY_VERIFY(chartColoursAre(QColor("#5e6573"), QColor("#c3c8d2"), QColor("#dfe2e8")));

    // Axes read as people write numbers: round steps, no exponent, nothing below zero for a metric
    // that cannot be negative (the learning rate decays towards zero).
    QVERIFY(!loss->property("empty").toBool());
    for (QQuickItem* chartCard : chartCards(page)) {
      QObject* c = qvariant_cast<QObject*>(chartCard->property("chart"));
      QAbstractSeries* series = nullptr;
      QVERIFY(QMetaObject::invokeMethod(c, "series", Q_RETURN_ARG(QAbstractSeries*, series), Q_ARG(int, 0)));
      QAbstractAxis* y = nullptr;
      QVERIFY(QMetaObject::invokeMethod(c, "axisY", Q_RETURN_ARG(QAbstractAxis*, y), Q_ARG(QAbstractSeries*, series)));
      auto* axis = qobject_cast<QValueAxis*>(y);
      QVERIFY(axis);
      QVERIFY2(axis->min() >= 0, qPrintable(QString::number(axis->min())));
      QVERIFY2(!axis->labelFormat().contains(QLatin1Char('g')) && !axis->labelFormat().contains(QLatin1Char('e')),
               qPrintable(axis->labelFormat()));
      QCOMPARE(axis->tickType(), QValueAxis::TicksDynamic);
    }

    // Log scale: the same points on a log axis.
    QQuickItem* log = findItem(page, QStringLiteral("logToggle"));
    QVERIFY(log->setProperty("checked", true));
    QTRY_COMPARE(chart->property("count").toInt(), 3);
    train = firstSeries();
    QVERIFY(train);
    QTRY_COMPARE(train->count(), 12);
    grab(QStringLiteral("train-dashboard-log"));
    QVERIFY(log->setProperty("checked", false));

    // The Runs page lists it; ticking it overlays its curve.
    showPage(4);
    QQuickItem* runsPage = m_window->findChild<QQuickItem*>(QStringLiteral("page_runs"));
    QTRY_VERIFY(runsPage->isVisible());
    QObject* runs = runsPage->findChild<QObject*>(QStringLiteral("runsModel"));
    QVERIFY(runs);
    QCOMPARE(runs->property("count").toInt(), 1);
    QVERIFY(QMetaObject::invokeMethod(runs, "setSelected", Q_ARG(qint64, id), Q_ARG(bool, true)));
    QQuickItem* overlay = findItem(runsPage, QStringLiteral("overlayChart"));
    QVERIFY(overlay);
    QTRY_COMPARE(overlay->property("count").toInt(), 1);
    grab(QStringLiteral("runs-overlay"));
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }

  void wizardStaysWithItsRun() {
    showPage(3);
    QQuickItem* page = m_window->findChild<QQuickItem*>(QStringLiteral("page_train"));
    QQuickItem* wizard = findItem(page, QStringLiteral("trainWizard"));
    QVERIFY(wizard);
    QVERIFY(page->setProperty("guided", true));
    QVERIFY(page->setProperty("showSetup", true));
    QTRY_VERIFY(wizard->isVisible());

    // A new step starts at the top of the page, wherever the last one was scrolled to.
    QObject* flick = nullptr;
    for (QQuickItem* item = wizard; item && !flick; item = item->parentItem())
      if (item->inherits("QQuickFlickable")) flick = item;
    QVERIFY(flick);
    QVERIFY(flick->setProperty("contentY", 300.0));
    QVERIFY(wizard->setProperty("step", 1));
    QCOMPARE(flick->property("contentY").toDouble(), 0.0);

    // Start: the run is enqueued and the wizard stays open with it (it used to vanish with the
    // first run, taking its Evaluate and Save steps along).
    QVERIFY(wizard->setProperty("step", 4));
    QVariantMap s = smallRun();
    s[QStringLiteral("recipe")] = QStringLiteral("sft");
    s[QStringLiteral("data")] = m_chats;
    s[QStringLiteral("sample_every")] = 2;
    s[QStringLiteral("sample_tokens")] = 4;
    s[QStringLiteral("sample_prompt")] = QStringLiteral("Who saw the ball?");
    QSignalSpy finished(m_controller->training(), &TrainingJobs::runFinished);
    QVERIFY(QMetaObject::invokeMethod(wizard, "startRequested", Q_ARG(QString, QStringLiteral("chat tune")),
                                      Q_ARG(QVariant, s)));
    const qint64 id = wizard->property("runId").toLongLong();
    QVERIFY(id != 0);
    QVERIFY(wizard->setProperty("step", 5));
    QVERIFY(finished.wait(240000));
    QCOMPARE(finished.first()[1].toString(), QStringLiteral("done"));
    QVERIFY(wizard->isVisible());
    QTRY_COMPARE(wizard->property("runStatus").toString(), QStringLiteral("done"));
    QTRY_VERIFY(findItem(wizard, QStringLiteral("wizardOpenTuned"))->isVisible());
    QCOMPARE(findItem(wizard, QStringLiteral("wizardRunProgress"))->property("value").toDouble(), 1.0);
    grab(QStringLiteral("train-wizard-run-done"));

    // The run bar keeps all its actions inside the window.
    QQuickItem* exportButton = findItem(page, QStringLiteral("exportButton"));
    QVERIFY(exportButton && exportButton->isVisible());
    QVERIFY(exportButton->mapToScene(QPointF(exportButton->width(), 0)).x() <= m_window->width());

    // The chat fine-tune's samples were made from the prompt as a chat turn, and show it as asked.
    const QList<SampleRow> samples = m_controller->training()->store()->samples(id);
    QVERIFY(!samples.isEmpty());
    QCOMPARE(samples.first().prompt, QStringLiteral("Who saw the ball?"));

    // The dashboard offers the tuned model; it opens under the run's name, not its folder's.
    QQuickItem* open = findItem(page, QStringLiteral("openTunedButton"));
    QVERIFY(open);
    QTRY_VERIFY(open->isVisible());
    QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                      open->mapToScene(QPointF(open->width() / 2, open->height() / 2)).toPoint());
    QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading() && m_controller->hasModel(), 30000);
    QVERIFY2(m_controller->lastError().isEmpty(), qPrintable(m_controller->lastError()));
    QCOMPARE(m_controller->modelName(), QStringLiteral("chat tune"));

    // Closed and picked again from the run bar: the wizard reopens on the run's Evaluate step.
    QVERIFY(QMetaObject::invokeMethod(wizard, "cancelled"));
    QTRY_VERIFY(!wizard->isVisible());
    QVERIFY(QMetaObject::invokeMethod(page, "reviewRun", Q_ARG(QVariant, id)));
    QTRY_VERIFY(wizard->isVisible());
    QCOMPARE(wizard->property("step").toInt(), 6);
    QCOMPARE(wizard->property("runStatus").toString(), QStringLiteral("done"));
    QTRY_VERIFY(findItem(wizard, QStringLiteral("wizardEvaluate"))->property("enabled").toBool());
    grab(QStringLiteral("train-wizard-review"));

    // The Runs page: base model, method and final loss; a finished run can be deleted, folder and all.
    showPage(4);
    QQuickItem* runsPage = m_window->findChild<QQuickItem*>(QStringLiteral("page_runs"));
    QTRY_VERIFY(runsPage->isVisible());
    QObject* runs = runsPage->findChild<QObject*>(QStringLiteral("runsModel"));
    QTRY_COMPARE(runs->property("count").toInt(), 2);
    QVariantMap run;
    QVERIFY(QMetaObject::invokeMethod(runs, "get", Q_RETURN_ARG(QVariantMap, run), Q_ARG(qint64, id)));
    QCOMPARE(run.value(QStringLiteral("baseModelName")).toString(), QStringLiteral("model"));
    QCOMPARE(run.value(QStringLiteral("method")).toString(), QStringLiteral("Full"));
    QVERIFY(std::isfinite(run.value(QStringLiteral("finalLoss")).toDouble()));
    QCOMPARE(run.value(QStringLiteral("finalLoss")).toDouble(),
             m_controller->training()->store()->metrics(id).last().loss);
    QQuickItem* details = findItem(runsPage, QStringLiteral("runDetails"));
    QVERIFY(details);
    QVERIFY2(details->property("text").toString().startsWith(QStringLiteral("model · ")),
             qPrintable(details->property("text").toString()));
    QTest::qWait(200);
    grab(QStringLiteral("runs-details"));
    const QString folder = run.value(QStringLiteral("outputDir")).toString();
    QVERIFY(QDir(folder).exists());
    QString why;
    QVERIFY(QMetaObject::invokeMethod(runs, "deleteRun", Q_RETURN_ARG(QString, why), Q_ARG(qint64, id)));
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QTRY_COMPARE(runs->property("count").toInt(), 1);
    QVERIFY(!QDir(folder).exists());
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }
};

QTEST_MAIN(TestTrainPage)
#include "test_train_page.moc"
